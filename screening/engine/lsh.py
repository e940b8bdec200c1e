"""LSH banding with explicit (b, r) (no Django imports).

`band_pairs` finds the same candidate pairs as datasketch `MinHashLSH(params=(b, r))` — two documents are
candidates when all r values of at least one band are equal — by sorting per-band keys with numpy instead
of keeping a hash table per band (a test compares the two on generated corpora).
"""

from __future__ import annotations

import numpy as np


def candidate_probability(similarity: float, bands: int, rows: int) -> float:
    """P(a pair with this Jaccard shares at least one band) = 1 - (1 - s^r)^b."""
    return 1.0 - (1.0 - similarity**rows) ** bands


def choose_bands(num_perm: int, threshold: float, target: float = 0.99) -> tuple[int, int]:
    """The (b, r) with b·r = num_perm and the most rows (fewest false candidates) such that a pair exactly
    at the threshold becomes a candidate with probability >= target."""
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold {threshold} must be in (0, 1]")
    best = (num_perm, 1)
    for rows in range(1, num_perm + 1):
        if num_perm % rows == 0 and candidate_probability(threshold, num_perm // rows, rows) >= target:
            best = (num_perm // rows, rows)
    return best


def check_bands(num_perm: int, bands: int, rows: int) -> None:
    if bands < 1 or rows < 1 or bands * rows != num_perm:
        raise ValueError(f"bands × rows must equal num_perm: {bands} × {rows} ≠ {num_perm}")


def _band_keys(signatures: np.ndarray, band: int, rows: int) -> np.ndarray:
    """One 128-bit key per row of the band, as a structured view so equal keys mean equal values."""
    chunk = np.ascontiguousarray(signatures[:, band * rows : (band + 1) * rows])
    return chunk.view(np.dtype((np.void, chunk.dtype.itemsize * rows))).ravel()


def band_pairs(signatures: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """All candidate pairs (i < j, row indexes into `signatures`) as an (n, 2) int64 array, sorted, unique."""
    n = signatures.shape[0]
    check_bands(signatures.shape[1], bands, rows)
    found = []
    for band in range(bands):
        keys = _band_keys(signatures, band, rows)
        order = np.argsort(keys, kind="stable")
        ordered = keys[order]
        boundaries = np.flatnonzero(ordered[1:] != ordered[:-1]) + 1
        starts = np.concatenate(([0], boundaries))
        ends = np.concatenate((boundaries, [n]))
        sizes = ends - starts
        # Buckets of two are the most common by far: take them all at once, loop only over larger ones.
        a, b = order[starts[sizes == 2]], order[starts[sizes == 2] + 1]
        found.append(np.stack((np.minimum(a, b), np.maximum(a, b)), axis=1))
        for start, end in zip(starts[sizes > 2], ends[sizes > 2], strict=True):
            members = np.sort(order[start:end])
            i, j = np.triu_indices(len(members), k=1)
            found.append(np.stack((members[i], members[j]), axis=1))
    if not found:
        return np.zeros((0, 2), dtype=np.int64)
    return np.unique(np.concatenate(found).astype(np.int64), axis=0)
