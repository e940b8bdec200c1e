"""Guards in the database itself for rows the product never changes: triggers that refuse DELETE (and on
PostgreSQL TRUNCATE) and every UPDATE, or an UPDATE of some columns, or an UPDATE once a condition holds.

Each app lists its guards in `models.DB_GUARDS`; `sync` installs them all (idempotent). Migrations call it
(review 0006, screening 0008) and so does every `migrate` afterwards, because SQLite rebuilds a table to
alter it and its triggers go with the old table. Whoever can drop a trigger can of course still change the
rows; the guards make sure no program path, ORM call or stray SQL statement does.
"""

from __future__ import annotations

from dataclasses import dataclass

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


def _statements(guard: Guard, vendor: str) -> list[str]:
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


def registered() -> list[Guard]:
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
        for guard in guards:
            for statement in _statements(guard, connection.vendor):
                cursor.execute(statement)


def remove(connection, guards: list[Guard]) -> None:
    with connection.cursor() as cursor:
        for guard in guards:
            for kind in ("delete", "truncate", "update"):
                on = f" ON {guard.table}" if connection.vendor == "postgresql" else ""
                if kind == "truncate" and connection.vendor != "postgresql":
                    continue
                cursor.execute(f"DROP TRIGGER IF EXISTS {guard.table}_guard_{kind}{on}")


def sync(connection, **_kwargs) -> None:
    """Install every registered guard on the tables that exist (after each migrate)."""
    tables = _existing_tables(connection)
    install(connection, [g for g in registered() if g.table in tables])


def installed(connection) -> set[str]:
    """Names of the guard triggers present in the database."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT tgname FROM pg_trigger WHERE tgname LIKE '%%_guard_%%' AND NOT tgisinternal")
        else:
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%_guard_%'")
        return {row[0] for row in cursor.fetchall()}
