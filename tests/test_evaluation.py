"""Labels and evaluation: the seed 001 worked example, candidate recall, the audit, family splits."""

from __future__ import annotations

import json
import unicodedata

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from review import services as review
from review import services as review_services
from screening import evaluation
from screening.engine import metrics
from screening.models import CandidatePair, Corpus, LabelSet
from tests.factories import completed_run
from tests.seeds import SEED001, SEED001_TEXTS

SEED_LABELS = (b"left_id,right_id,label,reason\nA,B,1,reformatted copy\nA,C,0,valid revision\nA,D,0,template\n"
               b"A,E,0,other\n")


def hand_jaccard(a: str, b: str, k: int = 5) -> float:
    """Seed 001's own definition, written out independently of the code under test."""

    def grams(text):
        norm = "".join(c for c in unicodedata.normalize("NFKC", text).casefold() if c.isalnum())
        return {norm[i : i + k] for i in range(len(norm) - k + 1)}

    x, y = grams(a), grams(b)
    return len(x & y) / len(x | y)


def seed_setup(import_records, labels=SEED_LABELS, **config):
    import_records("zh", SEED001)
    corpus = Corpus.objects.get(name="zh")
    run = completed_run("zh", near=True, **config)
    label_set = evaluation.labelset_import(corpus=corpus, data=labels, original_name="labels.csv")
    return run, label_set


@pytest.mark.django_db
def test_seed001_worked_example_at_three_thresholds(import_records):
    run, label_set = seed_setup(import_records)
    j = {k: hand_jaccard(SEED001_TEXTS["A"], SEED001_TEXTS[k]) for k in "BCDE"}
    assert j["B"] == 1.0 and 0.7 <= j["C"] < 0.9 and j["D"] < 0.3 and j["E"] == 0.0
    report = evaluation.run_evaluate(run=run, label_set=label_set)
    by_t = {m.threshold: m for m in report.metrics}
    # 0.5 and 0.7: A–B (label 1) and A–C (label 0, Jaccard ≈ 0.706) are predicted.
    for t in (0.5, 0.7):
        assert (by_t[t].tp, by_t[t].fp, by_t[t].fn) == (1, 1, 0)
        assert by_t[t].precision == 0.5 and by_t[t].recall == 1.0
    assert (by_t[0.9].tp, by_t[0.9].fp, by_t[0.9].fn, by_t[0.9].precision) == (1, 0, 0, 1.0)
    assert all(m.candidate_recall == 1.0 for m in report.metrics)
    pairs = {(p.left, p.right): p for p in report.pairs}
    assert pairs[("A", "C")].jaccard == pytest.approx(j["C"]) and pairs[("A", "C")].error(0.7) == metrics.FALSE_POSITIVE
    assert pairs[("A", "E")].candidate is False and pairs[("A", "E")].error(0.7) == ""


@pytest.mark.django_db
def test_precision_is_empty_when_nothing_is_predicted(import_records):
    run, label_set = seed_setup(import_records, labels=b"left_id,right_id,label\nA,D,0\nA,E,0\n")
    report = evaluation.run_evaluate(run=run, label_set=label_set)
    assert all(m.precision is None and m.recall is None for m in report.metrics)
    assert all((m.tp, m.fp) == (0, 0) for m in report.metrics)


@pytest.mark.django_db
def test_a_positive_returned_by_lsh_but_below_the_threshold_is_a_candidate_hit_and_a_miss(import_records):
    run, label_set = seed_setup(import_records, labels=b"left_id,right_id,label\nA,C,1\n")
    report = evaluation.run_evaluate(run=run, label_set=label_set, thresholds=[0.9])
    (m,) = report.metrics
    assert (m.candidate_recall, m.recall, m.tp, m.fn) == (1.0, 0.0, 0, 1)
    assert report.pairs[0].error(0.9) == metrics.BELOW_THRESHOLD


@pytest.mark.django_db
def test_the_audit_finds_a_pair_built_to_be_missed(import_records):
    # One band of 128 rows: a pair at Jaccard 0.71 shares it with probability 0.71^128 ≈ 1e-19.
    run, label_set = seed_setup(import_records, labels=b"left_id,right_id,label\nA,C,1\n", bands=1, rows=128)
    audit = evaluation.run_audit(run=run, threshold=0.7)
    assert not audit.sampled and audit.audited == 5
    assert [(a, b) for a, b, _ in audit.missed] == [("A", "C"), ("B", "C")]
    assert audit.missed[0][2] == pytest.approx(hand_jaccard(SEED001_TEXTS["A"], SEED001_TEXTS["C"]))
    report = evaluation.run_evaluate(run=run, label_set=label_set)
    assert report.pairs[0].error(0.7) == metrics.MISSED_BY_LSH and report.metrics[0].candidate_recall == 0.0
    # At a threshold above its score, the pair would be missed even had LSH returned it: below threshold.
    assert report.pairs[0].error(0.9) == metrics.BELOW_THRESHOLD


@pytest.mark.django_db
def test_the_audit_samples_above_its_limit_and_says_so(import_records):
    run, _ = seed_setup(import_records)
    audit = evaluation.run_audit(run=run, limit=3)
    assert audit.sampled and audit.audited == 3 and audit.documents == 5


@pytest.mark.django_db(transaction=True)
def test_the_audit_runs_on_a_worker_and_its_result_is_kept_with_the_evaluation(import_records, admin_user, queue,
                                                                               run_worker):
    from django.test import Client
    from django.urls import reverse

    run, _ = seed_setup(import_records, labels=b"left_id,right_id,label\nA,C,1\n", bands=1, rows=128)
    client = Client()
    client.force_login(admin_user)
    page = reverse("screening:evaluation", args=[run.pk])
    assert "No audit of this run yet" in client.get(page, {"audit": "1"}).content.decode()  # a GET runs nothing
    response = client.post(reverse("screening:audit_start", args=[run.pk]))
    assert response.status_code == 302
    audit = run.audits.get()
    assert audit.status == "queued" and "data-status-url" in client.get(page).content.decode()
    assert client.get(reverse("screening:audit_status", args=[audit.pk])).json()["active"] is True
    run_worker()
    audit.refresh_from_db()
    assert audit.status == "complete" and audit.requested_by == admin_user
    assert [m[:2] for m in audit.result["missed"]] == [["A", "C"], ["B", "C"]]
    text = client.get(page).content.decode()
    assert "of which 2 LSH did not return" in text and "Run the audit again" in text


@pytest.mark.django_db
def test_an_editor_cannot_start_an_audit(import_records, editor_client):
    from django.urls import reverse

    run, _ = seed_setup(import_records)
    assert editor_client.post(reverse("screening:audit_start", args=[run.pk])).status_code == 403
    assert "Run the audit" not in editor_client.get(reverse("screening:evaluation", args=[run.pk])).content.decode()


@pytest.mark.django_db
def test_a_second_audit_waits_for_the_first(import_records, admin_user):
    run, _ = seed_setup(import_records)
    evaluation.audit_create(run=run, user=admin_user)
    with pytest.raises(evaluation.EvaluationRefused, match="already under way"):
        evaluation.audit_create(run=run, user=admin_user)


def test_family_split_never_puts_a_source_on_both_sides():
    # Ten families of sources (s_k with m_k), two of them joined by a cross-link pair.
    pairs = [metrics.LabelledPair(f"d{i}", f"e{i}", i % 2, 0.5, 0.5, True, left_source=f"s{i % 10}",
                             right_source=f"m{i % 10}") for i in range(60)]
    pairs.append(metrics.LabelledPair("x", "y", 1, 0.9, 0.9, True, left_source="s0", right_source="m1"))
    split = metrics.family_split(pairs)
    assert not split.tuning & split.acceptance
    for p in pairs:
        sides = {"tuning" if s in split.tuning else "acceptance" for s in (p.left_source, p.right_source)}
        assert len(sides) == 1
    assert split.tuning and split.acceptance


@pytest.mark.django_db
def test_labels_without_split_get_a_family_split_reported_separately(import_records):
    run, label_set = seed_setup(import_records, labels=b"left_id,right_id,label\nA,B,1\nC,D,0\nC,E,0\n")
    report = evaluation.run_evaluate(run=run, label_set=label_set)
    assert set(report.family) == {"tuning", "acceptance"}
    acceptance_only = evaluation.run_evaluate(run=run, label_set=label_set, split="acceptance")
    assert acceptance_only.pairs and all(p.split == "acceptance" for p in acceptance_only.pairs)


@pytest.mark.django_db
def test_labels_of_one_family_get_no_split_rather_than_an_empty_side(import_records):
    run, label_set = seed_setup(import_records)  # every labelled pair shares A: one family of sources
    report = evaluation.run_evaluate(run=run, label_set=label_set)
    assert report.family == {} and not any(p.split for p in report.pairs)


@pytest.mark.django_db
def test_a_pair_of_languages_is_one_table_whichever_side_each_is_on(import_records):
    import_records("mixed", [{"doc_id": d, "language": lang, "body": f"the sensor guide number {n} " * 8}
                             for d, lang, n in (("a", "en", 1), ("b", "de", 1), ("c", "de", 2), ("d", "en", 2))])
    run = completed_run("mixed", near=True)
    label_set = evaluation.labelset_import(corpus=Corpus.objects.get(name="mixed"), original_name="l.csv",
                                           data=b"left_id,right_id,label\na,b,1\nc,d,1\n")
    report = evaluation.run_evaluate(run=run, label_set=label_set)
    assert list(report.by_language) == ["de/en"]


# --- label file rules ------------------------------------------------------------------------------


@pytest.mark.parametrize(("data", "problem"), [
    (b"left_id,right_id,label\nA,Z,1\n", "labels.csv line 2: unknown doc_id 'Z' in corpus zh"),
    (b"left_id,right_id,label\nA,B,2\n", "labels.csv line 2, field label: '2' is not 0 or 1"),
    (b"left_id,right_id,label\nA,B,yes\n", "labels.csv line 2, field label: 'yes' is not 0 or 1"),
    (b"left_id,right_id,label\nA,B,1\nB,A,0\n", "labels.csv line 3: pair (B, A) is labelled 0 here and 1 on line 2"),
    (b"left_id,right_id,label\nA,A,1\n", "labels.csv line 2: pairs a document with itself ('A')"),
    (b"left_id,label\nA,1\n", "labels.csv line 1: missing column(s) right_id; the columns are left_id, right_id, "
                              "label, reason, split"),
    (b"left_id,right_id,label,split\nA,B,1,train\n", "labels.csv line 2, field split: 'train' is not one of tuning, "
                                                     "acceptance"),
])
@pytest.mark.django_db
def test_every_label_rule_names_its_line_and_nothing_is_stored(import_records, data, problem):
    import_records("zh", SEED001)
    with pytest.raises(evaluation.LabelsRejected) as caught:
        evaluation.labelset_import(corpus=Corpus.objects.get(name="zh"), data=data, original_name="labels.csv")
    assert problem in caught.value.problems
    assert not LabelSet.objects.exists()


@pytest.mark.django_db
def test_extra_columns_are_ignored_with_a_notice(import_records):
    import_records("zh", SEED001)
    label_set = evaluation.labelset_import(corpus=Corpus.objects.get(name="zh"), original_name="labels.csv",
                                           data=b"left_id,right_id,label,annotator\nA,B,1,kim\n")
    assert label_set.notices == ["labels.csv line 1: extra column(s) annotator ignored"] and label_set.size == 1


@pytest.mark.django_db
def test_import_labels_and_evaluate_commands(import_records, tmp_path, capsys):
    import_records("zh", SEED001)
    completed_run("zh", near=True)
    path = tmp_path / "seed-labels.csv"
    path.write_bytes(SEED_LABELS)
    call_command("import_labels", "zh", str(path))
    assert "label set 'seed-labels': 4 pairs (1 positive)" in capsys.readouterr().out
    run_id = str(Corpus.objects.get(name="zh").runs.get().pk)
    call_command("evaluate", run_id, "--labels", "seed-labels", "--thresholds", "0.5,0.7,0.9", "--audit")
    out = capsys.readouterr().out
    assert "      0.9     1     0     0     1.000   1.000       1.000" in out
    assert "A C label 0 jaccard 0.706: false positive" in out and "audit over all 5 documents" in out
    call_command("evaluate", run_id, "--json")
    data = json.loads(capsys.readouterr().out)
    assert data["metrics"][0]["precision"] == 0.5


@pytest.mark.django_db
def test_import_labels_command_fails_with_every_problem(import_records, tmp_path, capsys):
    import_records("zh", SEED001)
    path = tmp_path / "bad.csv"
    path.write_bytes(b"left_id,right_id,label\nA,Q,1\nB,B,0\n")
    with pytest.raises(CommandError, match="bad.csv rejected: 2 problem"):
        call_command("import_labels", "zh", str(path))
    err = capsys.readouterr().err
    assert "bad.csv line 2: unknown doc_id 'Q'" in err and "bad.csv line 3: pairs a document with itself" in err


@pytest.mark.django_db
def test_reviewer_verdicts_serve_as_labels(import_records, editor, arbiter):
    run, _ = seed_setup(import_records)
    ab = CandidatePair.objects.get(run=run, left__doc_id="A", right__doc_id="B")
    ac = CandidatePair.objects.get(run=run, left__doc_id="A", right__doc_id="C")
    review.judgement_record(pair=ab, reviewer=editor, verdict="merge-entry", reason="copy")
    review.judgement_record(pair=ac, reviewer=editor, verdict="arbitration", reason="unsure")
    review.arbitration_record(pair=CandidatePair.objects.get(pk=ac.pk), arbiter=arbiter, verdict="valid-revision",
                              reason="date changed")
    label_set = review_services.labelset_from_verdicts(run=run)
    assert sorted(label_set.labels.values_list("left__doc_id", "right__doc_id", "label")) == [
        ("A", "B", 1), ("A", "C", 0)]


@pytest.mark.django_db
def test_evaluation_page_shows_tables_and_charts(import_records, admin_client):
    run, label_set = seed_setup(import_records)
    page = admin_client.get(reverse("screening:evaluation", args=[run.pk]),
                            {"labels": label_set.pk, "thresholds": "0.5,0.7,0.9"}).content.decode()
    for text in ("Precision and recall against the threshold", "<polyline", "Score distribution of labelled pairs",
                 "false positive", "candidate recall", "tuning"):
        assert text in page, text


@pytest.mark.django_db
def test_compare_page_puts_configurations_side_by_side(import_records, admin_client):
    run, label_set = seed_setup(import_records)
    completed_run("zh", near=True, shingle="char:3")
    page = admin_client.get(reverse("screening:compare", args=["zh"]), {"labels": label_set.pk}).content.decode()
    assert "char:3" in page and "char:5" in page


@pytest.mark.django_db
def test_labels_upload_page_reports_problems_by_line(import_records, admin_client):
    from django.core.files.uploadedfile import SimpleUploadedFile

    import_records("zh", SEED001)
    bad = SimpleUploadedFile("l.csv", b"left_id,right_id,label\nA,B,5\n")
    response = admin_client.post(reverse("screening:labels", args=["zh"]), {"name": "bad", "file": bad})
    assert "l.csv line 2, field label: &#x27;5&#x27; is not 0 or 1" in response.content.decode()
    response = admin_client.post(reverse("screening:labels", args=["zh"]),
                                 {"name": "good", "file": SimpleUploadedFile("l.csv", SEED_LABELS)}, follow=True)
    assert "good" in response.content.decode() and LabelSet.objects.get().size == 4
