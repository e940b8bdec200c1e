"""Reads every page makes, built and compiled by the ORM once and then run with new values.

Building and compiling a small ORM query costs far more Python than running it (bench/HISTORY.md). A page
asks the same few questions (who is this, what may they do, which pair is this and what have they judged
of it), so their SQL is kept: the queryset is built once with marker values, the markers' places in the
compiled parameters are noted, and each call runs that SQL with its own values, turning the rows into
tuples or model instances exactly as the queryset would.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Model, QuerySet

# Markers no real value takes: negative ids (inside a 32-bit column's range, or the ORM treats the lookup
# as matching nothing and compiles no SQL), a string no form or session key can hold, and an instant of
# 1901 to the microsecond.
_INT_MARKER = -2_140_000_000
_STR_MARKER = "\x00prepared-marker-"
_TIME_MARKER = datetime(1901, 2, 3, 4, 5, 6, 700_000, tzinfo=UTC)
_FLOAT_MARKER = -(2.0**-900)  # a score no row holds; exact in binary, so it compares equal after the ORM
_LIST_MARKER = -2_100_000_000  # the items of list markers count down from here, clear of the int markers


@dataclass
class _Compiled:
    queryset: QuerySet
    compiler: object  # the SQLCompiler that compiled it: its select and converters turn rows into results
    sql: str
    params: list
    # (place in params, marker number, the parameter's type or "d"; for a list marker the item number, or
    # None where the whole list is one parameter)
    slots: list[tuple[int, int, type | str, int | None]]


class Prepared:
    """`build(*markers)` returns a queryset. `kinds` names each marker's type, "i" (an integer: ids), "s"
    (a string), "f" (a float: scores), "d" (an aware datetime) or "l" (a list of `list_length` integers,
    for `field__in_ids`), and every value that changes between calls must come in through a marker:
    anything else is compiled into the SQL for good. `rows(*values)` returns a `values_list` queryset's
    tuples, `objects` a model queryset's instances (select_related and annotations included).

    A list is one array parameter on PostgreSQL (psycopg keeps its parse of a query only for up to 50
    parameters) and one parameter per item elsewhere, so its length is fixed: pad it with ids no row has.

    Compiled once per thread: a compiler belongs to the connection it compiled for, and connections to
    threads."""

    def __init__(self, build: Callable[..., QuerySet], kinds: str = "i", using: str = DEFAULT_DB_ALIAS,
                 list_length: int = 0):
        if "l" in kinds and list_length < 1:
            raise ValueError("a list marker needs list_length")
        self._build, self._kinds, self.using, self._list_length = build, kinds, using, list_length
        self._local = threading.local()

    def _marker(self, i: int, kind: str):
        if kind == "i":
            return _INT_MARKER - i
        if kind == "s":
            return f"{_STR_MARKER}{i}"
        if kind == "d":
            return _TIME_MARKER + timedelta(microseconds=i)
        if kind == "f":
            return _FLOAT_MARKER * (i + 1)
        if kind == "l":
            return [_LIST_MARKER - i * self._list_length - j for j in range(self._list_length)]
        raise ValueError(f"no such kind of marker: {kind!r} (i, s, f, d or l)")

    def _compile(self) -> _Compiled:
        markers = [self._marker(i, kind) for i, kind in enumerate(self._kinds)]
        queryset = self._build(*markers)
        compiler = queryset.query.get_compiler(using=self.using)
        sql, params = compiler.as_sql()
        ops = compiler.connection.ops
        # A datetime reaches the parameters as the backend adapts it (a UTC string on SQLite).
        probes = [ops.adapt_datetimefield_value(m) if kind == "d" else m for m, kind in zip(markers, self._kinds)]
        slots = []
        for at, param in enumerate(params):
            for i, probe in enumerate(probes):
                if self._kinds[i] == "l":
                    if isinstance(param, list) and param == probe:
                        slots.append((at, i, list, None))
                    elif type(param) is int and param in probe:
                        slots.append((at, i, int, probe.index(param)))
                # isinstance: PostgreSQL's backend passes a big integer as psycopg's Int8, kept for the value.
                elif isinstance(param, type(probe)) and param == probe:
                    slots.append((at, i, "d" if self._kinds[i] == "d" else type(param), None))
        found = {i for _, i, _, item in slots if item is None}
        every_item = set(range(self._list_length))
        found |= {i for i, kind in enumerate(self._kinds)
                  if kind == "l" and {item for _, n, _, item in slots if n == i and item is not None} == every_item}
        missing = set(range(len(markers))) - found
        if missing:  # a marker the ORM turned into something else (or dropped) would silently keep its value
            raise ValueError(f"markers {sorted(missing)} are not parameters of the compiled query: {sql}")
        _keep_converters(compiler)
        return _Compiled(queryset, compiler, sql, list(params), slots)

    def _with(self, values: tuple) -> tuple[_Compiled, list]:
        if len(values) != len(self._kinds):
            raise TypeError(f"expected {len(self._kinds)} values, got {len(values)}")
        compiled = getattr(self._local, "compiled", None)
        if compiled is None or compiled.compiler.connection is not connections[self.using]:
            compiled = self._local.compiled = self._compile()
        if self._list_length:
            values = [self._list(value) if kind == "l" else value for value, kind in zip(values, self._kinds)]
        params = list(compiled.params)
        ops = compiled.compiler.connection.ops
        for at, i, kind, item in compiled.slots:
            if kind == "d":
                params[at] = ops.adapt_datetimefield_value(values[i])
            elif kind is list:
                params[at] = values[i]
            elif item is not None:
                params[at] = values[i][item]
            else:
                params[at] = values[i] if kind is int or kind is str or kind is float else kind(values[i])
        return compiled, params

    def _list(self, value) -> list[int]:
        items = [int(v) for v in value]  # as in_ids takes them: integers, never quoted text
        if len(items) != self._list_length:
            raise TypeError(f"expected a list of {self._list_length} ids, got {len(items)}")
        return items

    def _fetch(self, compiled: _Compiled, params: list) -> list[tuple]:
        with preparing_cursor(connections[self.using]) as cursor:
            cursor.execute(compiled.sql, params)
            return cursor.fetchall()

    def rows(self, *values) -> list[tuple]:
        compiled, params = self._with(values)
        return list(compiled.compiler.results_iter(results=[self._fetch(compiled, params)], tuple_expected=True))

    def first(self, *values) -> tuple | None:
        found = self.rows(*values)
        return found[0] if found else None

    def objects(self, *values) -> list[Model]:
        compiled, params = self._with(values)
        fetched = self._fetch(compiled, params)
        # The queryset's own iteration (instances, related objects, annotations) over the kept compiler, which
        # answers with the rows just read instead of compiling and running the query again. The kept queryset
        # itself is iterated (this thread's own), its cache emptied first: a copy of it cost a query's clone.
        compiler = compiled.compiler
        vars(compiler)["execute_sql"] = lambda *args, **kwargs: [fetched]
        queryset = compiled.queryset
        queryset.query.get_compiler = lambda *args, **kwargs: compiler
        vars(queryset).update(_result_cache=None, _prefetch_done=False)  # a fresh iteration
        return list(queryset)

    def one(self, *values) -> Model | None:
        """The first instance `objects` returns (a read by primary key finds one or none), or None."""
        found = self.objects(*values)
        return found[0] if found else None


_PREPARING: list[type] = []


def preparing_cursor(connection):
    """A cursor for SQL that is run again and again with new values. On PostgreSQL it binds the values on the
    server and keeps each statement prepared in the session (psycopg's cache), so the server parses and plans
    it once a connection rather than once a call; Django's cursors bind on the client and prepare nothing, as
    not every query the ORM writes can be prepared. Elsewhere the connection's own cursor."""
    if connection.vendor != "postgresql" or not settings.DEDUP_DB_PREPARE:
        return connection.cursor()
    if not _PREPARING:
        from django.db.backends.postgresql.base import ServerBindingCursor

        class PreparingCursor(ServerBindingCursor):
            def execute(self, query, params=None, *, prepare=None, binary=None):
                return super().execute(query, params, prepare=True, binary=binary)

        _PREPARING.append(PreparingCursor)
    # What connection.cursor() does, with this cursor in place of the connection's default one.
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    raw = connection.connection
    # One cursor a connection, kept and never closed: a judgement runs a dozen of these statements, and making,
    # wrapping and closing a cursor for each cost about as much Python as running it. Made anew for a new
    # connection, and when queries start or stop being logged (Django's debug cursor records them).
    key = (raw, connection.queries_logged)
    kept = getattr(connection, "_dedup_preparing", None)
    if kept is None or kept.key[0] is not raw or kept.key[1] != key[1]:
        if raw.prepare_threshold is None:  # Django turns psycopg's preparing off; only these cursors prepare
            raw.prepare_threshold = 0  # (the connection's own cursors bind on the client, which never prepares)
        with connection.wrap_database_errors:
            cursor = connection._prepare_cursor(_PREPARING[0](raw))  # noqa: SLF001 - Django's own wrapping
        kept = connection._dedup_preparing = _Kept(key, cursor)
    return kept


class _Kept:
    """The kept cursor as `with preparing_cursor(connection) as cursor:` uses it: leaving the block keeps it."""

    __slots__ = ("cursor", "key")

    def __init__(self, key: tuple, cursor):
        self.key, self.cursor = key, cursor

    def __enter__(self):
        return self.cursor

    def __exit__(self, *exc) -> None:
        return None


def _keep_converters(compiler) -> None:
    """The compiler works out each column's converters on every read; its
    columns never change, so they are worked out once. The expressions are kept with the answer, so no id in
    the key can be reused by another object."""
    work_out, kept = compiler.get_converters, {}

    def get_converters(expressions):
        key = tuple(map(id, expressions))
        if key not in kept:
            kept[key] = (list(expressions), work_out(expressions))
        return kept[key][1]

    compiler.get_converters = get_converters


_UPSERTS: dict[tuple, tuple[str, list]] = {}


def upsert(model: type[Model], values: dict[str, object], unique: tuple[str, ...], update: tuple[str, ...],
           using: str = DEFAULT_DB_ALIAS) -> None:
    """One row's INSERT … ON CONFLICT (unique) DO UPDATE SET each of `update` to the new row's value: what
    `bulk_create([row], update_conflicts=True, …)` does, its SQL built once per shape (bulk_create built it
    anew each time). `values` by field name; the rest take the columns' defaults."""
    connection = connections[using]
    key = (model, tuple(values), unique, update, connection.vendor)
    if key not in _UPSERTS:
        meta, quote = model._meta, connection.ops.quote_name
        fields = [meta.get_field(name) for name in values]
        columns = ", ".join(quote(f.column) for f in fields)
        conflict = ", ".join(quote(meta.get_field(name).column) for name in unique)
        sets = ", ".join(f"{quote(c)} = EXCLUDED.{quote(c)}" for c in (meta.get_field(n).column for n in update))
        _UPSERTS[key] = (f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES ({', '.join(['%s'] * len(fields))}) "  # noqa: S608
                         f"ON CONFLICT ({conflict}) DO UPDATE SET {sets}", fields)
    sql, fields = _UPSERTS[key]
    params = [f.get_db_prep_save(value, connection) for f, value in zip(fields, values.values(), strict=True)]
    with preparing_cursor(connection) as cursor:
        cursor.execute(sql, params)


_INSERTS: dict[tuple, tuple[str, list]] = {}
_UPDATES: dict[tuple, tuple[str, list]] = {}


def _statement(built: dict, model: type[Model], values: dict[str, object], connection, sql) -> tuple[str, list]:
    """(the statement for this shape of `values`, built once by `sql(table, quote, fields)`, and its parameters)."""
    key = (model, tuple(values), connection.vendor)
    if key not in built:
        meta, quote = model._meta, connection.ops.quote_name
        fields = [meta.get_field(name) for name in values]
        built[key] = (sql(meta, quote, fields), fields)
    text, fields = built[key]
    return text, [f.get_db_prep_save(value, connection) for f, value in zip(fields, values.values(), strict=True)]


def insert(model: type[Model], values: dict[str, object], using: str = DEFAULT_DB_ALIAS) -> int:
    """One row's INSERT … RETURNING its primary key, the SQL built once per shape (the ORM's save collects,
    builds and compiles it anew each time). `values` by field name must give every column (the ORM's defaults,
    auto_now_add's time included, are not filled in), and no signal is sent: for rows that have none."""
    connection = connections[using]
    sql, params = _statement(_INSERTS, model, values, connection, lambda meta, quote, fields: (
        f"INSERT INTO {quote(meta.db_table)} ({', '.join(quote(f.column) for f in fields)}) "  # noqa: S608
        f"VALUES ({', '.join(['%s'] * len(fields))}) RETURNING {quote(meta.pk.column)}"))
    with preparing_cursor(connection) as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()[0]


def update(model: type[Model], pk: int, values: dict[str, object], using: str = DEFAULT_DB_ALIAS) -> None:
    """`model.objects.filter(pk=pk).update(**values)` (which sends no signal either) as one prepared statement,
    its SQL built once per shape. `values` by field name."""
    connection = connections[using]
    sql, params = _statement(_UPDATES, model, values, connection, lambda meta, quote, fields: (
        f"UPDATE {quote(meta.db_table)} SET {', '.join(f'{quote(f.column)} = %s' for f in fields)} "  # noqa: S608
        f"WHERE {quote(meta.pk.column)} = %s"))
    with preparing_cursor(connection) as cursor:
        cursor.execute(sql, [*params, pk])
