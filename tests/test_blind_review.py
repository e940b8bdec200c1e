"""Blind review: nothing an editor can reach (page, JSON status, filter) depends on another reviewer's
verdict on a pair the editor has not judged. Each scenario is recorded inside a savepoint and rolled back,
so the editor's pages can be compared byte for byte across other reviewers' verdicts."""

from __future__ import annotations

import re

import pytest
from django.db import transaction
from django.test import Client
from django.urls import reverse

from review import services
from review import services as review_services
from review.forms import QueueFilterForm
from review.selectors import BLIND_STATUSES
from screening.models import CandidatePair
from tests.factories import completed_run, reviewer
from tests.seeds import SEED001
from tests.test_permissions import TABLE

CSRF = re.compile(rb'name="csrfmiddlewaretoken" value="[^"]+"')
EDITOR_GETS = sorted(n for n, (method, who) in TABLE.items()
                     if method == "GET" and who != "public" and "editor" in who)


@pytest.fixture
def blind_world(import_records, editor, editor2, arbiter, django_user_model, admin_user):
    import_records("zh", SEED001)
    run = completed_run("zh", near=True, reviews_required=2)
    ab = CandidatePair.objects.get(run=run, left__doc_id="A", right__doc_id="B")
    third = reviewer("tess-third", "editor")
    return run, ab, editor2, third


def _urls(run, pair) -> list[str]:
    args = {"run_detail": [run.pk], "run_status": [run.pk], "exact_groups": [run.pk], "pair_detail": [pair.pk],
            "labels": ["zh"], "compare": ["zh"], "evaluation": [run.pk], "pair": [pair.pk], "dashboard": [run.pk],
            "corpus_detail": ["zh"], "document_detail": [pair.left_id], "upload_status": [pair.left.upload_id],
            "cluster": [run.pk, pair.cluster], "cluster_next": [run.pk]}
    urls = [reverse(name, args=args.get(name.split(":")[-1], [])) for name in EDITOR_GETS if name != "review:next"]
    statuses = [""] + BLIND_STATUSES
    urls += [f"{reverse('review:queue')}?run={run.pk}&status={s}" for s in statuses]
    urls += [f"{reverse('review:queue')}?status={s}&sort=cluster" for s in statuses]
    urls += [f"{reverse('review:bulk_preview')}?run={run.pk}&verdict={v}" for v in ("merge-entry", "keep-both")]
    return urls


def _pages(client, urls, judge: CandidatePair | None = None) -> dict[str, tuple[int, bytes]]:
    pages = {}
    for url in urls:
        response = client.get(url)
        pages[url] = (response.status_code, CSRF.sub(b"", response.content), response.get("Location", ""))
    if judge is not None:
        # The editor tries to judge the pair too: what the answer says must not depend on others' verdicts.
        response = client.post(reverse("review:judge", args=[judge.pk]),
                               {"verdict": "keep-both", "reason": "mine", "retained": "both"})
        said = client.get(reverse("screening:corpus_list"))  # a page that only shows the message
        pages["POST judge"] = (response.status_code, CSRF.sub(b"", said.content), response.get("Location", ""))
    return pages


def _scenario(client, urls, actions, judge: CandidatePair | None = None) -> dict:
    point = transaction.savepoint_create()
    try:
        actions()
        return _pages(client, urls, judge)
    finally:
        transaction.savepoint_rollback(point)


def _judge(pair, reviewer, verdict):
    services.judgement_record(pair=pair, reviewer=reviewer, verdict=verdict, reason=f"secret reason {verdict}")


def _assert_same(scenarios: dict[str, dict]):
    names = list(scenarios)
    first = scenarios[names[0]]
    for name in names[1:]:
        for url, page in scenarios[name].items():
            assert page == first[url], f"{url} differs between {names[0]!r} and {name!r}"
        for url, (_, content, _) in scenarios[name].items():
            assert b"secret reason" not in content, url


@pytest.mark.django_db
def test_every_editor_page_is_the_same_whatever_one_other_reviewer_chose(blind_world, editor_client):
    run, ab, other, _ = blind_world
    urls = _urls(run, ab)
    verdicts = ["keep-both", "merge-entry", "public-quote", "valid-revision", "arbitration"]
    _assert_same({v: _scenario(editor_client, urls, lambda v=v: _judge(ab, other, v)) for v in verdicts})


@pytest.mark.django_db
def test_every_editor_page_is_the_same_whatever_two_other_reviewers_chose(blind_world, editor_client):
    run, ab, other, third = blind_world
    urls = _urls(run, ab)
    choices = [("keep-both", "keep-both"), ("keep-both", "merge-entry"), ("merge-entry", "merge-entry"),
               ("arbitration", "merge-entry")]
    _assert_same({f"{a}/{b}": _scenario(editor_client, urls,
                                        lambda a=a, b=b: (_judge(ab, other, a), _judge(ab, third, b)), judge=ab)
                  for a, b in choices})


@pytest.mark.django_db
def test_every_editor_page_is_the_same_whatever_the_arbiter_decided(blind_world, editor_client, arbiter):
    run, ab, other, third = blind_world
    urls = _urls(run, ab)

    def settle(verdict):
        _judge(ab, other, "keep-both")
        _judge(ab, third, "merge-entry")
        services.arbitration_record(pair=ab, arbiter=arbiter, verdict=verdict, reason=f"secret reason {verdict}")

    scenarios = {v: _scenario(editor_client, urls, lambda v=v: settle(v), judge=ab)
                 for v in ("keep-both", "merge-entry")}
    scenarios["two disagree, no arbitration yet"] = _scenario(
        editor_client, urls, lambda: (_judge(ab, other, "keep-both"), _judge(ab, third, "merge-entry")), judge=ab)
    _assert_same(scenarios)


@pytest.mark.django_db
def test_an_arbiter_and_an_admin_see_the_verdicts(blind_world, arbiter_client, admin_user):
    run, ab, other, third = blind_world
    _judge(ab, other, "keep-both")
    _judge(ab, third, "merge-entry")
    queue = arbiter_client.get(reverse("review:queue"), {"run": run.pk}).content.decode()
    assert "needs arbitration" in queue
    admin_client = Client()
    admin_client.force_login(admin_user)
    board = admin_client.get(reverse("review:dashboard", args=[run.pk])).content.decode()
    assert "keep both 1" in board and "merge entry 1" in board and "arbitration backlog 1" in board  # named


@pytest.mark.django_db
def test_an_editor_sees_the_verdicts_once_they_have_judged(blind_world, editor, editor_client):
    run, ab, other, _ = blind_world
    _judge(ab, other, "keep-both")
    _judge(ab, editor, "merge-entry")
    page = editor_client.get(reverse("review:pair", args=[ab.pk])).content.decode()
    assert "secret reason keep-both" in page and "needs arbitration" in page


@pytest.mark.django_db
def test_an_editor_does_not_see_label_sets_made_from_verdicts(blind_world, editor_client, admin_user):
    run, ab, other, third = blind_world
    _judge(ab, other, "merge-entry")
    _judge(ab, third, "merge-entry")
    label_set = review_services.labelset_from_verdicts(run=run, user=admin_user)
    page = editor_client.get(reverse("screening:labels", args=["zh"])).content.decode()
    assert f"verdicts of run {run.pk}" not in page
    evaluation_page = editor_client.get(reverse("screening:evaluation", args=[run.pk]),
                                        {"labels": label_set.pk}).content.decode()
    assert label_set.name not in evaluation_page
    admin_client = Client()
    admin_client.force_login(admin_user)
    assert f"verdicts of run {run.pk}" in admin_client.get(reverse("screening:labels", args=["zh"])).content.decode()


def test_an_editor_cannot_filter_by_what_others_decided():
    form = QueueFilterForm({"status": "needs_arbitration"}, blind=True)
    assert not form.is_valid() and "status" in form.errors
    assert QueueFilterForm({"status": "needs_arbitration"}).is_valid()


@pytest.mark.django_db
def test_the_walk_covers_every_page_an_editor_may_open(blind_world):
    from django.urls import resolve

    run, ab, _, _ = blind_world
    walked = {resolve(url.split("?")[0]).view_name for url in _urls(run, ab)}
    # Every GET page and JSON endpoint the permission table opens to editors (which itself covers every
    # URL of the site) is walked; "next" hands out a pair and is covered by the lease tests.
    assert walked == set(EDITOR_GETS) - {"review:next"}
    assert {"screening:run_status", "screening:upload_status", "review:dashboard"} <= walked


@pytest.mark.django_db
def test_an_editor_sees_how_many_pairs_have_all_their_reviews(blind_world, editor_client):
    run, ab, other, third = blind_world
    _judge(ab, other, "merge-entry")
    _judge(ab, third, "keep-both")
    board = editor_client.get(reverse("review:dashboard", args=[run.pk])).content.decode()
    queue = editor_client.get(reverse("review:queue"), {"run": run.pk}).content.decode()
    assert "1 with all their reviews" in board and "1 with all their reviews" in queue


@pytest.mark.django_db
def test_a_pair_settled_by_an_arbiter_offers_no_verdict_form(blind_world, editor, editor_client, arbiter):
    run, ab, other, _ = blind_world
    _judge(ab, editor, "merge-entry")
    _judge(ab, other, "keep-both")
    services.arbitration_record(pair=ab, arbiter=arbiter, verdict="merge-entry", reason="settled")
    page = editor_client.get(reverse("review:pair", args=[ab.pk])).content.decode()
    assert 'id="arbitrated"' in page and 'id="judge-form"' not in page


@pytest.mark.django_db
def test_my_settled_pair_does_not_show_what_others_decided_in_its_cluster(import_records, editor, editor2,
                                                                          editor_client):
    """Others' verdicts on the other pairs of my pair's cluster can send my pair back to arbitration (A=B, B=C,
    yet I judged A≠C): to me it still shows as settled, as I judged it."""
    import_records("zh", SEED001)
    run = completed_run("zh", near=True)
    ab, ac, bc = (CandidatePair.objects.get(run=run, left__doc_id=x, right__doc_id=y)
                  for x, y in (("A", "B"), ("A", "C"), ("B", "C")))
    assert ab.cluster == ac.cluster == bc.cluster is not None
    services.judgement_record(pair=ac, reviewer=editor, verdict="keep-both", reason="mine")
    urls = _urls(run, ac)

    def others(verdict):
        _judge(ab, editor2, verdict)
        _judge(bc, editor2, verdict)

    contradicted = _scenario(editor_client, urls, lambda: others("merge-entry"))
    plain = _scenario(editor_client, urls, lambda: others("keep-both"))
    _assert_same({"A=B=C": contradicted, "A≠B≠C": plain})
    others("merge-entry")
    ac.refresh_from_db()
    assert ac.status == "needs_arbitration"  # the record itself says so; arbiters and admins see it
