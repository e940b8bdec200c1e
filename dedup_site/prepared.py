"""Reads every page makes, built and compiled by the ORM once per process and then run with new values.

Building and compiling a small ORM query costs 0.4–2 ms of Python; running it costs about 0.05 ms. A page
asks the same few questions (who is this, what may they do, what have they judged here), so their SQL is
kept: the queryset is built once with marker values, the markers' places in the compiled parameters are
noted, and each call runs that SQL with its own values, converting the rows as the queryset would.
"""

from __future__ import annotations

from collections.abc import Callable
from threading import Lock

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import QuerySet

# Markers no real value takes: negative ids (inside a 32-bit column's range, or the ORM treats the lookup
# as matching nothing and compiles no SQL), and a string no form or session key can hold.
_INT_MARKER = -2_140_000_000
_STR_MARKER = "\x00prepared-marker-"


class Prepared:
    """`build(*markers)` returns a `values_list` queryset. `kinds` names each marker's type, "i" (an integer:
    ids) or "s" (a string), and every value that changes between calls must come in through a marker:
    anything else is compiled into the SQL for good. `rows(*values)` returns the queryset's tuples."""

    def __init__(self, build: Callable[..., QuerySet], kinds: str = "i", using: str = DEFAULT_DB_ALIAS):
        self._build, self._kinds, self._using = build, kinds, using
        self._compiled = None
        self._lock = Lock()

    def _markers(self) -> list:
        return [_INT_MARKER - i if kind == "i" else f"{_STR_MARKER}{i}" for i, kind in enumerate(self._kinds)]

    def _compile(self):
        markers = self._markers()
        compiler = self._build(*markers).query.get_compiler(using=self._using)
        sql, params = compiler.as_sql()
        slots = []
        for at, param in enumerate(params):
            for i, marker in enumerate(markers):
                # isinstance: PostgreSQL's backend passes a big integer as psycopg's Int8, kept for the value.
                if isinstance(param, type(marker)) and param == marker:
                    slots.append((at, i, type(param)))
        missing = set(range(len(markers))) - {i for _, i, _ in slots}
        if missing:  # a marker the ORM turned into something else (or dropped) would silently keep its value
            raise ValueError(f"markers {sorted(missing)} are not parameters of the compiled query: {sql}")
        return compiler, sql, list(params), slots

    def rows(self, *values) -> list[tuple]:
        if len(values) != len(self._kinds):
            raise TypeError(f"expected {len(self._kinds)} values, got {len(values)}")
        if self._compiled is None:
            with self._lock:
                if self._compiled is None:
                    self._compiled = self._compile()
        compiler, sql, params, slots = self._compiled
        params = list(params)
        for at, i, kind in slots:
            params[at] = values[i] if kind is int or kind is str else kind(values[i])
        with connections[self._using].cursor() as cursor:
            cursor.execute(sql, params)
            fetched = cursor.fetchall()
        return list(compiler.results_iter(results=[fetched], tuple_expected=True))

    def first(self, *values) -> tuple | None:
        found = self.rows(*values)
        return found[0] if found else None
