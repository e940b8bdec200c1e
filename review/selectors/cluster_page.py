"""The cluster page's reads: its members, their verdicts, the leases held in it."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.utils import timezone

from review.models import (
    Lease,
)
from review.selectors.blind import sees_all
from review.selectors.queue import QueueRow, _rows_for_listing
from screening.engine import panes
from screening.models import CandidatePair, Document, ScreeningRun
from screening.vocabulary import (
    Verdict,
)


@dataclass
class ClusterMember:
    document: object  # a Document
    diff: list = field(default_factory=list)  # DiffRows against the pivot
    diff_total: int = 0
    suggested_split: str = ""  # a verdict of its pair with the pivot that is not a copy


@dataclass
class ClusterView:
    run: ScreeningRun
    number: int
    members: list[ClusterMember]
    pivot: object  # the suggested retained version: the earliest collected, then the smallest doc_id
    pairs: list[QueueRow]
    too_large: bool = False


def leases_in_cluster(run: ScreeningRun, number: int, user) -> int:
    """How many of the cluster's pairs the user holds under an unexpired lease."""
    return Lease.objects.filter(reviewer=user, pair__run=run, pair__cluster=number,
                                expires_at__gt=timezone.now()).count()


def cluster_view(run: ScreeningRun, number: int, user, limit: int = 200) -> ClusterView | None:
    """Every member of the cluster, its differences against the pivot text, and the cluster's pairs as this
    user may see them (blind review: as on the queue)."""
    pairs = list(CandidatePair.objects.filter(run=run, cluster=number).order_by("-jaccard", "id")
                 .values_list("pk", "left_id", "right_id", "suggested_verdict"))
    if not pairs:
        return None
    ids = {d for _, a, b, _ in pairs for d in (a, b)}
    docs = sorted(Document.objects.filter(pk__in=ids).select_related("upload__source")[:limit + 1],
                  key=lambda d: (d.collected_at or "9999", d.doc_id))
    pivot = docs[0]
    suggested = {}
    for _, a, b, verdict in pairs:
        if pivot.pk in (a, b) and verdict and not Verdict(verdict).is_copy:
            suggested[b if a == pivot.pk else a] = verdict
    members = []
    for doc in docs[:limit]:
        member = ClusterMember(doc, suggested_split=suggested.get(doc.pk, ""))
        if doc.pk != pivot.pk:
            member.diff, _, member.diff_total = panes.diff_rows(pivot.body, doc.body)
            member.diff = member.diff[:8]
        members.append(member)
    rows = _rows_for_listing([pk for pk, *_ in pairs], user, sees_all(user), run)
    return ClusterView(run, number, members, pivot, rows, too_large=len(ids) > limit)
