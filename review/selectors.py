"""What a user may see of the review record (blind review).

Admins and arbiters see everything. A reviewer sees other reviewers' verdicts only on pairs they have
judged themselves: on any other pair, a status that depends on those verdicts ("settled", "needs
arbitration") shows as "reviewed", and counts and agreement figures cover their own pairs only.
"""

from __future__ import annotations

from dedup_site.roles import sees_all_verdicts

PENDING, JUDGED, NEEDS_ARBITRATION, SETTLED = "pending", "judged", "needs_arbitration", "settled"
CLUSTER_FLAG = "contradicts cluster"  # how a pair flagged by its cluster's other pairs is marked
REVIEWED = "reviewed"  # has all its reviews (settled or waiting for an arbiter), shown to a blind reviewer
BLIND_STATUSES = [PENDING, JUDGED, REVIEWED]


sees_all = sees_all_verdicts  # the review app's name for the rule, which dedup_site.roles holds


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
