"""Benchmark: the evidence and suggestions on the labelled development corpus (bench/devcorpus.py).

    .venv/bin/python bench/evidence.py [--per-variant 30] [--seeds 7,8,9] [--policy persian-arabic-fold-v1]
    .venv/bin/python bench/evidence.py --single [--pairs 150] [--seed 7] [--learn]   # the corpus before issue 38

Builds the varied corpus (devcorpus.generate_varied: three or four generator variants of every kind, real
text of the catalogs, Python's documentation, the Persian and Chinese tutorials and the packages' licence
files) once a seed, imports it, runs the exact and near passes in this process (SQLite in a throwaway
folder), and prints per variant (those the rules were written on marked "tuned", the rest held out): pairs
stored, the share flagged by revision signals, the suggestion's accuracy, the coverage and precision of
suggestions with confidence ≥ 0.95; then the worst variant, the held-out variants by kind, tuned against
held out, and the same by language.
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
    parser.add_argument("--pairs", type=int, default=150, help="pairs of every kind (--single)")
    parser.add_argument("--per-variant", type=int, default=30, help="pairs of every variant, a seed")
    parser.add_argument("--seeds", default="7,8,9", help="the varied corpus is built and run once a seed")
    parser.add_argument("--seed", type=int, default=7, help="the seed of --single")
    parser.add_argument("--single", action="store_true", help="the corpus of one variant a kind (before issue 38)")
    parser.add_argument("--policy", default="persian-arabic-fold-v1")
    parser.add_argument("--learn", action="store_true", help="also learn a model from the labels (--single)")
    parser.add_argument("--wrong", action="store_true", help="also list every stored pair suggested wrongly")
    args = parser.parse_args()

    import django

    django.setup()
    from django.core.management import call_command

    from bench import devcorpus

    call_command("migrate", verbosity=0)
    if args.single:
        records, labels = devcorpus.generate(args.pairs, args.seed)
        run, found = _run(records, "dev", args.policy)
        report(labels, found, "kind")
        report(labels, found, "language")
        if args.learn:
            _, label_path = devcorpus.write(Path(os.environ["DEDUP_DATA_DIR"]) / "labels", args.pairs,
                                                      args.seed)
            learn(run, label_path)
        return
    labels, found = [], {}
    for seed in (int(s) for s in args.seeds.split(",")):
        records, seed_labels = devcorpus.generate_varied(args.per_variant, seed)
        for label in seed_labels:
            label["left_id"], label["right_id"] = f"{seed}:{label['left_id']}", f"{seed}:{label['right_id']}"
        for record in records:
            record["doc_id"] = f"{seed}:{record['doc_id']}"
        found.update(_run(records, f"dev-{seed}", args.policy)[1])
        labels += seed_labels
    for label in labels:
        label["variant"] = f"{label['kind']}/{label['variant']}" + ("" if label["held_out"] else " (tuned)")
        label["split"] = "held out" if label["held_out"] else "tuned"
    rows = report(labels, found, "variant")
    worst = min((n for n in rows if rows[n]["candidates"]), key=lambda n: rows[n]["right"] / rows[n]["candidates"])
    print(f"\nworst variant: {_line(worst, rows[worst])}")
    report([x for x in labels if x["held_out"]], found, "kind", title="kind, held out")
    report(labels, found, "split")
    report(labels, found, "language")
    if args.wrong:
        wrong(labels, found)


def _run(records: list[dict], name: str, policy: str):
    """Import the records as a corpus and run both passes; (run, pairs by their two doc_ids)."""
    from bench import devcorpus
    from screening import runs
    from screening.engine.minhash import NearConfig
    from screening.ingest import uploads
    from screening.models import CandidatePair, Corpus

    path = devcorpus.write_records(Path(os.environ["DEDUP_DATA_DIR"]) / name, records)
    upload = uploads.upload_process(upload=uploads.upload_create_from_path(corpus_name=name, path=path))
    assert upload.status == "complete", upload.problems[:5]
    start = time.perf_counter()
    run = runs.run_execute(run=runs.run_create(corpus=Corpus.objects.get(name=name), exact=True, near=True,
                                               near_config=NearConfig(policy=policy)))
    seconds = time.perf_counter() - start
    found = {frozenset((p.left.doc_id, p.right.doc_id)): p
             for p in CandidatePair.objects.filter(run=run).select_related("left", "right")}
    near = run.stats["near"]
    verify = run.stats.get("seconds", {}).get("verify")
    per = f"{verify / max(near['lsh_candidates'], 1) * 1e6:.0f} µs" if verify else "?"
    if cpu := near.get("verify_cpu_seconds"):
        per += f" ({cpu / max(near['lsh_candidates'], 1) * 1e6:.0f} µs of CPU)"
    print(f"{name}: {len(records):,} documents; run {seconds:.1f} s, {near['lsh_candidates']:,} candidates, "
          f"{len(found):,} pairs stored; verification {per} a candidate (the run's stats)")
    return run, found


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


def report(labels: list[dict], found: dict, by: str, title: str = "") -> dict:
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
    width = max(16, *(len(str(n)) for n in rows))
    print(f"\n{title or by:<{width}} {'pairs':>6} {'stored':>6} {'flagged':>8} {'suggest ok':>10} {'≥0.95':>6} "
          f"{'≥0.95 ok':>9}")
    total = defaultdict(int)
    for name in sorted(rows):
        row = rows[name]
        for key, value in row.items():
            total[key] += value
        print(_line(name, row, width))
    print(_line("all", total, width))
    return rows


def wrong(labels: list[dict], found: dict) -> None:
    """Each stored pair whose suggestion is not its label's, with what its evidence says."""
    print("\nwrongly suggested")
    for label in labels:
        pair = found.get(frozenset((label["left_id"], label["right_id"])))
        if pair is None or pair.suggested_verdict == label["expected"]:
            continue
        e = pair.evidence
        print(f"{label['variant']} {label['left_id']} {label['right_id']}: {pair.suggested_verdict} "
              f"({pair.suggestion_confidence:.2f}) for {label['expected']}; Jaccard {pair.jaccard:.2f}, "
              f"template share {e.get('template_share')}, where {e.get('shared_where')} {e.get('shared_edges')}, "
              f"quoted {e.get('quoted')}, boilerplate {e.get('boilerplate')}, rest {e.get('rest_left')}/"
              f"{e.get('rest_right')} alike {e.get('rest_similarity')}, changed {e.get('changed_share')}, "
              f"signals {e.get('signals')}")


def _line(name: str, row: dict, width: int = 16) -> str:
    cand = row["candidates"] or 1
    confident = row["confident"] or 1
    return (f"{name:<{width}} {row['pairs']:>6} {row['candidates']:>6} {row['flagged'] / cand:>8.2f} "
            f"{row['right'] / cand:>10.2f} {row['confident'] / max(row['pairs'], 1):>6.2f} "
            f"{row['confident_right'] / confident:>9.2f}")


if __name__ == "__main__":
    main()
