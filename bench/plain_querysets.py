"""The site with every kept query (dedup_site.prepared.Prepared) answered by its plain queryset instead:
built, compiled and run anew on each call, as a page without dedup_site.prepared would. For measuring
what the kept queries save: `bench/load.py --app bench.plain_querysets:application`."""

from __future__ import annotations

from dedup_site.prepared import Prepared


def _rows(self, *values):
    self._with(values)  # the same checks of the values' count and list lengths
    return list(self._build(*values))


def _objects(self, *values):
    self._with(values)
    return list(self._build(*values))


Prepared.rows, Prepared.objects = _rows, _objects

from dedup_site.wsgi import application  # noqa: E402 - after the patch, so every page runs with it

__all__ = ["application"]
