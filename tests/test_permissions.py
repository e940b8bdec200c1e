"""Every URL of the site × every role answers as intended. A new URL without an entry here fails the test."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils import timezone

from screening.models import CandidatePair, Document
from tests.factories import completed_run
from tests.seeds import SEED001

ROLES = ["anonymous", "editor", "arbiter", "admin"]
ANYONE_LOGGED_IN = {"editor", "arbiter", "admin"}
REVIEWERS = {"editor", "arbiter"}

# name: (method, who may use it). Django's own admin has its own log-in for staff.
TABLE = {
    "login": ("GET", "public"),
    "logout": ("POST", "public"),
    "set_language": ("POST", "public"),
    "password_change": ("GET", ANYONE_LOGGED_IN),
    "screening:corpus_list": ("GET", ANYONE_LOGGED_IN),
    "screening:corpus_detail": ("GET", ANYONE_LOGGED_IN),
    "screening:upload_create": ("POST", {"admin"}),
    "screening:upload_status": ("GET", ANYONE_LOGGED_IN),
    "screening:upload_source": ("GET", {"admin"}),
    "screening:document_detail": ("GET", ANYONE_LOGGED_IN),
    "screening:run_start": ("POST", {"admin"}),
    "screening:run_detail": ("GET", ANYONE_LOGGED_IN),
    "screening:run_status": ("GET", ANYONE_LOGGED_IN),
    "screening:run_retry": ("POST", {"admin"}),
    "screening:exact_groups": ("GET", ANYONE_LOGGED_IN),
    "screening:pair_detail": ("GET", ANYONE_LOGGED_IN),
    "screening:labels": ("GET", ANYONE_LOGGED_IN),
    "screening:compare": ("GET", ANYONE_LOGGED_IN),
    "screening:evaluation": ("GET", ANYONE_LOGGED_IN),
    "review:labels_from_verdicts": ("POST", {"admin"}),
    "screening:audit_start": ("POST", {"admin"}),
    "screening:model_train": ("POST", {"admin"}),
    "screening:audit_status": ("GET", {"admin"}),
    "review:queue": ("GET", REVIEWERS),
    "review:next": ("GET", REVIEWERS),
    "review:pair": ("GET", REVIEWERS),
    "review:judge": ("POST", REVIEWERS),
    "review:undo": ("POST", REVIEWERS),
    "review:skip": ("POST", REVIEWERS),
    "review:lease": ("POST", REVIEWERS),
    "review:leases_release": ("POST", ANYONE_LOGGED_IN),
    "review:cluster_hold": ("POST", REVIEWERS),
    "review:cluster": ("GET", REVIEWERS),
    "review:cluster_decide": ("POST", REVIEWERS),
    "review:cluster_next": ("GET", REVIEWERS),
    "review:bulk_preview": ("GET", REVIEWERS),
    "review:bulk_confirm": ("POST", REVIEWERS),
    "review:policy": ("GET", {"admin"}),
    "review:arbitration_queue": ("GET", {"arbiter"}),
    "review:arbitration_next": ("GET", {"arbiter"}),
    "review:arbitrate": ("GET", {"arbiter"}),
    "review:dashboard": ("GET", ANYONE_LOGGED_IN),
    "review:sign": ("GET", REVIEWERS),
    "review:sheet_start": ("POST", {"admin"}),
    "review:sheet_status": ("GET", {"admin"}),
    "review:sheet_download": ("GET", {"admin"}),
    "review:signing_key": ("GET", ANYONE_LOGGED_IN),
    "users:list": ("GET", {"admin"}),
    "users:create": ("POST", {"admin"}),
    "users:role": ("POST", {"admin"}),
    "users:active": ("POST", {"admin"}),
    "users:password": ("POST", {"admin"}),
    "users:code": ("POST", {"admin"}),
    "api_tokens": ("GET", ANYONE_LOGGED_IN),
    "api_token_revoke": ("POST", ANYONE_LOGGED_IN),
    "api_token_acknowledge": ("POST", ANYONE_LOGGED_IN),
    "trail:list": ("GET", {"admin"}),
    "api:docs": ("GET", ANYONE_LOGGED_IN),
}
# The REST API, called with each role's token (anonymous: none, a 401), as the pages' roles allow.
API_TABLE = {
    "api:schema": ("GET", ANYONE_LOGGED_IN),
    "api:corpora": ("GET", ANYONE_LOGGED_IN),
    "api:corpus": ("GET", ANYONE_LOGGED_IN),
    "api:upload_create": ("POST", {"admin"}),
    "api:labels": ("POST", {"admin"}),
    "api:upload": ("GET", ANYONE_LOGGED_IN),
    "api:runs": ("POST", {"admin"}),
    "api:run": ("GET", ANYONE_LOGGED_IN),
    "api:run_pairs": ("GET", REVIEWERS),
    "api:run_next": ("POST", REVIEWERS),
    "api:run_decisions": ("GET", {"admin"}),
    "api:run_evaluation": ("GET", ANYONE_LOGGED_IN),
    "api:sheet_create": ("POST", {"admin"}),
    "api:sheet": ("GET", {"admin"}),
    "api:sheet_file": ("GET", {"admin"}),
    "api:pair": ("GET", REVIEWERS),
    "api:pair_lease": ("POST", REVIEWERS),
    "api:judgements": ("POST", REVIEWERS),
    "api:arbitrations": ("POST", {"arbiter"}),
    "api:arbitration_cases": ("GET", {"arbiter"}),
    "api:trail": ("GET", {"admin"}),
}
IGNORED_PREFIXES = ("admin:",)  # Django admin: staff only, checked separately


def url_names(patterns=None, namespace=""):
    for p in patterns if patterns is not None else get_resolver().url_patterns:
        if isinstance(p, URLResolver):
            ns = f"{namespace}{p.namespace}:" if p.namespace else namespace
            yield from url_names(p.url_patterns, ns)
        elif isinstance(p, URLPattern) and p.name:
            yield f"{namespace}{p.name}"


def test_every_url_has_an_entry():
    names = {n for n in url_names() if not n.startswith(IGNORED_PREFIXES)}
    assert names - set(TABLE) - set(API_TABLE) == set(), "add these URLs to the permission table"
    assert (set(TABLE) | set(API_TABLE)) - names == set()


@pytest.fixture
def world(import_records, admin_user, editor, arbiter):
    import_records("zh", SEED001)
    run = completed_run("zh", near=True)
    pair = CandidatePair.objects.filter(run=run).first()
    doc = Document.objects.first()
    clients = {"anonymous": Client()}
    for role, user in (("editor", editor), ("arbiter", arbiter), ("admin", admin_user)):
        clients[role] = Client()
        clients[role].force_login(user)
    args = {
        "corpus_detail": ["zh"], "upload_status": [doc.upload_id], "upload_source": [doc.upload_id],
        "document_detail": [doc.pk],
        "run_start": ["zh"], "run_detail": [run.pk], "run_status": [run.pk], "run_retry": [run.pk],
        "exact_groups": [run.pk], "pair_detail": [pair.pk], "labels": ["zh"], "compare": ["zh"],
        "evaluation": [run.pk], "labels_from_verdicts": [run.pk], "pair": [pair.pk], "judge": [pair.pk],
        "arbitrate": [pair.pk], "skip": [pair.pk], "lease": [pair.pk], "policy": ["zh"], "dashboard": [run.pk],
        "sheet_start": [run.pk], "sheet_status": [1], "audit_start": [run.pk], "model_train": [run.pk],
        "audit_status": [1], "cluster": [run.pk, 1], "cluster_decide": [run.pk, 1], "cluster_next": [run.pk],
        "cluster_hold": [run.pk, 1],
        "sheet_download": [1, "csv"], "role": [editor.pk], "active": [editor.pk], "password": [editor.pk],
        "code": [editor.pk], "api_token_revoke": [1], "api_token_acknowledge": [1],
        "api:corpus": [run.corpus_id], "api:upload_create": [run.corpus_id], "api:labels": [run.corpus_id],
        "api:upload": [doc.upload_id], "api:run": [run.pk], "api:run_pairs": [run.pk], "api:run_next": [run.pk],
        "api:run_decisions": [run.pk], "api:run_evaluation": [run.pk], "api:sheet_create": [run.pk],
        "api:sheet": [1], "api:sheet_file": [1, "csv"], "api:pair": [pair.pk], "api:pair_lease": [pair.pk],
        "api:judgements": [pair.pk], "api:arbitrations": [pair.pk],
    }
    return clients, args


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(TABLE))
def test_each_role_gets_what_the_table_says(world, name):
    clients, args = world
    method, allowed = TABLE[name]
    url = reverse(name, args=args.get(name, args.get(name.split(":")[-1], [])))
    for role in ROLES:
        client = clients[role]
        response = client.post(url, {}) if method == "POST" else client.get(url)
        code = response.status_code
        assert code < 500, (name, role, code)
        if allowed == "public":
            assert code in (200, 302), (name, role, code)
        elif role == "anonymous":
            assert code == 302 and "/login/" in response.url, (name, role, code)
        elif role in allowed:
            assert code != 403 and not (code == 302 and "/login/" in response.url), (name, role, code)
        else:
            assert code == 403, (name, role, code)


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(API_TABLE))
def test_each_roles_token_gets_what_the_api_table_says(world, name, admin_user, editor, arbiter):
    from dedup_site import tokens

    _, args = world
    method, allowed = API_TABLE[name]
    url = reverse(name, args=args.get(name, []))
    users = {"editor": editor, "arbiter": arbiter, "admin": admin_user}
    for role in ROLES:
        auth = {} if role == "anonymous" else {
            "HTTP_AUTHORIZATION": f"Bearer {tokens.token_create(user=users[role], actor=users[role], name='table')[1]}"}
        response = Client().post(url, {}, **auth) if method == "POST" else Client().get(url, **auth)
        code = response.status_code
        assert code < 500, (name, role, code)
        if role == "anonymous":
            assert code == 401, (name, role, code)
        elif role in allowed:
            assert code not in (401, 403), (name, role, code)
        else:
            assert code == 403, (name, role, code)


@pytest.mark.django_db
def test_django_admin_is_for_staff_only(world, django_user_model):
    clients, _ = world
    for role in ROLES:
        response = clients[role].get(reverse("admin:index"))
        assert response.status_code == 302 and "/login/" in response.url, role


@pytest.mark.django_db
def test_permissions_in_one_query_equal_djangos_model_backend(admin_user, editor, arbiter, django_user_model,
                                                              django_assert_num_queries):
    from django.contrib.auth.backends import ModelBackend
    from django.contrib.auth.models import Permission

    from dedup_site.auth import RoleBackend

    direct = django_user_model.objects.create_user("dora-direct", password="irrelevant-pass-1")
    direct.user_permissions.add(Permission.objects.get(codename="view_user"))
    superuser = django_user_model.objects.create_superuser("sue-super", password="irrelevant-pass-1")
    gone = django_user_model.objects.create_user("ina-inactive", password="irrelevant-pass-1", is_active=False)
    gone.groups.add(*editor.groups.all())
    for user in (admin_user, editor, arbiter, direct, superuser, gone):
        expected = ModelBackend().get_all_permissions(django_user_model.objects.get(pk=user.pk))
        fresh = django_user_model.objects.get(pk=user.pk)
        with django_assert_num_queries(1 if user.is_active else 0):
            assert RoleBackend().get_all_permissions(fresh) == expected, user.username
            fresh.has_perm("review.review_pair")  # answered from the cache filled above
    assert ModelBackend().get_all_permissions(direct) == {"auth.view_user"}
    assert "review.review_pair" in ModelBackend().get_all_permissions(editor)


@pytest.mark.django_db
def test_user_read_for_a_session_equals_djangos_model_backend(editor, django_user_model, django_assert_num_queries):
    from django.contrib.auth.backends import ModelBackend

    from dedup_site.auth import RoleBackend

    editor.last_login = timezone.now()
    editor.save()
    gone = django_user_model.objects.create_user("ivo-inactive", password="irrelevant-pass-1", is_active=False)
    with django_assert_num_queries(1):
        read = RoleBackend().get_user(editor.pk)
    expected = ModelBackend().get_user(editor.pk)
    assert read == expected and read._state.adding is False and read._state.db == "default"
    for field in django_user_model._meta.concrete_fields:
        assert getattr(read, field.attname) == getattr(expected, field.attname), field.name
    assert RoleBackend().get_user(gone.pk) is None and ModelBackend().get_user(gone.pk) is None
    assert RoleBackend().get_user(10**9) is None and RoleBackend().get_user("not-an-id") is None


@pytest.mark.django_db
def test_the_user_read_for_a_session_brings_their_permissions(admin_user, editor, arbiter, django_user_model,
                                                               django_assert_num_queries):
    from django.contrib.auth.backends import ModelBackend
    from django.contrib.auth.models import Group, Permission

    from dedup_site.auth import RoleBackend

    direct = django_user_model.objects.create_user("dora-direct", password="irrelevant-pass-1")
    direct.user_permissions.add(Permission.objects.get(codename="view_user"))
    direct.groups.add(Group.objects.get(name="editors"), Group.objects.get(name="arbiters"))  # overlapping
    nobody = django_user_model.objects.create_user("nina-none", password="irrelevant-pass-1")
    for user in (editor, arbiter, direct, nobody):
        read = RoleBackend().get_user(user.pk)
        with django_assert_num_queries(0):  # read with the user, in the same query
            seen = read.get_all_permissions()
        assert seen == ModelBackend().get_all_permissions(django_user_model.objects.get(pk=user.pk)), user.username
    assert {"auth.view_user", "review.review_pair", "review.arbitrate_pair"} <= RoleBackend().get_user(
        direct.pk).get_all_permissions()
    assert RoleBackend().get_user(nobody.pk).get_all_permissions() == set()
    superuser = RoleBackend().get_user(admin_user.pk)  # every permission, read when first asked
    assert superuser.get_all_permissions() == ModelBackend().get_all_permissions(admin_user) != set()


@pytest.mark.django_db
def test_the_top_bar_links_each_role_to_what_it_may_open(editor2_client, admin_client):
    def links(client):
        page = client.get(reverse("screening:corpus_list")).content.decode()
        bar = page[page.index('<header class="topbar">'):page.index("</header>")]
        return re.findall(r'href="([^"]+)"', bar)

    assert links(editor2_client) == [reverse("screening:corpus_list"), reverse("screening:corpus_list"),
                                    reverse("review:queue"), reverse("review:sign"), reverse("password_change"),
                                    reverse("api_tokens")]
    admin = links(admin_client)
    assert reverse("users:list") in admin and reverse("review:queue") not in admin
