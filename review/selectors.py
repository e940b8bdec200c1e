"""Reads of the review record for pages: the queue, a run's progress, the dashboard, what is left to sign,
and what a user may see of it (blind review).

Admins and arbiters see everything. A reviewer sees other reviewers' verdicts only on pairs they have
judged themselves: on any other pair, a status that depends on those verdicts ("settled", "needs
arbitration") shows as "reviewed", and counts and agreement figures cover their own pairs only.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import connection
from django.db.models import Count, Exists, F, Max, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from dedup_site.http import MAX_ID
from dedup_site.prepared import Prepared
from dedup_site.roles import sees_all_verdicts
from review.kappa import cohen_kappa
from review.models import (
    PRESET_REASONS,
    WITHDRAWN,
    Arbitration,
    CurrentVerdict,
    Judgement,
    Lease,
    ReviewerSignature,
    ReviewPolicy,
)
from screening.engine import panes
from screening.models import CandidatePair, Document, ScreeningRun

PENDING, JUDGED, NEEDS_ARBITRATION, SETTLED = "pending", "judged", "needs_arbitration", "settled"
STATUSES = [PENDING, JUDGED, NEEDS_ARBITRATION, SETTLED]
CLUSTER_FLAG = "contradicts cluster"  # how a pair flagged by its cluster's other pairs is marked
REVIEWED = "reviewed"  # has all its reviews (settled or waiting for an arbiter), shown to a blind reviewer
BLIND_STATUSES = [PENDING, JUDGED, REVIEWED]
PROGRESS_CACHE_SECONDS = 60  # a decision changes the key (review_stamp), so this only bounds memory

sees_all = sees_all_verdicts  # the review app's name for the rule, which dedup_site.roles holds

# What the queue and pair pages read on every request, compiled once (dedup_site.prepared).
_MY_VERDICT_COUNT = Prepared(lambda run_id, reviewer_id: CurrentVerdict.objects.filter(
    run_id=run_id, reviewer_id=reviewer_id).exclude(verdict=WITHDRAWN).order_by().values("run_id")
    .annotate(n=Count("id")).values_list("n"), kinds="ii")
_MY_JUDGEMENTS = Prepared(lambda pair_id, reviewer_id: Judgement.objects.filter(
    pair_id=pair_id, reviewer_id=reviewer_id).order_by("-created_at", "-id").values_list(
    "created_at", "verdict", "reason", "retained", "related_source"), kinds="ii")
_PRESET_REASONS = Prepared(lambda corpus_id: ReviewPolicy.objects.filter(corpus_id=corpus_id).order_by("id")
                           .values_list("preset_reasons")[:1])
RUN_PICKER_LIMIT = 100
_REVIEWABLE_RUNS = Prepared(lambda: ScreeningRun.objects.filter(status=ScreeningRun.Status.COMPLETE).order_by("-pk")
                            .values_list("pk", "corpus__name", "exact", "near", "config", "reviews_required",
                                         "finished_at")[:RUN_PICKER_LIMIT], kinds="")


def status_label(status: str) -> str:
    """A pair's review status as the pages show it ("needs arbitration"; an empty status is pending)."""
    return status.replace("_", " ") or "pending"


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
    suggestion: str = ""  # a suggested verdict
    min_confidence: float | None = None
    sort: str = "score"  # "score" | "cluster" | "confidence"
    below: bool = False  # also the pairs below the run's review threshold (stored down to its storage floor)
    unjudged_by: object = None  # a user: only pairs without their current verdict

    def apply(self, pairs: QuerySet, run: ScreeningRun | None = None) -> QuerySet:
        """These pairs, filtered. `run`: the filter's run as the caller has already read it (with its corpus),
        so it is not read again."""
        # Runs are resolved first, so the pair query is a plain range on the (run, sort key) indexes.
        if (run is not None and run.pk == self.run and run.status == ScreeningRun.Status.COMPLETE
                and (not self.corpus or run.corpus.name == self.corpus)):
            found = [(run.pk, run.near, run.config)]
        else:
            runs = ScreeningRun.objects.filter(status=ScreeningRun.Status.COMPLETE)
            if self.corpus:
                runs = runs.filter(corpus__name=self.corpus)
            if self.run is not None:
                runs = runs.filter(pk=self.run)
            found = list(runs.values_list("pk", "near", "config"))
        if len(found) == 1:
            pk, near, config = found[0]
            pairs = pairs.filter(run_id=pk)
            if not self.below:  # a run's queue is what its review threshold sends to review
                pairs = pairs.filter(jaccard__gte=review_threshold(near, config))
        else:
            pairs = pairs.filter(run_id__in=[pk for pk, _, _ in found])
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
        if self.suggestion:
            pairs = pairs.filter(suggested_verdict=self.suggestion)
        if self.min_confidence is not None:
            pairs = pairs.filter(suggestion_confidence__gte=self.min_confidence)
        if self.unjudged_by is not None:
            mine = CurrentVerdict.objects.filter(pair=OuterRef("pk"), reviewer=self.unjudged_by).exclude(
                verdict=WITHDRAWN)
            pairs = pairs.filter(~Exists(mine))
        return pairs

    def ordering(self, reverse: bool = False) -> list:
        """Queue order; `reverse` walks it backwards (for the page before a cursor)."""
        if self.sort == "cluster":
            if reverse:
                return [F("cluster").desc(nulls_first=True), "-id"]
            return [F("cluster").asc(nulls_last=True), "id"]
        if self.sort == "confidence":
            if reverse:
                return [F("suggestion_confidence").asc(nulls_first=True), "-id"]
            return [F("suggestion_confidence").desc(nulls_last=True), "id"]
        return ["jaccard", "-id"] if reverse else ["-jaccard", "id"]


def _stamped(queryset: QuerySet) -> QuerySet:
    """The review_stamp read with a page's main row, as `newest_judgement` and `newest_arbitration`: one round
    trip fewer a page, and as fresh (stamp_of)."""
    return queryset.annotate(
        newest_judgement=Subquery(Judgement.objects.order_by("-id").values("id")[:1]),
        newest_arbitration=Subquery(Arbitration.objects.order_by("-id").values("id")[:1]))


def stamp_of(row) -> tuple[int, int]:
    """The review_stamp read with a run (complete_run) or a pair (pair_for_review)."""
    return row.newest_judgement or 0, row.newest_arbitration or 0


_COMPLETE_RUN = Prepared(lambda pk: _stamped(ScreeningRun.objects.filter(pk=pk, status=ScreeningRun.Status.COMPLETE)
                                             .select_related("corpus")))


def complete_run(pk: int) -> ScreeningRun | None:
    """The run, with its corpus, if it is complete (the run a queue shows), and the review stamp
    (stamp_of)."""
    return _COMPLETE_RUN.one(pk) if 0 < pk <= MAX_ID else None


def latest_run(corpus: str = "") -> int | None:
    """The newest complete run (of the corpus, when one is named): the queue a reviewer starts on."""
    runs = ScreeningRun.objects.filter(status=ScreeningRun.Status.COMPLETE)
    if corpus:
        runs = runs.filter(corpus__name=corpus)
    return runs.order_by("-pk").values_list("pk", flat=True).first()


def reviewable_runs() -> list[tuple[int, str]]:
    """The newest RUN_PICKER_LIMIT complete runs a reviewer can pick, newest first: (pk, what the picker
    shows)."""
    out = []
    for pk, corpus, exact, near, config, k, done in _REVIEWABLE_RUNS.rows():
        parts = [f"run {pk}", corpus, "+".join(n for n, on in (("exact", exact), ("near", near)) if on)]
        if near:  # what tells two runs of one corpus apart
            c = config.get("near", {})
            parts.append(f"{c.get('policy', '')} {c.get('shingle', '')} ≥ {c.get('threshold', '')}")
        if k > 1:
            parts.append(f"{k} reviews a pair")
        if done:
            parts.append(f"{done:%Y-%m-%d %H:%M}")
        out.append((pk, " · ".join(parts)))
    return out


def review_threshold(near: bool, config: dict) -> float:
    """The score at or above which a run sends a pair to review: the near pass's threshold (exact pairs
    score 1.0)."""
    return float(config.get("near", {}).get("threshold", 1.0)) if near else 1.0


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
    suggestion: str = ""  # the suggested verdict
    confidence: float | None = None
    left_title: str = ""
    right_title: str = ""
    below: bool = False  # below the run's review threshold (shown only on request)

    # Formatted here rather than by template filters: 50 rows of filters were a fifth of the page's CPU.
    @property
    def score(self) -> str:
        return f"{self.jaccard:.3f}"

    @property
    def status_label(self) -> str:
        return status_label(self.status)

    @property
    def confidence_text(self) -> str:
        return "" if self.confidence is None else f"{self.confidence:.2f}"


@dataclass
class QueuePage:
    rows: list[QueueRow]
    next: str = ""  # cursor of the page after this one, "" on the last page
    prev: str = ""  # cursor of the page before this one, "" on the first page


# A run's queue by score with no other filter, as most queue pages ask for it, compiled once: its ids after a
# cursor (markers in the cursor's text, so the SQL is after_cursor's own), and whether any come before one.
_BY_SCORE = Prepared(lambda run_id, threshold: CandidatePair.objects.filter(run_id=run_id, jaccard__gte=threshold)
                     .order_by("-jaccard", "id").values_list("pk")[:_LISTED + 1], kinds="if")
_BY_SCORE_AFTER = Prepared(lambda run_id, threshold, score, pk: CandidatePair.objects.filter(
    after_cursor("score", f"{score!r}:{pk}"), run_id=run_id, jaccard__gte=threshold).order_by("-jaccard", "id")
    .values_list("pk")[:_LISTED + 1], kinds="iffi")
_BY_SCORE_BEFORE = Prepared(lambda run_id, threshold, score, pk: CandidatePair.objects.filter(
    before_cursor("score", f"{score!r}:{pk}"), run_id=run_id, jaccard__gte=threshold).values_list("pk")[:1],
    kinds="iffi")


def _by_score(flt: QueueFilter, run: ScreeningRun | None, limit: int) -> bool:
    """Whether this page is a run's queue by score with no other filter (the kept queries above)."""
    return (limit == _LISTED and run is not None and flt == QueueFilter(run=run.pk)
            and run.status == ScreeningRun.Status.COMPLETE)


def queue_page(flt: QueueFilter, after: str = "", limit: int = 50, reviewer=None, all_visible: bool = True,
               before: str = "", run: ScreeningRun | None = None) -> QueuePage:
    """One page of the queue after the keyset cursor `after` (or the page before `before`), with the
    cursors of the pages on either side. With a reviewer, each row says whether they have a current verdict
    on it; unless `all_visible`, rows they have not judged show no status or verdict that others' verdicts
    decided (blind review)."""
    if _by_score(flt, run, limit) and not before:
        ids, any_before = _reads_by_score(run, after)
    else:
        pairs = flt.apply(CandidatePair.objects.all(), run)
        if before:
            # Walk backwards from the cursor, then put the page back in queue order.
            ids = list(pairs.filter(before_cursor(flt.sort, before)).order_by(*flt.ordering(reverse=True))
                       .values_list("pk", flat=True)[: limit + 1])
            earlier = len(ids) > limit
            ids = ids[:limit][::-1]
            rows = _rows_for_listing(ids, reviewer, all_visible, run)
            return QueuePage(rows, cursor_of(flt.sort, rows[-1]) if rows else "",
                             cursor_of(flt.sort, rows[0]) if earlier and rows else "")
        # First the page's ids alone, a walk of the (run, sort key) index that no join or stale planner
        # statistics can turn into a sort of the whole run; then those rows, without the document bodies.
        page = pairs.filter(after_cursor(flt.sort, after)) if after else pairs
        ids = list(page.order_by(*flt.ordering()).values_list("pk", flat=True)[: limit + 1])

        def any_before(row: QueueRow) -> bool:
            return pairs.filter(before_cursor(flt.sort, cursor_of(flt.sort, row))).exists()

    more = len(ids) > limit
    rows = _rows_for_listing(ids[:limit], reviewer, all_visible, run)
    earlier = bool(after) and bool(rows) and any_before(rows[0])
    return QueuePage(rows, cursor_of(flt.sort, rows[-1]) if more and rows else "",
                     cursor_of(flt.sort, rows[0]) if earlier else "")


def _reads_by_score(run: ScreeningRun, after: str) -> tuple[list[int], Callable[[QueueRow], bool]]:
    """queue_page's two reads for a run's queue by score with no other filter, through the kept queries (the
    same SQL as the queryset's: test_queue): the page's ids after the cursor, and whether any pair comes
    before a row."""
    threshold = review_threshold(run.near, run.config)
    if after:
        score, _, pk = after.partition(":")  # as after_cursor reads it: BadCursor for what cursor_of did not write
        ids = [pk for pk, in _BY_SCORE_AFTER.rows(run.pk, threshold, _number(score, float), _number(pk, int))]
    else:
        ids = [pk for pk, in _BY_SCORE.rows(run.pk, threshold)]
    return ids, lambda row: bool(_BY_SCORE_BEFORE.rows(run.pk, threshold, row.jaccard, row.pk))


def queue_count(flt: QueueFilter, stamp: tuple[int, int] | None = None) -> int:
    """How many pairs the queue holds with these filters (cached briefly, like the progress counts). A page
    that also shows progress reads the review_stamp once and passes it to both."""
    shape = repr((flt.corpus, flt.run, flt.pass_name, flt.min_score, flt.max_score, flt.cluster, flt.status,
                  flt.signals, flt.suggestion, flt.min_confidence, flt.below, stamp or review_stamp()))
    key = f"review:queue-count:{hashlib.sha256(shape.encode()).hexdigest()[:32]}"
    count = cache.get(key)
    if count is None:
        count = flt.apply(CandidatePair.objects.all()).count()
        cache.set(key, count, PROGRESS_CACHE_SECONDS)
    return count


_LISTED = 50  # pairs a kept listing query reads at once (a queue page's worth); fewer are padded with id 0
_LISTING_COLUMNS = ("pk", "run_id", "run__corpus__name", "pass_name", "jaccard", "cluster", "revision_signals",
                    "status", "final_verdict", "left__doc_id", "right__doc_id", "mine", "flag", "suggested_verdict",
                    "suggestion_confidence", "left__title", "right__title")
_LISTING = Prepared(lambda reviewer_id, ids: CandidatePair.objects.filter(pk__in_ids=ids).annotate(
    mine=Subquery(CurrentVerdict.objects.filter(pair=OuterRef("pk"), reviewer_id=reviewer_id).exclude(
        verdict=WITHDRAWN).values("verdict")[:1])).values_list(*_LISTING_COLUMNS), kinds="il", list_length=_LISTED)


def _rows_for_listing(ids: list[int], reviewer=None, all_visible: bool = True,
                      run: ScreeningRun | None = None) -> list[QueueRow]:
    """These pairs, in this order: one kept query by primary key per 50, joined only for the two doc_ids and
    the corpus name, read as tuples (building 150 model instances per page cost more than the query). The
    review threshold of each pair's run (`run`'s given, the others' read once): the run's settings read
    with every row were 50 JSON documents parsed a page."""
    reviewer_id = reviewer.pk if reviewer is not None else 0  # no user has id 0: no one's verdict
    read = []
    for start in range(0, len(ids), _LISTED):
        batch = ids[start:start + _LISTED]
        read += _LISTING.rows(reviewer_id, [*batch, *[0] * (_LISTED - len(batch))])
    thresholds = {run.pk: review_threshold(run.near, run.config)} if run is not None else {}
    if missing := {values[1] for values in read} - thresholds.keys():
        thresholds.update((pk, review_threshold(near, config)) for pk, near, config in
                          ScreeningRun.objects.filter(pk__in=missing).values_list("pk", "near", "config"))
    found = {}
    for values in read:
        mine = values[11] or ""
        status, final = shown_status(values[7], values[8], mine=mine, all_visible=all_visible, flag=values[12])
        found[values[0]] = QueueRow(*values[:7], status, final, *values[9:11], mine, values[13], values[14],
                                    values[15], values[16], values[4] < thresholds[values[1]])
    return [found[pk] for pk in ids]


def cursor_of(sort: str, last) -> str:
    if sort == "cluster":
        return f"{last.cluster if last.cluster is not None else 'none'}:{last.pk}"
    if sort == "confidence":  # a QueueRow, or a pair read by next_pair
        confidence = last.confidence if isinstance(last, QueueRow) else last.suggestion_confidence
        return f"{'none' if confidence is None else repr(confidence)}:{last.pk}"
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


def after_cursor(sort: str, cursor: str) -> Q:
    """The pairs after a keyset cursor; BadCursor when the cursor is not one `_cursor` writes."""
    # Written as a range plus an exclusion (not an OR of two ranges) so the index on the sort key is used.
    value, _, pk = cursor.partition(":")
    pk = _number(pk, int)
    if sort == "cluster":
        if value == "none":
            return Q(cluster__isnull=True, id__gt=pk)
        c = _number(value, int)
        return (Q(cluster__gte=c) & ~Q(cluster=c, id__lte=pk)) | Q(cluster__isnull=True)
    if sort == "confidence":
        if value == "none":
            return Q(suggestion_confidence__isnull=True, id__gt=pk)
        c = _number(value, float)
        return ((Q(suggestion_confidence__lte=c) & ~Q(suggestion_confidence=c, id__lte=pk))
                | Q(suggestion_confidence__isnull=True))
    score = _number(value, float)
    return Q(jaccard__lte=score) & ~Q(jaccard=score, id__lte=pk)


def before_cursor(sort: str, cursor: str) -> Q:
    """The pairs before a keyset cursor, in queue order (the mirror of after_cursor)."""
    value, _, pk = cursor.partition(":")
    pk = _number(pk, int)
    if sort == "cluster":
        if value == "none":
            return Q(cluster__isnull=False) | Q(cluster__isnull=True, id__lt=pk)
        c = _number(value, int)
        return Q(cluster__lte=c) & ~Q(cluster=c, id__gte=pk)
    if sort == "confidence":
        if value == "none":
            return Q(suggestion_confidence__isnull=False) | Q(suggestion_confidence__isnull=True, id__lt=pk)
        c = _number(value, float)
        return Q(suggestion_confidence__gte=c) & ~Q(suggestion_confidence=c, id__gte=pk)
    score = _number(value, float)
    return Q(jaccard__gte=score) & ~Q(jaccard=score, id__gte=pk)


# --- progress and dashboard --------------------------------------------------------------------------


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


def review_stamp() -> tuple[int, int]:
    """The newest judgement and arbitration: a pair's status changes only with one of them. Counts are cached
    under it, so every process (each gunicorn worker has its own cache) sees a decision on its next page."""
    # One round trip for both (the header and the queue ask on every page), table names from the models.
    judgements, arbitrations = (connection.ops.quote_name(m._meta.db_table) for m in (Judgement, Arbitration))
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT (SELECT MAX(id) FROM {judgements}), (SELECT MAX(id) FROM {arbitrations})")  # noqa: S608
        newest_judgement, newest_arbitration = cursor.fetchone()
    return newest_judgement or 0, newest_arbitration or 0


def progress_key(run_id: int, stamp: tuple[int, int] | None = None) -> str:
    stamp = stamp or review_stamp()
    return f"review:run-progress:{run_id}:{stamp[0]}:{stamp[1]}"


def run_progress(run: ScreeningRun, reviewer=None, *, fresh: bool = False, blind: bool = False,
                 stamp: tuple[int, int] | None = None) -> RunProgress:
    """Pairs to review per status (cached: counting a million pairs on every click is slow) and
    how many this reviewer has judged (always exact). A blind progress keeps only what verdicts do not
    decide: pending, judged, reviewed."""
    stamp = stamp or review_stamp()
    key = progress_key(run.pk, stamp)
    by_status = None if fresh else cache.get(key)
    if by_status is None:
        # The pairs the run sends to review: those at or above its threshold (the queue's own).
        by_status = dict(CandidatePair.objects.filter(run=run, jaccard__gte=review_threshold(run.near, run.config))
                         .values_list("status").annotate(n=Count("id")))
        cache.set(key, by_status, PROGRESS_CACHE_SECONDS)
    mine = 0
    if reviewer is not None:
        # Exact though cached: a reviewer's current verdicts change only with a new judgement, which moves
        # the stamp in the key.
        mine_key = f"review:my-verdicts:{run.pk}:{reviewer.pk}:{stamp[0]}:{stamp[1]}"
        mine = None if fresh else cache.get(mine_key)
        if mine is None:
            mine = (_MY_VERDICT_COUNT.first(run.pk, reviewer.pk) or (0,))[0]
            cache.set(mine_key, mine, PROGRESS_CACHE_SECONDS)
    if blind:
        by_status = {PENDING: by_status.get(PENDING, 0), JUDGED: by_status.get(JUDGED, 0),
                     REVIEWED: by_status.get(SETTLED, 0) + by_status.get(NEEDS_ARBITRATION, 0)}
        return RunProgress(run, sum(by_status.values()), by_status, mine, blind=True)
    return RunProgress(run, sum(by_status.values()), by_status, mine)


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


@dataclass(frozen=True)
class UnsignedRecord:
    kind: str  # "judgement" | "arbitration"
    created_at: object
    run_id: int
    corpus: str
    pair_id: int
    left: str
    right: str
    verdict: str
    reason: str


def unsigned_records(reviewer) -> list[UnsignedRecord]:
    """What signing now would newly cover: the reviewer's judgements and arbitrations since their last
    signature, oldest first (a signature covers everything recorded up to it)."""
    last = ReviewerSignature.objects.filter(reviewer=reviewer).order_by("-signed_at").first()
    fields = ("created_at", "pair__run_id", "pair__run__corpus__name", "pair_id", "pair__left__doc_id",
              "pair__right__doc_id", "verdict", "reason")
    out = []
    for kind, records in (("judgement", Judgement.objects.filter(reviewer=reviewer)),
                          ("arbitration", Arbitration.objects.filter(arbiter=reviewer))):
        if last:
            records = records.filter(created_at__gt=last.signed_at)
        out += [UnsignedRecord(kind, *row) for row in records.values_list(*fields)]
    return sorted(out, key=lambda r: r.created_at)




# --- the pair and arbitration pages -------------------------------------------------------------------


def took_part(pair: CandidatePair, user) -> bool:
    """Whether the user judged the pair (any judgement, withdrawn or not): then they are part of its case. A
    pair flagged by its cluster's contradiction is a case of the whole cluster: judging any of its pairs
    counts."""
    mine = Judgement.objects.filter(reviewer=user)
    if pair.flag.startswith(CLUSTER_FLAG) and pair.cluster is not None:
        return mine.filter(pair__run_id=pair.run_id, pair__cluster=pair.cluster).exists()
    return mine.filter(pair=pair).exists()


_PAIR_FOR_REVIEW = Prepared(lambda pk, reviewer_id: _stamped(CandidatePair.objects.filter(
    pk=pk, run__status="complete")).select_related("run__corpus", "panes").annotate(
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


ARBITRATION_WHY = {"disagree": "the reviewers disagree", "asked": "a reviewer asked for arbitration",
                   "cluster": CLUSTER_FLAG}


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
    pairs = CandidatePair.objects.filter(status=NEEDS_ARBITRATION, run__status="complete")
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
    pairs = CandidatePair.objects.filter(status=NEEDS_ARBITRATION, run__status="complete")
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


def review_policy_of(corpus) -> ReviewPolicy | None:
    return ReviewPolicy.objects.filter(corpus=corpus).select_related("updated_by").first()


def preset_reasons_of(corpus_id: int) -> dict[str, str]:
    """The reason each verdict records when the reviewer types none: the corpus's own, else the defaults."""
    return _with_defaults((_PRESET_REASONS.first(corpus_id) or (None,))[0])


def _with_defaults(own: dict | None) -> dict[str, str]:
    own = own or {}
    return {verdict: own.get(verdict, text) for verdict, text in PRESET_REASONS.items()}


def signatures_of(user, limit: int = 20):
    return ReviewerSignature.objects.filter(reviewer=user).order_by("-signed_at")[:limit]


# --- the cluster page -------------------------------------------------------------------------------


@dataclass
class ClusterMember:
    document: object  # a Document
    diff: list = field(default_factory=list)  # DiffRows against the pivot
    diff_total: int = 0
    suggested_split: str = ""  # a verdict of its pair with the pivot that is not merge-entry


@dataclass
class ClusterView:
    run: ScreeningRun
    number: int
    members: list[ClusterMember]
    pivot: object  # the suggested retained version: the earliest collected, then the smallest doc_id
    pairs: list[QueueRow]
    too_large: bool = False


def leases_held(user) -> int:
    """How many pairs the user holds under unexpired leases, in every run."""
    return Lease.objects.filter(reviewer=user, expires_at__gt=timezone.now()).count()


def leases_in_cluster(run: ScreeningRun, number: int, user) -> int:
    """How many of the cluster's pairs the user holds under an unexpired lease."""
    return Lease.objects.filter(reviewer=user, pair__run=run, pair__cluster=number,
                                expires_at__gt=timezone.now()).count()


@dataclass(frozen=True)
class HeldLeases:
    reviewer_id: int
    username: str
    pairs: int
    until: object  # the latest expiry


def leases_of_run(run: ScreeningRun) -> list[HeldLeases]:
    """Who holds which share of the run's pairs under unexpired leases now (for its admins)."""
    rows = (Lease.objects.filter(pair__run=run, expires_at__gt=timezone.now())
            .values("reviewer_id", "reviewer__username").annotate(n=Count("id"), until=Max("expires_at"))
            .order_by("-n", "reviewer__username"))
    return [HeldLeases(r["reviewer_id"], r["reviewer__username"], r["n"], r["until"]) for r in rows]


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
        if pivot.pk in (a, b) and verdict and verdict != "merge-entry":
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


# --- decisions, for the next step of a pipeline ---------------------------------------------------------------

DECISION_COLUMNS = ("pair", "left_doc_id", "right_doc_id", "pass_name", "jaccard", "cluster", "status",
                    "final_verdict", "flag")


def decisions(run: ScreeningRun, *, after: int = 0, limit: int | None = None) -> list[tuple]:
    """Every pair of the run with its review status and current final verdict (DECISION_COLUMNS), by pair id
    after `after`: what a pipeline takes once the editors are done. Not blind: for those who see all."""
    rows = (CandidatePair.objects.filter(run=run, pk__gt=after).order_by("pk")
            .values_list("pk", "left__doc_id", "right__doc_id", "pass_name", "jaccard", "cluster", "status",
                         "final_verdict", "flag"))
    return list(rows[:limit] if limit is not None else rows.iterator(chunk_size=5000))
