"""Decisions for many pairs at once: a cluster's (one look at a family of copies) and a filtered set's (bulk,
after a preview). Every pair still gets its own judgement, recorded by review.services.judge_locked under the
same rules as pair by pair (blind review, k reviewers, leases, nothing after arbitration), each pointing at
the ReviewAction that decided it; undo withdraws the whole action as newer records.

A plan says what a decision would record before anything is: which pairs get which verdict, and which are
left out and why. A decision that would contradict the reviewer's own verdicts (A=B, B=C, yet A≠C) is
refused with the pairs named; one that contradicts other reviewers' settled verdicts is recorded and the
cluster check sends the pairs to arbitration, as it does pair by pair.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass, field

from django.db.models import Exists, OuterRef
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop

from dedup_site import tokens
from review import selectors
from review.models import CurrentVerdict, Judgement, Lease, ReviewAction
from review.services import (
    COPY,
    LeaseCapReached,
    ReviewRefused,
    _clean,
    _locked_pair,
    derived_writes,
    judge_locked,
    judgement_undo,
    lease_take,
    refuse_foreign_password,
    withdrawal_locked,
)
from screening.engine.cluster import components
from screening.models import CandidatePair, Document, ScreeningRun
from screening.vocabulary import FINAL_VERDICTS, WITHDRAWN, Verdict

MAX_CLUSTER_MEMBERS = 200  # beyond one look: such a cluster is decided pair by pair or in bulk with filters
BULK_LIMIT = 5000
SPLIT_VERDICTS = (Verdict.VALID_REVISION, Verdict.PUBLIC_QUOTE, Verdict.KEEP_BOTH)
ALREADY_MINE, FULL, BETWEEN_SPLITS = (  # keys, kept English; shown through gettext
    gettext_noop("already judged by you"), gettext_noop("held or judged by the reviewers it needs"),
    gettext_noop("between two members split off"))


@dataclass(frozen=True)
class Planned:
    pair_id: int
    left: str  # doc_id
    right: str
    verdict: str
    retained: str


@dataclass
class Plan:
    rows: list[Planned] = field(default_factory=list)
    skipped: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    contradictions: list[str] = field(default_factory=list)

    @property
    def token(self) -> str:
        """What a preview showed, so that the confirmation records exactly that set."""
        text = ";".join(f"{r.pair_id}:{r.verdict}:{r.retained}" for r in sorted(self.rows, key=lambda r: r.pair_id))
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = defaultdict(int)
        for r in self.rows:
            out[r.verdict] += 1
        return dict(out)


def _judgeable(pairs: list[CandidatePair], reviewer, plan: Plan) -> list[CandidatePair]:
    """The pairs this reviewer may judge now, as judge_locked would decide (checked again under the locks);
    the others go to plan.skipped with the reason, in the blind words for every pair the reviewer has no
    verdict on (settled, disputed or arbitrated alike)."""
    ids = [p.pk for p in pairs]
    mine = set(CurrentVerdict.objects.filter(pair_id__in=ids, reviewer=reviewer).exclude(verdict=WITHDRAWN)
               .values_list("pair_id", flat=True))
    holders: dict[int, set[int]] = defaultdict(set)
    for pair_id, who in CurrentVerdict.objects.filter(pair_id__in=ids).exclude(verdict=WITHDRAWN).values_list(
            "pair_id", "reviewer_id"):
        holders[pair_id].add(who)
    for pair_id, who in Lease.objects.filter(pair_id__in=ids, expires_at__gt=timezone.now()).values_list(
            "pair_id", "reviewer_id"):
        holders[pair_id].add(who)
    out = []
    for p in pairs:
        if p.pk in mine:
            plan.skipped[ALREADY_MINE].append(p.pk)
        elif p.status not in (selectors.PENDING, selectors.JUDGED) or \
                len(holders[p.pk] - {reviewer.pk}) >= p.run.reviews_required:
            plan.skipped[FULL].append(p.pk)
        else:
            out.append(p)
    return out


def _self_contradictions(plan: Plan, reviewer, run_id: int) -> list[str]:
    """Pairs the plan would judge different although the plan and the reviewer's own current verdicts link
    them by copies (A=B, B=C, A≠C), named."""
    planned = {r.pair_id: r for r in plan.rows}
    own = dict(CurrentVerdict.objects.filter(reviewer=reviewer, run_id=run_id).exclude(verdict=WITHDRAWN)
               .exclude(pair_id__in=list(planned)).values_list("pair_id", "verdict"))
    ends = dict((pk, (a, b)) for pk, a, b in CandidatePair.objects.filter(pk__in=[*planned, *own]).values_list(
        "pk", "left__doc_id", "right__doc_id"))
    verdicts = {**own, **{pk: r.verdict for pk, r in planned.items()}}
    component = {}
    for number, members in enumerate(components(ends[pk] for pk, v in verdicts.items() if v == COPY)):
        component.update(dict.fromkeys(members, number))
    out = []
    for pk, verdict in verdicts.items():
        a, b = ends[pk]
        if verdict not in (COPY, Verdict.ARBITRATION) and a in component and component[a] == component.get(b):
            whose = gettext("this decision") if pk in planned else gettext("your earlier judgement")
            out.append(gettext("%(left)s · %(right)s would be %(verdict)s (%(whose)s), yet linked as copies by "
                               "your other verdicts") % {"left": a, "right": b, "verdict": verdict, "whose": whose})
    return out


# --- cluster ---------------------------------------------------------------------------------------


def cluster_pairs(run: ScreeningRun, cluster: int):
    return (CandidatePair.objects.filter(run=run, cluster=cluster).select_related("left", "right", "run")
            .order_by("-jaccard", "id"))


def cluster_plan(*, run: ScreeningRun, cluster: int, reviewer, keeper: int, verdict: str,
                 splits: dict[int, str] | None = None) -> Plan:
    """What deciding the cluster would record: the family's verdict for the pairs between members kept in the
    family (retained: the keeper's side), a split member's own verdict for its pairs with the family, and
    nothing for pairs between two members split off (they are left for pair-by-pair review)."""
    splits = splits or {}
    pairs = list(cluster_pairs(run, cluster))
    members = {d for p in pairs for d in (p.left_id, p.right_id)}
    if not pairs:
        raise ReviewRefused(gettext("run %(run)s has no cluster %(cluster)s") % {"run": run.pk, "cluster": cluster})
    if len(members) > MAX_CLUSTER_MEMBERS:
        raise ReviewRefused(gettext(
            "cluster %(cluster)s has %(members)s members, more than one look can take (%(most)s); review it pair "
            "by pair or in bulk with filters") % {"cluster": cluster, "members": len(members),
                                                   "most": MAX_CLUSTER_MEMBERS})
    if keeper not in members or any(m not in members for m in splits):
        raise ReviewRefused(gettext(
            "the retained version and the members split off must be members of cluster %(cluster)s") % {
            "cluster": cluster})
    if keeper in splits:
        raise ReviewRefused(gettext("the retained version cannot be split off its own family"))
    # A family is decided, not sent on: arbitration is asked pair by pair (as bulk refuses it too).
    if verdict not in FINAL_VERDICTS or any(v not in SPLIT_VERDICTS for v in splits.values()):
        raise ReviewRefused(gettext(
            "a family's verdict is one of %(verdicts)s; a member split off is one of %(splits)s") % {
            "verdicts": ", ".join(FINAL_VERDICTS), "splits": ", ".join(SPLIT_VERDICTS)})
    plan = Plan()
    for p in _judgeable(pairs, reviewer, plan):
        a, b = splits.get(p.left_id), splits.get(p.right_id)
        if a and b:
            plan.skipped[BETWEEN_SPLITS].append(p.pk)
            continue
        chosen = a or b or verdict
        retained = ("left" if p.left_id == keeper else "right" if p.right_id == keeper else "") \
            if chosen == COPY else "both"
        plan.rows.append(Planned(p.pk, p.left.doc_id, p.right.doc_id, chosen, retained))
    plan.contradictions = _self_contradictions(plan, reviewer, run.pk)
    return plan


def cluster_decide(*, run: ScreeningRun, cluster: int, reviewer, keeper: int, verdict: str, reason: str,
                   splits: dict[int, str] | None = None) -> ReviewAction:
    """Record the cluster's decision: one judgement per pair of the plan, all or none."""
    splits = splits or {}
    _, reason = _clean(verdict, reason, "", FINAL_VERDICTS)
    plan = cluster_plan(run=run, cluster=cluster, reviewer=reviewer, keeper=keeper, verdict=verdict, splits=splits)
    docs = dict(Document.objects.filter(pk__in=[keeper, *splits]).values_list("pk", "doc_id"))
    selection = {"keeper": keeper, "keeper_doc_id": docs[keeper],
                 "splits": {docs[m]: v for m, v in splits.items()}}
    return _record(plan, kind=ReviewAction.Kind.CLUSTER, run=run, reviewer=reviewer, verdict=verdict, reason=reason,
                   selection=selection, cluster=cluster)


def _record(plan: Plan, *, kind: str, run: ScreeningRun, reviewer, verdict: str, reason: str, selection: dict,
            cluster: int | None = None) -> ReviewAction:
    if plan.contradictions:
        raise ReviewRefused(gettext("not recorded: %(contradictions)s") % {
            "contradictions": "; ".join(plan.contradictions[:5])})
    if not plan.rows:
        raise ReviewRefused(gettext("nothing to record: every pair of this selection is %(why)s") % {
            "why": gettext(", or ").join(gettext(why) for why in plan.skipped)}
            if plan.skipped else gettext("nothing to record"))
    refuse_foreign_password(reviewer)  # once for all its pairs (judge_locked checks a lone judgement)
    with derived_writes():  # one declaration for all its pairs (a transaction)
        token, token_maker = tokens.made_with(reviewer)
        action = ReviewAction.objects.create(kind=kind, run=run, reviewer=reviewer, cluster=cluster,
                                             verdict=verdict, reason=reason, selection=selection,
                                             judgements=len(plan.rows), api_token_id=token,
                                             token_created_by_id=token_maker)
        for row in sorted(plan.rows, key=lambda r: r.pair_id):  # locks taken in one order: no deadlock
            pair = _locked_pair(row.pair_id)
            if CurrentVerdict.objects.filter(pair=pair, reviewer=reviewer).exclude(verdict=WITHDRAWN).exists():
                # The plan was read before the locks: a second click, or another tab, recorded it meanwhile.
                raise ReviewRefused(gettext(
                    "you have judged %(left)s · %(right)s since this decision was shown (a second click, or "
                    "another tab): nothing more was recorded") % {"left": row.left, "right": row.right})
            judge_locked(pair, reviewer, row.verdict, reason, row.retained, "", action=action)
        # Pairs the decision left (between members split off) are not kept from other reviewers.
        Lease.objects.filter(reviewer=reviewer, pair_id__in=[pk for ids in plan.skipped.values() for pk in ids]
                             ).delete()
    return action


def cluster_hold(*, run: ScreeningRun, cluster: int, reviewer) -> tuple[int, int, str]:
    """Hold for the reviewer, under leases as "next" holds a pair, the cluster's pairs they may still judge
    (its page's Start, or "next cluster"), as many as one reviewer may hold: (held, wanted, and why it
    stopped short, "" when it did not), so a family needing k reviews is in at most k reviewers' hands."""
    mine = CurrentVerdict.objects.filter(pair=OuterRef("pk"), reviewer=reviewer).exclude(verdict=WITHDRAWN)
    ids = list(CandidatePair.objects.filter(run=run, cluster=cluster, status__in=[selectors.PENDING, selectors.JUDGED])
               .filter(~Exists(mine)).order_by("-jaccard", "id").values_list("pk", flat=True))
    held = 0
    for pk in ids:
        try:
            held += lease_take(pair_id=pk, reviewer=reviewer)
        except LeaseCapReached as error:
            return held, len(ids), str(error)
    return held, len(ids), ""


def next_cluster(run: ScreeningRun, reviewer, after: int | None = None) -> int | None:
    """The next cluster of the run (by number, after `after`) with a pair this reviewer may still judge."""
    mine = CurrentVerdict.objects.filter(pair=OuterRef("pk"), reviewer=reviewer).exclude(verdict=WITHDRAWN)
    numbers = (CandidatePair.objects.filter(run=run, cluster__isnull=False, status__in=[selectors.PENDING,
                                                                                        selectors.JUDGED])
               .filter(~Exists(mine)).order_by("cluster").values_list("cluster", flat=True).distinct())
    if after is not None:
        numbers = numbers.filter(cluster__gt=after)
    for number in numbers.iterator():
        if _judgeable(list(cluster_pairs(run, number)), reviewer, Plan()):
            return number
    return None


# --- bulk ------------------------------------------------------------------------------------------


def bulk_plan(*, flt: selectors.QueueFilter, reviewer, verdict: str) -> Plan:
    """What confirming the filtered set in bulk would record: the verdict for every pair of it this reviewer
    may judge (at most BULK_LIMIT; retained: the exact group's representative for exact pairs)."""
    if flt.run is None:
        raise ReviewRefused(gettext("a bulk decision takes the pairs of one run: choose the run"))
    if verdict not in FINAL_VERDICTS:
        raise ReviewRefused(gettext("a bulk verdict is one of %(verdicts)s") % {"verdicts": ", ".join(FINAL_VERDICTS)})
    pairs = list(flt.apply(CandidatePair.objects.select_related("left", "right", "run"))
                 .order_by(*flt.ordering())[: BULK_LIMIT + 1])
    if len(pairs) > BULK_LIMIT:
        raise ReviewRefused(gettext(
            "these filters hold more than %(most)s pairs: narrow them (a score range, a suggestion, a minimum "
            "confidence)") % {"most": BULK_LIMIT})
    plan = Plan()
    for p in _judgeable(pairs, reviewer, plan):
        exact = p.pass_name == CandidatePair.Pass.EXACT  # the right side is the exact group's representative
        retained = ("right" if exact else "") if verdict == COPY else "both"
        plan.rows.append(Planned(p.pk, p.left.doc_id, p.right.doc_id, verdict, retained))
    plan.contradictions = _self_contradictions(plan, reviewer, flt.run)
    return plan


def bulk_decide(*, flt: selectors.QueueFilter, reviewer, verdict: str, reason: str, token: str,
                filters: dict) -> ReviewAction:
    """Record the previewed set: refused when the set changed since the preview (`token`)."""
    _, reason = _clean(verdict, reason, "", FINAL_VERDICTS)
    plan = bulk_plan(flt=flt, reviewer=reviewer, verdict=verdict)
    if plan.token != token:
        raise ReviewRefused(gettext(
            "the set changed since the preview (%(count)s pairs now): look at the preview again before "
            "confirming") % {"count": len(plan.rows)})
    return _record(plan, kind=ReviewAction.Kind.BULK, run=ScreeningRun.objects.get(pk=flt.run), reviewer=reviewer,
                   verdict=verdict, reason=reason, selection=filters)


# --- undo ------------------------------------------------------------------------------------------


def action_undo(*, action: ReviewAction, reviewer) -> ReviewAction:
    """Withdraw every judgement of the action that is still the reviewer's current verdict, each by a newer
    'withdrawn' judgement; pairs judged again since, or arbitrated, keep what they have."""
    if action.reviewer_id != reviewer.pk:
        raise ReviewRefused(gettext("only the reviewer who took a decision can undo it"))
    if action.kind == ReviewAction.Kind.UNDO or ReviewAction.objects.filter(undoes=action).exists():
        raise ReviewRefused(gettext("%(kind)s decision #%(action)s was already undone") % {
            "kind": action.kind, "action": action.pk})
    refuse_foreign_password(reviewer)
    with derived_writes():
        rows = list(CurrentVerdict.objects.filter(reviewer=reviewer, judgement__action=action)
                    .exclude(pair__arbitrations__isnull=False).select_related("judgement").order_by("pair_id"))
        token, token_maker = tokens.made_with(reviewer)
        undo = ReviewAction.objects.create(kind=ReviewAction.Kind.UNDO, run_id=action.run_id, reviewer=reviewer,
                                           cluster=action.cluster, undoes=action, judgements=len(rows),
                                           reason=f"undo of {action.kind} decision #{action.pk}", api_token_id=token,
                                           token_created_by_id=token_maker)
        for current in rows:
            withdrawal_locked(_locked_pair(current.pair_id), reviewer, current.judgement, undo.reason, action=undo)
    return undo


def undo_last(reviewer) -> ReviewAction | Judgement | None:
    """Undo the reviewer's last decision: the whole cluster or bulk action when their newest current verdict
    came from one, else that one judgement (review.services.judgement_undo)."""
    current = (CurrentVerdict.objects.filter(reviewer=reviewer).exclude(verdict=WITHDRAWN)
               .select_related("judgement__action").order_by("-judgement__created_at", "-judgement_id").first())
    action = current.judgement.action if current is not None else None
    if action is not None and action.kind in (ReviewAction.Kind.CLUSTER, ReviewAction.Kind.BULK):
        return action_undo(action=action, reviewer=reviewer)
    return judgement_undo(reviewer=reviewer)
