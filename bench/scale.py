"""Benchmark: a near + exact run of N generated ~2.2 KB documents on 1 worker, then on 2 workers (fan-out).

    .venv/bin/python bench/scale.py [--docs 50000] [--chunk 5000]

Each configuration gets its own corpus (same documents), so nothing is reused between them. Workers are
real `manage.py worker` processes on the embedded Redis; the database is SQLite in a throwaway folder, or
DATABASE_URL. Prints the import rate, the run time with 1 and 2 workers, and the scaling.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DEDUP_DATA_DIR", tempfile.mkdtemp(prefix="dedup-scale-"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dedup_site.settings")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=50_000)
    parser.add_argument("--chunk", type=int, default=5_000)
    args = parser.parse_args()
    os.environ["DEDUP_SIGN_CHUNK"] = str(args.chunk)

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connections

    from bench.near_pass import generate
    from dedup_site.queues import ensure_redis
    from screening import runs
    from screening.ingest import uploads
    from screening.models import Corpus, ScreeningRun

    call_command("migrate", verbosity=0)
    ensure_redis(stop_at_exit=True)
    texts = generate(args.docs)
    path = Path(os.environ["DEDUP_DATA_DIR"]) / "scale.jsonl"
    with open(path, "w", encoding="utf-8") as out:
        for i, t in enumerate(texts):
            out.write(json.dumps({"doc_id": f"d{i:07}", "source_id": f"s{i % 1000}", "language": "en",
                                  "body": t}) + "\n")
    print(f"{args.docs:,} documents of ~{sum(map(len, texts)) // len(texts):,} characters; chunks of {args.chunk:,}")
    results = {}
    for workers in (1, 2):
        start = time.perf_counter()
        upload = uploads.upload_process(upload=uploads.upload_create_from_path(
            corpus_name=f"w{workers}", path=path))
        imported = time.perf_counter() - start
        connections.close_all()
        procs = [subprocess.Popen([sys.executable, "manage.py", "worker"], cwd=ROOT, env=dict(os.environ),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(workers)]
        time.sleep(3)
        start = time.perf_counter()
        run = runs.run_start(corpus=Corpus.objects.get(name=f"w{workers}"),
                             options=runs.RunOptions(exact=True, near=True))
        while ScreeningRun.objects.get(pk=run.pk).is_active:
            time.sleep(0.5)
        seconds = time.perf_counter() - start
        for p in procs:
            p.terminate()
            p.wait(timeout=60)
        run.refresh_from_db()
        assert run.status == "complete", run.error
        results[workers] = seconds
        print(f"{workers} worker(s): import {imported:.1f} s ({upload.document_count / imported:,.0f} docs/s); "
              f"run {seconds:.1f} s ({args.docs / seconds:,.0f} docs/s); {run.stats['near']['stored']:,} pairs; "
              f"workers {run.stats.get('workers', ['(one job)'])}")
    print(f"1 → 2 workers: ×{results[1] / results[2]:.2f}")


if __name__ == "__main__":
    main()
