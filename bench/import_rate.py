"""Benchmark: import rate of 2.2 KB documents (one JSONL upload, all or nothing), this tree against another
checkout side by side, each in a process of its own on a fresh database.

    .venv/bin/python bench/import_rate.py [--docs 20000] [--baseline /path/to/other/checkout] [--postgres]
        [--database-prefix import_rate]

With --postgres each tree imports into its own fresh database on 127.0.0.1:5432 (trust auth), named by
--database-prefix, else into SQLite in a throwaway folder. A tree with the language check
(screening.ingest.detection) also reports it: it runs after the import commits, in the same upload job.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
PG = "postgresql://postgres@127.0.0.1:5432"


def measure(tree: Path, corpus: Path, database: str) -> float:
    code = f"""
import os, sys, tempfile, time, json
sys.path.insert(0, {str(tree)!r})
os.environ["DEDUP_DATA_DIR"] = tempfile.mkdtemp(prefix="import-rate-")
os.environ["DJANGO_SETTINGS_MODULE"] = "dedup_site.settings"
if {database!r}:
    os.environ["DATABASE_URL"] = {database!r}
import django; django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from pathlib import Path
try:
    from screening.ingest import uploads
except ImportError:  # a checkout from before screening.ingest (7b775aa)
    from screening import services as uploads
upload = uploads.upload_create_from_path(corpus_name="c", path=Path({str(corpus)!r}))
start = time.perf_counter()
upload = uploads.upload_process(upload=upload)
seconds = time.perf_counter() - start
assert upload.status == "complete", upload.problems[:3]
try:
    from screening.ingest import detection
except ImportError:  # a checkout from before the language check (issue 38)
    detection = None
check = None
if detection is not None:
    start = time.perf_counter()
    detection.upload_language_check(upload=upload)
    check = time.perf_counter() - start
print(json.dumps({{"seconds": seconds, "check_seconds": check, "documents": upload.document_count}}))
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=tree, capture_output=True, text=True, check=True)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    if r["check_seconds"] is not None:
        print(f"  (language check after the import: {r['documents'] / r['check_seconds']:,.0f} docs/s, "
              f"{r['check_seconds'] / r['documents'] * 1e6:,.0f} µs a document)")
    return r["documents"] / r["seconds"]


def fresh_database(name: str) -> str:
    import psycopg

    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{PG}/{name}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=20000)
    parser.add_argument("--baseline", type=Path)
    parser.add_argument("--postgres", action="store_true")
    parser.add_argument("--database-prefix", default="import_rate")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    from bench.near_pass import generate

    corpus = Path(tempfile.mkdtemp(prefix="import-rate-corpus-")) / "docs.jsonl"
    corpus.write_text("".join(json.dumps({"doc_id": f"d{i}", "language": "en", "body": t}) + "\n"
                              for i, t in enumerate(generate(args.docs))), encoding="utf-8")
    trees = ([("baseline", args.baseline.resolve())] if args.baseline else []) + [("this tree", HERE)]
    rates = {}
    for i, (name, tree) in enumerate(trees):
        database = fresh_database(f"{args.database_prefix}_{i}") if args.postgres else ""
        rates[name] = measure(tree, corpus, database)
        print(f"{name:<10} {'PostgreSQL' if args.postgres else 'SQLite'}: {rates[name]:,.0f} docs/s")
    if args.baseline:
        print(f"this tree ÷ baseline: ×{rates['this tree'] / rates['baseline']:.2f}")


if __name__ == "__main__":
    main()
