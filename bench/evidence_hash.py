"""The stored pairs of the varied development corpus, hashed: whether a change to verification left every pair's
evidence as it was.

    .venv/bin/python bench/evidence_hash.py [--seeds 7,8] [--per-variant 30] [--policy persian-arabic-fold-v1]

Runs bench/evidence.py's corpus of each seed (imported, both passes in this process, SQLite in a throwaway
folder) and prints, a seed, how many pairs were stored and a SHA-256 over each pair in a fixed order: its two
doc_ids, its Jaccard, MinHash estimate, template scores, revision signals, evidence and suggestion. Run it in two trees
(the same seeds) and compare the lines.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DEDUP_DATA_DIR", tempfile.mkdtemp(prefix="dedup-evidence-hash-"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dedup_site.settings")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", default="7,8")
    parser.add_argument("--per-variant", type=int, default=30)
    parser.add_argument("--policy", default="persian-arabic-fold-v1")
    args = parser.parse_args()

    import django

    django.setup()
    from django.core.management import call_command

    from bench import devcorpus
    from bench.evidence import _run

    call_command("migrate", verbosity=0)
    for seed in (int(s) for s in args.seeds.split(",")):
        records, _ = devcorpus.generate_varied(args.per_variant, seed)
        for record in records:
            record["doc_id"] = f"{seed}:{record['doc_id']}"
        _, found = _run(records, f"dev-{seed}", args.policy)
        digest = hashlib.sha256()
        for key in sorted(found, key=sorted):
            p = found[key]
            digest.update(json.dumps([p.left.doc_id, p.right.doc_id, p.jaccard, p.minhash_estimate, p.template_share,
                                      p.jaccard_without_template, p.revision_signals, p.evidence,
                                      p.suggested_verdict, p.suggestion_confidence, p.suggestion_reasons],
                                     sort_keys=True, default=str).encode())
        print(f"seed {seed}: {len(found):,} pairs stored, SHA-256 {digest.hexdigest()}", flush=True)


if __name__ == "__main__":
    main()
