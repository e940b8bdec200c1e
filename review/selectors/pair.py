"""The pair review page's reads: the pair under this reviewer's lease, their record on it, the corpus's
preset reasons."""

from __future__ import annotations

import functools

from django.conf import settings
from django.db.models import OuterRef, Subquery
from django.utils import translation
from django.utils.html import format_html
from django.utils.translation import gettext

from dedup_site.http import MAX_ID
from dedup_site.prepared import Prepared
from review.models import (
    PRESET_REASONS,
    CurrentVerdict,
    Judgement,
    Lease,
    ReviewerSignature,
    ReviewPolicy,
)
from review.selectors.blind import CLUSTER_FLAG, sees_all, shown_status, status_label
from review.selectors.common import _stamped, stamp_of
from review.selectors.dashboard import run_progress
from screening.models import CandidatePair
from screening.vocabulary import (
    WITHDRAWN,
)

_MY_JUDGEMENTS = Prepared(lambda pair_id, reviewer_id: Judgement.objects.filter(
    pair_id=pair_id, reviewer_id=reviewer_id).order_by("-created_at", "-id").values_list(
    "created_at", "verdict", "reason", "retained", "related_source"), kinds="ii")
_PRESET_REASONS = Prepared(lambda corpus_id: ReviewPolicy.objects.filter(corpus_id=corpus_id).order_by("id")
                           .values_list("preset_reasons")[:1])






def took_part(pair: CandidatePair, user) -> bool:
    """Whether the user judged the pair (any judgement, withdrawn or not): then they are part of its case. A
    pair flagged by its cluster's contradiction is a case of the whole cluster: judging any of its pairs
    counts."""
    mine = Judgement.objects.filter(reviewer=user)
    if pair.flag.startswith(CLUSTER_FLAG) and pair.cluster is not None:
        return mine.filter(pair__run_id=pair.run_id, pair__cluster=pair.cluster).exists()
    return mine.filter(pair=pair).exists()


_PAIR_FOR_REVIEW = Prepared(lambda pk, reviewer_id: _stamped(CandidatePair.objects.of_complete_runs().filter(
    pk=pk)).select_related("run__corpus", "panes").annotate(
        lease_until=Subquery(Lease.objects.filter(pair=OuterRef("pk"), reviewer_id=reviewer_id)
                             .values("expires_at")[:1]),
        my_verdict=Subquery(CurrentVerdict.objects.filter(pair=OuterRef("pk"), reviewer_id=reviewer_id)
                            .exclude(verdict=WITHDRAWN).values("verdict")[:1]),
        own_presets=Subquery(ReviewPolicy.objects.filter(corpus_id=OuterRef("run__corpus_id")).order_by("id")
                             .values("preset_reasons")[:1])), kinds="ii")


def pair_for_review(pk: int, user) -> CandidatePair | None:
    """A pair of a complete run as the review page reads it, in one query: with its run, corpus and kept
    panes; `lease_until`, the end of this user's lease on it (None without one); `my_verdict`, their current
    verdict (None without one); `own_presets`, the corpus's own preset reasons (None without a policy); the
    review stamp (stamp_of)."""
    if not 0 < pk <= MAX_ID:  # what no id column holds: not found, as the ORM's range check answers
        return None
    return _PAIR_FOR_REVIEW.one(pk, user.pk)


def pair_view(pair: CandidatePair, user) -> dict:
    """What the review page shows of a pair's record to this user (the pair as pair_for_review reads it):
    their own judgements; other reviewers' and the arbitration only once they have given theirs (blind
    review); the status as they may see it; the preset reasons."""
    current = pair.my_verdict or ""  # read with the pair (pair_for_review)
    all_visible = sees_all(user)
    status, _ = shown_status(pair.status, pair.final_verdict, mine=current, all_visible=all_visible,
                             flag=pair.flag)
    fields = ("created_at", "verdict", "reason", "retained", "related_source")
    return {
        "current": current, "status": status, "status_label": status_label(status),
        "mine": [dict(zip(fields, row, strict=True)) for row in _MY_JUDGEMENTS.rows(pair.pk, user.pk)],
        "others": pair.judgements.exclude(reviewer=user).select_related("reviewer") if current else None,
        "arbitrations": pair.arbitrations.select_related("arbiter") if current else None,
        "settled_by_arbiter": bool(current) and pair.arbitrations.exists(),
        "progress": run_progress(pair.run, user, blind=not all_visible, stamp=stamp_of(pair)),
        "presets": _with_defaults(pair.own_presets),
    }


def review_policy_of(corpus) -> ReviewPolicy | None:
    return ReviewPolicy.objects.filter(corpus=corpus).select_related("updated_by").first()


def preset_reasons_of(corpus_id: int) -> dict[str, str]:
    """The reason each verdict records when the reviewer types none: the corpus's own, else the defaults."""
    return _with_defaults((_PRESET_REASONS.first(corpus_id) or (None,))[0])


def _with_defaults(own: dict | None) -> dict[str, str]:
    """The corpus's own presets as typed, the defaults in the reviewer's language."""
    own = own or {}
    return {verdict: own[verdict] if verdict in own else gettext(text) if text else ""
            for verdict, text in PRESET_REASONS.items()}


def signatures_of(user, limit: int = 20):
    return ReviewerSignature.objects.filter(reviewer=user).order_by("-signed_at")[:limit]


@functools.cache
def _presets_written() -> dict[str, str]:
    """Every default preset reason as any of the interface's languages writes it, to its verdict (a reviewer
    records the default in their own language: review.services)."""
    written = {}
    for code, _ in settings.LANGUAGES:
        with translation.override(code):
            written.update((gettext(text), verdict) for verdict, text in PRESET_REASONS.items() if text)
    return written


def reason_shown(reason: str, verdict: str) -> str:
    """A judgement's reason for the reader: a default preset in the reader's language, with the words the
    reviewer's language recorded on hover; any other reason as typed. Isolated either way (it may be in any
    script)."""
    if _presets_written().get((reason or "").strip()) == verdict:
        shown = gettext(PRESET_REASONS[verdict])
        if shown != reason:
            return format_html('<bdi title="{}">{}</bdi>', reason, shown)
    return format_html("<bdi>{}</bdi>", reason)
