"""The editor's loop without a browser: preset reasons (a decision in two keys), the arbiter's count, filters
and next case."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from review import selectors, services
from review.models import PRESET_REASONS, Arbitration, Judgement, ReviewPolicy
from tests.factories import seed_run


def pair(run, left, right):
    return run.pairs.get(left__doc_id=left, right__doc_id=right)


def judge(client, p, verdict, reason=""):
    return client.post(reverse("review:judge", args=[p.pk]), {"verdict": verdict, "reason": reason,
                                                              "retained": "both"})


@pytest.mark.django_db
def test_a_verdict_without_a_typed_reason_records_its_preset_reason(import_records, editor, editor_client):
    run = seed_run(import_records)
    response = judge(editor_client, pair(run, "A", "B"), "merge-entry")
    assert response.status_code == 302 and response.url.startswith(reverse("review:next"))
    assert Judgement.objects.get().reason == PRESET_REASONS["merge-entry"]


@pytest.mark.django_db
def test_a_default_preset_is_offered_and_recorded_in_the_reviewers_language_a_corpuss_own_as_typed(import_records,
                                                                                                  editor):
    from django.test import Client
    from django.utils import translation

    run = seed_run(import_records)
    persian = Client(headers={"accept-language": "fa-IR"})
    persian.force_login(editor)
    judge(persian, pair(run, "A", "B"), "merge-entry")
    with translation.override("fa"):
        expected = translation.gettext(PRESET_REASONS["merge-entry"])
    assert expected != PRESET_REASONS["merge-entry"] and Judgement.objects.get().reason == expected
    ReviewPolicy.objects.create(corpus=run.corpus, preset_reasons={"valid-revision": "the corpus's own"})
    judge(persian, pair(run, "A", "C"), "valid-revision")
    assert Judgement.objects.get(verdict="valid-revision").reason == "the corpus's own"


@pytest.mark.django_db
def test_a_typed_reason_is_recorded_rather_than_the_preset(import_records, editor_client):
    run = seed_run(import_records)
    judge(editor_client, pair(run, "A", "C"), "valid-revision", "每周 became 每天")
    assert Judgement.objects.get().reason == "每周 became 每天"


@pytest.mark.django_db
def test_arbitration_has_no_preset_so_its_reason_must_be_typed(import_records, editor_client):
    run = seed_run(import_records)
    response = judge(editor_client, pair(run, "A", "B"), "arbitration")
    assert not Judgement.objects.exists()
    page = editor_client.get(response.url).content.decode()
    assert "a reason is required for arbitration" in page


@pytest.mark.django_db
def test_admins_set_a_corpus_s_preset_reasons(import_records, admin_client, editor):
    from django.test import Client

    editor_client = Client()  # admin_client and editor_client would be one client
    editor_client.force_login(editor)
    run = seed_run(import_records)
    form = admin_client.get(reverse("review:policy", args=["zh"])).content.decode()
    assert PRESET_REASONS["keep-both"] in form and 'name="preset_arbitration"' in form
    data = {f"preset_{v}": text for v, text in PRESET_REASONS.items()}
    data["preset_keep-both"] = "两个渠道，各自保留"
    response = admin_client.post(reverse("review:policy", args=["zh"]), data)
    assert response.status_code == 302
    assert run.corpus.review_policy.preset_reasons == {"keep-both": "两个渠道，各自保留"}  # only what differs
    judge(editor_client, pair(run, "A", "B"), "keep-both")
    assert Judgement.objects.get().reason == "两个渠道，各自保留"
    page = editor_client.get(reverse("review:pair", args=[pair(run, "A", "C").pk])).content.decode()
    assert json.dumps("两个渠道，各自保留") in page  # handed to the page's script with the others


@pytest.mark.django_db
def test_an_unknown_verdict_s_preset_is_refused(import_records):
    run = seed_run(import_records)
    with pytest.raises(services.ReviewRefused, match="no such verdict for a preset reason: delete"):
        services.review_policy_set(corpus=run.corpus, user=None, allow_self_arbitration=False,
                                   preset_reasons={"delete": "gone"})


def disputed_run(import_records, editor, editor2):
    """Seed 001 with two reviews per pair, every pair disputed."""
    run = seed_run(import_records, reviews_required=2)
    for p in run.pairs.all():
        services.judgement_record(pair=p, reviewer=editor, verdict="merge-entry", reason="copy")
        services.judgement_record(pair=p, reviewer=editor2, verdict="keep-both", reason="different")
    return run


@pytest.mark.django_db
def test_the_arbitration_queue_counts_and_filters_its_cases(import_records, editor, editor2, arbiter_client):
    run = disputed_run(import_records, editor, editor2)
    page = arbiter_client.get(reverse("review:arbitration_queue")).content.decode()
    assert "<strong>3</strong> cases waiting" in page
    asked = arbiter_client.get(reverse("review:arbitration_queue"), {"why": "asked", "run": run.pk})
    assert "<strong>0</strong> cases waiting" in asked.content.decode()
    disagree = arbiter_client.get(reverse("review:arbitration_queue"), {"why": "disagree"}).content.decode()
    assert "<strong>3</strong> cases waiting" in disagree


@pytest.mark.django_db
def test_an_arbiter_goes_on_to_the_next_case_after_settling(import_records, editor, editor2, arbiter,
                                                            arbiter_client):
    run = disputed_run(import_records, editor, editor2)
    first = selectors.next_case(arbiter)
    response = arbiter_client.post(reverse("review:arbitrate", args=[first.pk]), {"verdict": "merge-entry",
                                                                                 "retained": "both"})
    assert Arbitration.objects.get().reason == PRESET_REASONS["merge-entry"]
    assert response.url == reverse("review:arbitration_next")
    following = arbiter_client.get(response.url)
    second = selectors.next_case(arbiter)
    assert second is not None and second.pk != first.pk
    assert following.url == reverse("review:arbitrate", args=[second.pk])
    # n passes a case by: the one after it, going round, never the same one.
    passed = arbiter_client.get(reverse("review:arbitration_next"), {"after": second.pk})
    assert passed.url != reverse("review:arbitrate", args=[second.pk])
    assert run.pairs.filter(status="needs_arbitration").count() == 2


@pytest.mark.django_db
def test_next_case_skips_the_cases_an_arbiter_took_part_in(import_records, editor, arbiter, arbiter_client):
    run = seed_run(import_records, reviews_required=2)
    own = pair(run, "A", "B")
    services.judgement_record(pair=own, reviewer=editor, verdict="merge-entry", reason="copy")
    services.judgement_record(pair=own, reviewer=arbiter, verdict="keep-both", reason="different")
    assert selectors.next_case(arbiter) is None
    response = arbiter_client.get(reverse("review:arbitration_next"))
    assert response.url.startswith(reverse("review:arbitration_queue"))
    mine = arbiter_client.get(reverse("review:arbitration_queue"), {"mine": "on"}).content.decode()
    assert "Nothing waits for arbitration with these filters" in mine


@pytest.mark.parametrize(("top", "labels"), [(1, [0, 1]), (3, [0, 3]), (4, [0, 2, 4]), (10, [0, 5, 10])])
def test_chart_count_ticks_are_whole_counts(top, labels):
    from screening.charts import count_ticks

    ticks = count_ticks(top, 200.0, 180.0)
    assert [t["label"] for t in ticks] == labels
    assert ticks[0]["y"] == 200.0 and ticks[-1]["y"] == 20.0
