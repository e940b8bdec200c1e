"""Guards in the database itself for rows the product never changes: triggers that refuse DELETE (and on
PostgreSQL TRUNCATE) and every UPDATE, or an UPDATE of some columns, or an UPDATE once a condition holds.
And for derived rows that one part of the program alone writes (`WriterGuard`: a pair's review state, each
reviewer's current verdict): triggers that refuse the write unless that writer declared itself for the
transaction (`writing`), so no other program path, ORM call or stray SQL statement can set them.

Each app lists its guards in `models.DB_GUARDS`; `sync` installs them all (idempotent). Migrations call it
(review 0006, screening 0008) and so does every `migrate` afterwards, because SQLite rebuilds a table to
alter it and its triggers go with the old table. Whoever can drop a trigger can of course still change the
rows; the guards make sure no program path, ORM call or stray SQL statement does.
"""

from __future__ import annotations

import contextvars
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime

PG_FUNCTION = (
    "CREATE OR REPLACE FUNCTION dedup_guard_refuse() RETURNS trigger AS $$ BEGIN "
    "RAISE EXCEPTION '% rows are %: % refused', TG_TABLE_NAME, TG_ARGV[0], TG_OP; END; $$ LANGUAGE plpgsql"
)


@dataclass(frozen=True)
class Guard:
    """What the database refuses on one table. `frozen` names the columns no UPDATE may change (empty: every
    UPDATE is refused); `frozen_when` is an SQL condition on OLD after which the whole row is fixed."""

    table: str
    rule: str = "insert-only"
    frozen: tuple[str, ...] = ()
    frozen_when: str = ""

    def update_condition(self, vendor: str) -> str:
        if self.frozen_when:
            return self.frozen_when
        differs = "IS DISTINCT FROM" if vendor == "postgresql" else "IS NOT"
        return " OR ".join(f"OLD.{c} {differs} NEW.{c}" for c in self.frozen)


PG_WRITER_FUNCTION = (
    "CREATE OR REPLACE FUNCTION dedup_guard_writer() RETURNS trigger AS $$ BEGIN "
    "IF coalesce(current_setting('dedup.writer', true), '') <> TG_ARGV[0] THEN "
    "RAISE EXCEPTION '% rows: % written only by %: % refused', TG_TABLE_NAME, TG_ARGV[1], TG_ARGV[0], TG_OP; "
    "END IF; IF TG_OP = 'DELETE' THEN RETURN OLD; END IF; RETURN NEW; END; $$ LANGUAGE plpgsql"
)
SQLITE_WRITER_FUNCTION = "dedup_writer"  # registered on every SQLite connection (register_writer_function)
SQLITE_NOW_FUNCTION = "dedup_now"

_WRITER: contextvars.ContextVar[str] = contextvars.ContextVar("dedup_writer", default="")


@dataclass(frozen=True)
class WriterGuard:
    """Derived rows only `writer` may write. `columns`: the columns an UPDATE may not change otherwise (empty:
    every INSERT, UPDATE and DELETE is the writer's alone); `insert_when`: an SQL condition on NEW under which
    an INSERT is the writer's alone too (a row inserted in its initial state is anyone's to insert)."""

    table: str
    writer: str
    columns: tuple[str, ...] = ()
    insert_when: str = ""

    @property
    def what(self) -> str:
        return ", ".join(self.columns) + " are" if self.columns else "rows are"

    def kinds(self, vendor: str) -> tuple[str, ...]:
        if not self.columns:
            return ("writer_insert", "writer_update", "writer_delete")
        return ("writer_insert", "writer_update") if self.insert_when else ("writer_update",)

    def statements(self, vendor: str) -> list[str]:
        t, differs = self.table, "IS DISTINCT FROM" if vendor == "postgresql" else "IS NOT"
        changed = " OR ".join(f"OLD.{c} {differs} NEW.{c}" for c in self.columns)
        ops = {"writer_insert": ("INSERT", self.insert_when), "writer_update": ("UPDATE", changed),
               "writer_delete": ("DELETE", "")}
        out = []
        for kind in self.kinds(vendor):
            op, condition = ops[kind]
            if vendor == "postgresql":
                when = f"WHEN ({condition}) " if condition else ""
                out += [f"DROP TRIGGER IF EXISTS {t}_guard_{kind} ON {t}",
                        f"CREATE TRIGGER {t}_guard_{kind} BEFORE {op} ON {t} FOR EACH ROW {when}"
                        f"EXECUTE FUNCTION dedup_guard_writer('{self.writer}', '{self.what}')"]
            else:
                declared = f"coalesce({SQLITE_WRITER_FUNCTION}(), '') <> '{self.writer}'"
                when = f"({condition}) AND {declared}" if condition else declared
                out.append(f"CREATE TRIGGER IF NOT EXISTS {t}_guard_{kind} BEFORE {op} ON {t} WHEN {when} "
                           f"BEGIN SELECT RAISE(ABORT, '{t} rows: {self.what} written only by {self.writer}: "
                           f"{op} refused'); END")
        return out


def _utc_now_text() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")  # as Django stores a time on SQLite


def register_writer_function(sender=None, connection=None, **_kwargs) -> None:
    """connection_created: SQLite's triggers ask this process which writer declared itself (a connection
    without the function, such as the sqlite3 shell, fails every guarded write), and the time to the
    microsecond (SQLite's own 'now' has milliseconds: a code issued in the same millisecond before a password
    was changed would pass for one issued after)."""
    if connection is not None and connection.vendor == "sqlite":
        connection.connection.create_function(SQLITE_WRITER_FUNCTION, 0, lambda: _WRITER.get() or None)
        connection.connection.create_function(SQLITE_NOW_FUNCTION, 0, _utc_now_text)


@contextmanager
def writing(writer: str, using: str = "default", savepoint: bool = True):
    """Declare `writer` for the writes inside, in a transaction (PostgreSQL: a setting local to it, put back
    before the block ends; SQLite: the function above). Re-entrant for the same writer. `savepoint=False`
    inside a transaction of the caller's own that a failure inside ends anyway (a judgement's): no savepoint
    to take and release, and a failure dooms that whole transaction, the setting with it."""
    from django.db import connections, transaction

    if _WRITER.get() == writer:
        yield
        return
    from dedup_site.prepared import preparing_cursor

    connection = connections[using]
    outer = _WRITER.get()  # put back when the block ends (a writer declared around this one)
    token = _WRITER.set(writer)
    try:
        with transaction.atomic(using=using, savepoint=savepoint):
            if connection.vendor == "postgresql":
                with preparing_cursor(connection) as cursor:
                    cursor.execute("SELECT set_config('dedup.writer', %s, true)", [writer])
            yield
            if connection.vendor == "postgresql":
                with preparing_cursor(connection) as cursor:
                    cursor.execute("SELECT set_config('dedup.writer', %s, true)", [outer])
    finally:
        _WRITER.reset(token)


def _statements(guard: Guard | WriterGuard, vendor: str) -> list[str]:
    if isinstance(guard, WriterGuard):
        return guard.statements(vendor)
    t, rule = guard.table, guard.rule
    condition = guard.update_condition(vendor)
    if vendor == "postgresql":
        when = f"WHEN ({condition}) " if condition else ""
        return [
            f"DROP TRIGGER IF EXISTS {t}_guard_delete ON {t}",
            f"CREATE TRIGGER {t}_guard_delete BEFORE DELETE ON {t} FOR EACH ROW "
            f"EXECUTE FUNCTION dedup_guard_refuse('{rule}')",
            f"DROP TRIGGER IF EXISTS {t}_guard_truncate ON {t}",
            f"CREATE TRIGGER {t}_guard_truncate BEFORE TRUNCATE ON {t} FOR EACH STATEMENT "
            f"EXECUTE FUNCTION dedup_guard_refuse('{rule}')",
            f"DROP TRIGGER IF EXISTS {t}_guard_update ON {t}",
            f"CREATE TRIGGER {t}_guard_update BEFORE UPDATE ON {t} FOR EACH ROW {when}"
            f"EXECUTE FUNCTION dedup_guard_refuse('{rule}')",
        ]
    when = f"WHEN {condition} " if condition else ""
    return [
        f"CREATE TRIGGER IF NOT EXISTS {t}_guard_delete BEFORE DELETE ON {t} "
        f"BEGIN SELECT RAISE(ABORT, '{t} rows are {rule}: DELETE refused'); END",
        f"CREATE TRIGGER IF NOT EXISTS {t}_guard_update BEFORE UPDATE ON {t} {when}"
        f"BEGIN SELECT RAISE(ABORT, '{t} rows are {rule}: UPDATE refused'); END",
    ]


def registered() -> list[Guard | WriterGuard]:
    """Every guard the installed apps declare (`DB_GUARDS` in their models module)."""
    from django.apps import apps

    return [g for config in apps.get_app_configs() for g in getattr(config.models_module, "DB_GUARDS", [])]


def _existing_tables(connection) -> set[str]:
    with connection.cursor() as cursor:
        return set(connection.introspection.table_names(cursor))


def install(connection, guards: list[Guard]) -> None:
    if connection.vendor not in ("postgresql", "sqlite"):
        raise NotImplementedError(f"no insert-only guards for {connection.vendor}")
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(PG_FUNCTION)
            cursor.execute(PG_WRITER_FUNCTION)
        for guard in guards:
            for statement in _statements(guard, connection.vendor):
                cursor.execute(statement)


def trigger_kinds(guard: Guard | WriterGuard, vendor: str) -> tuple[str, ...]:
    """The suffixes of the guard's trigger names (`{table}_guard_{kind}`)."""
    if isinstance(guard, WriterGuard):
        return guard.kinds(vendor)
    return ("delete", "truncate", "update") if vendor == "postgresql" else ("delete", "update")


def remove(connection, guards: list[Guard | WriterGuard]) -> None:
    with connection.cursor() as cursor:
        for guard in guards:
            for kind in trigger_kinds(guard, connection.vendor):
                on = f" ON {guard.table}" if connection.vendor == "postgresql" else ""
                cursor.execute(f"DROP TRIGGER IF EXISTS {guard.table}_guard_{kind}{on}")


USERNAME_INDEX = "dedup_username_lower_unique"  # made by dedup_site 0002

# A password hash written by anything but these two is someone else's choice (password_marks).
OWN_PASSWORD_WRITER = "dedup_site.own_password"  # noqa: S105 - a writer's name; the owner's own Password page
REHASH_WRITER = "dedup_site.password_rehash"  # the same password hashed anew at log-in (dedup_site.auth)
USERS, MARKS, USERNAME_KEYS = "auth_user", "dedup_site_passwordchosenbyother", "dedup_site_usernamekey"
PASSWORD_MARK_TRIGGERS = (f"{USERS}_password_chosen_insert", f"{USERS}_password_chosen_update")
USERNAME_KEY_TRIGGERS = (f"{USERS}_username_keyed_insert", f"{USERS}_username_keyed_update")


def password_marks(vendor: str) -> list[str]:
    """Triggers that mark an account's password as chosen by someone else (a PasswordChosenByOther row, its
    chooser unknown: a page that knows who chose it says so after) whenever its stored hash changes, or a row
    is inserted with a usable one, unless the owner's Password page or a re-hash at log-in declared itself for
    the transaction (`writing`). So every path is covered — create_user, createsuperuser, QuerySet.update, an
    assignment saved with update_fields, SQL — now and later. An unusable password (`!...`) lets no one log
    in: it needs no mark (nor does it lift one)."""
    usable = "substr(NEW.password, 1, 1) <> '!' AND NEW.password <> ''"
    # A mark already there keeps its chooser: whoever wrote the new hash may be them (an admin page, the shell),
    # and forgetting the name would let them issue the owner's code. A page that knows the chooser says so after.
    upsert = "ON CONFLICT (user_id) DO UPDATE SET chosen_at = excluded.chosen_at"
    insert, update = PASSWORD_MARK_TRIGGERS
    if vendor == "postgresql":
        return [
            "CREATE OR REPLACE FUNCTION dedup_password_chosen() RETURNS trigger AS $$ BEGIN "  # noqa: S608 - constants
            "IF coalesce(current_setting('dedup.writer', true), '') NOT IN "
            f"('{OWN_PASSWORD_WRITER}', '{REHASH_WRITER}') THEN "
            f"INSERT INTO {MARKS} (user_id, chosen_by_id, chosen_at) VALUES (NEW.id, NULL, clock_timestamp()) "
            f"{upsert}; END IF; RETURN NULL; END; $$ LANGUAGE plpgsql",
            f"DROP TRIGGER IF EXISTS {insert} ON {USERS}",
            f"CREATE TRIGGER {insert} AFTER INSERT ON {USERS} FOR EACH ROW WHEN ({usable}) "
            "EXECUTE FUNCTION dedup_password_chosen()",
            f"DROP TRIGGER IF EXISTS {update} ON {USERS}",
            f"CREATE TRIGGER {update} AFTER UPDATE OF password ON {USERS} FOR EACH ROW "
            f"WHEN (OLD.password IS DISTINCT FROM NEW.password AND {usable}) EXECUTE FUNCTION dedup_password_chosen()",
        ]
    undeclared = f"coalesce({SQLITE_WRITER_FUNCTION}(), '') NOT IN ('{OWN_PASSWORD_WRITER}', '{REHASH_WRITER}')"
    mark = (f"BEGIN INSERT INTO {MARKS} (user_id, chosen_by_id, chosen_at) VALUES (NEW.id, NULL, "  # noqa: S608
            f"{SQLITE_NOW_FUNCTION}()) {upsert}; END")
    return [
        f"DROP TRIGGER IF EXISTS {insert}",
        f"CREATE TRIGGER {insert} AFTER INSERT ON {USERS} WHEN {usable} AND {undeclared} {mark}",
        f"DROP TRIGGER IF EXISTS {update}",
        f"CREATE TRIGGER {update} AFTER UPDATE OF password ON {USERS} "
        f"WHEN OLD.password IS NOT NEW.password AND {usable} AND {undeclared} {mark}",
    ]


def username_keys(vendor: str) -> list[str]:
    """Triggers that refuse a user row whose name has no UsernameKey (its canonical form, unique), so that no
    path, QuerySet.update or SQL included, gives an account a name without the check of dedup_site.accounts."""
    missing = f"NOT EXISTS (SELECT 1 FROM {USERNAME_KEYS} WHERE username = NEW.username)"  # noqa: S608
    refusal = (f"{USERS}: a user name needs its canonical key (dedup_site.accounts, dedup_site.names); "
               "save accounts through the ORM")
    insert, update = USERNAME_KEY_TRIGGERS
    if vendor == "postgresql":
        return [
            "CREATE OR REPLACE FUNCTION dedup_username_keyed() RETURNS trigger AS $$ BEGIN "
            f"IF {missing} THEN RAISE EXCEPTION '{refusal}: % refused', TG_OP; END IF; RETURN NEW; END; "
            "$$ LANGUAGE plpgsql",
            f"DROP TRIGGER IF EXISTS {insert} ON {USERS}",
            f"CREATE TRIGGER {insert} BEFORE INSERT ON {USERS} FOR EACH ROW EXECUTE FUNCTION dedup_username_keyed()",
            f"DROP TRIGGER IF EXISTS {update} ON {USERS}",
            f"CREATE TRIGGER {update} BEFORE UPDATE OF username ON {USERS} FOR EACH ROW "
            "WHEN (OLD.username IS DISTINCT FROM NEW.username) EXECUTE FUNCTION dedup_username_keyed()",
        ]
    return [
        f"DROP TRIGGER IF EXISTS {insert}",
        f"CREATE TRIGGER {insert} BEFORE INSERT ON {USERS} WHEN {missing} "
        f"BEGIN SELECT RAISE(ABORT, '{refusal}: INSERT refused'); END",
        f"DROP TRIGGER IF EXISTS {update}",
        f"CREATE TRIGGER {update} BEFORE UPDATE OF username ON {USERS} "
        f"WHEN OLD.username IS NOT NEW.username AND {missing} "
        f"BEGIN SELECT RAISE(ABORT, '{refusal}: UPDATE refused'); END",
    ]


def drop_triggers(connection, names: tuple[str, ...]) -> None:
    with connection.cursor() as cursor:
        for name in names:
            cursor.execute(f"DROP TRIGGER IF EXISTS {name}" + (f" ON {USERS}" if connection.vendor == "postgresql"
                                                               else ""))


def install_account_triggers(connection, statements: list[str]) -> None:
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


def sync(connection, **_kwargs) -> None:
    """Install every registered guard on the tables that exist (after each migrate), the index that keeps
    user names unique without case (SQLite drops an index Django does not know of when it rebuilds a table),
    and the triggers on the accounts' table (password_marks, username_keys), which a rebuild drops too."""
    tables = _existing_tables(connection)
    install(connection, [g for g in registered() if g.table in tables])
    if "dedup_site_passwordcode" in tables:  # dedup_site 0002 is applied: no two names differ only by case
        with connection.cursor() as cursor:
            cursor.execute(f"CREATE UNIQUE INDEX IF NOT EXISTS {USERNAME_INDEX} ON auth_user (lower(username))")
    if USERS in tables and MARKS in tables:
        install_account_triggers(connection, password_marks(connection.vendor))
    if USERS in tables and USERNAME_KEYS in tables:  # dedup_site 0006 gave every account its key
        install_account_triggers(connection, username_keys(connection.vendor))


def installed(connection) -> set[str]:
    """Names of the guard triggers present in the database."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT tgname FROM pg_trigger WHERE tgname LIKE '%%_guard_%%' AND NOT tgisinternal")
        else:
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%_guard_%'")
        return {row[0] for row in cursor.fetchall()}
