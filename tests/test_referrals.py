"""Once a pair is sent to arbitration, for whatever reason, only an arbiter settles it: a pair its cluster's
settled verdicts contradict (A=B, B=C, yet A≠C) stays with the arbiters whatever its reviewers, or the
cluster's, record afterwards; and a cluster decision is a final verdict, never "arbitration"."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from django.urls import reverse

from dedup_site import tokens
from review import decisions, selectors, services
from review.models import Judgement, ReviewAction
from screening.models import CandidatePair
from tests.factories import reviewer, seed_run
from tests.test_cluster_review import cluster_of, decide, doc, family_records
from tests.test_review import pair


def _api_judge(user, p, verdict: str):
    text = tokens.token_create(user=user, name="audit", actor=user)[1]
    return Client().post(f"/api/v1/pairs/{p.pk}/judgements/", json.dumps({"verdict": verdict, "reason": "r"}),
                         content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {text}")


def _contradicted(import_records):
    """The audit's run: one review a pair; ed1 merges A–B, ed2 merges B–C, ed3 keeps A–C."""
    run = seed_run(import_records)
    ed1, ed2, ed3 = reviewer("ed1"), reviewer("ed2"), reviewer("ed3")
    services.judgement_record(pair=pair(run, "A", "B"), reviewer=ed1, verdict="merge-entry", reason="copy")
    services.judgement_record(pair=pair(run, "B", "C"), reviewer=ed2, verdict="merge-entry", reason="copy")
    services.judgement_record(pair=pair(run, "A", "C"), reviewer=ed3, verdict="keep-both", reason="different")
    return run, ed1, ed2, ed3


@pytest.mark.django_db
def test_a_reviewer_of_a_referred_pair_cannot_settle_it_by_changing_their_verdict(import_records, arbiter):
    run, _, _, ed3 = _contradicted(import_records)
    ac = pair(run, "A", "C")
    assert ac.status == "needs_arbitration" and ac.flag.startswith("contradicts cluster")
    response = _api_judge(ed3, ac, "merge-entry")
    assert response.status_code == 201, response.content  # the change of mind is recorded for the arbiter
    ac.refresh_from_db()
    assert (ac.status, ac.final_verdict) == ("needs_arbitration", ""), "a reviewer settled a referred pair"
    assert ac.flag.startswith("contradicts cluster")
    assert ac.pk in [p.pk for p in selectors.arbitration_cases(arbiter, flt=selectors.ArbitrationFilter())]


@pytest.mark.django_db
def test_withdrawing_a_link_of_the_chain_leaves_the_referred_pair_with_the_arbiters(import_records, arbiter):
    run, ed1, _, _ = _contradicted(import_records)
    services.judgement_undo(reviewer=ed1)  # A–B withdrawn: nothing contradicts A≠C any more
    ac = pair(run, "A", "C")
    assert ac.status == "needs_arbitration"
    services.arbitration_record(pair=ac, arbiter=arbiter, verdict="keep-both", reason="different texts")
    ac.refresh_from_db()
    assert (ac.status, ac.final_verdict, ac.flag) == ("settled", "keep-both", "")


@pytest.mark.django_db
def test_a_referral_is_recorded_once_and_refuses_update_and_delete(import_records):
    run, _, _, ed3 = _contradicted(import_records)
    ac = pair(run, "A", "C")
    from review.models import Referral

    services.judgement_record(pair=ac, reviewer=ed3, verdict="merge-entry", reason="on second thought")
    referral = Referral.objects.get()
    assert referral.pair_id == ac.pk and referral.reason == ac.flag
    for sql in (f"UPDATE review_referral SET reason = 'x' WHERE id = {referral.pk}",  # noqa: S608
                f"DELETE FROM review_referral WHERE id = {referral.pk}"):  # noqa: S608
        with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql)


@pytest.fixture
def families(import_records):
    from tests.factories import imported_run

    return imported_run(import_records, "fam", family_records([5, 3, 2]), near=True)


@pytest.mark.django_db
def test_undoing_the_cluster_decision_that_caused_a_referral_leaves_it_with_the_arbiters(families, editor, editor2):
    other = CandidatePair.objects.get(run=families, left__doc_id__in=["f0-m0", "f0-m1"],
                                      right__doc_id__in=["f0-m0", "f0-m1"])
    services.judgement_record(pair=other, reviewer=editor2, verdict="keep-both", reason="two")
    action = decide(families, editor)  # the family as copies: m0 = m2 = m1, against editor2's m0 ≠ m1
    other.refresh_from_db()
    assert other.status == "needs_arbitration"
    decisions.action_undo(action=action, reviewer=editor)
    other.refresh_from_db()
    assert other.status == "needs_arbitration" and other.flag.startswith("contradicts cluster")


@pytest.mark.django_db
def test_a_cluster_decision_refuses_the_arbitration_verdict(families, editor, editor_client):
    number = cluster_of(families, "f0-m0")
    response = editor_client.post(reverse("review:cluster_decide", args=[families.pk, number]),
                                  {"keeper": doc(families, "f0-m0"), "verdict": "arbitration", "reason": "unsure"})
    assert response.status_code == 302
    assert not Judgement.objects.exists() and not ReviewAction.objects.exists()
    assert not CandidatePair.objects.filter(run=families, status="needs_arbitration").exists()
    with pytest.raises(services.ReviewRefused, match="arbitration.* not one of keep-both"):
        decide(families, editor, verdict="arbitration")


PREVIOUS = [("screening", "0018_upload_language_check_state"), ("review", "0011_sheetexport_bucket_prefix")]


@pytest.mark.django_db(transaction=True)
def test_upgrading_keeps_pairs_flagged_by_their_cluster_with_the_arbiters(import_records):
    run, _, _, ed3 = _contradicted(import_records)
    ac = pair(run, "A", "C")
    call_command("migrate", "review", "0011", verbosity=0)  # as the previous release left it: no referral
    try:
        assert "review_referral" not in connection.introspection.table_names()
        old = MigrationExecutor(connection).loader.project_state(PREVIOUS).apps
        assert old.get_model("screening", "CandidatePair").objects.get(pk=ac.pk).status == "needs_arbitration"
    finally:
        call_command("migrate", verbosity=0)
    from review.models import Referral

    assert list(Referral.objects.values_list("pair_id", "reason")) == [(ac.pk, ac.flag)]
    services.judgement_record(pair=ac, reviewer=ed3, verdict="merge-entry", reason="on second thought")
    ac.refresh_from_db()
    assert ac.status == "needs_arbitration"
