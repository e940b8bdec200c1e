"""Review by cluster and in bulk: one decision for a family of copies or a filtered set, yet one insert-only
judgement per pair, under the same rules as pair by pair (k reviewers, leases, blind review), refused when it
would contradict the reviewer's own verdicts, sent to arbitration when it contradicts others' settled ones,
and undone as a whole by newer records."""

from __future__ import annotations

import csv
import io
import random

import pytest
from django.core.management import call_command
from django.urls import reverse

from review import decisions, selectors, services
from review.models import PRESET_REASONS, CurrentVerdict, Judgement, ReviewAction
from screening.models import CandidatePair, Document
from tests.factories import imported_run, reviewer

WORDS = ("archive sensor voltage guide review quotation template channel revision manual shelf ledger "
         "volume index record folder").split()


def family_records(sizes: list[int], seed: int = 3) -> list[dict]:
    """Families of near copies: each member is its family's text with one word changed (a full clique of
    pairs well above the 0.7 threshold); families share nothing."""
    rng = random.Random(seed)
    records = []
    for f, size in enumerate(sizes):
        def token():  # letters only: a changed number would be a revision signal, not a copy's edit
            return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(7))

        base = [token() if i % 3 == 0 else rng.choice(WORDS) for i in range(90)]
        for m in range(size):
            words = list(base)
            words[5 + 7 * m] = f"edit{'abcdefghijklmnopqrstuvwxyz'[m]}"
            records.append({"doc_id": f"f{f}-m{m}", "source_id": f"src-{f}-{m}", "language": "en",
                            "version": "1", "collected_at": f"2025-0{1 + m % 9}-01", "body": " ".join(words)})
    return records


@pytest.fixture
def families(import_records):
    return imported_run(import_records, "fam", family_records([5, 3, 2]), near=True)


def cluster_of(run, doc_id: str) -> int:
    doc = Document.objects.get(corpus=run.corpus, doc_id=doc_id)
    return CandidatePair.objects.filter(run=run, left=doc).exclude(cluster=None).values_list(
        "cluster", flat=True).first() or CandidatePair.objects.filter(run=run, right=doc).values_list(
        "cluster", flat=True).first()


def doc(run, doc_id: str) -> int:
    return Document.objects.get(corpus=run.corpus, doc_id=doc_id).pk


def decide(run, who, keeper="f0-m0", verdict="merge-entry", splits=None, reason="one family"):
    number = cluster_of(run, keeper)
    return decisions.cluster_decide(run=run, cluster=number, reviewer=who, keeper=doc(run, keeper),
                                    verdict=verdict, reason=reason,
                                    splits={doc(run, d): v for d, v in (splits or {}).items()})


@pytest.mark.django_db
def test_a_cluster_decision_records_one_judgement_per_pair_marked_for_the_cluster(families, editor):
    number = cluster_of(families, "f0-m0")
    pairs = CandidatePair.objects.filter(run=families, cluster=number)
    assert pairs.count() == 10  # five members, every two of them a pair
    action = decide(families, editor)
    judgements = Judgement.objects.filter(action=action)
    assert action.kind == "cluster" and action.cluster == number and action.judgements == 10
    assert judgements.count() == 10 and set(judgements.values_list("verdict", flat=True)) == {"merge-entry"}
    assert set(judgements.values_list("pair_id", flat=True)) == set(pairs.values_list("pk", flat=True))
    keeper = doc(families, "f0-m0")
    for j in judgements.select_related("pair"):
        expected = "left" if j.pair.left_id == keeper else "right" if j.pair.right_id == keeper else ""
        assert (j.reviewer, j.reason, j.retained) == (editor, "one family", expected)
    assert set(pairs.values_list("status", flat=True)) == {"settled"}
    assert action.selection["keeper_doc_id"] == "f0-m0"


@pytest.mark.django_db
def test_cluster_members_split_off_get_their_own_verdict_and_pairs_between_them_are_left(families, editor):
    action = decide(families, editor, splits={"f0-m3": "valid-revision", "f0-m4": "public-quote"})
    verdicts = {(j.pair.left.doc_id, j.pair.right.doc_id): j.verdict
                for j in Judgement.objects.filter(action=action).select_related("pair__left", "pair__right")}
    assert len(verdicts) == 9  # the pair between the two members split off is left for pair review
    for (a, b), verdict in verdicts.items():
        split = {"f0-m3": "valid-revision", "f0-m4": "public-quote"}
        assert verdict == (split.get(a) or split.get(b) or "merge-entry")
    left = CandidatePair.objects.get(run=families, left__doc_id__in=["f0-m3", "f0-m4"],
                                     right__doc_id__in=["f0-m3", "f0-m4"])
    assert left.status == "pending"


@pytest.mark.django_db
def test_a_cluster_decision_that_contradicts_my_own_verdicts_is_refused(families, editor):
    number = cluster_of(families, "f0-m0")
    pair = CandidatePair.objects.get(run=families, cluster=number, left__doc_id__in=["f0-m1", "f0-m2"],
                                     right__doc_id__in=["f0-m1", "f0-m2"])
    services.judgement_record(pair=pair, reviewer=editor, verdict="merge-entry", reason="the same")
    with pytest.raises(services.ReviewRefused, match="yet linked as copies by your other verdicts"):
        decide(families, editor, splits={"f0-m1": "valid-revision"})  # m1 = m2 (mine), m2 = m0, yet m1 ≠ m0
    assert not ReviewAction.objects.exists() and Judgement.objects.count() == 1


@pytest.mark.django_db
def test_a_cluster_decision_against_others_settled_verdicts_sends_them_to_arbitration(families, editor, editor2):
    number = cluster_of(families, "f0-m0")
    other = CandidatePair.objects.get(run=families, cluster=number, left__doc_id__in=["f0-m0", "f0-m1"],
                                      right__doc_id__in=["f0-m0", "f0-m1"])
    services.judgement_record(pair=other, reviewer=editor2, verdict="keep-both", reason="two channels")
    action = decide(families, editor)
    assert action.judgements == 9  # the settled pair wants no more reviewers
    other.refresh_from_db()
    assert other.status == "needs_arbitration" and other.flag.startswith(selectors.CLUSTER_FLAG)


@pytest.mark.django_db
def test_cluster_pairs_need_k_reviewers_and_respect_other_reviewers_leases(import_records, editor, editor2):
    run = imported_run(import_records, "fam", family_records([4]), near=True, reviews_required=2)
    pairs = list(CandidatePair.objects.filter(run=run, cluster__isnull=False).order_by("pk"))
    third = reviewer("third-editor")
    services.lease_take(pair_id=pairs[0].pk, reviewer=editor2)
    services.lease_take(pair_id=pairs[0].pk, reviewer=third)  # pair 0 is in two other reviewers' hands
    first = decide(run, editor, keeper="f0-m0")
    assert first.judgements == len(pairs) - 1
    assert set(CandidatePair.objects.filter(pk__in=[p.pk for p in pairs[1:]]).values_list("status", flat=True)) == {
        "judged"}  # one review of two: blind, says nothing of the verdict
    second = decide(run, editor2, keeper="f0-m0", verdict="merge-entry")
    assert second.judgements == len(pairs)  # editor2 holds pair 0 too
    assert CandidatePair.objects.get(pk=pairs[1].pk).status == "settled"


@pytest.mark.django_db
def test_the_cluster_page_shows_every_member_and_decides_with_its_preset(families, editor, editor_client):
    number = cluster_of(families, "f0-m0")
    page = editor_client.get(reverse("review:cluster", args=[families.pk, number])).content.decode()
    for m in range(5):
        assert f"f0-m{m}" in page
    assert "src-0-3" in page and "2025-04-01" in page and "editd" in page  # provenance and differences
    response = editor_client.post(reverse("review:cluster_decide", args=[families.pk, number]), {
        "verdict": "merge-entry", "keeper": doc(families, "f0-m0")})
    assert response.status_code == 302 and "clusters/next/" in response.url
    assert set(Judgement.objects.values_list("reason", flat=True)) == {PRESET_REASONS["merge-entry"]}
    following = editor_client.get(response.url)
    assert following.url == reverse("review:cluster", args=[families.pk, cluster_of(families, "f1-m0")])


@pytest.mark.django_db
def test_undo_withdraws_a_whole_cluster_decision_as_newer_records(families, editor, editor_client):
    action = decide(families, editor)
    response = editor_client.post(reverse("review:undo"))
    assert response.status_code == 302
    undo = ReviewAction.objects.get(kind="undo")
    assert undo.undoes == action and undo.judgements == 10
    assert Judgement.objects.count() == 20 and Judgement.objects.filter(verdict="withdrawn", action=undo).count() == 10
    assert set(CurrentVerdict.objects.values_list("verdict", flat=True)) == {"withdrawn"}
    assert set(CandidatePair.objects.filter(run=families, cluster=action.cluster).values_list("status", flat=True)
               ) == {"pending"}
    with pytest.raises(services.ReviewRefused, match="already undone"):
        decisions.action_undo(action=action, reviewer=editor)


@pytest.mark.django_db
def test_bulk_preview_shows_what_will_be_recorded_then_one_judgement_per_pair(families, editor, editor_client):
    params = {"run": families.pk, "min_score": "0.7", "verdict": "merge-entry"}
    page = editor_client.get(reverse("review:bulk_preview"), params).content.decode()
    total = CandidatePair.objects.filter(run=families, jaccard__gte=0.7).count()
    assert f"records <strong>{total}</strong> judgements as <strong>merge entry</strong>" in page
    assert not Judgement.objects.exists()  # a preview records nothing
    token = decisions.bulk_plan(flt=selectors.QueueFilter(run=families.pk, min_score=0.7), reviewer=editor,
                                verdict="merge-entry").token
    response = editor_client.post(f"{reverse('review:bulk_confirm')}?run={families.pk}&min_score=0.7",
                                  {"verdict": "merge-entry", "token": token, "reason": "copies, checked in bulk"})
    assert response.status_code == 302
    action = ReviewAction.objects.get()
    assert action.kind == "bulk" and action.judgements == total
    assert action.selection == {"run": str(families.pk), "min_score": "0.7"}
    assert Judgement.objects.filter(action=action, reason="copies, checked in bulk").count() == total


@pytest.mark.django_db
def test_a_bulk_confirmation_is_refused_when_the_set_changed_since_the_preview(families, editor, editor2):
    flt = selectors.QueueFilter(run=families.pk)
    token = decisions.bulk_plan(flt=flt, reviewer=editor, verdict="keep-both").token
    pair = CandidatePair.objects.filter(run=families).order_by("pk").first()
    services.judgement_record(pair=pair, reviewer=editor2, verdict="keep-both", reason="mine first")
    with pytest.raises(services.ReviewRefused, match="the set changed since the preview"):
        decisions.bulk_decide(flt=flt, reviewer=editor, verdict="keep-both", reason="r", token=token, filters={})
    assert Judgement.objects.count() == 1


@pytest.mark.django_db
def test_a_bulk_decision_over_too_many_pairs_is_refused(families, editor, monkeypatch):
    monkeypatch.setattr(decisions, "BULK_LIMIT", 3)
    with pytest.raises(services.ReviewRefused, match="more than 3 pairs: narrow them"):
        decisions.bulk_plan(flt=selectors.QueueFilter(run=families.pk), reviewer=editor, verdict="keep-both")


@pytest.mark.django_db
def test_undo_withdraws_a_whole_bulk_decision(families, editor):
    flt = selectors.QueueFilter(run=families.pk)
    plan = decisions.bulk_plan(flt=flt, reviewer=editor, verdict="keep-both")
    action = decisions.bulk_decide(flt=flt, reviewer=editor, verdict="keep-both", reason="r", token=plan.token,
                                   filters={})
    undo = decisions.undo_last(editor)
    assert isinstance(undo, ReviewAction) and undo.undoes == action and undo.judgements == action.judgements
    assert decisions.undo_last(editor) is None  # nothing left to undo


@pytest.mark.django_db
def test_the_sheet_marks_cluster_and_bulk_rows_and_still_verifies(families, editor, tmp_path, capsys):
    cluster_action = decide(families, editor)
    flt = selectors.QueueFilter(run=families.pk, cluster=cluster_of(families, "f1-m0"))
    plan = decisions.bulk_plan(flt=flt, reviewer=editor, verdict="keep-both")
    bulk = decisions.bulk_decide(flt=flt, reviewer=editor, verdict="keep-both", reason="r", token=plan.token,
                                 filters={})
    services.judgement_record(pair=CandidatePair.objects.get(run=families, cluster=cluster_of(families, "f2-m0")),
                              reviewer=editor, verdict="keep-both", reason="one by one")
    out = tmp_path / "sheet.csv"
    call_command("export_sheet", str(families.pk), "--out", str(out))
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert sum(r["decided_for_cluster"] == str(cluster_action.cluster) for r in rows) == 10
    assert sum(r["bulk_action"] == f"bulk #{bulk.pk}" for r in rows) == bulk.judgements == 3
    assert sum(not r["decided_for_cluster"] and not r["bulk_action"] for r in rows) == 1
    call_command("verify_sheet", str(out))
    assert "VALID" in capsys.readouterr().out
