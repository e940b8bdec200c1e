"""Fan-out: a run's signing split into chunk jobs that several real workers take."""

from __future__ import annotations

import random
import time

import pytest
from django.core.management import call_command
from rq import Worker

from screening import runs
from screening.models import Corpus, DocumentSignature, ScreeningRun


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


@pytest.mark.django_db(transaction=True)
def test_many_chunks_on_two_workers_give_the_pairs_of_one_worker(import_records, worker_process, queue, settings):
    records = family_records()
    import_records("one", records)
    import_records("many", records)
    single = runs.run_execute(run=runs.run_create(corpus=Corpus.objects.get(name="one"), exact=True, near=True))
    assert single.stats["near"]["stored"] > 50

    workers = [worker_process(DEDUP_SIGN_CHUNK="20"), worker_process(DEDUP_SIGN_CHUNK="20")]
    deadline = time.monotonic() + 60
    while Worker.count(connection=queue.connection) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)  # both workers listening before the chunks are queued
    settings.DEDUP_SIGN_CHUNK = 20
    run = runs.run_start(corpus=Corpus.objects.get(name="many"), exact=True, near=True)
    deadline = time.monotonic() + 120
    while ScreeningRun.objects.get(pk=run.pk).is_active and time.monotonic() < deadline:
        time.sleep(0.3)
    run.refresh_from_db()
    assert run.status == "complete", run.error
    assert pairs(run) == pairs(single)
    assert run.stats["near"]["newly_signed"] == 0  # every signature came from the chunk jobs
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
