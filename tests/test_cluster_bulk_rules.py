"""Cluster and bulk decisions under pressure, found by an adversarial review: double clicks and races, blind
review after a withdrawn verdict, arbitrated contradictions, malformed requests."""

from __future__ import annotations

import pytest
from django.urls import reverse

from review import decisions, selectors, services
from review.models import CurrentVerdict, Judgement, ReviewAction
from screening.models import CandidatePair
from tests.factories import completed_run, imported_run, reviewer
from tests.seeds import SEED001
from tests.test_cluster_review import cluster_of, decide, doc, family_records


@pytest.fixture
def families(import_records):
    return imported_run(import_records, "fam", family_records([5, 3, 2]), near=True)


def pair_of(run, a, b):
    return CandidatePair.objects.get(run=run, left__doc_id__in=[a, b], right__doc_id__in=[a, b])


# A second request whose plan was read before the first committed records nothing twice.
@pytest.mark.django_db
def test_a_bulk_plan_read_before_a_second_click_records_nothing_twice(families, editor):
    flt = selectors.QueueFilter(run=families.pk)
    stale = decisions.bulk_plan(flt=flt, reviewer=editor, verdict="keep-both")  # 2nd request's read
    decisions.bulk_decide(flt=flt, reviewer=editor, verdict="keep-both", reason="r", token=stale.token, filters={})
    n = Judgement.objects.count()
    try:  # the 2nd request reaches _record with the plan it read before the 1st committed
        decisions._record(stale, kind="bulk", run=families, reviewer=editor, verdict="keep-both", reason="r",
                          selection={})
    except services.ReviewRefused:
        pass
    assert Judgement.objects.count() == n, "the same bulk decision was recorded twice"


# A=B, B=C by this decision while an arbiter settled A≠C: the copies go to arbitration.
@pytest.mark.django_db
def test_a_cluster_decision_against_an_arbitrated_verdict_goes_to_arbitration(families, editor, editor2, arbiter):
    ac = pair_of(families, "f0-m0", "f0-m1")
    services.judgement_record(pair=ac, reviewer=editor2, verdict="keep-both", reason="two")
    services.judgement_record(pair=pair_of(families, "f0-m0", "f0-m2"), reviewer=editor2, verdict="merge-entry",
                              reason="one")
    services.judgement_record(pair=pair_of(families, "f0-m1", "f0-m2"), reviewer=editor2, verdict="merge-entry",
                              reason="one")  # A=C? no: m0=m2, m1=m2, m0≠m1 -> flagged
    ac.refresh_from_db()
    assert ac.status == "needs_arbitration"
    services.arbitration_record(pair=ac, arbiter=arbiter, verdict="keep-both", reason="final: different")
    # editor2 withdraws the merges (not arbitrated), then the editor decides the family as copies
    decisions.undo_last(editor2)
    decisions.undo_last(editor2)
    decide(families, editor)  # m0 = m2 = m1 ... yet m0 ≠ m1 by arbitration
    pairs = CandidatePair.objects.filter(run=families, cluster=ac.cluster)
    assert set(pairs.values_list("status", flat=True)) != {"settled"}, \
        "every pair settled although A=B, B=C and A≠C (arbitrated)"


# Blind review: after withdrawing my verdict, neither the bulk preview nor a refused judgement tells me the
# pair was disputed or how an arbiter settled it.
@pytest.mark.django_db
def test_the_bulk_preview_says_nothing_of_a_pair_i_withdrew_from_that_was_arbitrated(import_records, editor, editor2,
                                                                                     arbiter, editor_client):
    import_records("zh", SEED001)
    run = completed_run("zh", near=True, reviews_required=2)
    ab = CandidatePair.objects.get(run=run, left__doc_id="A", right__doc_id="B")
    third = reviewer("tess-third")
    services.judgement_record(pair=ab, reviewer=editor, verdict="keep-both", reason="mine")
    services.judgement_undo(reviewer=editor)  # withdrawn: the editor has no verdict on ab
    services.judgement_record(pair=ab, reviewer=editor2, verdict="merge-entry", reason="secret")
    services.judgement_record(pair=ab, reviewer=third, verdict="keep-both", reason="secret")
    services.arbitration_record(pair=ab, arbiter=arbiter, verdict="merge-entry", reason="secret arbitration")
    page = editor_client.get(reverse("review:pair", args=[ab.pk])).content.decode()
    assert "secret" not in page  # the pair page hides it (no current verdict)
    preview = editor_client.get(reverse("review:bulk_preview"), {"run": run.pk, "verdict": "keep-both"})
    assert "settled by arbitration" not in preview.content.decode(), "bulk preview tells the pair was disputed"


@pytest.mark.django_db
def test_judging_after_a_withdrawal_does_not_name_the_arbiters_verdict_bulk_or_not(import_records, editor, editor2,
                                                                                   arbiter):
    import_records("zh", SEED001)
    run = completed_run("zh", near=True, reviews_required=2)
    ab = CandidatePair.objects.get(run=run, left__doc_id="A", right__doc_id="B")
    third = reviewer("tess-third")
    services.judgement_record(pair=ab, reviewer=editor, verdict="keep-both", reason="mine")
    services.judgement_undo(reviewer=editor)
    services.judgement_record(pair=ab, reviewer=editor2, verdict="merge-entry", reason="secret")
    services.judgement_record(pair=ab, reviewer=third, verdict="keep-both", reason="secret")
    services.arbitration_record(pair=ab, arbiter=arbiter, verdict="valid-revision", reason="secret")
    with pytest.raises(services.ReviewRefused) as refused:
        services.judgement_record(pair=ab, reviewer=editor, verdict="keep-both", reason="again")
    assert "valid-revision" not in str(refused.value), str(refused.value)


# After undoing a cluster decision, "next cluster" offers that cluster again.
@pytest.mark.django_db
def test_an_undone_cluster_is_offered_again(families, editor):
    action = decide(families, editor)
    decisions.action_undo(action=action, reviewer=editor)
    decide(families, editor, keeper="f1-m0")
    decide(families, editor, keeper="f2-m0")
    assert decisions.next_cluster(families, editor) == action.cluster


# Malformed values are refused, never a server error.
@pytest.mark.django_db
def test_a_cluster_split_key_in_other_digits_is_refused_not_an_error(families, editor_client):
    client = editor_client
    client.raise_request_exception = False
    number = cluster_of(families, "f0-m0")
    response = client.post(reverse("review:cluster_decide", args=[families.pk, number]),
                           {"verdict": "merge-entry", "keeper": doc(families, "f0-m0"), "split_²": "keep-both"})
    assert response.status_code in (302, 400), response.status_code


@pytest.mark.django_db
def test_a_cluster_keeper_of_thousands_of_digits_is_refused_not_an_error(families, editor_client):
    client = editor_client
    client.raise_request_exception = False
    number = cluster_of(families, "f0-m0")
    response = client.post(reverse("review:cluster_decide", args=[families.pk, number]),
                           {"verdict": "merge-entry", "keeper": "1" * 5000})
    assert response.status_code in (302, 400), response.status_code


@pytest.mark.django_db
def test_a_bulk_preview_of_an_unknown_run_is_refused_not_an_error(families, editor_client):
    client = editor_client
    client.raise_request_exception = False
    response = client.get(reverse("review:bulk_preview"), {"run": 999999, "verdict": "keep-both"})
    assert response.status_code in (302, 404), response.status_code


@pytest.mark.django_db
def test_a_cluster_reason_longer_than_the_pair_forms_limit_is_refused(families, editor):
    with pytest.raises(services.ReviewRefused):
        decide(families, editor, reason="x" * 100_000)


# The next cluster is found however many clusters before it are held by others.
@pytest.mark.django_db
def test_the_next_cluster_is_found_beyond_fifty_busy_ones(import_records, editor, editor2):
    run = imported_run(import_records, "many", family_records([2] * 51), near=True)
    pairs = list(CandidatePair.objects.filter(run=run, cluster__isnull=False).order_by("cluster"))
    assert len(pairs) == 51
    holders = [editor2, *(reviewer(f"holder-{i}") for i in range(2))]  # each under the cap on leases
    for i, p in enumerate(pairs[:50]):
        assert services.lease_take(pair_id=p.pk, reviewer=holders[i % 3])
    assert decisions.next_cluster(run, editor) == pairs[50].cluster


# A bulk action records the filters it applied, not the raw query string.
@pytest.mark.django_db
def test_a_bulk_decision_records_the_filters_it_applied(families, editor, editor_client):
    flt = selectors.QueueFilter(run=families.pk)
    token = decisions.bulk_plan(flt=flt, reviewer=editor, verdict="keep-both").token
    editor_client.post(f"{reverse('review:bulk_confirm')}?run={families.pk}&min_score=abc&cluster=-5",
                       {"verdict": "keep-both", "token": token, "reason": "r"})
    action = ReviewAction.objects.get()
    assert "min_score" not in action.selection and "cluster" not in action.selection, action.selection


# A pair a cluster decision leaves (between two splits) is free for other reviewers at once.
@pytest.mark.django_db
def test_a_pair_a_cluster_decision_left_is_not_kept_from_others(families, editor, editor2, editor_client):
    number = cluster_of(families, "f0-m0")
    editor_client.get(reverse("review:cluster", args=[families.pk, number]))
    editor_client.post(reverse("review:cluster_decide", args=[families.pk, number]), {
        "verdict": "merge-entry", "keeper": doc(families, "f0-m0"),
        f"split_{doc(families, 'f0-m3')}": "keep-both", f"split_{doc(families, 'f0-m4')}": "keep-both"})
    left = pair_of(families, "f0-m3", "f0-m4")
    assert left.status == "pending"
    assert services.lease_take(pair_id=left.pk, reviewer=editor2), "left for pair review, yet held by the decider"


# The same as a real race: two confirmations of one preview (a double click) on two connections.
@pytest.mark.django_db(transaction=True)
def test_a_double_click_on_bulk_confirm_records_each_pair_once(import_records, editor, monkeypatch):
    import threading

    from django.db import connection

    run = imported_run(import_records, "fam", family_records([5, 3, 2]), near=True)
    flt = selectors.QueueFilter(run=run.pk)
    token = decisions.bulk_plan(flt=flt, reviewer=editor, verdict="keep-both").token
    both_planned = threading.Barrier(2, timeout=20)
    original = decisions._record

    def record(plan, **kw):
        both_planned.wait()  # each request has read its plan; neither has committed
        return original(plan, **kw)

    monkeypatch.setattr(decisions, "_record", record)
    outcomes = []

    def confirm():
        try:
            outcomes.append(decisions.bulk_decide(flt=flt, reviewer=editor, verdict="keep-both", reason="r",
                                                  token=token, filters={}).pk)
        except Exception as error:  # noqa: BLE001
            outcomes.append(repr(error))
        finally:
            connection.close()

    threads = [threading.Thread(target=confirm) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    pairs = CandidatePair.objects.filter(run=run).count()
    assert Judgement.objects.count() == pairs, (outcomes, Judgement.objects.count(), pairs)


# The sheet after an undo: rows marked, and it verifies.
@pytest.mark.django_db
def test_a_sheet_with_cluster_undo_rows_verifies(families, editor, tmp_path, capsys):
    import csv
    import io

    from django.core.management import call_command

    action = decide(families, editor)
    decisions.action_undo(action=action, reviewer=editor)
    out = tmp_path / "sheet.csv"
    call_command("export_sheet", str(families.pk), "--out", str(out))
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert sum(r["decided_for_cluster"] == f"{action.cluster} (undo)" for r in rows) == 10
    call_command("verify_sheet", str(out))
    assert "VALID" in capsys.readouterr().out


# Every editor page, with a withdrawn judgement: others agree vs others disagree and an arbiter settles.
@pytest.mark.django_db
def test_bulk_and_cluster_pages_stay_blind_after_a_withdrawn_judgement(import_records, editor, editor2, arbiter,
                                                                       admin_user, editor_client):
    from tests.test_blind_review import _scenario, _urls

    import_records("zh", SEED001)
    run = completed_run("zh", near=True, reviews_required=2)
    ab = CandidatePair.objects.get(run=run, left__doc_id="A", right__doc_id="B")
    third = reviewer("tess-third")
    services.judgement_record(pair=ab, reviewer=editor, verdict="keep-both", reason="mine")
    services.judgement_undo(reviewer=editor)
    urls = _urls(run, ab)

    def agree():
        services.judgement_record(pair=ab, reviewer=editor2, verdict="merge-entry", reason="x")
        services.judgement_record(pair=ab, reviewer=third, verdict="merge-entry", reason="x")

    def disputed():
        services.judgement_record(pair=ab, reviewer=editor2, verdict="merge-entry", reason="x")
        services.judgement_record(pair=ab, reviewer=third, verdict="keep-both", reason="x")
        services.arbitration_record(pair=ab, arbiter=arbiter, verdict="merge-entry", reason="x")

    a = _scenario(editor_client, urls, agree, judge=ab)
    b = _scenario(editor_client, urls, disputed, judge=ab)
    differ = sorted(u for u in a if a[u] != b[u])
    assert not differ, differ


@pytest.mark.django_db(transaction=True)
def test_two_editors_deciding_one_cluster_at_once_record_one_decision(import_records, editor, editor2, monkeypatch):
    import threading

    from django.db import connection

    run = imported_run(import_records, "fam", family_records([5]), near=True)
    number = cluster_of(run, "f0-m0")
    keeper = doc(run, "f0-m0")
    gate = threading.Barrier(2, timeout=20)
    original = decisions._record
    monkeypatch.setattr(decisions, "_record", lambda plan, **kw: (gate.wait(), original(plan, **kw))[1])
    outcomes = []

    def go(who, verdict):
        try:
            outcomes.append(decisions.cluster_decide(run=run, cluster=number, reviewer=who, keeper=keeper,
                                                     verdict=verdict, reason="r").pk)
        except Exception as error:  # noqa: BLE001
            outcomes.append(str(error))
        finally:
            connection.close()

    threads = [threading.Thread(target=go, args=a) for a in ((editor, "merge-entry"), (editor2, "keep-both"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert Judgement.objects.count() == 10, outcomes
    assert CurrentVerdict.objects.values("reviewer").distinct().count() == 1


# A mistyped filter is refused by name, never dropped: the decision would cover more than was meant.
@pytest.mark.django_db
def test_a_bulk_decision_refuses_a_filter_it_does_not_know(families, editor, editor_client):
    query = {"run": families.pk, "verdict": "keep-both", "suggestoin": "keep-both"}
    page = editor_client.get(reverse("review:bulk_preview"), query, follow=True)
    told = " ".join(str(m) for m in page.context["messages"])
    assert "no filter is named suggestoin" in told and "plan" not in page.context
    flt = selectors.QueueFilter(run=families.pk)
    token = decisions.bulk_plan(flt=flt, reviewer=editor, verdict="keep-both").token
    editor_client.post(f"{reverse('review:bulk_confirm')}?run={families.pk}&suggestoin=keep-both",
                       {"verdict": "keep-both", "token": token, "reason": "r"})
    assert not Judgement.objects.exists()
    queue = editor_client.get(reverse("review:queue"), {"run": families.pk, "suggestoin": "x"})
    assert any("suggestoin" in str(m) for m in queue.context["messages"])
