"""Benchmark: the evidence and suggestions on the labelled development corpus (bench/devcorpus.py).

    .venv/bin/python bench/evidence.py [--pairs 150] [--seed 7] [--policy persian-arabic-fold-v1] [--learn]

Builds the corpus from the machine's translation catalogs (English, Persian, Chinese), imports it, runs the
exact and near passes in this process (SQLite in a throwaway folder), and prints per kind of pair: how many
became candidates, the share flagged by revision signals, the suggestion's accuracy, and the precision and
coverage of suggestions with confidence ≥ 0.95; then the same by language.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DEDUP_DATA_DIR", tempfile.mkdtemp(prefix="dedup-evidence-"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dedup_site.settings")

CONFIDENT = 0.95


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=150, help="pairs of every kind")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--policy", default="persian-arabic-fold-v1")
    parser.add_argument("--learn", action="store_true", help="also learn a model from the labels")
    args = parser.parse_args()

    import django

    django.setup()
    from django.core.management import call_command

    from bench import devcorpus
    from screening import runs
    from screening.engine.minhash import NearConfig
    from screening.ingest import uploads
    from screening.models import CandidatePair, Corpus

    call_command("migrate", verbosity=0)
    folder = Path(os.environ["DEDUP_DATA_DIR"]) / "devcorpus"
    records, labels = devcorpus.generate(args.pairs, args.seed)
    corpus_path, _ = devcorpus.write(folder, args.pairs, args.seed)
    upload = uploads.upload_process(upload=uploads.upload_create_from_path(corpus_name="dev", path=corpus_path))
    assert upload.status == "complete", upload.problems[:5]
    start = time.perf_counter()
    run = runs.run_execute(run=runs.run_create(corpus=Corpus.objects.get(name="dev"), exact=True, near=True,
                                               near_config=NearConfig(policy=args.policy)))
    seconds = time.perf_counter() - start
    found = {}
    for p in CandidatePair.objects.filter(run=run).select_related("left", "right"):
        found[frozenset((p.left.doc_id, p.right.doc_id))] = p
    print(f"{len(records):,} documents, {len(labels):,} labelled pairs; run {seconds:.1f} s, "
          f"{run.stats['near']['lsh_candidates']:,} candidates, {len(found):,} pairs stored")
    report(labels, found, "kind")
    report(labels, found, "language")
    if args.learn:
        learn(run, folder / "labels.csv")


def learn(run, label_path: Path) -> None:
    """Learn the corpus's model from the labels and print how it scored in folds held out by source family."""
    from screening import evaluation

    label_set = evaluation.labelset_import(corpus=run.corpus, data=label_path.read_bytes(),
                                           original_name=label_path.name)
    row = evaluation.model_train(run=run, label_set=label_set)
    s = row.scores
    print(f"\nlearned model: {s['pairs']} labelled pairs with evidence, {s['folds']} family folds; copy or not "
          f"right {s['model_accuracy']:.3f} (rules {s['rules_accuracy']:.3f}), Brier {s['brier']:.3f}, "
          f"{s['confident_share']:.2f} at ≥0.95 of which {s['confident_accuracy'] or 0:.3f} right; "
          f"{'in use' if row.in_use else 'not in use'}")


def report(labels: list[dict], found: dict, by: str) -> None:
    rows = defaultdict(lambda: defaultdict(int))
    for label in labels:
        row = rows[label[by]]
        pair = found.get(frozenset((label["left_id"], label["right_id"])))
        row["pairs"] += 1
        if pair is None:
            continue
        row["candidates"] += 1
        row["flagged"] += bool(pair.revision_signals)
        suggestion = getattr(pair, "suggested_verdict", "")
        confidence = getattr(pair, "suggestion_confidence", None) or 0.0
        row["right"] += suggestion == label["expected"]
        if confidence >= CONFIDENT:
            row["confident"] += 1
            row["confident_right"] += suggestion == label["expected"]
    print(f"\n{by:<16} {'pairs':>6} {'cand.':>6} {'flagged':>8} {'suggest ok':>10} {'≥0.95':>6} {'≥0.95 ok':>9}")
    total = defaultdict(int)
    for name in sorted(rows):
        row = rows[name]
        for key, value in row.items():
            total[key] += value
        print(_line(name, row))
    print(_line("all", total))


def _line(name: str, row: dict) -> str:
    cand = row["candidates"] or 1
    confident = row["confident"] or 1
    return (f"{name:<16} {row['pairs']:>6} {row['candidates']:>6} {row['flagged'] / cand:>8.2f} "
            f"{row['right'] / cand:>10.2f} {row['confident'] / max(row['pairs'], 1):>6.2f} "
            f"{row['confident_right'] / confident:>9.2f}")


if __name__ == "__main__":
    main()
