"""A run's progress and its dashboard: counts, agreement between reviewers, what is left to sign, who holds
which pairs."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db.models import Count, Max, Q
from django.utils import timezone

from dedup_site.prepared import Prepared
from review.kappa import cohen_kappa
from review.models import (
    Arbitration,
    CurrentVerdict,
    Judgement,
    Lease,
    ReviewerSignature,
)
from review.selectors.blind import JUDGED, NEEDS_ARBITRATION, PENDING, REVIEWED, SETTLED, sees_all, shown_status
from review.selectors.common import PROGRESS_CACHE_SECONDS, review_stamp, review_threshold
from screening.models import CandidatePair, ScreeningRun
from screening.vocabulary import (
    WITHDRAWN,
)

# What the queue and pair pages read on every request, compiled once (dedup_site.prepared).
_MY_VERDICT_COUNT = Prepared(lambda run_id, reviewer_id: CurrentVerdict.objects.filter(
    run_id=run_id, reviewer_id=reviewer_id).exclude(verdict=WITHDRAWN).order_by().values("run_id")
    .annotate(n=Count("id")).values_list("n"), kinds="ii")




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
    pk: int = 0
    token: int | None = None  # the API token that made it
    token_maker: str = ""  # who made that token ("" with a token: the server's command line)
    by_others_token: bool = False  # made with a token its reviewer did not make: signed only if accepted

    @property
    def key(self) -> str:
        """How the signing page names it ("judgement:12"), for signature_record's `accepted`."""
        return f"{self.kind}:{self.pk}"


def by_others_token(user) -> Q:
    """Records (judgements, arbitrations) made with an API token that `user`, their maker, did not make."""
    return Q(api_token__isnull=False) & ~Q(token_created_by=user)


def signed_keys(reviewer, field: str = "accepted") -> dict[str, set[int]]:
    """The records made with others' tokens that the reviewer's signatures accepted (or refused), by kind."""
    out: dict[str, set[int]] = {"judgement": set(), "arbitration": set()}
    for chosen in ReviewerSignature.objects.filter(reviewer=reviewer).values_list(field, flat=True):
        for kind in out:
            out[kind].update((chosen or {}).get(f"{kind}s", []))
    return out


def unsigned_records(reviewer) -> list[UnsignedRecord]:
    """What no signature of the reviewer covers yet, oldest first: their judgements and arbitrations since their
    last signature (which covers everything recorded up to it), and every record made with a token someone else
    made that no signature accepted (refused ones stay here, to be accepted or refused again)."""
    last = ReviewerSignature.objects.filter(reviewer=reviewer).order_by("-signed_at").first()
    accepted = signed_keys(reviewer)
    fields = ("created_at", "pair__run_id", "pair__run__corpus__name", "pair_id", "pair__left__doc_id",
              "pair__right__doc_id", "verdict", "reason", "pk", "api_token_id", "token_created_by__username")
    out = []
    for kind, records in (("judgement", Judgement.objects.filter(reviewer=reviewer)),
                          ("arbitration", Arbitration.objects.filter(arbiter=reviewer))):
        others = by_others_token(reviewer)
        own = records.exclude(others).filter(created_at__gt=last.signed_at) if last else records.exclude(others)
        for foreign, rows in ((False, own), (True, records.filter(others).exclude(pk__in=accepted[kind]))):
            out += [UnsignedRecord(kind, *row[:-1], token_maker=row[-1] or "", by_others_token=foreign)
                    for row in rows.values_list(*fields)]
    return sorted(out, key=lambda r: (r.created_at, r.kind, r.pk))


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
