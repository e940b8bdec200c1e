"""Review services, the rules and their transactions: judgements and arbitrations (insert-only), each pair's
review state, leases and skips that hand pairs out, reviewer signatures, label sets made from verdicts."""

from __future__ import annotations

from collections.abc import Collection
from datetime import timedelta
from typing import NamedTuple

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connections, transaction
from django.db.models import BigIntegerField, Exists, F, OuterRef, Value
from django.utils import timezone
from django.utils.translation import gettext

from dedup_site import accounts, guards, tokens
from dedup_site.auth import password_matches
from dedup_site.prepared import Prepared, insert, preparing_cursor, update, upsert
from dedup_site.roles import START_RUN
from dedup_site.trail import trail_record
from review import selectors
from review.models import (
    DERIVED_WRITER,
    PRESET_REASONS,
    Arbitration,
    CurrentVerdict,
    Judgement,
    Lease,
    Referral,
    Retained,
    ReviewerSignature,
    ReviewPolicy,
    Skip,
)
from review.selectors import (
    QueueFilter,
    after_cursor,
    cursor_of,
)
from review.sheets import signing
from screening.engine.cluster import components
from screening.evaluation.labelsets import labelset_from_run
from screening.models import CandidatePair, ScreeningRun
from screening.vocabulary import (
    COPY_VERDICTS,
    FINAL_VERDICTS,
    OPEN_PAIR_STATES,
    WITHDRAWN,
    ArbitrationReason,
    PairState,
    Verdict,
    dispute_of,
)

PENDING, JUDGED, NEEDS_ARBITRATION, SETTLED = (PairState.PENDING, PairState.JUDGED, PairState.NEEDS_ARBITRATION,
                                               PairState.SETTLED)
CLUSTER_FLAG = ArbitrationReason.CLUSTER.value

(COPY,) = COPY_VERDICTS  # the verdict that says "these are copies"
MAX_REASON = 5000  # as the forms allow


class ReviewRefused(Exception):
    """A judgement or arbitration that breaks a rule; the message says which (and `pair_id`, which pair)."""

    def __init__(self, message: str, pair_id: int | None = None):
        super().__init__(message)
        self.pair_id = pair_id


def _clean(verdict: str, reason: str, retained: str, allowed) -> tuple[str, str]:
    if verdict not in [v.value for v in allowed]:
        raise ReviewRefused(gettext("verdict %(verdict)s is not one of %(allowed)s") % {
            "verdict": repr(verdict), "allowed": ", ".join(v.value for v in allowed)})
    reason = (reason or "").strip()
    if not reason:
        raise ReviewRefused(gettext("a reason is required"))
    if len(reason) > MAX_REASON:
        raise ReviewRefused(gettext("a reason is at most %(most)s characters (%(given)s given)") % {
            "most": MAX_REASON, "given": len(reason)})
    if retained and retained not in Retained.values:
        raise ReviewRefused(gettext("retained version %(retained)s is not one of left, right, both") % {
            "retained": repr(retained)})
    return verdict, reason


# Kept queries (dedup_site.prepared) for what every judgement and lease reads under the pair's lock. The pair's
# row alone is locked (of "self"): a complete run's row never changes, and locking it too made every judgement
# of a run wait for the one before it.
_LOCKED_PAIR = Prepared(lambda pk: CandidatePair.objects.select_for_update(of=("self",)).select_related("run")
                        .filter(pk=pk))
# A lone judgement's read of it: only what its rules and the derived state use (the evidence, signals and the
# run's configuration are not decoded for nothing; any other field is read when asked for).
_JUDGED_PAIR = Prepared(lambda pk: CandidatePair.objects.select_for_update(of=("self",)).select_related("run")
                        .only("id", "run_id", "left_id", "right_id", "cluster", "status", "final_verdict", "flag",
                              "run__status", "run__corpus_id", "run__reviews_required").filter(pk=pk))
# What a lease decides on, as two values: building the pair and its run as model instances cost more.
_LOCKED_PAIR_STATE = Prepared(lambda pk: CandidatePair.objects.select_for_update(of=("self",)).filter(pk=pk)
                              .values_list("status", "run__reviews_required"))
_JUDGED_AND_LEASED = Prepared(lambda pk, now: CurrentVerdict.objects.filter(pair_id=pk).exclude(verdict=WITHDRAWN)
                              .annotate(leased=Value(False)).values_list("reviewer_id", "leased").union(
    Lease.objects.filter(pair_id=pk, expires_at__gt=now).annotate(leased=Value(True)).values_list(
        "reviewer_id", "leased"), all=True), kinds="id")


# What _derive replays, kept compiled: the pair's arbitrations, referrals and judgements, oldest first, in one
# query (the newest arbitration is the last of them; the judgements keep their order). A referral's "verdict" is
# its reason.
JUDGED_ROW, ARBITRATED_ROW, REFERRED_ROW = 0, 1, 2


def _records(pk):
    def rows(model, verdict: str, who, kind: int):
        # Every column an annotation, in one order: a union matches its branches' columns by position, and the
        # SQL puts a model's own fields before its annotations.
        return model.objects.filter(pair_id=pk).order_by().values_list().annotate(
            r_verdict=F(verdict), r_at=F("created_at"), r_id=F("id"), r_who=who, r_kind=Value(kind)).values_list(
            "r_verdict", "r_at", "r_id", "r_who", "r_kind")

    # The judgements first: PostgreSQL types a column by its first branch (two untyped NULLs make it text).
    nobody = Value(None, output_field=BigIntegerField())
    return rows(Judgement, "verdict", F("reviewer_id"), JUDGED_ROW).union(
        rows(Arbitration, "verdict", nobody, ARBITRATED_ROW), rows(Referral, "reason", nobody, REFERRED_ROW),
        all=True).order_by("r_at", "r_id")


_RECORDS = Prepared(_records)


def _locked(prepared: Prepared, pair_id: int) -> CandidatePair:
    """The pair, its row locked until the transaction ends (the ORM's select_for_update, compiled once)."""
    if transaction.get_autocommit():  # what the ORM checks when it compiles a locking read
        raise transaction.TransactionManagementError("a locked read outside a transaction")
    pair = prepared.one(pair_id)
    if pair is None:
        raise CandidatePair.DoesNotExist(f"no pair {pair_id}")
    return pair


def _locked_pair(pair_id: int, prepared: Prepared = _LOCKED_PAIR) -> CandidatePair:
    pair = _locked(prepared, pair_id)
    if pair.run.status != ScreeningRun.Status.COMPLETE:
        raise ReviewRefused(gettext("run %(run)s is not complete") % {"run": pair.run_id})
    return pair


def _refuse_if_arbitrated(pair: CandidatePair, withdrawing: bool = False) -> None:
    """An arbitration is the last word on a pair: a judgement recorded after it would be listed beside a
    decision it never informed, so none is taken (the reviewer can ask an arbiter instead)."""
    arbitration = pair.arbitrations.select_related("arbiter").order_by("-created_at", "-id").first()
    if arbitration is not None:
        action = gettext("withdrawing your judgement") if withdrawing else gettext("a new judgement")
        raise ReviewRefused(gettext(
            "pair %(pair)s was settled by arbitration (%(arbiter)s, %(when)s UTC: %(verdict)s); %(action)s would "
            "not change it, so it is not recorded — ask an arbiter if the decision should be reviewed") % {
            "pair": pair.pk, "arbiter": arbitration.arbiter.get_username(),
            "when": f"{arbitration.created_at:%Y-%m-%d %H:%M}", "verdict": arbitration.verdict, "action": action},
            pair.pk)


def derived_writes(savepoint: bool = True):
    """The block inside may write the derived review state (a transaction; the database refuses it elsewhere).
    `savepoint=False` inside the service's own transaction (guards.writing)."""
    return guards.writing(DERIVED_WRITER, savepoint=savepoint)


class PasswordNotOwn(ReviewRefused):
    """The reviewer's password is someone else's choice: they may not judge, arbitrate or sign yet (the API
    answers it 403, having left the check to the service rather than asking twice a request)."""


def refuse_foreign_password(reviewer) -> None:
    refusal = accounts.record_refusal(reviewer)
    if refusal:
        raise PasswordNotOwn(refusal)


def _judged_and_leased(pair_id: int, now) -> tuple[set[int], set[int]]:
    """Reviewers with a current verdict on the pair, and those with an unexpired lease: one query."""
    judged, leased = set(), set()
    for reviewer_id, is_lease in _JUDGED_AND_LEASED.rows(pair_id, now):
        (leased if is_lease else judged).add(reviewer_id)
    return judged, leased


def judgement_record(*, pair: CandidatePair, reviewer, verdict: str, reason: str, retained: str = "both",
                     related_source: str = "") -> Judgement:
    """Add a reviewer's judgement. An earlier judgement of theirs stays; this one becomes current. Refused on
    a pair settled by arbitration, and from a reviewer beyond the `reviews_required` who hold the pair."""
    verdict, reason = _clean(verdict, reason, retained, list(Verdict))
    with transaction.atomic():
        return judge_locked(_locked_pair(pair.pk, _JUDGED_PAIR), reviewer, verdict, reason, retained, related_source)


def judge_locked(pair: CandidatePair, reviewer, verdict: str, reason: str, retained: str, related_source: str,
                 action=None) -> Judgement:
    """judgement_record's rules and writes for a pair already locked in the caller's transaction (cluster and
    bulk decisions record many this way, all or none, having checked the reviewer's password once)."""
    if action is None:
        refuse_foreign_password(reviewer)
    judged, leased = _judged_and_leased(pair.pk, timezone.now())
    if reviewer.pk not in judged:
        # Blind review: whoever has no verdict on the pair (never gave one, or withdrew it) learns nothing of
        # how it stands, only that it wants no more reviewers (the same words whether it is held, settled,
        # disputed or arbitrated).
        if pair.status not in OPEN_PAIR_STATES or len((judged | leased) - {reviewer.pk}) >= \
                pair.run.reviews_required:
            raise ReviewRefused(gettext(
                "pair %(pair)s has the %(k)s reviewer(s) it needs; press Review next for another pair") % {
                "pair": pair.pk, "k": pair.run.reviews_required}, pair.pk)
    else:
        _refuse_if_arbitrated(pair)
    token, token_maker = tokens.made_with(reviewer)
    judgement = _judgement_insert(pair=pair, reviewer=reviewer, verdict=verdict, reason=reason, retained=retained,
                                  related_source=(related_source or "").strip(), action=action, api_token_id=token,
                                  token_created_by_id=token_maker)
    with derived_writes(savepoint=False):  # in the caller's transaction, which a failure here ends anyway
        _set_current(pair, reviewer, judgement)
        pair_refresh(pair)
    _lease_drop(pair.pk, reviewer.pk)  # done with it: the lease is released
    return judgement


def _judgement_insert(**values) -> Judgement:
    """Judgement.objects.create(**values) as one prepared INSERT (its save built and compiled the statement anew
    each time): insert-only rows with no signals, the time given as auto_now_add gives it."""
    judgement = Judgement(**values, created_at=timezone.now())
    judgement.pk = insert(Judgement, {f.attname: getattr(judgement, f.attname) for f in _JUDGEMENT_COLUMNS})
    judgement._state.adding, judgement._state.db = False, Judgement.objects.db
    return judgement


_JUDGEMENT_COLUMNS = [f for f in Judgement._meta.concrete_fields if not f.primary_key]


def _lease_drop(pair_id: int, reviewer_id: int) -> None:
    """Delete the reviewer's lease on the pair, one prepared statement (the ORM's delete builds a collector and
    compiles anew each time; a lease has no dependants and no signals)."""
    connection = connections[Lease.objects.db]
    quote = connection.ops.quote_name
    meta = Lease._meta
    sql = (f"DELETE FROM {quote(meta.db_table)} WHERE {quote(meta.get_field('pair').column)} = %s "  # noqa: S608
           f"AND {quote(meta.get_field('reviewer').column)} = %s")
    with preparing_cursor(connection) as cursor:
        cursor.execute(sql, [pair_id, reviewer_id])



def judgement_undo(*, reviewer) -> Judgement | None:
    """Withdraw the reviewer's most recent current verdict by recording a newer 'withdrawn' judgement.
    Returns the withdrawal, or None when there is nothing to undo; refused once the pair was arbitrated."""
    refuse_foreign_password(reviewer)
    with transaction.atomic():
        current = (
            CurrentVerdict.objects.filter(reviewer=reviewer).exclude(verdict=WITHDRAWN)
            .select_related("judgement").order_by("-judgement__created_at", "-judgement_id").first()
        )
        if current is None:
            return None
        pair = _locked_pair(current.pair_id)
        _refuse_if_arbitrated(pair, withdrawing=True)
        return withdrawal_locked(pair, reviewer, current.judgement, f"undo of judgement #{current.judgement_id}")


def withdrawal_locked(pair: CandidatePair, reviewer, current: Judgement, reason: str, action=None) -> Judgement:
    """Record that the reviewer withdraws their current judgement on a pair locked by the caller: a newer
    'withdrawn' judgement (the one withdrawn stays), and the pair's state derived again."""
    if action is None:
        refuse_foreign_password(reviewer)
    token, token_maker = tokens.made_with(reviewer)
    withdrawal = Judgement.objects.create(pair=pair, reviewer=reviewer, verdict=WITHDRAWN, reason=reason,
                                          supersedes=current, action=action, api_token_id=token,
                                          token_created_by_id=token_maker)
    with derived_writes():
        _set_current(pair, reviewer, withdrawal)
        pair_refresh(pair)
    return withdrawal


def self_arbitration_allowed(corpus_id: int) -> bool:
    return ReviewPolicy.objects.filter(corpus_id=corpus_id, allow_self_arbitration=True).exists()


def arbitration_record(*, pair: CandidatePair, arbiter, verdict: str, reason: str, retained: str = "both",
                       related_source: str = "") -> Arbitration:
    """Settle a pair that needs arbitration. The judgements it settles stay as they are. An arbiter who judged
    the pair may not settle it, unless the corpus's review policy allows it (then it is marked)."""
    verdict, reason = _clean(verdict, reason, retained, FINAL_VERDICTS)
    refuse_foreign_password(arbiter)
    with transaction.atomic():
        pair = _locked_pair(pair.pk)
        if pair.status != NEEDS_ARBITRATION:
            raise ReviewRefused(gettext("pair %(pair)s is %(state)s, not waiting for arbitration") % {
                "pair": pair.pk, "state": gettext(PairState(pair.status).label)})
        own = selectors.took_part(pair, arbiter)
        if own and not self_arbitration_allowed(pair.run.corpus_id):
            raise ReviewRefused(gettext(
                "you judged pair %(pair)s yourself, so another arbiter must settle it (a corpus admin can allow "
                "self-arbitration for one-person teams)") % {"pair": pair.pk})
        token, token_maker = tokens.made_with(arbiter)
        arbitration = Arbitration.objects.create(pair=pair, arbiter=arbiter, verdict=verdict, reason=reason,
                                                 retained=retained, related_source=(related_source or "").strip(),
                                                 self_arbitrated=own, api_token_id=token,
                                                 token_created_by_id=token_maker)
        pair_refresh(pair)
    return arbitration


def review_policy_set(*, corpus, user, allow_self_arbitration: bool,
                      preset_reasons: dict[str, str] | None = None) -> ReviewPolicy:
    """Save a corpus's review settings. Preset reasons are kept only where they differ from the defaults, so
    a later change of a default reaches every corpus that never chose its own."""
    if refusal := accounts.admin_refusal(user):
        raise ReviewRefused(refusal)
    defaults = {"allow_self_arbitration": allow_self_arbitration, "updated_by": user}
    if preset_reasons is not None:
        unknown = set(preset_reasons) - set(PRESET_REASONS)
        if unknown:
            raise ReviewRefused(gettext("no such verdict for a preset reason: %(verdicts)s") % {
                "verdicts": ", ".join(sorted(unknown))})
        # A default as the admin saw it (in their language) is the default still, not a choice of their own.
        defaults["preset_reasons"] = {v: text.strip() for v, text in preset_reasons.items()
                                      if text.strip() not in (PRESET_REASONS[v], gettext(PRESET_REASONS[v]))}
    with transaction.atomic():
        old = ReviewPolicy.objects.select_for_update().filter(corpus=corpus).first() or ReviewPolicy(corpus=corpus)
        policy, _ = ReviewPolicy.objects.update_or_create(corpus=corpus, defaults=defaults)
        _trail_policy(user, corpus, old, policy)
    return policy


def _trail_policy(user, corpus, old: ReviewPolicy, new: ReviewPolicy) -> None:
    """The trail's entries for a change of a corpus's review settings: self-arbitration allowed or disallowed,
    and the preset reasons before and after (a save that changes nothing records nothing)."""
    if old.allow_self_arbitration != new.allow_self_arbitration:
        trail_record(actor=user, action="review.self_arbitration_allowed" if new.allow_self_arbitration
                     else "review.self_arbitration_disallowed", target=corpus,
                     before={"allow_self_arbitration": old.allow_self_arbitration},
                     after={"allow_self_arbitration": new.allow_self_arbitration})
    if (old.preset_reasons or {}) != (new.preset_reasons or {}):
        trail_record(actor=user, action="review.preset_reasons", target=corpus,
                     before={"preset_reasons": old.preset_reasons or {}}, after={"preset_reasons": new.preset_reasons})


def _set_current(pair: CandidatePair, reviewer, judgement: Judgement) -> None:
    # One INSERT … ON CONFLICT, where update_or_create took two savepoints, a locking read and a write.
    upsert(CurrentVerdict, {"pair_id": pair.pk, "reviewer_id": reviewer.pk, "judgement_id": judgement.pk,
                            "verdict": judgement.verdict, "run_id": pair.run_id},
           unique=("pair", "reviewer"), update=("judgement", "verdict", "run_id"))


def _derive(pair: CandidatePair) -> tuple[str, str, str]:
    """(status, final verdict, flag) from the pair's own records.

    The judgements are replayed in order: once the reviewers a pair needs had all judged and disagreed (or one
    asked for arbitration), or its cluster sent it to arbitration (a Referral), only an arbitration settles it.
    A later change of mind (a new verdict, an undo, here or on the cluster's other pairs) is recorded and shown
    to the arbiter but cannot turn a dispute into agreement: a reviewer who has judged sees the others'
    verdicts, so agreeing afterwards would not be independent."""
    records = _RECORDS.rows(pair.pk)
    arbitrated = [verdict for verdict, _, _, _, kind in records if kind == ARBITRATED_ROW]
    if arbitrated:
        return SETTLED, arbitrated[-1], ""
    referred = [reason for reason, _, _, _, kind in records if kind == REFERRED_ROW]
    if referred:
        return NEEDS_ARBITRATION, "", referred[0]
    needed = pair.run.reviews_required
    current: dict[int, str] = {}
    disputed = ""
    for verdict, _, _, reviewer_id, kind in records:
        if verdict == WITHDRAWN:
            current.pop(reviewer_id, None)
        else:
            current[reviewer_id] = verdict
        if not disputed and len(current) >= needed:
            disputed = dispute_of(current.values())
    if disputed:
        return NEEDS_ARBITRATION, "", disputed
    if len(current) < needed:
        # Blind review: until every required reviewer has judged, the status says nothing of the verdicts
        # given so far (an early "needs arbitration" would tell the next reviewer what the first one chose).
        return (JUDGED if current else PENDING), "", ""
    return SETTLED, next(iter(current.values())), ""


# The settled pairs of a cluster that cluster_check weighs, kept compiled. Only the fields it weighs: the
# evidence and the run's configuration are not decoded for nothing.
_CLUSTER_SETTLED = Prepared(lambda run_id, cluster: CandidatePair.objects.filter(
    run_id=run_id, cluster=cluster, status=SETTLED).only("id", "left_id", "right_id", "final_verdict")
    .annotate(arbitrated=Exists(Arbitration.objects.filter(pair=OuterRef("pk")))), kinds="ii")


def _pair_state(pair_id: int, status: str, final: str, flag: str) -> None:
    """Write a pair's derived state: one prepared statement (the ORM's update built and compiled it anew)."""
    update(CandidatePair, pair_id, {"status": status, "final_verdict": final, "flag": flag})


def pair_refresh(pair: CandidatePair) -> None:
    """Derive the pair's status and final verdict from its records; then check its cluster."""
    status, final, flag = _derive(pair)
    with derived_writes():
        _pair_state(pair.pk, status, final, flag)
        pair.status, pair.final_verdict, pair.flag = status, final, flag
        if pair.cluster is not None:
            cluster_check(pair.run_id, pair.cluster)


def cluster_check(run_id: int, cluster: int) -> list[int]:
    """Send to arbitration the pairs of a cluster that its settled verdicts contradict: a pair judged
    different although a chain of pairs judged copies links its documents (A=B, B=C, but A≠C), or, when an
    arbiter settled that pair as different, the unarbitrated copies that link it. Each is referred by an
    insert-only record (Referral), so it stays with the arbiters whatever is recorded afterwards: nothing but
    an arbitration settles it. Returns the pks referred."""
    settled = _CLUSTER_SETTLED.objects(run_id, cluster)
    component = {}
    for number, members in enumerate(components((p.left_id, p.right_id) for p in settled
                                                if p.final_verdict == COPY)):
        component.update(dict.fromkeys(members, number))
    flagged: dict[int, str] = {}
    for p in settled:
        group = component.get(p.left_id)
        if p.final_verdict == COPY or group is None or group != component.get(p.right_id):
            continue
        if not p.arbitrated:
            flagged[p.pk] = f"{CLUSTER_FLAG} {cluster}: judged different, yet linked by pairs judged copies"
        else:  # an arbiter said different: the copy links across it are what must be looked at again
            flagged.update((q.pk, f"{CLUSTER_FLAG} {cluster}: judged a copy, yet it links two documents an "
                                  f"arbiter settled as different") for q in settled
                           if q.final_verdict == COPY and not q.arbitrated and component.get(q.left_id) == group)
    if flagged:
        Referral.objects.bulk_create([Referral(pair_id=pk, reason=text) for pk, text in sorted(flagged.items())])
        with derived_writes():
            for pk, text in flagged.items():
                _pair_state(pk, NEEDS_ARBITRATION, "", text)
    return sorted(flagged)


def _fresh(seconds: int):
    """A lease ending after this needs no renewal yet: over half its time is left (pages renew every third of
    a lease, so a lease a page keeps never lapses)."""
    return timezone.now() + timedelta(seconds=seconds / 2)


class LeaseCapReached(ReviewRefused):
    """The reviewer already holds as many pairs as one reviewer may (DEDUP_MAX_LEASES)."""


def lease_take(*, pair_id: int, reviewer, seconds: int | None = None) -> bool:
    """Hold the pair for this reviewer for `seconds` (renewing a lease they hold) when fewer reviewers hold
    it than it needs judgements; True when they hold it (or have judged it). Only "next" and a cluster's
    explicit start take leases, at most DEDUP_MAX_LEASES a reviewer (LeaseCapReached beyond). The pair's row
    is locked while counting, so two reviewers asking at once are counted one after the other."""
    seconds = seconds or settings.DEDUP_LEASE_SECONDS
    if Lease.objects.filter(pair_id=pair_id, reviewer=reviewer, pair__status__in=OPEN_PAIR_STATES,
                            expires_at__gt=_fresh(seconds)).exists():
        return True  # one read, no transaction
    return _lease_locked(pair_id, reviewer, seconds)


def lease_renew(*, pair_id: int, reviewer) -> bool:
    """Extend a lease the reviewer holds on a pair that still wants judgements (its page does, while open);
    never takes one: a lease that lapsed, or one never given, stays with nobody."""
    now = timezone.now()
    return bool(Lease.objects.filter(pair_id=pair_id, reviewer=reviewer, expires_at__gt=now,
                                     pair__status__in=OPEN_PAIR_STATES).update(
        expires_at=now + timedelta(seconds=settings.DEDUP_LEASE_SECONDS)))


def lease_state(*, pair: CandidatePair, reviewer, current: str) -> tuple[bool, bool]:
    """(leased, open) for a pair read by selectors.pair_for_review, with the end of this reviewer's lease on
    it (`lease_until`) and their current verdict (`current`): whether they hold it under a lease now, and
    whether a judgement of theirs would be taken. Reads only: opening a page never takes a lease."""
    if current:
        return False, True  # their verdict holds their place
    if pair.status not in OPEN_PAIR_STATES:
        return False, False
    now = timezone.now()
    if pair.lease_until is not None and pair.lease_until > now:
        return True, True
    judged, leased = _judged_and_leased(pair.pk, now)
    return False, len((judged | leased) - {reviewer.pk}) < pair.run.reviews_required


def _lease_locked(pair_id: int, reviewer, seconds: int) -> bool:
    with transaction.atomic():
        state = _LOCKED_PAIR_STATE.first(pair_id)
        if state is None:
            raise CandidatePair.DoesNotExist(f"no pair {pair_id}")
        status, reviews_required = state
        now = timezone.now()
        judged, leased = _judged_and_leased(pair_id, now)
        if reviewer.pk in judged:
            return True  # their verdict already holds a place; no lease needed
        if status not in OPEN_PAIR_STATES:
            return False
        if len((judged | leased) - {reviewer.pk}) >= reviews_required:
            return False
        _refuse_past_the_cap(reviewer, pair_id, now)
        # One upsert. A lapsed lease counts for nobody (every read asks for an unexpired one), so it is
        # renewed in place here or removed on save or skip rather than swept on every take.
        upsert(Lease, {"pair_id": pair_id, "reviewer_id": reviewer.pk, "expires_at": now + timedelta(seconds=seconds)},
               unique=("pair", "reviewer"), update=("expires_at",))
    return True


def _refuse_past_the_cap(reviewer, pair_id: int, now) -> None:
    """The reviewer's row is locked first, so two requests of theirs at once count one after the other."""
    list(get_user_model().objects.select_for_update().filter(pk=reviewer.pk).values_list("pk"))
    held = Lease.objects.filter(reviewer=reviewer, expires_at__gt=now).exclude(pair_id=pair_id).count()
    if held >= settings.DEDUP_MAX_LEASES:
        raise LeaseCapReached(gettext(
            "you hold %(held)s pairs, the most one reviewer may hold at once: decide, skip or release them "
            "(Release my pairs, on the queue) before taking more") % {"held": held})


def leases_release(*, actor, reviewer, run_id: int | None = None) -> int:
    """Let go of every lease the reviewer holds (in one run, or all); their own, or anyone's for an admin.
    Returns how many were released."""
    if actor.pk != reviewer.pk and not actor.has_perm(START_RUN):
        raise ReviewRefused(gettext("only an admin releases another reviewer's pairs"))
    if actor.pk != reviewer.pk and (refusal := accounts.admin_refusal(actor)):
        raise ReviewRefused(refusal)
    leases = Lease.objects.filter(reviewer=reviewer)
    if run_id is not None:
        leases = leases.filter(pair__run_id=run_id)
    with transaction.atomic():
        released = leases.delete()[0]
        if actor.pk != reviewer.pk and released:  # an admin's act on another's work (one's own is not trailed)
            trail_record(actor=actor, action="leases.release", target=reviewer, after={
                "released": released, "run": run_id})
    return released


def lease_release(*, pair_id: int, reviewer) -> None:
    Lease.objects.filter(pair_id=pair_id, reviewer=reviewer).delete()


def pair_skip(*, pair: CandidatePair, reviewer) -> None:
    """Put the pair at the back of this reviewer's queue and let go of it."""
    with transaction.atomic():
        Skip.objects.update_or_create(pair=pair, reviewer=reviewer,
                                      defaults={"skipped_at": timezone.now()})
        lease_release(pair_id=pair.pk, reviewer=reviewer)


class _QueueSpot(NamedTuple):
    """What next_pair reads of a pair while walking the queue (tuples: an instance per row cost more than the walk)."""

    pk: int
    jaccard: float
    cluster: int | None
    status: str
    suggestion_confidence: float | None
    reviews_required: int


_SPOT_COLUMNS = ("pk", "jaccard", "cluster", "status", "suggestion_confidence", "run__reviews_required")


def _held_by_others(ids: list[int], reviewer) -> dict[int, set[int]]:
    """Who else holds each of these pairs (a current verdict or an unexpired lease): two queries for a chunk,
    where asking lease_take pair by pair cost a transaction each for every pair others were reviewing."""
    held: dict[int, set[int]] = {}
    verdicts = CurrentVerdict.objects.filter(pair_id__in=ids).exclude(verdict=WITHDRAWN).exclude(reviewer=reviewer)
    leases = Lease.objects.filter(pair_id__in=ids, expires_at__gt=timezone.now()).exclude(reviewer=reviewer)
    for rows in (verdicts.values_list("pair_id", "reviewer_id"), leases.values_list("pair_id", "reviewer_id")):
        for pair_id, reviewer_id in rows:
            held.setdefault(pair_id, set()).add(reviewer_id)
    return held


def next_pair(flt: QueueFilter, reviewer, chunk: int = 200) -> CandidatePair | None:
    """The next pair (in queue order) this reviewer has not judged, that still wants judgements and that
    fewer reviewers hold than it needs; it is handed out under a lease. Pairs the reviewer skipped come
    last, oldest skip first.

    Walks the queue in index order a chunk at a time and skips, in Python, my pairs and those that want no
    more judgements: an anti-join or a status list over a million pairs makes the database sort them all."""
    pairs = flt.apply(CandidatePair.objects.all()).order_by(*flt.ordering())
    skipped: list[int] = []
    cursor = ""
    size = min(chunk, 25)  # the next pair is usually near the front: small chunks first, then larger ones
    while True:
        page = pairs.filter(after_cursor(flt.sort, cursor)) if cursor else pairs
        rows = [_QueueSpot(*row) for row in page.values_list(*_SPOT_COLUMNS)[:size]]
        size = min(size * 4, chunk)
        if not rows:
            break
        ids = [r.pk for r in rows]
        mine = set(CurrentVerdict.objects.filter(reviewer=reviewer, pair_id__in=ids)
                   .exclude(verdict=WITHDRAWN).values_list("pair_id", flat=True))
        passed = set(Skip.objects.filter(reviewer=reviewer, pair_id__in=ids).values_list("pair_id", flat=True))
        others = _held_by_others(ids, reviewer)
        for row in rows:
            if row.status not in OPEN_PAIR_STATES or row.pk in mine:
                continue
            if len(others.get(row.pk, ())) >= row.reviews_required:
                continue  # full as far as can be seen now; lease_take counts again under the pair's lock
            if row.pk in passed:
                skipped.append(row.pk)
            # Seldom mine already: straight to the locked count, without lease_take's read of a fresh lease.
            elif _lease_locked(row.pk, reviewer, settings.DEDUP_LEASE_SECONDS):
                return CandidatePair.objects.get(pk=row.pk)
        cursor = cursor_of(flt.sort, rows[-1])
    # Then what I skipped, in the order I skipped it.
    for pk in Skip.objects.filter(reviewer=reviewer, pair_id__in=skipped).order_by("skipped_at", "id").values_list(
            "pair_id", flat=True):
        if _lease_locked(pk, reviewer, settings.DEDUP_LEASE_SECONDS):
            return CandidatePair.objects.get(pk=pk)
    return None


def signature_record(*, reviewer, password: str, accepted: Collection[str] = (),
                     listed: Collection[str] = ()) -> ReviewerSignature:
    """Sign, after checking the reviewer's password, every judgement and arbitration they recorded so far that no
    signature covers; of those made with an API token someone else made (or the server's command line), only the
    ones named in `accepted` ("judgement:ID", "arbitration:ID", as the signing page names them). Those the page
    showed them (`listed`) and they did not accept are refused: they stay unsigned, and a sheet says so. The
    rest were never before their eyes (beyond the page's list, or made after it was read): neither accepted nor
    refused, they stay unsigned and are listed at the next signing."""
    if not password_matches(reviewer, password or ""):
        raise ReviewRefused(gettext("the password does not match your account; nothing was signed"))
    refuse_foreign_password(reviewer)
    with transaction.atomic():
        list(get_user_model().objects.select_for_update().filter(pk=reviewer.pk).values_list("pk"))  # one at a time
        count = Judgement.objects.filter(reviewer=reviewer).count() + Arbitration.objects.filter(
            arbiter=reviewer).count()
        if not count:
            raise ReviewRefused(gettext("you have no judgement to sign yet"))
        chosen: dict[str, dict[str, list[int]]] = {"accepted": {}, "refused": {}}
        uncovered = 0  # made with others' tokens and left unsigned by this signature, refused or not listed
        for record in selectors.unsigned_records(reviewer):
            if not record.by_others_token:
                continue
            if record.key in accepted:
                side = "accepted"
            else:
                uncovered += 1
                if record.key not in listed:
                    continue
                side = "refused"
            chosen[side].setdefault(f"{record.kind}s", []).append(record.pk)
        token, token_maker = tokens.made_with(reviewer)
        name = reviewer.get_full_name() or reviewer.get_username()
        return ReviewerSignature.objects.create(
            reviewer=reviewer, full_name=name, meaning=signing.REVIEWER_MEANING, records=count - uncovered,
            accepted=chosen["accepted"], refused=chosen["refused"], api_token_id=token, token_created_by_id=token_maker)


def labelset_from_verdicts(*, run: ScreeningRun, user=None):
    """Settled pairs of a run as labels: a copy verdict → 1, any other final verdict → 0
    (arbitrated pairs use the arbiter's decision, which is their final verdict)."""
    settled = CandidatePair.objects.filter(run=run, status=SETTLED).values_list("left_id", "right_id", "final_verdict")
    return labelset_from_run(run=run, user=user, labels=[
        (a, b, int(v == COPY), f"verdict {v}") for a, b, v in settled])
