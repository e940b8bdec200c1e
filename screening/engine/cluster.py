"""Connected components of pairs (union-find, no Django imports), and chunks of pairs that keep them together."""

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


def chunks_by_component(pairs, size: int) -> list:
    """The pairs (an (n, 2) array of integer ids, sorted) in arrays of `size`, those of one component next to
    each other, the components in the order of their first pair: a chunk reads and hashes each of its documents
    once, so in order of the pairs alone, where a document's pairs fell into several chunks, every chunk did it
    again (a quarter more documents on the million bench's candidates)."""
    import numpy as np

    if len(pairs) == 0:
        return []
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    ends = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    nodes, at = np.unique(ends, return_inverse=True)
    at = at.reshape(ends.shape)
    graph = coo_matrix((np.ones(len(pairs), dtype=np.int8), (at[:, 0], at[:, 1])), shape=(nodes.size, nodes.size))
    _, label = connected_components(graph, directed=False)
    # Labels run in order of each component's smallest node, which is where its first pair is (pairs sorted).
    order = np.argsort(label[at[:, 0]], kind="stable")
    ordered = ends[order]
    return [ordered[i : i + size] for i in range(0, len(ordered), size)]
