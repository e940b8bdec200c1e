"""Why two documents were paired: shared shingles, raw excerpts, template share (no Django imports)."""

from __future__ import annotations

import functools

import numpy as np

from screening.engine import fast
from screening.engine.normalize import Policy
from screening.engine.shingle import ShingleSpec, shingles

MAX_ANCHORS = 8  # positions tried per k-gram: keeps 1 MB documents bounded
NEARBY = 64  # characters around the continuation of the previous run searched first
BLOCK = 32  # characters compared at once when extending a match


def shared_shingles(left: str, right: str, policy: Policy, spec: ShingleSpec, limit: int = 20) -> list[str]:
    """The `limit` smallest shingles both texts share, in sorted order: shared_shingles_reference, compiled
    for character shingles (building both sets of substrings was half a pair page's first drawing)."""
    if spec.kind != "char":
        return shared_shingles_reference(left, right, policy, spec, limit)
    normalized = policy.normalize(left)
    return [normalized[i : i + spec.k] for i in
            fast.smallest_shared(normalized, policy.normalize(right), spec.k, limit).tolist()]


def shared_shingles_reference(left: str, right: str, policy: Policy, spec: ShingleSpec,
                              limit: int = 20) -> list[str]:
    """The readable definition of shared_shingles (tests compare them)."""
    return sorted(shingles(left, policy, spec) & shingles(right, policy, spec))[:limit]


@functools.lru_cache(maxsize=4)  # a pair page asks twice: for its highlighted runs and for its excerpts
def common_runs(left: str, right: str, min_len: int) -> tuple[tuple[int, int, int], ...]:
    """Runs of at least `min_len` characters common to both raw texts, as (left_start, right_start, length),
    in left order and not overlapping on the left: common_runs_reference, compiled (it was most of the time
    a pair page took to draw)."""
    if min_len < 1 or len(left) < min_len or len(right) < min_len:
        return ()
    return tuple(map(tuple, fast.common_runs(left, right, min_len, MAX_ANCHORS, NEARBY).tolist()))


def common_runs_reference(left: str, right: str, min_len: int) -> tuple[tuple[int, int, int], ...]:
    """The readable definition of common_runs (tests compare them). Greedy: anchored on k-grams of the right
    text, each anchor extended as far as it goes; at most MAX_ANCHORS positions tried per k-gram, the
    continuation of the previous run (within NEARBY characters) first."""
    if min_len < 1 or len(left) < min_len or len(right) < min_len:
        return ()
    index: dict[str, list[int]] = {}
    for j in range(len(right) - min_len + 1):
        positions = index.setdefault(right[j : j + min_len], [])
        if len(positions) < MAX_ANCHORS:
            positions.append(j)
    runs = []
    i = 0
    last_i = last_j = None  # end of the previous run: its continuation is the likeliest partner
    while i <= len(left) - min_len:
        best_len, best_j = 0, -1
        gram = left[i : i + min_len]
        candidates = index.get(gram, ())
        if last_i is not None:
            # An edit seldom moves text far: look for the k-gram near where the last run would continue.
            expected = last_j + (i - last_i)
            start = max(0, expected - NEARBY)
            near = right.find(gram, start, expected + NEARBY + min_len)
            if near >= 0:
                candidates = (near, *candidates)
        for j in candidates:
            length = _extend(left, i, right, j, min_len)
            if length > best_len:
                best_len, best_j = length, j
        if best_len:
            runs.append((i, best_j, best_len))
            i += best_len
            last_i, last_j = i, best_j + best_len
        else:
            i += 1
    return tuple(runs)


def _extend(left: str, i: int, right: str, j: int, length: int) -> int:
    """How far the match at left[i:], right[j:] (already `length` long) goes: compared a block of
    characters at a time, then character by character."""
    end = min(len(left) - i, len(right) - j)
    while length + BLOCK <= end and left[i + length : i + length + BLOCK] == right[j + length : j + length + BLOCK]:
        length += BLOCK
    while length < end and left[i + length] == right[j + length]:
        length += 1
    return length


def raw_excerpts(left: str, right: str, min_len: int, limit: int = 5) -> list[str]:
    """The first `limit` common runs, taken from the raw left text (never the normalised one)."""
    return [left[start : start + length] for start, _, length in common_runs(left, right, min_len)[:limit]]


def template_hashes(hash_sets: list[np.ndarray], corpus_size: int, share: float, min_docs: int) -> np.ndarray:
    """Shingle hashes found in at least max(share × documents, min_docs) of the given documents.

    `hash_sets` may be a sample of the corpus (`corpus_size` documents in all); counts are scaled.
    """
    if not hash_sets:
        return np.zeros(0, dtype=np.uint64)
    values, counts = np.unique(np.concatenate(hash_sets), return_counts=True)
    scale = corpus_size / len(hash_sets)
    needed = max(share * corpus_size, min_docs)
    return values[counts * scale >= needed]


def template_scores(left: np.ndarray, right: np.ndarray, template: np.ndarray) -> tuple[float | None, float | None]:
    """(share of the shared shingles that are template shingles, Jaccard once template shingles are removed).

    All three arrays are sorted and unique (shingle hashes)."""
    shared, shared_t, left_t, right_t = fast.template_counts(left, right, template)
    share = shared_t / shared if shared else None
    union = (left.size - left_t) + (right.size - right_t) - (shared - shared_t)
    return share, (shared - shared_t) / union if union else None
