"""Whatever a user writes into a query string, a form field or `next`: a page, a 400 or a redirect with a
message, never a server error, and never a redirect off the site."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.test_permissions import TABLE, world  # noqa: F401 - the fixture is used by name

PARAMETERS = ["after", "run", "corpus", "pass_name", "min_score", "max_score", "cluster", "status", "signals",
              "sort", "page", "labels", "thresholds", "split", "audit", "q", "policy", "shingle", "download",
              "next", "since", "until", "reviewer", "verdict", "reason", "retained", "num_perm", "bands", "rows",
              "threshold", "reviews_required", "storage_floor", "show"]
GARBAGE = ["notanumber", "0.5:abc", "abc:0.5", "none:x", "-1", "0", "1e999", "nan", "inf", "9" * 30, "\x00", "%",
           "1:" + "9" * 30, "0.5:" + "9" * 30]


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(n for n, (method, _) in TABLE.items() if n not in ("login", "logout")))
def test_no_parameter_value_makes_a_page_fail(world, name):  # noqa: F811
    clients, args = world
    url = reverse(name, args=args.get(name.split(":")[-1], []))
    method = TABLE[name][0]
    for role in ("editor", "arbiter", "admin"):
        client = clients[role]
        for value in GARBAGE:
            data = dict.fromkeys(PARAMETERS, value)
            response = client.post(url, data) if method == "POST" else client.get(url, data)
            assert response.status_code < 500, (name, role, value, response.status_code)


@pytest.mark.django_db
@pytest.mark.parametrize("after", ["notanumber", "0.5:abc", "nan:1", "1:" + "9" * 30])
def test_a_malformed_queue_cursor_is_ignored_with_a_message(editor_client, after):
    response = editor_client.get(reverse("review:queue"), {"after": after}, follow=True)
    assert response.status_code == 200
    assert "not a position in this queue" in response.content.decode()


@pytest.mark.django_db
def test_an_invalid_filter_is_named_in_a_message(editor_client):
    response = editor_client.get(reverse("review:queue"), {"run": "abc", "min_score": "2"})
    text = response.content.decode()
    assert response.status_code == 200 and "Ignored run=" in text and "Ignored min_score=" in text


@pytest.mark.django_db
@pytest.mark.parametrize("target", ["https://evil.example/x", "//evil.example/x", "/\\evil.example",
                                    "javascript:alert(1)"])
def test_upload_never_redirects_off_site(admin_client, target):
    response = admin_client.post(reverse("screening:upload_create"), {"corpus": "", "next": target})
    assert response.status_code == 302
    assert response.url == reverse("screening:corpus_list"), response.url


@pytest.mark.django_db
def test_upload_follows_a_next_path_on_the_site(admin_client):
    response = admin_client.post(reverse("screening:upload_create"), {"corpus": "", "next": "/corpora/x/"})
    assert response.status_code == 302 and response.url == "/corpora/x/"


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/runs/{n}/", "/runs/{n}/status/", "/pairs/{n}/", "/documents/{n}/",
                                  "/review/pairs/{n}/", "/review/runs/{n}/dashboard/", "/uploads/{n}/status/"])
def test_an_id_too_large_for_the_database_is_not_found(admin_client, path):
    assert admin_client.get(path.format(n="9" * 30)).status_code in (403, 404)  # admins do not review


@pytest.mark.django_db
def test_a_nul_character_in_a_parameter_is_refused_with_its_name(admin_client):
    response = admin_client.get(reverse("screening:corpus_list"), {"q": "a\x00b"})
    assert response.status_code == 400 and "'q' contains a NUL character" in response.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/corpora/a%00b/", "/corpora/a%00b/labels/", "/review/corpora/a%00b/settings/"])
def test_a_nul_character_in_the_address_is_refused(admin_client, path):
    assert admin_client.get(path).status_code == 400
