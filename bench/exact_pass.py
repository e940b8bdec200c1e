"""Benchmark: import + exact pass of N generated small documents, against the plain in-memory baseline.

    .venv/bin/python bench/exact_pass.py [--docs 100000] [--dup-share 0.1]

Each stage runs in a forked child so its peak memory (max RSS) is its own. The baseline is the seed's
approach: every record in memory, `contract.group_records` over all of them. Uses a throwaway data folder
and SQLite unless DATABASE_URL is set.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DEDUP_DATA_DIR", tempfile.mkdtemp(prefix="dedup-bench-"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dedup_site.settings")

WORDS = "sensor voltage motor signal relay archive guide manual revision backup source version record".split()


def generate(path: Path, n: int, dup_share: float, seed: int = 7) -> list[dict]:
    rng = random.Random(seed)
    records = []
    for i in range(n):
        if records and rng.random() < dup_share:
            base = rng.choice(records[-1000:])
            record = dict(base, doc_id=f"d{i:07}", source_id=f"s{i % 5000}")
        else:
            body = " ".join(rng.choice(WORDS) for _ in range(30)) + f" {i}."
            record = {"doc_id": f"d{i:07}", "source_id": f"s{i % 5000}", "language": "en", "title": f"t{i % 97}",
                      "body": body}
        records.append(record)
    with open(path, "w", encoding="utf-8") as out:
        for r in records:
            out.write(json.dumps(r, ensure_ascii=False) + "\n")
    return records


def in_child(fn, *args):
    """Run fn in a forked child; return (its result, seconds, its peak RSS in MiB)."""
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()

    def target():
        from django.db import connections

        connections.close_all()
        start = time.perf_counter()
        result = fn(*args)
        seconds = time.perf_counter() - start
        queue.put((result, seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))

    process = ctx.Process(target=target)
    process.start()
    out = queue.get()
    process.join()
    return out


def stage_import(path: str) -> int:
    from screening.ingest import uploads

    upload = uploads.upload_create_from_path(corpus_name="bench", path=Path(path), language="en")
    upload = uploads.upload_process(upload=upload)
    assert upload.status == "complete", upload.problems[:5]
    return upload.document_count


def stage_exact() -> dict:
    from screening import runs
    from screening.models import Corpus

    run = runs.run_execute(run=runs.run_create(corpus=Corpus.objects.get(name="bench")))
    assert run.status == "complete", run.error
    return run.stats


def stage_baseline(path: str) -> int:
    from screening.engine import contract

    with open(path, encoding="utf-8") as f:
        records = [json.loads(line) for line in f]
    return sum(1 for g in contract.group_records(records) if len(g.members) > 1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--dup-share", type=float, default=0.1)
    args = parser.parse_args()

    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    path = Path(os.environ["DEDUP_DATA_DIR"]) / "bench.jsonl"
    generate(path, args.docs, args.dup_share)
    size_mb = path.stat().st_size / 1e6
    print(f"{args.docs:,} documents, {size_mb:.1f} MB JSONL, duplicate share {args.dup_share}")

    n, t_import, m_import = in_child(stage_import, str(path))
    stats, t_exact, m_exact = in_child(stage_exact)
    groups, t_base, m_base = in_child(stage_baseline, str(path))
    assert groups == stats["exact_groups"], (groups, stats)

    print(f"{'stage':<34}{'seconds':>9}{'docs/s':>10}{'peak MiB':>10}")
    for name, t, m in (("import (parse, validate, insert)", t_import, m_import),
                       ("exact pass (stream, hash, publish)", t_exact, m_exact),
                       ("baseline: all records in memory", t_base, m_base)):
        print(f"{name:<34}{t:>9.1f}{n / t:>10,.0f}{m:>10.0f}")
    print(f"exact pass vs baseline: time ×{t_exact / t_base:.2f}, peak memory ×{m_exact / m_base:.2f}")
    print(f"groups: {stats['exact_groups']:,} covering {stats['exact_grouped_documents']:,} documents; "
          f"{stats['exact_singletons']:,} singletons; {stats['exact_pairs']:,} pairs")


if __name__ == "__main__":
    main()
