"""Benchmark: queue and pair pages with 1,000,000 pairs in one run (median and p95 over repeated requests).

    .venv/bin/python bench/review_pages.py [--pairs 1000000] [--requests 60]

Uses a throwaway data folder and SQLite, or DATABASE_URL (a fresh, empty database) when set. Requests go
through Django's test client in this process (no network), as a logged-in editor.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DEDUP_DATA_DIR", tempfile.mkdtemp(prefix="dedup-bench-"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dedup_site.settings")


def fill(n_pairs: int, n_docs: int = 3000, families: bool = False) -> int:
    """A complete run with n_pairs pairs over n_docs documents. With `families`, documents are ~2.2 KB
    texts in families of ten edited copies and pairs are drawn within a family, so pair pages diff and
    highlight what a real near-duplicate has (n_docs must then allow 4.5 pairs per document)."""
    from django.db import transaction

    from screening.ingest import uploads
    from screening.models import CandidatePair, Corpus, Document, ScreeningRun
    from screening.runs import publish

    if families:
        from bench.near_pass import edited_copy, make_vocabulary, new_text

        assert n_pairs <= n_docs * 4.5, "families of ten give at most 45 pairs per ten documents"
        rng = random.Random(5)
        vocab = make_vocabulary(rng)
        bodies = []
        while len(bodies) < n_docs:
            base = new_text(rng, vocab)
            bodies += [base] + [edited_copy(rng, vocab, base) for _ in range(9)]
    else:
        bodies = [f"Document {i}: the sensor reads {i % 97} volts and logs it daily. " for i in range(n_docs)]
    data = "".join(json.dumps({"doc_id": f"d{i:05}", "language": "en", "body": body}) + "\n"
                   for i, body in enumerate(bodies[:n_docs])).encode()
    upload = uploads.upload_create(corpus_name="bench", chunks=[data], size=len(data), original_name="b.jsonl")
    uploads.upload_process(upload=upload)
    corpus = Corpus.objects.get(name="bench")
    run = ScreeningRun.objects.create(corpus=corpus, exact=False, near=True, status="complete", contract="x",
                                      program_version="bench", config={"near": {"shingle": "char:5", "threshold": 0.7}},
                                      stats={"near": {"stored": n_pairs}})
    pks = list(Document.objects.filter(corpus=corpus).order_by("pk").values_list("pk", flat=True))
    rng = random.Random(1)
    seen: set[tuple[int, int]] = set()
    batch = []
    start = time.perf_counter()
    from review.services import derived_writes

    with transaction.atomic(), derived_writes():  # pairs born judged or settled: review state the guard keeps
        while len(seen) < n_pairs:
            if families:
                family = rng.randrange(len(pks) // 10) * 10
                a, b = sorted(rng.sample(pks[family : family + 10], 2))
            else:
                a, b = sorted(rng.sample(pks, 2))
            if (a, b) in seen:
                continue
            seen.add((a, b))
            signals = [["number", "12", "15"]] if rng.random() < 0.1 else []
            batch.append(CandidatePair(run=run, left_id=a, right_id=b, pass_name="near", jaccard=rng.random(),
                                       minhash_estimate=rng.random(), cluster=rng.randint(1, 50_000),
                                       revision_signals=signals, has_signals=bool(signals),
                                       status=rng.choice(["pending"] * 8 + ["judged", "settled"])))
            if len(batch) == 20_000:
                CandidatePair.objects.bulk_create(batch)
                batch = []
        CandidatePair.objects.bulk_create(batch)
    publish.refresh_statistics()  # as a run does when it publishes
    print(f"filled {n_pairs:,} pairs in {time.perf_counter() - start:.0f} s")
    return run.pk


def timed(client, url: str, n: int) -> tuple[float, float]:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - start) * 1000)
        assert response.status_code in (200, 302), (url, response.status_code)
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=60)
    args = parser.parse_args()

    import django

    django.setup()
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from django.test import Client
    from django.test.utils import setup_test_environment

    from screening.models import CandidatePair

    setup_test_environment()
    call_command("migrate", verbosity=0)
    run_id = fill(args.pairs)
    editor = User.objects.create_user("bench-editor", password="x" * 12)
    editor.groups.add(Group.objects.get(name="editors"))
    from dedup_site.accounts import password_owned

    password_owned(user=editor)  # the bench plays its owner
    client = Client()
    client.force_login(editor)
    from review import selectors

    cursor = selectors.queue_page(selectors.QueueFilter(run=run_id)).next
    deep = CandidatePair.objects.filter(run_id=run_id).order_by("-jaccard", "id")[500_000 if args.pairs > 500_000
                                                                                    else args.pairs // 2]
    pair = CandidatePair.objects.filter(run_id=run_id).order_by("?").first()
    pages = {
        "queue (run, by score)": f"/review/?run={run_id}",
        "queue page 2 (keyset cursor)": f"/review/?run={run_id}&after={cursor}",
        "queue deep (cursor at the middle)": f"/review/?run={run_id}&after={deep.jaccard!r}:{deep.pk}",
        "queue (status pending, signals)": f"/review/?run={run_id}&status=pending&signals=yes",
        "queue (by cluster)": f"/review/?run={run_id}&sort=cluster",
        "queue (score 0.7-0.8)": f"/review/?run={run_id}&min_score=0.7&max_score=0.8",
        "review next": f"/review/next/?run={run_id}",
        "pair page": f"/review/pairs/{pair.pk}/",
    }
    vendor = django.db.connection.vendor
    print(f"{args.pairs:,} pairs, {vendor}; {args.requests} requests each; target p95 < 150 ms")
    print(f"{'page':<36}{'median ms':>10}{'p95 ms':>9}")
    for name, url in pages.items():
        median, p95 = timed(client, url, args.requests)
        print(f"{name:<36}{median:>10.1f}{p95:>9.1f}")


if __name__ == "__main__":
    main()
