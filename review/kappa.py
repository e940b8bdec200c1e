"""Cohen's kappa between two raters over the items both rated (no Django imports)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping


def cohen_kappa(a: Mapping[Hashable, str], b: Mapping[Hashable, str]) -> tuple[float | None, int]:
    """(kappa, number of items both rated). Kappa is None with no shared item, and 1.0 when both raters
    agree on every item with a single category (chance agreement is then 1 too)."""
    shared = [k for k in a if k in b]
    n = len(shared)
    if not n:
        return None, 0
    observed = sum(a[k] == b[k] for k in shared) / n
    count_a, count_b = Counter(a[k] for k in shared), Counter(b[k] for k in shared)
    expected = sum(count_a[c] * count_b[c] for c in count_a) / (n * n)
    if expected == 1.0:
        return 1.0, n
    return (observed - expected) / (1 - expected), n
