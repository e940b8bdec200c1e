"""What a user may see of the review record (blind review).

Admins and arbiters see everything. A reviewer sees other reviewers' verdicts only on pairs they have
judged themselves: on any other pair, a status that depends on those verdicts ("settled", "needs
arbitration") shows as "reviewed", and counts and agreement figures cover their own pairs only.
"""

from __future__ import annotations

from dedup_site.roles import sees_all_verdicts

PENDING, JUDGED, NEEDS_ARBITRATION, SETTLED = "pending", "judged", "needs_arbitration", "settled"
REVIEWED = "reviewed"  # has all its reviews (settled or waiting for an arbiter), shown to a blind reviewer
BLIND_STATUSES = [PENDING, JUDGED, REVIEWED]


sees_all = sees_all_verdicts


def shown_status(status: str, final_verdict: str, *, mine: bool, all_visible: bool) -> tuple[str, str]:
    """(status, final verdict) as this viewer may see them: `mine` says whether they have judged the pair."""
    if all_visible or mine or status in (PENDING, JUDGED):
        return status, final_verdict
    return REVIEWED, ""
