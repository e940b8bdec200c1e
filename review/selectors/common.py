"""What several pages read alike: the review stamp that keys their caches and the review threshold."""

from __future__ import annotations

from django.db import connection
from django.db.models import QuerySet, Subquery

from review.models import (
    Arbitration,
    Judgement,
)


def _stamped(queryset: QuerySet) -> QuerySet:
    """The review_stamp read with a page's main row, as `newest_judgement` and `newest_arbitration`: one round
    trip fewer a page, and as fresh (stamp_of)."""
    return queryset.annotate(
        newest_judgement=Subquery(Judgement.objects.order_by("-id").values("id")[:1]),
        newest_arbitration=Subquery(Arbitration.objects.order_by("-id").values("id")[:1]))


def stamp_of(row) -> tuple[int, int]:
    """The review_stamp read with a run (complete_run) or a pair (pair_for_review)."""
    return row.newest_judgement or 0, row.newest_arbitration or 0


def review_threshold(near: bool, config: dict) -> float:
    """The score at or above which a run sends a pair to review: the near pass's threshold (exact pairs
    score 1.0)."""
    return float(config.get("near", {}).get("threshold", 1.0)) if near else 1.0


def review_stamp() -> tuple[int, int]:
    """The newest judgement and arbitration: a pair's status changes only with one of them. Counts are cached
    under it, so every process (each gunicorn worker has its own cache) sees a decision on its next page."""
    # One round trip for both (the header and the queue ask on every page), table names from the models.
    judgements, arbitrations = (connection.ops.quote_name(m._meta.db_table) for m in (Judgement, Arbitration))
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT (SELECT MAX(id) FROM {judgements}), (SELECT MAX(id) FROM {arbitrations})")  # noqa: S608
        newest_judgement, newest_arbitration = cursor.fetchone()
    return newest_judgement or 0, newest_arbitration or 0
PROGRESS_CACHE_SECONDS = 60  # a decision changes the key (review_stamp), so this only bounds memory
