"""Benchmark: verification cost per candidate pair (exact Jaccard, template scores, revision signals and the
rest of the evidence), on the development corpus, for this tree and optionally another checkout of the
project, side by side in one session.

    .venv/bin/python bench/verify_cost.py [--pairs 100] [--baseline /path/to/older/checkout] [--alternate 2]
        [--varied SEED [--labelled]]

Each tree runs in a process of its own (its own modules), on the same generated corpus and candidates.
`--labelled` verifies only the candidates that are labelled pairs of the varied corpus: each document in one
pair, as in a corpus of pairs (the filed corpus of issue 38), where nothing a document costs is shared by other
pairs; the varied corpus's other candidates (catalog strings shared by many documents) cost less each. Exact
copies are left out, as a run leaves them out of its near pass.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def measure(tree: Path, corpus: Path, rounds: int = 3, only: Path | None = None) -> dict:
    """In a child process: import the corpus into a fresh database, band it, then time verification (the best
    of `rounds`, in wall-clock seconds and in seconds of the process's CPU: on a shared machine the second
    moves less with what the other processes do)."""
    code = f"""
import os, sys, tempfile, time, json
sys.path.insert(0, {str(tree)!r})
os.environ["DEDUP_DATA_DIR"] = tempfile.mkdtemp(prefix="verify-cost-")
os.environ["DJANGO_SETTINGS_MODULE"] = "dedup_site.settings"
import django; django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from pathlib import Path
from screening.ingest import uploads
from screening.models import Corpus, Document
from screening.engine.minhash import NearConfig
from screening.runs import near
upload = uploads.upload_process(upload=uploads.upload_create_from_path(corpus_name="dev", path=Path({str(corpus)!r})))
config = NearConfig(policy="persian-arabic-fold-v1").resolved()
pks = list(Document.objects.order_by("pk").values_list("pk", flat=True))
try:
    from screening.runs import spec as run_spec, steps
except ImportError:  # a tree before the run's steps
    steps = None
if steps is not None:  # the steps of a run (sign, template, band)
    import numpy as np
    spec = run_spec.RunSpec(run=0, corpus=0, uploads=(), exact=False, near=config)
    signed = steps.sign_step(spec, np.array(pks))
    template = steps.template_step(spec, np.array(pks), len(pks) - signed.empty)
    keys = steps.band_keys_step(spec, np.array(pks), 1)[0]
    found = near.Candidates([tuple(p) for p in steps.band_pairs_step(spec, keys).tolist()], template, {{}})
elif hasattr(near, "prepare_banding"):  # banding in partitions of band keys
    plan = near.prepare_banding(pks, config, lambda f, s: None)
    import numpy as np
    found = near.candidates_of([near.band_part(np.array(pks), config, part, plan.parts)[0]
                                for part in range(plan.parts)], plan)
else:  # the code before it
    found = near.near_candidates(pks, config, lambda f, s: None)
pairs = found.pairs
only = {str(only)!r}
if only != "None":  # the labelled pairs only (their doc_ids, a JSON list of pairs)
    wanted = {{frozenset(p) for p in json.load(open(only))}}
    doc_id = dict(Document.objects.values_list("pk", "doc_id"))
    # An exact copy (doc-content-v1) is no candidate of a run: its near pass signs one document a group.
    from screening.engine import contract
    content = {{pk: contract.content_bytes(lang, title, body)
               for pk, lang, title, body in Document.objects.values_list("pk", "language", "title", "body")}}
    pairs = [p for p in pairs if frozenset((doc_id[p[0]], doc_id[p[1]])) in wanted and content[p[0]] != content[p[1]]]
near.verify_chunk(pairs[:50], found.template, config, lambda f, s: None)  # warm up
best = cpu = None
for _ in range({rounds}):
    start, began = time.perf_counter(), time.process_time()
    kept, below = near.verify_chunk(pairs, found.template, config, lambda f, s: None)
    seconds, spent = time.perf_counter() - start, time.process_time() - began
    best = seconds if best is None else min(best, seconds)
    cpu = spent if cpu is None else min(cpu, spent)
print(json.dumps({{"candidates": len(pairs), "stored": len(kept), "seconds": best, "cpu": cpu}}))
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=tree, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=100, help="pairs of every kind in the development corpus")
    parser.add_argument("--baseline", type=Path, help="another checkout of the project to compare with")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds a tree (the best is kept)")
    parser.add_argument("--alternate", type=int, default=1,
                        help="measure the trees this many times, one after the other, and keep each one's best")
    parser.add_argument("--varied", type=int, metavar="SEED",
                        help="the varied development corpus of this seed (devcorpus.generate_varied) instead")
    parser.add_argument("--labelled", action="store_true",
                        help="with --varied: verify only the labelled pairs' candidates (a corpus of pairs)")
    parser.add_argument("--per-variant", type=int, default=30, help="with --varied: pairs of every variant")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE.parent))
    from bench import devcorpus

    folder = Path(tempfile.mkdtemp(prefix="verify-cost-corpus-"))
    only = None
    if args.varied is None:
        corpus, _ = devcorpus.write(folder, args.pairs)
    else:
        records, labels = devcorpus.generate_varied(args.per_variant, args.varied)
        corpus = devcorpus.write_records(folder, records)
        if args.labelled:
            only = folder / "labelled.json"
            only.write_text(json.dumps([[x["left_id"], x["right_id"]] for x in labels]))
    trees = [("this tree", HERE.parent)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
    results: dict[str, dict] = {}
    for _ in range(args.alternate):
        for name, tree in trees:
            r = measure(tree, corpus, args.rounds, only)
            best = results.setdefault(name, r)
            best["seconds"], best["cpu"] = min(best["seconds"], r["seconds"]), min(best["cpu"], r["cpu"])
    for name, r in results.items():
        per_pair, cpu = r["seconds"] / r["candidates"] * 1e6, r["cpu"] / r["candidates"] * 1e6
        print(f"{name:<10} {r['candidates']:,} candidates, {r['stored']:,} kept: {r['seconds']:.2f} s, "
              f"{per_pair:,.0f} µs a pair ({cpu:,.0f} µs of CPU)")
    if args.baseline:
        print(f"this tree ÷ baseline: ×{results['this tree']['seconds'] / results['baseline']['seconds']:.2f} "
              f"(CPU ×{results['this tree']['cpu'] / results['baseline']['cpu']:.2f})")


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dedup_site.settings")
    main()
