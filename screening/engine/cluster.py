"""Connected components of pairs (union-find, no Django imports)."""

from __future__ import annotations

from collections.abc import Hashable, Iterable


def components(pairs: Iterable[tuple[Hashable, Hashable]]) -> list[list]:
    """Components of the graph the pairs draw, each sorted, largest first (then by first member)."""
    parent: dict = {}

    def find(x):
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict = {}
    for x in parent:
        groups.setdefault(find(x), []).append(x)
    return sorted((sorted(g) for g in groups.values()), key=lambda g: (-len(g), g[0]))
