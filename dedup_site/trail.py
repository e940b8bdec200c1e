"""The trail of administrative acts: who changed which account, token, corpus setting or run, when, and from
what to what. The service that acts records its entry (`trail_record`) in its own transaction, so the pages,
the API, Django admin and the server's commands all leave one; acts on accounts, groups and permissions made
anywhere else (the shell, Django's own commands, a script) are trailed by receivers of the models' signals
(dedup_site.trail_signals). The rows are insert-only in the database (dedup_site.guards). Admins read it on the
Trail page and through `GET /api/v1/trail/`; a signed review sheet carries the hash of the trail as it stood at
its export (review.sheets.signing.trail_sha256)."""

from __future__ import annotations

import contextvars
import json
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, time

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from dedup_site import storable
from dedup_site.models import TrailEntry

# Every act the trail records, by key (kept English in the rows and the API; shown translated).
ACTIONS = {
    "user.create": _("account created"),
    "user.role": _("role changed"),
    "user.deactivate": _("account deactivated"),
    "user.reactivate": _("account reactivated"),
    "user.password": _("password set by someone else"),
    "user.code": _("one-time code issued"),
    "user.change": _("account changed in Django admin"),
    "user.privileges": _("superuser or staff status changed"),
    "user.permissions": _("account's own permissions changed"),
    "group.change": _("group's permissions changed"),
    "token.create": _("API token made"),
    "token.revoke": _("API token revoked"),
    "token.acknowledge": _("API token acknowledged by its owner"),
    "review.self_arbitration_allowed": _("self-arbitration allowed"),
    "review.self_arbitration_disallowed": _("self-arbitration disallowed"),
    "review.preset_reasons": _("preset reasons changed"),
    "run.start": _("screening run started"),
    "sheet.export": _("review sheet export started"),
    "labels.import": _("label set imported"),
    "labels.from_verdicts": _("label set made from verdicts"),
    "leases.release": _("another reviewer's pairs released"),
}
TARGETS = {"user": _("account"), "group": _("group"), "corpus": _("corpus"), "run": _("run")}
_MODEL_TARGETS = {"corpus": "corpus", "screeningrun": "run", "group": "group"}

_COMMAND: contextvars.ContextVar[str] = contextvars.ContextVar("dedup_trail_command", default="")
UNNAMED_COMMAND = "shell or script"  # an act with no one logged in, outside the commands that name themselves
_LOCK = zlib.crc32(b"dedup_site_trailentry")  # PostgreSQL's advisory lock for the trail's inserts


@contextmanager
def command_line(name: str) -> Iterator[None]:
    """The acts inside are the server's command `name`'s (the trail's actor is then null)."""
    token = _COMMAND.set(name)
    try:
        yield
    finally:
        _COMMAND.reset(token)


_OWN_ENTRIES: contextvars.ContextVar[bool] = contextvars.ContextVar("dedup_trail_own_entries", default=False)


@contextmanager
def own_entries() -> Iterator[None]:
    """A transaction in which the caller (a service, Django admin's views, `bootstrap`) records the entries of
    its acts on accounts and groups itself: the receivers that trail such acts made anywhere else (the shell,
    Django's own commands: dedup_site.trail_signals) record none inside it, so that no act is trailed twice.
    Marked before acting, not by trail_record: their signals come first (an account is saved, and its groups
    added, before the entry can name it)."""
    token = _OWN_ENTRIES.set(True)
    try:
        with transaction.atomic():
            yield
    finally:
        _OWN_ENTRIES.reset(token)


def in_own_entries() -> bool:
    return _OWN_ENTRIES.get()


def _target(target) -> tuple[str, int | None, str]:
    if isinstance(target, get_user_model()):
        return "user", target.pk, target.get_username()
    kind = _MODEL_TARGETS[target._meta.model_name]
    label = target.corpus.name if kind == "run" else target.name
    return kind, target.pk, label


def plain(value):
    """A value as the trail's JSON keeps it (times in UTC ISO 8601)."""
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [plain(v) for v in (sorted(value) if isinstance(value, set) else value)]
    return value


def trail_record(*, actor, action: str, target, before: dict | None = None, after: dict | None = None) -> TrailEntry:
    """Record an administrative act by `actor` (None: the server's command line, named by `command_line`) on
    `target` (an account, a group, a corpus or a run), in the caller's transaction: the act and its entry are
    kept together or not at all. Entries are numbered in the order their transactions commit (on PostgreSQL an
    advisory lock held to the commit; SQLite has one writer at a time), so that the rows any reader sees are
    the trail up to some entry, whose hash a sheet can carry."""
    if action not in ACTIONS:
        raise ValueError(f"no trail action {action!r}")
    if transaction.get_autocommit():
        raise transaction.TransactionManagementError("an act and its trail entry are recorded in one transaction")
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_LOCK])
    kind, pk, label = _target(target)
    # Text a row stored before the rule on lone surrogates (a preset reason), or an argument the command line
    # decoded with surrogateescape, is kept escaped: an insert-only row that could not be encoded would break
    # every later sheet's hash of the trail, for good.
    return TrailEntry.objects.create(
        at=timezone.now(), actor=actor, actor_name=actor.get_username() if actor is not None else "",
        command="" if actor is not None else storable.shown(_COMMAND.get() or UNNAMED_COMMAND), action=action,
        target_type=kind, target_id=pk, target_label=storable.shown(label[:300]),
        before=storable.shown_data(plain(before or {})), after=storable.shown_data(plain(after or {})))


# --- reading it -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrailFilter:
    actor: str = ""  # a user name, or (part of) the name of a server command
    action: str = ""
    target_type: str = ""
    target: str = ""  # the target's name then, or its id
    since: date | None = None
    until: date | None = None

    def apply(self, rows):
        if self.actor:
            rows = rows.filter(Q(actor_name__iexact=self.actor) | Q(actor__isnull=True, command__icontains=self.actor))
        if self.action:
            rows = rows.filter(action=self.action)
        if self.target_type:
            rows = rows.filter(target_type=self.target_type)
        if self.target:
            by_name = Q(target_label__iexact=self.target)
            rows = rows.filter(by_name | Q(target_id=int(self.target)) if self.target.isdigit() and len(
                self.target) <= 18 else by_name)
        if self.since:
            rows = rows.filter(at__gte=datetime.combine(self.since, time.min, UTC))
        if self.until:
            rows = rows.filter(at__lte=datetime.combine(self.until, time.max, UTC))
        return rows


def trail_entries(flt: TrailFilter, *, before: int | None = None):
    """The entries the filter keeps, newest first (older than entry `before`, for cursor paging)."""
    rows = flt.apply(TrailEntry.objects.all())
    return (rows.filter(pk__lt=before) if before else rows).order_by("-id")


def changes(entry: TrailEntry) -> list[tuple[str, str, str]]:
    """(field, before, after) for each field the entry names, as compact JSON (a field absent on one side: "")."""
    def shown(side: dict, key: str) -> str:
        return json.dumps(side[key], ensure_ascii=False, sort_keys=True) if key in side else ""

    before, after = entry.before or {}, entry.after or {}
    return [(key, shown(before, key), shown(after, key)) for key in sorted({*before, *after})]


def trail_actors() -> list[str]:
    """Who has acted, for the page's filter: user names, then the server's commands."""
    names = set(TrailEntry.objects.exclude(actor_name="").values_list("actor_name", flat=True).distinct())
    commands = set(TrailEntry.objects.filter(actor__isnull=True).values_list("command", flat=True).distinct())
    return sorted(names, key=str.casefold) + sorted(commands)


def trail_cells(entry: TrailEntry) -> list[str]:
    """An entry as the text its hash is taken over (review.sheets.signing.trail_sha256): every field, JSON
    with sorted keys, times in UTC ISO 8601 with microseconds."""
    def dump(value) -> str:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))

    return [str(entry.pk), plain(entry.at), "" if entry.actor_id is None else str(entry.actor_id), entry.actor_name,
            entry.command, entry.action, entry.target_type, "" if entry.target_id is None else str(entry.target_id),
            entry.target_label, dump(entry.before), dump(entry.after)]


def trail_rows(*, upto: int | None = None, batch: int = 2000) -> Iterator[list[str]]:
    """Every entry's cells in order (up to entry `upto`), read a batch at a time."""
    last = 0
    while True:
        rows = TrailEntry.objects.filter(pk__gt=last).order_by("id")
        if upto is not None:
            rows = rows.filter(pk__lte=upto)
        chunk = list(rows[:batch])
        if not chunk:
            return
        yield from (trail_cells(e) for e in chunk)
        last = chunk[-1].pk
