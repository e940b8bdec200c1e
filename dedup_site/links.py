"""Links to the site's own pages, reversed once per URL name and then filled in with each page's ids.

`reverse()` walks the URLconf's namespaces and patterns on every call (about 0.1 ms of Python); a pair page
made eight of them. The shape of a URL with integer arguments is fixed by its pattern, so it is reversed
once with marker ids, cut at the markers, and each call joins the pieces with its own ids.
"""

from __future__ import annotations

from functools import cache

from django.conf import settings
from django.urls import get_script_prefix, get_urlconf, reverse

# Ids no page links to, long enough not to occur by chance in a prefix or a path.
_MARKER = 987_654_301


@cache
def _pieces(prefix: str, urlconf: str, name: str, arity: int) -> tuple[str, ...] | None:
    url = reverse(name, urlconf=urlconf, args=[_MARKER + i for i in range(arity)])
    pieces, rest = [], url
    for i in range(arity):
        marker = str(_MARKER + i)
        if rest.count(marker) != 1:  # a pattern that repeats or transforms its argument: reverse() each time
            return None
        before, rest = rest.split(marker)
        pieces.append(before)
    return (*pieces, rest)


def link(name: str, *ids: int) -> str:
    """`reverse(name, args=ids)` for integer ids (primary keys), under the current script prefix."""
    pieces = _pieces(get_script_prefix(), get_urlconf() or settings.ROOT_URLCONF, name, len(ids))
    if pieces is None or not all(type(i) is int and i >= 0 for i in ids):
        return reverse(name, args=ids)
    out = [pieces[0]]
    for i, piece in zip(ids, pieces[1:], strict=True):
        out += (str(i), piece)
    return "".join(out)
