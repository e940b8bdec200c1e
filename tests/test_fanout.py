"""Fan-out: a run's signing and verification split into chunk jobs that several real workers take."""

from __future__ import annotations

import random
import time

import django_rq
import pytest
from django.core.management import call_command
from django.db import connections
from rq import Worker

from screening import runs
from screening.models import Corpus, DocumentSignature, ScreeningRun
from tests.factories import completed_run


def family_records(n_families: int = 60, size: int = 5) -> list[dict]:
    rng = random.Random(9)
    vocab = [f"w{i}" for i in range(4000)]
    records = []
    for f in range(n_families):
        base = [rng.choice(vocab) for _ in range(80)]
        for m in range(size):
            rate = rng.choice([0.0, 0.03, 0.1, 0.3])
            body = " ".join(rng.choice(vocab) if rng.random() < rate else w for w in base)
            records.append({"doc_id": f"f{f:03}-{m}", "source_id": f"s{f}", "language": "en", "body": body})
    return records


def pairs(run: ScreeningRun) -> list[tuple]:
    return sorted((p.left.doc_id, p.right.doc_id, p.pass_name, round(p.jaccard, 12))
                  for p in run.pairs.select_related("left", "right"))


def evidence(run: ScreeningRun) -> list[tuple]:
    """What a chunk job hands the publishing job through Redis besides the scores."""
    return sorted((p.left.doc_id, p.right.doc_id, p.minhash_estimate, p.template_share, p.jaccard_without_template,
                   p.revision_signals, sorted(p.evidence.items()))
                  for p in run.pairs.filter(pass_name="near").select_related("left", "right"))


@pytest.mark.django_db(transaction=True)
def test_many_chunks_on_two_workers_give_the_pairs_of_one_worker(import_records, worker_process, queue, settings):
    records = family_records()
    import_records("one", records)
    import_records("many", records)
    single = completed_run("one", near=True)
    assert single.stats["near"]["stored"] > 50

    chunked = {"DEDUP_SIGN_CHUNK": "20", "DEDUP_VERIFY_CHUNK": "20"}
    workers = [worker_process(**chunked), worker_process(**chunked)]
    deadline = time.monotonic() + 60
    while Worker.count(connection=queue.connection) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)  # both workers listening before the chunks are queued
    settings.DEDUP_SIGN_CHUNK = 20
    run = runs.run_start(corpus=Corpus.objects.get(name="many"), options=runs.RunOptions(exact=True, near=True))
    deadline = time.monotonic() + 120
    while ScreeningRun.objects.get(pk=run.pk).is_active and time.monotonic() < deadline:
        time.sleep(0.3)
    run.refresh_from_db()
    assert run.status == "complete", run.error
    assert pairs(run) == pairs(single)
    assert evidence(run) == evidence(single)
    assert any(signals for *_, signals, _ in evidence(run))
    assert run.stats["near"]["newly_signed"] == 0  # every signature came from the chunk jobs
    assert run.stats["near"]["lsh_candidates"] > 100  # so verification was split into several chunks too
    assert run.stats["near"]["below_floor"] == single.stats["near"]["below_floor"]
    assert run.stats["near"]["histogram"] == single.stats["near"]["histogram"]
    assert "verify" in run.stats["seconds"]
    assert run.stats["near"]["verify_cpu_seconds"] > 0  # the chunks' CPU, summed, beside the wall clock
    assert len(run.stats["workers"]) == 2, run.stats.get("workers")
    assert DocumentSignature.objects.filter(document__corpus__name="many").count() == len(records)
    for w in workers:
        assert w.poll() is None


@pytest.mark.django_db(transaction=True)
def test_a_fanned_out_run_completes_with_sync(import_records, queue, settings, capsys):
    import_records("many", family_records(20, 4))
    settings.DEDUP_SIGN_CHUNK = 15
    call_command("screen", "--corpus", "many", "--sync")
    run = ScreeningRun.objects.get()
    assert run.status == "complete" and "clusters" in capsys.readouterr().out


@pytest.mark.django_db(transaction=True)
def test_a_large_run_bands_in_partition_jobs_and_finds_the_pairs_of_one_banding(import_records, queue, run_worker,
                                                                                settings):
    records = family_records()
    import_records("one", records)
    import_records("parts", records)
    single = completed_run("one", near=True)
    assert single.stats["near"]["band_parts"] == 1
    settings.DEDUP_BAND_KEYS = 1000  # 32 band keys a document: a partition a job for each 31 documents
    run = runs.run_start(corpus=Corpus.objects.get(name="parts"), options=runs.RunOptions(exact=True, near=True))
    run_worker()
    run.refresh_from_db()
    assert run.status == "complete", run.error
    signed = run.stats["near"]["signed"]
    assert run.stats["near"]["band_parts"] == -(-signed * 32 // 1000) >= 5
    assert pairs(run) == pairs(single)
    assert run.stats["near"]["lsh_candidates"] == single.stats["near"]["lsh_candidates"]
    assert run.stats["near"]["histogram"] == single.stats["near"]["histogram"]
    assert {"exact", "sign", "band", "verify", "publish"} <= set(run.stats["seconds"]), run.stats["seconds"]


@pytest.mark.django_db(transaction=True)
def test_banding_in_partitions_in_one_process_gives_the_pairs_of_one_banding(import_records, settings):
    records = family_records(20, 5)
    import_records("one", records)
    import_records("parts", records)
    single = completed_run("one", near=True)
    settings.DEDUP_BAND_KEYS = 300
    parted = completed_run("parts", near=True)
    assert parted.stats["near"]["band_parts"] == -(-parted.stats["near"]["signed"] * 32 // 300) >= 5
    assert pairs(parted) == pairs(single) and len(pairs(single)) > 20


def run_one_job(queue) -> None:
    connections.close_all()
    django_rq.get_worker("default", serializer="rq.serializers.JSONSerializer").work(burst=True, max_jobs=1)


@pytest.mark.django_db(transaction=True)
def test_a_verification_chunk_that_fails_for_good_fails_the_run_with_no_pairs(import_records, queue, run_worker,
                                                                             settings, admin_client):
    import_records("many", family_records(30, 4))
    settings.DEDUP_VERIFY_CHUNK = 10
    run = runs.run_start(corpus=Corpus.objects.get(name="many"), options=runs.RunOptions(exact=True, near=True))
    run_one_job(queue)  # the run job: signing and banding, then verification chunks are queued
    assert ScreeningRun.objects.get(pk=run.pk).status == "running"
    # The fault: a document's stored signature vanishes, so every try of its chunk fails.
    DocumentSignature.objects.filter(document__doc_id="f000-0").delete()
    run_worker()
    run.refresh_from_db()
    assert run.status == "failed" and run.error.startswith("a chunk job failed for good"), run.error
    assert not run.pairs.exists() and not run.clusters.exists()
    page = admin_client.get(run.get_absolute_url()).content.decode()
    assert "failed" in page and "f000-0" not in page


@pytest.mark.django_db(transaction=True)
def test_a_fanned_out_run_does_the_exact_pass_once(import_records, queue, run_worker, settings, monkeypatch,
                                                   tmp_path):
    from screening.runs import steps

    import_records("many", family_records(30, 4))
    settings.DEDUP_SIGN_CHUNK, settings.DEDUP_VERIFY_CHUNK = 30, 10
    calls, original = tmp_path / "exact-pass-calls", steps.exact_step

    def counted(spec, report=None):  # the forked work-horses inherit this, and write where the test reads
        with open(calls, "a") as out:
            out.write("x")
        return original(spec, report)

    monkeypatch.setattr(steps, "exact_step", counted)
    run = runs.run_start(corpus=Corpus.objects.get(name="many"), options=runs.RunOptions(exact=True, near=True))
    run_worker()
    run.refresh_from_db()
    assert run.status == "complete", run.error
    assert run.stats["near"]["lsh_candidates"] > 20 and len(run.stats["workers"]) == 1  # chunk jobs did it
    assert calls.read_text() == "x"
