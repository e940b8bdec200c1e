"""The queue page's reads: filters, keyset pages by score, cluster or confidence, and its rows."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass

from django.core.cache import cache
from django.db.models import Exists, F, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone
from django.utils.translation import gettext, ngettext

from dedup_site.http import MAX_ID
from dedup_site.numerals import LocalCount
from dedup_site.prepared import Prepared
from dedup_site.templatetags.dates import digits, shown_date
from review.models import (
    CurrentVerdict,
    Lease,
)
from review.selectors.blind import NEEDS_ARBITRATION, REVIEWED, SETTLED, shown_status, status_label
from review.selectors.common import PROGRESS_CACHE_SECONDS, _stamped, review_stamp, review_threshold
from screening.engine import langcheck
from screening.models import CandidatePair, ScreeningRun
from screening.templatetags.labels import term, verdict_label
from screening.vocabulary import (
    WITHDRAWN,
)

RUN_PICKER_LIMIT = 100
_REVIEWABLE_RUNS = Prepared(lambda: ScreeningRun.objects.complete().order_by("-pk")
                            .values_list("pk", "corpus__name", "exact", "near", "config", "reviews_required",
                                         "finished_at")[:RUN_PICKER_LIMIT], kinds="")




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
            runs = ScreeningRun.objects.complete()
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


_COMPLETE_RUN = Prepared(lambda pk: _stamped(ScreeningRun.objects.complete().filter(pk=pk)
                                             .select_related("corpus")))


def complete_run(pk: int) -> ScreeningRun | None:
    """The run, with its corpus, if it is complete (the run a queue shows), and the review stamp
    (stamp_of)."""
    return _COMPLETE_RUN.one(pk) if 0 < pk <= MAX_ID else None


def latest_run(corpus: str = "") -> int | None:
    """The newest complete run (of the corpus, when one is named): the queue a reviewer starts on."""
    runs = ScreeningRun.objects.complete()
    if corpus:
        runs = runs.filter(corpus__name=corpus)
    return runs.order_by("-pk").values_list("pk", flat=True).first()


def reviewable_runs() -> list[tuple[int, str]]:
    """The newest RUN_PICKER_LIMIT complete runs a reviewer can pick, newest first: (pk, what the picker
    shows)."""
    out = []
    for pk, corpus, exact, near, config, k, done in _REVIEWABLE_RUNS.rows():
        # In the interface's language and digits (the rows are cached; the words are not).
        parts = [gettext("run %(pk)s") % {"pk": LocalCount(pk)}, corpus,
                 "+".join(term(n) for n, on in (("exact", exact), ("near", near)) if on)]
        if near:  # what tells two runs of one corpus apart
            c = config.get("near", {})
            parts.append(f"{c.get('policy', '')} {c.get('shingle', '')} ≥ {digits(c.get('threshold', ''))}")
        if k > 1:
            parts.append(ngettext("%(n)s review a pair", "%(n)s reviews a pair", k) % {"n": LocalCount(k)})
        if done:
            parts.append(shown_date(done))
        out.append((pk, " · ".join(parts)))
    return out


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
    # What a document's text confidently reads as when that is not its tag (langcheck), else "".
    left_reads: str = ""
    right_reads: str = ""

    # Formatted here rather than by template filters: 50 rows of filters were a fifth of the page's CPU.
    @property
    def score(self) -> str:
        return f"{self.jaccard:.3f}"

    @property
    def status_label(self) -> str:
        return status_label(self.status)

    @property
    def suggestion_label(self) -> str:  # named as the pair page names it, in the page's language
        return verdict_label(self.suggestion) if self.suggestion else ""

    @property
    def final_label(self) -> str:
        return verdict_label(self.final_verdict) if self.final_verdict else ""

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
                    "suggestion_confidence", "left__title", "right__title", "left__language",
                    "left__detected_language", "left__language_confidence", "right__language",
                    "right__detected_language", "right__language_confidence")
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
                                    values[15], values[16], values[4] < thresholds[values[1]],
                                    _reads(*values[17:20]), _reads(*values[20:23]))
    return [found[pk] for pk in ids]


def _reads(tag: str, detected: str, confidence: float | None) -> str:
    """The language a document confidently reads as when its tag says another, else ""."""
    found = langcheck.Detection(detected, confidence or 0.0)
    return found.language if langcheck.disagrees(tag, found) else ""


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


def leases_held(user) -> int:
    """How many pairs the user holds under unexpired leases, in every run."""
    return Lease.objects.filter(reviewer=user, expires_at__gt=timezone.now()).count()
