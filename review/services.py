"""Review services: record judgements and arbitrations (insert-only), keep each pair's review state, and
answer the queue, progress and agreement questions."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import transaction
from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet, Subquery, Value
from django.utils import timezone

from dedup_site.http import MAX_ID
from review.kappa import cohen_kappa
from review.models import (
    FINAL_VERDICTS,
    WITHDRAWN,
    Arbitration,
    CurrentVerdict,
    Judgement,
    Lease,
    Retained,
    ReviewPolicy,
    Skip,
    Verdict,
)
from review.selectors import (
    CLUSTER_FLAG,
    JUDGED,
    NEEDS_ARBITRATION,
    PENDING,
    REVIEWED,
    SETTLED,
    sees_all,
    shown_status,
)
from screening.engine.cluster import components
from screening.models import CandidatePair, ScreeningRun, status_label

PROGRESS_CACHE_SECONDS = 5
STATUSES = [PENDING, JUDGED, NEEDS_ARBITRATION, SETTLED]
COPY = Verdict.MERGE_ENTRY  # the verdict that says "these are copies"


class ReviewRefused(Exception):
    """A judgement or arbitration that breaks a rule; the message says which (and `pair_id`, which pair)."""

    def __init__(self, message: str, pair_id: int | None = None):
        super().__init__(message)
        self.pair_id = pair_id


def _clean(verdict: str, reason: str, retained: str, allowed) -> tuple[str, str]:
    if verdict not in [v.value for v in allowed]:
        raise ReviewRefused(f"verdict {verdict!r} is not one of {', '.join(v.value for v in allowed)}")
    reason = (reason or "").strip()
    if not reason:
        raise ReviewRefused("a reason is required")
    if retained and retained not in Retained.values:
        raise ReviewRefused(f"retained version {retained!r} is not one of left, right, both")
    return verdict, reason


def _locked_pair(pair_id: int) -> CandidatePair:
    pair = CandidatePair.objects.select_for_update().select_related("run").get(pk=pair_id)
    if pair.run.status != ScreeningRun.Status.COMPLETE:
        raise ReviewRefused(f"run {pair.run_id} is not complete")
    return pair


def _refuse_if_arbitrated(pair: CandidatePair, action: str) -> None:
    """An arbitration is the last word on a pair: a judgement recorded after it would be listed beside a
    decision it never informed, so none is taken (the reviewer can ask an arbiter instead)."""
    arbitration = pair.arbitrations.select_related("arbiter").order_by("-created_at", "-id").first()
    if arbitration is not None:
        raise ReviewRefused(
            f"pair {pair.pk} was settled by arbitration ({arbitration.arbiter.get_username()}, "
            f"{arbitration.created_at:%Y-%m-%d %H:%M} UTC: {arbitration.verdict}); {action} would not change "
            f"it, so it is not recorded — ask an arbiter if the decision should be reviewed", pair.pk)


def _holders(pair: CandidatePair, now=None) -> set[int]:
    """Reviewers who hold the pair: a current verdict on it, or an unexpired lease."""
    now = now or timezone.now()
    judged = CurrentVerdict.objects.filter(pair=pair).exclude(verdict=WITHDRAWN).values_list("reviewer_id", flat=True)
    leased = Lease.objects.filter(pair=pair, expires_at__gt=now).values_list("reviewer_id", flat=True)
    return set(judged) | set(leased)


def judgement_record(*, pair: CandidatePair, reviewer, verdict: str, reason: str, retained: str = "both",
                     related_source: str = "") -> Judgement:
    """Add a reviewer's judgement. An earlier judgement of theirs stays; this one becomes current. Refused on
    a pair settled by arbitration, and from a reviewer beyond the `reviews_required` who hold the pair."""
    verdict, reason = _clean(verdict, reason, retained, list(Verdict))
    with transaction.atomic():
        pair = _locked_pair(pair.pk)
        if not took_part(pair, reviewer):
            # Blind review: whoever has no part in the pair learns nothing of how it stands, only that it
            # wants no more reviewers (the same words whether it is held, settled or disputed).
            if pair.status not in (PENDING, JUDGED) or len(_holders(pair) - {reviewer.pk}) >= \
                    pair.run.reviews_required:
                raise ReviewRefused(_FULL.format(pair=pair.pk, k=pair.run.reviews_required), pair.pk)
        else:
            _refuse_if_arbitrated(pair, "a new judgement")
            others = _holders(pair) - {reviewer.pk}
            if reviewer.pk not in _judged_by(pair) and len(others) >= pair.run.reviews_required:
                raise ReviewRefused(_FULL.format(pair=pair.pk, k=pair.run.reviews_required), pair.pk)
        judgement = Judgement.objects.create(pair=pair, reviewer=reviewer, verdict=verdict, reason=reason,
                                             retained=retained, related_source=(related_source or "").strip())
        _set_current(pair, reviewer, judgement)
        Lease.objects.filter(pair=pair, reviewer=reviewer).delete()  # done with it: the lease is released
        pair_refresh(pair)
    return judgement


_FULL = "pair {pair} has the {k} reviewer(s) it needs; press Review next for another pair"


def _judged_by(pair: CandidatePair) -> set[int]:
    return set(CurrentVerdict.objects.filter(pair=pair).exclude(verdict=WITHDRAWN).values_list(
        "reviewer_id", flat=True))


def judgement_undo(*, reviewer) -> Judgement | None:
    """Withdraw the reviewer's most recent current verdict by recording a newer 'withdrawn' judgement.
    Returns the withdrawal, or None when there is nothing to undo; refused once the pair was arbitrated."""
    with transaction.atomic():
        current = (
            CurrentVerdict.objects.filter(reviewer=reviewer).exclude(verdict=WITHDRAWN)
            .select_related("judgement").order_by("-judgement__created_at", "-judgement_id").first()
        )
        if current is None:
            return None
        pair = _locked_pair(current.pair_id)
        _refuse_if_arbitrated(pair, "withdrawing your judgement")
        withdrawal = Judgement.objects.create(
            pair=pair, reviewer=reviewer, verdict=WITHDRAWN, reason=f"undo of judgement #{current.judgement_id}",
            supersedes=current.judgement,
        )
        _set_current(pair, reviewer, withdrawal)
        pair_refresh(pair)
    return withdrawal


def took_part(pair: CandidatePair, user) -> bool:
    """Whether the user judged the pair (any judgement, withdrawn or not): then they are part of its case. A
    pair flagged by its cluster's contradiction is a case of the whole cluster: judging any of its pairs
    counts."""
    mine = Judgement.objects.filter(reviewer=user)
    if pair.flag.startswith(CLUSTER_FLAG) and pair.cluster is not None:
        return mine.filter(pair__run_id=pair.run_id, pair__cluster=pair.cluster).exists()
    return mine.filter(pair=pair).exists()


def self_arbitration_allowed(corpus_id: int) -> bool:
    return ReviewPolicy.objects.filter(corpus_id=corpus_id, allow_self_arbitration=True).exists()


def arbitration_record(*, pair: CandidatePair, arbiter, verdict: str, reason: str, retained: str = "both",
                       related_source: str = "") -> Arbitration:
    """Settle a pair that needs arbitration. The judgements it settles stay as they are. An arbiter who judged
    the pair may not settle it, unless the corpus's review policy allows it (then it is marked)."""
    verdict, reason = _clean(verdict, reason, retained, FINAL_VERDICTS)
    with transaction.atomic():
        pair = _locked_pair(pair.pk)
        if pair.status != NEEDS_ARBITRATION:
            raise ReviewRefused(f"pair {pair.pk} is {pair.status.replace('_', ' ')}, not waiting for arbitration")
        own = took_part(pair, arbiter)
        if own and not self_arbitration_allowed(pair.run.corpus_id):
            raise ReviewRefused(f"you judged pair {pair.pk} yourself, so another arbiter must settle it (a corpus "
                                f"admin can allow self-arbitration for one-person teams)")
        arbitration = Arbitration.objects.create(pair=pair, arbiter=arbiter, verdict=verdict, reason=reason,
                                                 retained=retained, related_source=(related_source or "").strip(),
                                                 self_arbitrated=own)
        pair_refresh(pair)
    return arbitration


def review_policy_set(*, corpus, user, allow_self_arbitration: bool) -> ReviewPolicy:
    policy, _ = ReviewPolicy.objects.update_or_create(
        corpus=corpus, defaults={"allow_self_arbitration": allow_self_arbitration, "updated_by": user})
    return policy


def _set_current(pair: CandidatePair, reviewer, judgement: Judgement) -> None:
    CurrentVerdict.objects.update_or_create(
        pair=pair, reviewer=reviewer,
        defaults={"judgement": judgement, "verdict": judgement.verdict, "run_id": pair.run_id},
    )


def pair_refresh(pair: CandidatePair) -> None:
    """Derive the pair's status and final verdict from its records; then check its cluster."""
    arbitration = pair.arbitrations.order_by("-created_at", "-id").first()
    current = list(CurrentVerdict.objects.filter(pair=pair).exclude(verdict=WITHDRAWN)
                   .values_list("verdict", flat=True))
    flag = ""
    if arbitration:
        status, final = SETTLED, arbitration.verdict
    elif len(current) < pair.run.reviews_required:
        # Blind review: until every required reviewer has judged, the status says nothing of the verdicts
        # given so far (an early "needs arbitration" would tell the next reviewer what the first one chose).
        status, final = (JUDGED if current else PENDING), ""
    elif Verdict.ARBITRATION in current:
        status, final, flag = NEEDS_ARBITRATION, "", "a reviewer asked for arbitration"
    elif len(set(current)) > 1:
        status, final, flag = NEEDS_ARBITRATION, "", "the reviewers disagree"
    else:
        status, final = SETTLED, current[0]
    CandidatePair.objects.filter(pk=pair.pk).update(status=status, final_verdict=final, flag=flag)
    pair.status, pair.final_verdict, pair.flag = status, final, flag
    cache.delete(_progress_key(pair.run_id))  # the reviewer's next page counts this change
    if status == SETTLED and pair.cluster is not None:
        cluster_check(pair.run_id, pair.cluster)


def cluster_check(run_id: int, cluster: int) -> list[int]:
    """Flag for arbitration the settled pairs of a cluster that contradict it: judged different although
    a chain of pairs judged copies links the two documents (A=B, B=C, but A≠C). Returns the flagged pks."""
    settled = list(CandidatePair.objects.filter(run_id=run_id, cluster=cluster, status=SETTLED)
                   .values_list("pk", "left_id", "right_id", "final_verdict"))
    component_of = {}
    for number, members in enumerate(components((a, b) for _, a, b, v in settled if v == COPY)):
        component_of.update(dict.fromkeys(members, number))
    flagged = [
        pk for pk, a, b, verdict in settled
        if verdict != COPY and a in component_of and component_of.get(a) == component_of.get(b)
    ]
    unarbitrated = list(CandidatePair.objects.filter(pk__in=flagged, arbitrations__isnull=True).values_list(
        "pk", flat=True))
    CandidatePair.objects.filter(pk__in=unarbitrated).update(
        status=NEEDS_ARBITRATION, final_verdict="",
        flag=f"{CLUSTER_FLAG} {cluster}: judged different, yet linked by pairs judged copies",
    )
    return unarbitrated


# --- queue -----------------------------------------------------------------------------------------


@dataclass
class QueueFilter:
    corpus: str = ""
    run: int | None = None
    pass_name: str = ""
    min_score: float | None = None
    max_score: float | None = None
    cluster: int | None = None
    status: str = ""
    signals: str = ""  # "yes" | "no" | ""
    sort: str = "score"  # "score" | "cluster"
    unjudged_by: object = None  # a user: only pairs without their current verdict

    def apply(self, pairs: QuerySet) -> QuerySet:
        # Runs are resolved first, so the pair query is a plain range on the (run, sort key) indexes.
        runs = ScreeningRun.objects.filter(status=ScreeningRun.Status.COMPLETE)
        if self.corpus:
            runs = runs.filter(corpus__name=self.corpus)
        if self.run is not None:
            runs = runs.filter(pk=self.run)
        run_ids = list(runs.values_list("pk", flat=True))
        pairs = pairs.filter(run_id=run_ids[0]) if len(run_ids) == 1 else pairs.filter(run_id__in=run_ids)
        if self.pass_name:
            pairs = pairs.filter(pass_name=self.pass_name)
        if self.min_score is not None:
            pairs = pairs.filter(jaccard__gte=self.min_score)
        if self.max_score is not None:
            pairs = pairs.filter(jaccard__lte=self.max_score)
        if self.cluster is not None:
            pairs = pairs.filter(cluster=self.cluster)
        if self.status == REVIEWED:
            pairs = pairs.filter(status__in=[SETTLED, NEEDS_ARBITRATION])
        elif self.status:
            pairs = pairs.filter(status=self.status)
        if self.signals in ("yes", "no"):
            pairs = pairs.filter(has_signals=self.signals == "yes")
        if self.unjudged_by is not None:
            mine = CurrentVerdict.objects.filter(pair=OuterRef("pk"), reviewer=self.unjudged_by).exclude(
                verdict=WITHDRAWN)
            pairs = pairs.filter(~Exists(mine))
        return pairs

    def ordering(self) -> list:
        if self.sort == "cluster":
            return [F("cluster").asc(nulls_last=True), "id"]
        return ["-jaccard", "id"]


@dataclass(frozen=True, slots=True)
class QueueRow:
    """What the queue shows of one pair: plain values, no model instances to build per row."""

    pk: int
    run_id: int
    corpus: str
    pass_name: str
    jaccard: float
    cluster: int | None
    revision_signals: list
    status: str
    final_verdict: str
    left: str  # doc_id
    right: str  # doc_id
    mine: str  # the current verdict of the reviewer asked about, "" when they have none

    # Formatted here rather than by template filters: 50 rows of filters were a fifth of the page's CPU.
    @property
    def score(self) -> str:
        return f"{self.jaccard:.3f}"

    @property
    def status_label(self) -> str:
        return status_label(self.status)


def queue_page(flt: QueueFilter, after: str = "", limit: int = 50, reviewer=None, all_visible: bool = True
               ) -> tuple[list[QueueRow], str]:
    """One page of the queue after the keyset cursor `after`; returns the rows and the next cursor. With a
    reviewer, each row says whether they have a current verdict on it; unless `all_visible`, rows they have
    not judged show no status or verdict that others' verdicts decided (blind review)."""
    pairs = flt.apply(CandidatePair.objects.all())
    if after:
        pairs = pairs.filter(_after(flt.sort, after))
    # First the page's ids alone, a walk of the (run, sort key) index that no join or stale planner
    # statistics can turn into a sort of the whole run; then those rows, without the document bodies.
    ids = list(pairs.order_by(*flt.ordering()).values_list("pk", flat=True)[: limit + 1])
    more = len(ids) > limit
    rows = _rows_for_listing(ids[:limit], reviewer, all_visible)
    return rows, _cursor(flt.sort, rows[-1]) if more and rows else ""


def _rows_for_listing(ids: list[int], reviewer=None, all_visible: bool = True) -> list[QueueRow]:
    """These pairs, in this order: one query by primary key, joined only for the two doc_ids and the
    corpus name, read as tuples (building 150 model instances per page cost more than the query)."""
    pairs = CandidatePair.objects.filter(pk__in=ids)
    if reviewer is not None:
        pairs = pairs.annotate(mine=Subquery(CurrentVerdict.objects.filter(
            pair=OuterRef("pk"), reviewer=reviewer).exclude(verdict=WITHDRAWN).values("verdict")[:1]))
    else:
        pairs = pairs.annotate(mine=Value(""))
    found = {}
    for values in pairs.values_list("pk", "run_id", "run__corpus__name", "pass_name", "jaccard", "cluster",
                                    "revision_signals", "status", "final_verdict", "left__doc_id", "right__doc_id",
                                    "mine", "flag"):
        mine = values[11] or ""
        status, final = shown_status(values[7], values[8], mine=mine, all_visible=all_visible, flag=values[12])
        found[values[0]] = QueueRow(*values[:7], status, final, *values[9:11], mine)
    return [found[pk] for pk in ids]


def _cursor(sort: str, last: QueueRow) -> str:
    if sort == "cluster":
        return f"{last.cluster if last.cluster is not None else 'none'}:{last.pk}"
    return f"{last.jaccard!r}:{last.pk}"


class BadCursor(ValueError):
    """A queue position that this program did not write (edited by hand, or from another sort)."""


def _number(text: str, kind: type) -> int | float:
    try:
        value = kind(text)
    except ValueError:
        raise BadCursor(text) from None
    if not math.isfinite(value) or abs(value) > MAX_ID:
        raise BadCursor(text)
    return value


def _after(sort: str, cursor: str) -> Q:
    """The pairs after a keyset cursor; BadCursor when the cursor is not one `_cursor` writes."""
    # Written as a range plus an exclusion (not an OR of two ranges) so the index on the sort key is used.
    value, _, pk = cursor.partition(":")
    pk = _number(pk, int)
    if sort == "cluster":
        if value == "none":
            return Q(cluster__isnull=True, id__gt=pk)
        c = _number(value, int)
        return (Q(cluster__gte=c) & ~Q(cluster=c, id__lte=pk)) | Q(cluster__isnull=True)
    score = _number(value, float)
    return Q(jaccard__lte=score) & ~Q(jaccard=score, id__lte=pk)


def lease_take(*, pair_id: int, reviewer, seconds: int | None = None) -> bool:
    """Hold the pair for this reviewer for `seconds` (renewing a lease they hold) when fewer reviewers hold
    it than it needs judgements; True when they hold it (or have judged it). The pair's row is locked while
    counting, so two reviewers asking at once are counted one after the other."""
    seconds = seconds or settings.DEDUP_LEASE_SECONDS
    with transaction.atomic():
        pair = CandidatePair.objects.select_for_update(of=("self",)).select_related("run").get(pk=pair_id)
        now = timezone.now()
        Lease.objects.filter(pair=pair, expires_at__lte=now).delete()  # lapsed: nobody holds them any more
        if reviewer.pk in _judged_by(pair):
            return True  # their verdict already holds a place; no lease needed
        if pair.status not in (PENDING, JUDGED):
            return False
        if len(_holders(pair, now) - {reviewer.pk}) >= pair.run.reviews_required:
            return False
        Lease.objects.update_or_create(pair=pair, reviewer=reviewer,
                                       defaults={"expires_at": now + timedelta(seconds=seconds)})
    return True


def lease_release(*, pair_id: int, reviewer) -> None:
    Lease.objects.filter(pair_id=pair_id, reviewer=reviewer).delete()


def pair_skip(*, pair: CandidatePair, reviewer) -> None:
    """Put the pair at the back of this reviewer's queue and let go of it."""
    with transaction.atomic():
        Skip.objects.update_or_create(pair=pair, reviewer=reviewer,
                                      defaults={"skipped_at": timezone.now()})
        lease_release(pair_id=pair.pk, reviewer=reviewer)


def next_pair(flt: QueueFilter, reviewer, chunk: int = 200) -> CandidatePair | None:
    """The next pair (in queue order) this reviewer has not judged, that still wants judgements and that
    fewer reviewers hold than it needs; it is handed out under a lease. Pairs the reviewer skipped come
    last, oldest skip first.

    Walks the queue in index order a chunk at a time and skips, in Python, my pairs and those that want no
    more judgements: an anti-join or a status list over a million pairs makes the database sort them all."""
    pairs = flt.apply(CandidatePair.objects.all()).order_by(*flt.ordering())
    skipped: list[int] = []
    cursor = ""
    while True:
        page = pairs.filter(_after(flt.sort, cursor)) if cursor else pairs
        rows = list(page.only("pk", "jaccard", "cluster", "status")[:chunk])
        if not rows:
            break
        ids = [r.pk for r in rows]
        mine = set(CurrentVerdict.objects.filter(reviewer=reviewer, pair_id__in=ids)
                   .exclude(verdict=WITHDRAWN).values_list("pair_id", flat=True))
        passed = set(Skip.objects.filter(reviewer=reviewer, pair_id__in=ids).values_list("pair_id", flat=True))
        for row in rows:
            if row.status not in (PENDING, JUDGED) or row.pk in mine:
                continue
            if row.pk in passed:
                skipped.append(row.pk)
            elif lease_take(pair_id=row.pk, reviewer=reviewer):
                return CandidatePair.objects.get(pk=row.pk)
        cursor = _cursor(flt.sort, rows[-1])
    # Then what I skipped, in the order I skipped it.
    for pk in Skip.objects.filter(reviewer=reviewer, pair_id__in=skipped).order_by("skipped_at", "id").values_list(
            "pair_id", flat=True):
        if lease_take(pair_id=pk, reviewer=reviewer):
            return CandidatePair.objects.get(pk=pk)
    return None


@dataclass
class RunProgress:
    run: ScreeningRun
    total: int
    by_status: dict[str, int]
    mine: int
    blind: bool = False  # the viewer may not tell settled pairs from those awaiting arbitration

    @property
    def judged(self) -> int:
        return self.total - self.by_status.get(PENDING, 0)

    @property
    def reviewed(self) -> int:
        """Pairs with all their reviews: settled or waiting for an arbiter."""
        if self.blind:
            return self.by_status.get(REVIEWED, 0)
        return self.by_status.get(SETTLED, 0) + self.by_status.get(NEEDS_ARBITRATION, 0)


def _progress_key(run_id: int) -> str:
    return f"review:run-progress:{run_id}"


def run_progress(run: ScreeningRun, reviewer=None, *, fresh: bool = False, blind: bool = False) -> RunProgress:
    """Pairs per status (cached for a few seconds: counting a million pairs on every click is slow) and
    how many this reviewer has judged (always exact). A blind progress keeps only what verdicts do not
    decide: pending, judged, reviewed."""
    key = _progress_key(run.pk)
    by_status = None if fresh else cache.get(key)
    if by_status is None:
        by_status = dict(CandidatePair.objects.filter(run=run).values_list("status").annotate(n=Count("id")))
        cache.set(key, by_status, PROGRESS_CACHE_SECONDS)
    mine = 0
    if reviewer is not None:
        mine = CurrentVerdict.objects.filter(run_id=run.pk, reviewer=reviewer).exclude(verdict=WITHDRAWN).count()
    if blind:
        by_status = {PENDING: by_status.get(PENDING, 0), JUDGED: by_status.get(JUDGED, 0),
                     REVIEWED: by_status.get(SETTLED, 0) + by_status.get(NEEDS_ARBITRATION, 0)}
        return RunProgress(run, sum(by_status.values()), by_status, mine, blind=True)
    return RunProgress(run, sum(by_status.values()), by_status, mine)


# --- dashboard -------------------------------------------------------------------------------------


@dataclass
class Dashboard:
    progress: RunProgress
    final_verdicts: dict[str, int]
    per_reviewer: list[tuple[str, int, dict[str, int] | None]]  # (reviewer, judgements, current verdict counts)
    agreement: list[tuple[str, str, float | None, int]] = field(default_factory=list)  # (a, b, kappa, shared)
    backlog: int | None = 0
    blind: bool = False


def dashboard(run: ScreeningRun, viewer=None) -> Dashboard:
    """The run's review figures. For a blind viewer (see selectors): final verdicts of the pairs they judged,
    their own verdict counts, others' judgement counts only, and agreement between them and each other
    reviewer over the pairs both judged."""
    User = get_user_model()
    blind = viewer is not None and not sees_all(viewer)
    progress = run_progress(run, viewer, fresh=True, blind=blind)
    current = defaultdict(dict)
    for reviewer_id, pair_id, verdict in CurrentVerdict.objects.filter(run_id=run.pk).exclude(
            verdict=WITHDRAWN).values_list("reviewer_id", "pair_id", "verdict"):
        current[reviewer_id][pair_id] = verdict
    if blind:  # the pairs they judged, each as it stands for them (see selectors.shown_status)
        finals = Counter()
        for pk, status, final, flag in CandidatePair.objects.filter(
                pk__in=list(current[viewer.pk])).values_list("pk", "status", "final_verdict", "flag"):
            status, final = shown_status(status, final, mine=current[viewer.pk][pk], all_visible=False, flag=flag)
            if status == SETTLED:
                finals[final] += 1
        finals = dict(finals)
    else:
        finals = dict(CandidatePair.objects.filter(run=run, status=SETTLED).values_list("final_verdict")
                      .annotate(n=Count("id")))
    records = Judgement.objects.filter(pair__run=run).exclude(verdict=WITHDRAWN)
    if blind:  # others' figures over the pairs the viewer judged too, as for agreement
        records = records.filter(pair_id__in=list(current[viewer.pk]))
    counts = dict(records.values_list("reviewer_id").annotate(n=Count("id")))
    names = dict(User.objects.filter(pk__in=set(counts) | set(current)).values_list("pk", User.USERNAME_FIELD))
    per_reviewer = sorted(
        (names[r], counts.get(r, 0),
         None if blind and r != viewer.pk else dict(Counter(current[r].values())))
        for r in set(counts) | set(current)
    )
    reviewers = sorted(current, key=names.get)
    agreement = []
    for i, a in enumerate(reviewers):
        for b in reviewers[i + 1 :]:
            if blind and viewer.pk not in (a, b):
                continue
            kappa, shared = cohen_kappa(current[a], current[b])
            if shared:
                agreement.append((names[a], names[b], kappa, shared))
    backlog = None if blind else progress.by_status.get(NEEDS_ARBITRATION, 0)
    return Dashboard(progress, finals, per_reviewer, agreement, backlog, blind)
