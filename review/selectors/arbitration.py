"""The arbitration queue and cases."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Exists, OuterRef

from review.models import (
    Judgement,
    ReviewPolicy,
)
from review.selectors.blind import CLUSTER_FLAG, NEEDS_ARBITRATION
from screening.models import CandidatePair
from screening.vocabulary import (
    ArbitrationReason,
)

ARBITRATION_WHY = {reason.key: reason.value for reason in ArbitrationReason}


@dataclass
class ArbitrationFilter:
    run: int | None = None
    why: str = ""  # a key of ARBITRATION_WHY
    mine: bool = False  # only the cases this arbiter may settle


def arbitration_cases(user, limit: int = 200, flt: ArbitrationFilter | None = None) -> list[CandidatePair]:
    """The pairs waiting for an arbiter, best score first, each marked `took_part` (the user judged it, or,
    for a cluster's contradiction, any pair of that cluster: see took_part), `self_allowed` and `settleable`
    (by this arbiter)."""
    flt = flt or ArbitrationFilter()
    pairs = CandidatePair.objects.of_complete_runs().filter(status=NEEDS_ARBITRATION)
    if flt.run:
        pairs = pairs.filter(run_id=flt.run)
    if flt.why in ARBITRATION_WHY:
        pairs = pairs.filter(flag__startswith=ARBITRATION_WHY[flt.why])
    pairs = list(pairs.select_related("left", "right", "run__corpus")
                 .annotate(judged=Exists(Judgement.objects.filter(pair=OuterRef("pk"), reviewer=user)),
                           self_allowed=Exists(ReviewPolicy.objects.filter(corpus_id=OuterRef("run__corpus_id"),
                                                                           allow_self_arbitration=True)))
                 .order_by("-jaccard", "id")[:limit])
    clusters = set(Judgement.objects.filter(reviewer=user, pair__cluster__isnull=False)
                   .values_list("pair__run_id", "pair__cluster").distinct())
    for p in pairs:
        by_cluster = p.flag.startswith(CLUSTER_FLAG) and (p.run_id, p.cluster) in clusters
        p.took_part = by_cluster if p.flag.startswith(CLUSTER_FLAG) and p.cluster is not None else p.judged
        p.settleable = not p.took_part or p.self_allowed
    return [p for p in pairs if p.settleable] if flt.mine else pairs


def arbitration_count(flt: ArbitrationFilter | None = None) -> int:
    flt = flt or ArbitrationFilter()
    pairs = CandidatePair.objects.of_complete_runs().filter(status=NEEDS_ARBITRATION)
    if flt.run:
        pairs = pairs.filter(run_id=flt.run)
    if flt.why in ARBITRATION_WHY:
        pairs = pairs.filter(flag__startswith=ARBITRATION_WHY[flt.why])
    return pairs.count()


def next_case(user, flt: ArbitrationFilter | None = None, after: int | None = None) -> CandidatePair | None:
    """The next case this arbiter may settle, in queue order: the first one, or the first after pair `after`
    (going round to the start), never `after` itself."""
    cases = [p for p in arbitration_cases(user, flt=flt) if p.settleable]
    if after is not None:
        at = next((i for i, p in enumerate(cases) if p.pk == after), None)
        if at is not None:
            cases = cases[at + 1:] + cases[:at]
    return cases[0] if cases else None
