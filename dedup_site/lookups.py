"""`field__in_ids=ids` and `field__in_texts=texts`: `IN` for a batch of integer ids or of texts, without
Django's per-value preparation.

Django's `__in` resolves and prepares each value one by one, which for a batch of ids cost more CPU than
reading the rows (bench/HISTORY.md), and the near pass reads documents by id in batches of 1,000 (signing,
verification, publishing). Here the ids are checked to be integers once, in bulk, and passed as parameters.
An import looks up each batch of 2,000 doc_ids the same way (`in_texts`).
"""

from __future__ import annotations

from django.core.exceptions import EmptyResultSet
from django.db.models import CharField, ForeignKey, IntegerField, Lookup


class _InBatch(Lookup):
    def as_sql(self, compiler, connection):
        if not self.rhs:
            raise EmptyResultSet
        lhs, params = self.process_lhs(compiler, connection)
        if connection.vendor == "postgresql":
            # One array parameter: psycopg splits a query at every placeholder, and keeps the split only for
            # queries of up to 50 of them.
            return f"{lhs} = ANY(%s)", (*params, list(self.rhs))
        return f"{lhs} IN ({', '.join(['%s'] * len(self.rhs))})", (*params, *self.rhs)


class InIds(_InBatch):
    lookup_name = "in_ids"

    def get_prep_lookup(self):
        # Any iterable of integers (a list, a set, a numpy array); anything else is refused, never quoted.
        return [int(value) for value in self.rhs]


class InTexts(_InBatch):
    lookup_name = "in_texts"

    def get_prep_lookup(self):
        values = list(self.rhs)
        for value in values:
            if type(value) is not str:  # a number or None would compare differently in each database
                raise TypeError(f"in_texts takes str values, not {type(value).__name__}")
        return values


def register() -> None:
    IntegerField.register_lookup(InIds)  # the auto primary keys are IntegerFields
    ForeignKey.register_lookup(InIds)
    CharField.register_lookup(InTexts)
