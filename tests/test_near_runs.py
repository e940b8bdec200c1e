"""Runs with the near pass: seed 001 end to end, stored signatures, explanations, pages, commands."""

from __future__ import annotations

import csv
import os

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from screening import runs
from screening.engine import evidence, minhash
from screening.engine.minhash import NearConfig
from screening.models import CandidatePair, Cluster, Corpus, Document, DocumentSignature, ScreeningRun
from tests.factories import completed_run
from tests.seeds import SEED000, SEED001

A_C = 24 / 34  # seed 001, character 5-grams, computed by hand in test_near_engine


def pairs_of(run) -> dict[tuple[str, str], CandidatePair]:
    return {(p.left.doc_id, p.right.doc_id): p for p in run.pairs.filter(pass_name="near").select_related(
        "left", "right")}


@pytest.mark.django_db
def test_seed001_pairs_a_with_b_and_c_and_leaves_d_and_e_alone(import_records):
    import_records("zh", SEED001)
    run = completed_run("zh", near=True)
    pairs = pairs_of(run)
    assert set(pairs) == {("A", "B"), ("A", "C"), ("B", "C")}
    assert pairs[("A", "B")].jaccard == 1.0 and pairs[("A", "B")].minhash_estimate == 1.0
    assert pairs[("A", "C")].jaccard == pytest.approx(A_C)
    assert pairs[("A", "C")].suggestion == "review_both_keep_originals" and pairs[("A", "C")].status == "pending"
    near = run.stats["near"]
    assert (near["representatives"], near["signed"], near["empty"], near["stored"]) == (5, 5, 0, 3)
    assert near["at_or_above_threshold"] == 3
    assert list(Cluster.objects.filter(run=run).values_list("size", "members")) == [
        (3, [[pairs[("A", "B")].left_id, "A"], [pairs[("A", "B")].right_id, "B"], [pairs[("A", "C")].right_id, "C"]])
    ]
    assert {p.cluster for p in pairs.values()} == {1}


@pytest.mark.django_db
def test_run_records_bands_rows_and_the_probability_at_the_threshold(import_records):
    import_records("zh", SEED001)
    run = completed_run("zh", near=True)
    config = run.config["near"]
    assert (config["policy"], config["shingle"], config["num_perm"], config["threshold"]) == (
        "nfkc-casefold-alnum-v1", "char:5", 128, 0.7)
    assert (config["bands"], config["rows"], config["scheme"], config["seed"]) == (32, 4, "affine32", 1)
    assert runs.near_config_of(run).probability_at_threshold >= 0.99


@pytest.mark.django_db
def test_one_representative_per_exact_group_is_signed(import_records):
    import_records("zh", SEED001 + [dict(SEED001[0], doc_id="A-copy", source_id="mirror")])
    run = completed_run("zh", near=True)
    assert run.stats["exact_groups"] == 1 and run.stats["near"]["representatives"] == 5
    assert set(pairs_of(run)) == {("A", "B"), ("A", "C"), ("B", "C")}  # reported once, for A
    assert CandidatePair.objects.get(run=run, pass_name="exact").left.doc_id == "A-copy"
    # The copy joins the cluster through its exact pair.
    assert Cluster.objects.get(run=run).size == 4


@pytest.mark.django_db
def test_documents_without_shingles_are_counted_and_never_paired(import_records):
    import_records("zh", SEED001 + [
        {"doc_id": "x1", "language": "en", "body": "!!!"}, {"doc_id": "x2", "language": "en", "body": "... ?"},
    ])
    run = completed_run("zh", near=True)
    assert run.stats["near"]["empty"] == 2
    assert not run.pairs.filter(left__doc_id__in=["x1", "x2"]).exists()
    assert not run.pairs.filter(right__doc_id__in=["x1", "x2"]).exists()


@pytest.mark.django_db
def test_same_corpus_and_configuration_give_identical_pairs_and_reuse_signatures(import_records):
    import_records("zh", SEED001)
    first = completed_run("zh", near=True)
    second = completed_run("zh", near=True)
    assert list(runs.pair_rows(first)) == list(runs.pair_rows(second))
    assert first.stats["near"]["newly_signed"] == 5 and second.stats["near"]["newly_signed"] == 0
    assert DocumentSignature.objects.count() == 5


@pytest.mark.django_db
def test_another_seed_gets_its_own_signatures(import_records):
    import_records("zh", SEED001)
    completed_run("zh", near=True)
    other = completed_run("zh", near=True, seed=2)
    assert other.stats["near"]["newly_signed"] == 5
    assert DocumentSignature.objects.values("key").distinct().count() == 2


@pytest.mark.django_db
def test_a_stored_signature_of_another_seed_is_refused_not_mixed(import_records):
    import_records("zh", SEED001)
    completed_run("zh", near=True)
    # Corrupt one stored row as if it had been written with seed 2 under this run's key.
    row = DocumentSignature.objects.first()
    alien = NearConfig(seed=2).resolved()
    values = minhash.from_bytes(bytes(row.values), NearConfig().resolved())
    DocumentSignature.objects.filter(pk=row.pk).update(values=minhash.to_bytes(values, alien))
    with pytest.raises(minhash.SchemeMismatch, match="seed 2"):
        completed_run("zh", near=True)


@pytest.mark.django_db
def test_candidates_below_the_storage_floor_are_counted(import_records):
    import_records("zh", SEED001)
    # One row per band: every pair sharing one signature value is a candidate.
    run = completed_run("zh", near=True, storage_floor=0.8, threshold=0.8, bands=128, rows=1)
    near = run.stats["near"]
    assert near["stored"] == 1 and near["below_floor"] == near["lsh_candidates"] - 1 > 0


@pytest.mark.django_db
def test_the_verify_stage_begins_before_the_documents_are_read_whatever_the_first_candidate(import_records):
    import_records("zh", SEED001)
    run = runs.run_create(corpus=Corpus.objects.get(name="zh"), exact=True, near=True,
                          near_config=NearConfig(storage_floor=0.8, threshold=0.8, bands=128, rows=1))
    seen = []
    run = runs.run_execute(run=run, on_progress=lambda fraction, stage: seen.append((stage, fraction)))
    # Most candidates here fall below the floor: the stage's clock must not wait for the first one stored.
    verify = [fraction for stage, fraction in seen if stage == "verify"]
    assert verify[0] == 0.0 and verify[-1] == 1.0 and "verify" in run.stats["seconds"]
    assert run.stats["near"]["verify_cpu_seconds"] >= 0  # beside the wall-clock seconds, in this process


@pytest.mark.django_db
def test_word_shingles_and_persian_policy_are_recorded_and_used(import_records):
    import_records("fa", [
        {"doc_id": "a", "language": "fa", "body": "راهنمای حسگر ولتاژ برحسب ولت است"},
        {"doc_id": "b", "language": "fa", "body": "راهنماي حسگر ولتاژ برحسب ولت است"},
    ])
    plain = completed_run("fa", near=True, shingle="word:2")
    folded = completed_run("fa", near=True, shingle="word:2", policy="persian-arabic-fold-v1")
    assert pairs_of(plain) == {} or pairs_of(plain)[("a", "b")].jaccard < 1
    assert pairs_of(folded)[("a", "b")].jaccard == 1.0
    assert folded.config["near"]["policy"] == "persian-arabic-fold-v1"


@pytest.mark.django_db
def test_template_share_measures_the_shared_header(import_records):
    header = "本文件仅供内部参考，未经许可不得转载。"
    plant = "盆栽养护记录：观察叶片状态，按照土壤湿度调整浇水频率。"
    records = [{"doc_id": f"t{i:02}", "language": "zh", "body": header + text}
               for i, text in enumerate([plant, plant + "！"]  # same words, different punctuation
                                        + [f"第{i}号设备的维护说明，请按步骤检查电源与线路。" for i in range(12)])]
    import_records("tpl", records)
    run = completed_run("tpl", near=True, storage_floor=0.1, threshold=0.5)
    pair = pairs_of(run)[("t00", "t01")]
    assert pair.jaccard == 1.0 and 0 < pair.template_share < 1
    assert pair.jaccard_without_template == 1.0
    noisy = [p for key, p in pairs_of(run).items() if key[0] != "t00"]
    assert any(p.template_share and p.jaccard_without_template < p.jaccard for p in noisy)


@pytest.mark.django_db(transaction=True)
def test_near_run_on_a_worker_from_the_page_shows_counts_chart_and_clusters(admin_client, import_records, run_worker):
    import_records("zh", SEED001)
    response = admin_client.post(reverse("screening:run_start", args=["zh"]), {
        "exact": "on", "near": "on", "policy": "nfkc-casefold-alnum-v1", "shingle": "char:5",
        "num_perm": "128", "threshold": "0.7", "storage_floor": "0.3",
    })
    run = ScreeningRun.objects.get()
    assert response.url == run.get_absolute_url()
    run_worker()
    run.refresh_from_db()
    assert run.status == "complete", run.error
    page = admin_client.get(run.get_absolute_url()).content.decode()
    for text in ("b × r = 32 × 4", "probability 0.9998", "<svg class=\"chart\"", "LSH candidates",
                 "Without any shingle", "Clusters", "><bdi>A</bdi></a>, <a"):
        assert text in page, text


@pytest.mark.django_db
def test_the_form_shows_the_defaults_and_policies(admin_client, import_records):
    import_records("zh", SEED001)
    page = admin_client.get(reverse("screening:corpus_detail", args=["zh"])).content.decode()
    for text in ('value="char:5"', 'value="128"', 'value="0.7"', 'value="0.3"',
                 "\u2066nfkc-casefold-alnum-v1\u2069 — NFKC", "\u2066persian-arabic-fold-v1\u2069 — As nfkc"):
        assert text in page, text


@pytest.mark.django_db
def test_an_impossible_banding_is_refused_with_a_message(admin_client, import_records):
    import_records("zh", SEED001)
    response = admin_client.post(reverse("screening:run_start", args=["zh"]),
                                 {"near": "on", "bands": "10", "rows": "10"}, follow=True)
    assert "bands × rows must equal num_perm: 10 × 10 ≠ 128" in response.content.decode()
    assert not ScreeningRun.objects.exists()


@pytest.mark.django_db
def test_pair_page_explains_and_escapes(admin_client, import_records):
    hostile = 'Intro <script>alert(1)</script> and "><img src=x onerror=alert(1)> shared closing words here.'
    import_records("h", [{"doc_id": "h1", "language": "en", "body": "First. " + hostile},
                         {"doc_id": "h2", "language": "en", "body": "Second. " + hostile}])
    run = completed_run("h", near=True)
    pair = run.pairs.get(pass_name="near")
    page = admin_client.get(reverse("screening:pair_detail", args=[pair.pk])).content.decode()
    assert "<script>alert(1)" not in page and "<img src=x" not in page
    assert '<div class="excerpt" dir="auto">. Intro &lt;script&gt;alert(1)&lt;/script&gt; and &#34;&gt;&lt;img' in page
    assert "<code>alert</code>" in page or "alert" in page
    assert "Shared shingles" in page and "Raw excerpts" in page


@pytest.mark.django_db
def test_document_page_shows_the_normalised_text_and_shingle_count(admin_client, import_records):
    import_records("zh", SEED001)
    doc = Document.objects.get(doc_id="A")
    url = reverse("screening:document_detail", args=[doc.pk])
    page = admin_client.get(url, {"policy": "nfkc-casefold-alnum-v1", "shingle": "char:5"}).content.decode()
    assert "资料整理说明先备份原始稿件再登记来源与版本每周归档一次保留修改记录" in page
    assert "29 distinct <code>char:5</code> shingles" in page
    page = admin_client.get(url, {"policy": "nfkc-casefold-alnum-v1", "shingle": "word:8"}).content.decode()
    assert "0 distinct" in page and "gets no signature" in page


@pytest.mark.django_db(transaction=True)
def test_screen_near_sync_and_export(import_records, queue, tmp_path, capsys):
    import_records("zh", SEED001)
    call_command("screen", "--corpus", "zh", "--near", "--exact", "--shingle", "char:5", "--sync")
    out = capsys.readouterr().out
    assert "b×r = 32×4" in out and "3 pairs stored" in out
    run = ScreeningRun.objects.get()
    target = tmp_path / "pairs.csv"
    call_command("export_pairs", str(run.pk), "--out", str(target))
    with open(target, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["left_id"], r["right_id"], r["pass"]) for r in rows] == [("A", "B", "near"), ("A", "C", "near"),
                                                                         ("B", "C", "near")]
    assert float(rows[1]["jaccard"]) == pytest.approx(A_C) and rows[1]["minhash_estimate"]
    assert rows[0]["left_source_id"] == "demo-A" and rows[0]["right_source_id"] == "demo-B"


@pytest.mark.django_db
def test_screen_refuses_a_bad_shingle(import_records):
    import_records("zh", SEED001)
    with pytest.raises(CommandError, match="write char:K"):
        call_command("screen", "--corpus", "zh", "--near", "--shingle", "chars5")


@pytest.mark.django_db
def test_exact_and_near_pairs_share_one_export(import_records):
    import_records("mix", SEED000 + [dict(r, doc_id=f"zh-{r['doc_id']}") for r in SEED001])
    run = completed_run("mix", near=True)
    passes = [row[2] for row in runs.pair_rows(run)]
    assert passes.count("exact") == 1 and passes.count("near") == 4  # A–C of seed 000 is near too


def test_minhash_estimates_track_exact_jaccard():
    from screening.engine import fast
    from tests.test_near_engine import families, signatures_of

    hashes, sigs = signatures_of(families(20, 5, seed=3))
    gaps = [abs(minhash.estimate(sigs[i], sigs[i + 1]) - fast.jaccard(hashes[i], hashes[i + 1]))
            for i in range(0, 99, 5)]
    assert np.mean(gaps) < 0.1  # 128 permutations: standard error <= 0.045


@pytest.mark.django_db
def test_crafted_colliding_words_get_their_true_jaccard_in_a_run(import_records):
    from tests.test_near_engine import thue_morse_words

    x, y = thue_morse_words()
    import_records("forged", [{"doc_id": "L", "language": "en", "body": f"alpha beta gamma delta {x}"},
                              {"doc_id": "R", "language": "en", "body": f"alpha beta gamma delta {y}"}])
    run = completed_run("forged", exact=False, near=True, shingle="word:2")
    pair = CandidatePair.objects.get(run=run)
    assert pair.minhash_estimate == 1.0  # the public signing hash collides: LSH proposes the pair
    assert pair.jaccard == pytest.approx(3 / 5)  # the keyed verification does not


@pytest.mark.django_db
def test_a_worker_with_another_secret_key_refuses_to_verify_the_run(import_records, settings):
    from screening.runs import near

    import_records("zh", SEED001)
    run = runs.run_create(corpus=Corpus.objects.get(name="zh"), near=True)
    settings.SECRET_KEY = "another installation's secret key, not the one the run was started with"
    near.verify_key.cache_clear()
    try:
        with pytest.raises(runs.RunRefused, match="give every web and worker process the same DJANGO_SECRET_KEY"):
            runs.run_execute(run=run)
    finally:
        near.verify_key.cache_clear()


@pytest.mark.django_db
def test_published_rows_take_numpy_numbers_and_the_model_defaults(import_records):
    from screening.runs.publish import insert_rows

    import_records("seed", SEED001)
    run = runs.run_create(corpus=Corpus.objects.get(name="seed"))
    a, b = Document.objects.filter(corpus=run.corpus).order_by("pk").values_list("pk", flat=True)[:2]
    assert insert_rows(CandidatePair, [{"run_id": run.pk, "left_id": np.int64(a), "right_id": np.int64(b),
                                        "pass_name": CandidatePair.Pass.NEAR, "jaccard": np.float32(0.75),
                                        "evidence": {"partial": True}}]) == 1
    assert insert_rows(Cluster, [{"run_id": run.pk, "number": np.int64(1), "size": 2, "members": [[a, "x"]]}]) == 1
    pair = CandidatePair.objects.get(run=run)
    assert (pair.left_id, pair.right_id, pair.pass_name, pair.jaccard) == (a, b, "near", 0.75)
    assert (pair.status, pair.revision_signals, pair.evidence, pair.has_signals) == ("pending", [], {"partial": True},
                                                                                       False)
    assert Cluster.objects.get(run=run).members == [[a, "x"]]


@pytest.mark.django_db
def test_stored_signatures_are_counted_for_the_documents_asked_only(import_records):
    from screening.runs import near
    from screening.runs.lifecycle import near_config_of

    import_records("seed", SEED001)
    run = completed_run("seed", near=True)
    config = near_config_of(run)
    pks = sorted(DocumentSignature.objects.filter(key=config.signature_key).values_list("document_id", flat=True))
    assert len(pks) == 5
    asked = [pks[0], pks[2], pks[4]]  # the range holds the other two: they are not counted
    assert sorted(near.stored_counts(asked, config)) == asked
    assert all(count > 0 for count in near.stored_counts(asked, config).values())


@pytest.mark.django_db
def test_ids_lookup_reads_the_same_rows_as_in_and_refuses_what_is_not_an_integer(import_records):
    import_records("seed", SEED001)
    pks = sorted(Document.objects.values_list("pk", flat=True))
    asked = [pks[0], pks[3], pks[4]]
    for ids in (asked, set(asked), np.array(asked, dtype=np.int64)):
        assert sorted(Document.objects.filter(pk__in_ids=ids).values_list("doc_id", flat=True)) == sorted(
            Document.objects.filter(pk__in=asked).values_list("doc_id", flat=True))
    assert list(Document.objects.filter(pk__in_ids=[])) == []
    with pytest.raises(ValueError):
        Document.objects.filter(pk__in_ids=[f"{pks[0]}) OR (1=1"])


@pytest.mark.django_db
def test_verification_reads_each_document_once_with_its_facts_and_signature(import_records):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from screening.runs import near
    from screening.runs.lifecycle import near_config_of

    import_records("seed", SEED001 + [{"doc_id": "empty", "source_id": "s", "language": "zh", "body": "。。"}])
    run = completed_run("seed", near=True)
    config = near_config_of(run)
    documents = {d.pk: d for d in Document.objects.all()}
    with CaptureQueriesContext(connection) as queries:
        docs = near.involved_documents(sorted(documents), config)
    assert len(queries) == 1
    empty = next(pk for pk, d in documents.items() if d.doc_id == "empty")
    assert set(docs.bodies) == set(documents) - {empty}  # no shingle, no signature: never a candidate
    for pk, signature in docs.signatures.items():
        d = documents[pk]
        assert (docs.doc_ids[pk], docs.bodies[pk]) == (d.doc_id, d.body)
        assert docs.facts[pk] == evidence.DocFacts(d.language, d.source_id, d.version, d.collected_at)
        stored = DocumentSignature.objects.get(document_id=pk, key=config.signature_key)
        assert np.array_equal(signature, minhash.from_bytes(bytes(stored.values), config))


WARM_THEN_VERIFY = """
import json
import django
django.setup()
import numpy as np
from numba.core.registry import CPUDispatcher
from screening.engine import evidence, fast, foldtable, kernels, overlap, revision, tokdiff, tokscan
from screening.engine.minhash import NearConfig
from screening.runs import near
from tests.seeds import SEED000, SEED001

def loaded():
    return {f"{m.__name__}.{n}": len(f.signatures) for m in (evidence, fast, foldtable, kernels, overlap, revision,
            tokdiff, tokscan) for n in dir(m) if isinstance(f := getattr(m, n), CPUDispatcher)}

near.warmed()
before = loaded()
records = SEED000 + SEED001
docs = near.Involved()
config = NearConfig(policy="persian-arabic-fold-v1").resolved()
for pk, r in enumerate(records):
    docs.doc_ids[pk], docs.bodies[pk] = f"{r['doc_id']}-{pk}", r["body"] + " 12 V, 3 May 2024."
    docs.facts[pk] = evidence.DocFacts(r["language"], "", "", "")
    docs.signatures[pk] = np.zeros(config.num_perm, dtype=np.uint32)
pairs = [(a, b) for a in range(len(records)) for b in range(a + 1, len(records))]
found, _ = near._verify(pairs, docs, np.zeros(0, dtype=np.uint64), config, lambda f, s: None)
after = loaded()
print(json.dumps([len(found), {k: (before.get(k, 0), v) for k, v in after.items() if v != before.get(k, 0)}]))
"""


def test_after_warming_a_verification_loads_no_kernel_of_its_own():
    """A kernel first loaded (or compiled) inside a job counts against its verification: warming up must load
    every kernel verification calls, with the argument types it calls them with. A fresh interpreter: this
    one has loaded them all by now."""
    import json
    import subprocess
    import sys

    from django.conf import settings as django_settings

    out = subprocess.run([sys.executable, "-c", WARM_THEN_VERIFY], capture_output=True, text=True, check=True,
                         cwd=django_settings.BASE_DIR, env={**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings"})
    stored, loaded_in_verification = json.loads(out.stdout.strip().splitlines()[-1])
    assert stored > 0
    assert loaded_in_verification == {}
