"""Small compiled helpers the engine's kernels share (numba, no Django imports): an open-addressing table
of the positions of each value in an array of 64-bit hashes, and the size of two sorted arrays' intersection.
The shingle kernels (fast) and the token diff (tokdiff) both use them; they live below both so that neither
imports the other."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def index(values):
    """An open-addressing table of the positions of each value: (slot values, first position per slot or -1,
    next position with the same value or -1). Bisection per lookup cost more than a whole token alignment
    (tokdiff), and a merge with a large template more than a document's verification."""
    keys = np.zeros(table_size(values.shape[0]), dtype=np.uint64)
    head = np.full(keys.shape[0], -1, dtype=np.int64)
    after = np.full(values.shape[0], -1, dtype=np.int64)
    index_into(values, keys, head, after)
    return keys, head, after


@njit(cache=True, nogil=True)
def first(keys, head, v):
    """The first position of v in the indexed values, or -1."""
    size = keys.shape[0]
    slot = np.int64((v ^ (v >> np.uint64(29))) & np.uint64(size - 1))
    while head[slot] >= 0:
        if keys[slot] == v:
            return head[slot]
        slot = (slot + 1) & (size - 1)
    return -1


@njit(cache=True, nogil=True)
def intersection_size(x, y):
    """|x ∩ y| for two sorted arrays, counted with repeats (for arrays of unique values, the set intersection):
    a merge without branches on the values (most pairs share little, so which side moves is a coin toss the
    processor kept mispredicting)."""
    i = j = count = 0
    while i < x.shape[0] and j < y.shape[0]:
        a, b = x[i], y[j]
        count += a == b
        i += a <= b
        j += b <= a
    return count


@njit(cache=True, nogil=True)
def table_size(n):
    """The slots of an open-addressing table for n values: a power of two, at least 16 and twice n."""
    size = 16
    while size < 2 * n:
        size *= 2
    return size


@njit(cache=True, nogil=True)
def index_into(values, keys, head, after):
    """index of values into arrays made for it (keys zero, head -1, table_size(len(values)) long or more, a
    power of two; after as long as the values): the tokeniser's batch writes many indexes into one array."""
    size = keys.shape[0]
    mask = np.uint64(size - 1)
    for i in range(values.shape[0] - 1, -1, -1):  # backwards, so each chain runs in ascending order
        v = values[i]
        slot = np.int64((v ^ (v >> np.uint64(29))) & mask)
        while head[slot] >= 0 and keys[slot] != v:
            slot = (slot + 1) & (size - 1)
        keys[slot] = v
        after[i] = head[slot]
        head[slot] = i
