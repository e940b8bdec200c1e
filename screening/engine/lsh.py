"""LSH banding with explicit (b, r) (no Django imports).

`band_pairs` finds the same candidate pairs as datasketch `MinHashLSH(params=(b, r))` — two documents are
candidates when all r values of at least one band are equal — by sorting per-band keys with numpy instead
of keeping a hash table per band (a test compares the two on generated corpora).
"""

from __future__ import annotations

from typing import NamedTuple

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


_GOLDEN = 0x9E3779B97F4A7C15
_MIX = np.uint64(_GOLDEN)


def _mix(words: np.ndarray, seed: int = 0) -> np.ndarray:
    """A 64-bit multiply-xorshift hash of each row of uint32 words."""
    h = np.full(words.shape[0], (_GOLDEN * (seed + 1)) % 2**64, dtype=np.uint64)
    for column in words.T:
        h ^= column.astype(np.uint64)
        h *= _MIX
        h ^= h >> np.uint64(29)
    return h


def pairs_from_keys(keys: np.ndarray, owners: np.ndarray) -> np.ndarray:
    """Every pair of owners whose keys are equal, as an (n, 2) int64 array (smaller owner first), sorted, unique.

    `keys` holds one key a row (uint32 words); `owners[i]` owns `keys[i]`. Keys are sorted by a 64-bit hash (a
    numeric sort, quicker than sorting their bytes); each bucket of equal hashes is then checked word by word,
    and a bucket whose keys differ (a hash collision) is split by its bytes, so the pairs are exact."""
    n = keys.shape[0]
    if n < 2:
        return np.zeros((0, 2), dtype=np.int64)
    hashes = _mix(keys)
    order = np.argsort(hashes)
    hashes = hashes[order]
    boundaries = np.flatnonzero(hashes[1:] != hashes[:-1]) + 1
    starts = np.concatenate(([0], boundaries))
    sizes = np.diff(np.concatenate((starts, [n])))
    starts, sizes = starts[sizes > 1], sizes[sizes > 1]  # only buckets of two or more can pair
    owned = owners[order].astype(np.int64, copy=False)
    if not starts.size:
        return np.zeros((0, 2), dtype=np.int64)
    members = _ranges(starts, sizes)
    firsts = np.repeat(starts, sizes)
    differs = np.any(keys[order[members]] != keys[order[firsts]], axis=1)
    collided = np.zeros(starts.size, dtype=bool)
    if differs.any():
        collided[np.searchsorted(starts, np.unique(firsts[differs]))] = True
    found = []
    # Every bucket of one size at once: its members as rows of a matrix, paired by that size's triangle.
    for size in np.unique(sizes[~collided]).tolist():
        rows = starts[(sizes == size) & ~collided]
        members = np.sort(owned[rows[:, None] + np.arange(size)], axis=1)
        i, j = np.triu_indices(size, k=1)
        found.append(np.stack((members[:, i].ravel(), members[:, j].ravel()), axis=1))
    for start, size in zip(starts[collided], sizes[collided], strict=True):
        found.append(_pairs_by_bytes(keys[order[start : start + size]], owned[start : start + size]))
    return np.unique(np.concatenate(found), axis=0)


def _ranges(starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The concatenated ranges [start, start + size), without a Python loop."""
    offsets = np.repeat(starts - np.concatenate(([0], np.cumsum(sizes)[:-1])), sizes)
    return np.arange(int(sizes.sum()), dtype=np.int64) + offsets


def _all_pairs(members: np.ndarray) -> np.ndarray:
    members = np.sort(members)
    i, j = np.triu_indices(len(members), k=1)
    return np.stack((members[i], members[j]), axis=1)


def _pairs_by_bytes(keys: np.ndarray, owners: np.ndarray) -> np.ndarray:
    """The pairs of a small bucket whose keys are not all equal: group them by their words."""
    groups: dict[bytes, list[int]] = {}
    for key, owner in zip(keys, owners.tolist(), strict=True):
        groups.setdefault(key.tobytes(), []).append(owner)
    found = [_all_pairs(np.array(g, dtype=np.int64)) for g in groups.values() if len(g) > 1]
    return np.concatenate(found) if found else np.zeros((0, 2), dtype=np.int64)


class Keys(NamedTuple):
    """Band keys of one partition: each key's band, its r values and its owner."""

    bands: np.ndarray  # uint16
    values: np.ndarray  # (n, r) uint32
    owners: np.ndarray  # int64

    @classmethod
    def joined(cls, pieces: list[Keys], rows: int) -> Keys:
        pieces = [p for p in pieces if p.owners.size]
        if not pieces:
            return cls(np.zeros(0, np.uint16), np.zeros((0, rows), np.uint32), np.zeros(0, np.int64))
        return cls(*(np.concatenate(column) for column in zip(*pieces, strict=True)))


def keys_by_partition(signatures: np.ndarray, owners: np.ndarray, bands: int, rows: int, parts: int,
                      only: int | None = None) -> list[Keys]:
    """The band keys of these signatures (rows, `owners[i]` owning row i), split into the `parts` partitions a
    `Bander` of each would keep (only partition `only`, the others left empty, when it is given): the map side
    of banding, so that the signatures are read once and each partition's keys go to the task that pairs them."""
    check_bands(signatures.shape[1], bands, rows)
    owners = np.asarray(owners, dtype=np.int64)
    chosen_parts = range(parts) if only is None else [only]
    per: list[list[Keys]] = [[] for _ in range(parts)]
    for band in range(bands):
        values = signatures[:, band * rows : (band + 1) * rows]
        part_of = _partition(values[:, 0], band, parts) if parts > 1 else np.zeros(len(values), np.uint64)
        for part in chosen_parts:
            chosen = np.flatnonzero(part_of == part)
            per[part].append(Keys(np.full(chosen.size, band, np.uint16),
                                  np.ascontiguousarray(values[chosen], dtype=np.uint32), owners[chosen]))
    return [Keys.joined(pieces, rows) for pieces in per]


class Bander:
    """Band keys gathered over batches of signatures, then paired: two owners are candidates when all r values
    of at least one band are equal.

    With `parts` > 1 it keeps only the keys of partition `part`: each key (a band's number and its r values)
    goes to one partition by a hash, so equal keys always meet in the same partition, the union of every
    partition's pairs is exactly that of one `Bander` over everything, and each holds bands × documents ÷ parts
    keys. A job can then band a partition over every document of a corpus with its memory bounded."""

    def __init__(self, bands: int, rows: int, part: int = 0, parts: int = 1):
        if not 0 <= part < parts:
            raise ValueError(f"partition {part} of {parts}")
        self.bands, self.rows, self.part, self.parts = bands, rows, part, parts
        self._keys: list[list[np.ndarray]] = [[] for _ in range(bands)]
        self._owners: list[list[np.ndarray]] = [[] for _ in range(bands)]
        self.keys = 0

    def add(self, signatures: np.ndarray, owners: np.ndarray) -> None:
        """Take the keys of these signatures (rows), each row owned by `owners[i]` (a document id or index)."""
        check_bands(signatures.shape[1], self.bands, self.rows)
        for band in range(self.bands):
            values = signatures[:, band * self.rows : (band + 1) * self.rows]
            if self.parts > 1:
                chosen = np.flatnonzero(_partition(values[:, 0], band, self.parts) == self.part)
                values, mine = values[chosen], owners[chosen]
            else:
                mine = owners
            self._keys[band].append(np.ascontiguousarray(values, dtype=np.uint32))
            self._owners[band].append(np.asarray(mine, dtype=np.int64))
            self.keys += values.shape[0]

    def add_keys(self, keys: Keys) -> None:
        """Take band keys already split by partition (`keys_by_partition`): the reduce side of banding."""
        for band in np.unique(keys.bands).tolist():
            chosen = np.flatnonzero(keys.bands == band)
            self._keys[band].append(keys.values[chosen])
            self._owners[band].append(keys.owners[chosen])
            self.keys += chosen.size

    def pairs(self) -> np.ndarray:
        """The candidate pairs (smaller owner first) as an (n, 2) int64 array, sorted, unique."""
        found = [np.zeros((0, 2), dtype=np.int64)]
        for band in range(self.bands):
            if self._keys[band]:
                keys, owners = np.concatenate(self._keys[band]), np.concatenate(self._owners[band])
                self._keys[band], self._owners[band] = [], []  # each band's memory goes as it is paired
                found.append(pairs_from_keys(keys, owners))
        return np.unique(np.concatenate(found), axis=0)


def _partition(first_values: np.ndarray, band: int, parts: int) -> np.ndarray:
    """A key's partition, from its band and its first value alone (equal keys share both): a MinHash value is
    already a hash, but minima crowd near zero, so it is mixed once before the modulo."""
    mixed = (first_values.astype(np.uint64) + np.uint64(band)) * _MIX
    return (mixed >> np.uint64(32)) % np.uint64(parts)


def band_pairs(signatures: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """All candidate pairs (i < j, row indexes into `signatures`) as an (n, 2) int64 array, sorted, unique."""
    bander = Bander(bands, rows)
    bander.add(signatures, np.arange(signatures.shape[0], dtype=np.int64))
    return bander.pairs()


def parts_for(documents: int, bands: int, keys_per_part: int) -> int:
    """How many partitions keep each one at or under `keys_per_part` band keys."""
    return max(1, -(-documents * bands // max(1, keys_per_part)))
