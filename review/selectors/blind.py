"""Reads of the review record for pages: the queue, a run's progress, the dashboard, what is left to sign,
and what a user may see of it (blind review).

Admins and arbiters see everything. A reviewer sees other reviewers' verdicts only on pairs they have
judged themselves: on any other pair, a status that depends on those verdicts ("settled", "needs
arbitration") shows as "reviewed", and counts and agreement figures cover their own pairs only.

This module holds the rule itself: the pair states, and what a viewer may see of one."""

from __future__ import annotations

from django.utils.translation import gettext

from dedup_site.roles import sees_all_verdicts
from screening.vocabulary import (
    BLIND_PAIR_STATES,
    STORED_PAIR_STATES,
    ArbitrationReason,
    PairState,
)

PENDING, JUDGED, NEEDS_ARBITRATION, SETTLED, REVIEWED = (
    PairState.PENDING, PairState.JUDGED, PairState.NEEDS_ARBITRATION, PairState.SETTLED, PairState.REVIEWED)
STATUSES = list(STORED_PAIR_STATES)
CLUSTER_FLAG = ArbitrationReason.CLUSTER.value  # how a pair flagged by its cluster's other pairs is marked
BLIND_STATUSES = list(BLIND_PAIR_STATES)  # REVIEWED: has all its reviews, as a blind reviewer is told

sees_all = sees_all_verdicts  # the review app's name for the rule, which dedup_site.roles holds


def status_label(status: str) -> str:
    """A pair's review status as the pages show it ("needs arbitration"; an empty status is pending)."""
    return gettext(PairState(status or PENDING).label)


def shown_status(status: str, final_verdict: str, *, mine: str | bool, all_visible: bool, flag: str = ""
                 ) -> tuple[str, str]:
    """(status, final verdict) as this viewer may see them. `mine` is their own current verdict on the pair
    (or whether they have one). A pair of theirs that went back to arbitration because of *other* pairs of
    its cluster shows as it stood on its own verdicts: settled, as they judged it."""
    if all_visible or status in (PENDING, JUDGED):
        return status, final_verdict
    if mine:
        if status == NEEDS_ARBITRATION and flag.startswith(CLUSTER_FLAG):
            return SETTLED, mine if isinstance(mine, str) else ""
        return status, final_verdict
    return REVIEWED, ""
