"""Families of edited copies for the run tests, and what two runs are compared by."""

from __future__ import annotations

import random

from screening.models import ScreeningRun


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
    """Everything a near pair carries besides its scores."""
    return sorted((p.left.doc_id, p.right.doc_id, p.minhash_estimate, p.template_share, p.jaccard_without_template,
                   p.revision_signals, sorted(p.evidence.items()), p.suggested_verdict, p.suggestion_confidence,
                   p.cluster)
                  for p in run.pairs.filter(pass_name="near").select_related("left", "right"))
