"""Compiled kernels (numba) for the hot loops: shingle hashes, MinHash signatures, Jaccard of hash sets.

They compute exactly what the readable reference does: `shingle.shingle_hash64` (signing) and
`shingle.verify_hash64` (keyed, for exact Jaccard) for every shingle, and the signature datasketch
`MinHash(num_perm, seed, hashfunc=shingle_hash32)` (scheme affine32) gives for the same shingles — tests
compare them value for value.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
from numba import njit

from screening.engine import foldtable
from screening.engine.kernels import first as _first
from screening.engine.kernels import index as _index
from screening.engine.kernels import intersection_size
from screening.engine.normalize import Policy
from screening.engine.shingle import P61, POLY, ShingleSpec, VerifyKey

_EMPTY = np.zeros(0, dtype=np.uint64)


@njit(cache=True, nogil=True)
def _fmix64(h):
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(33)
    return h


@njit(cache=True, nogil=True)
def _window_hashes(cp, starts, ends):
    """shingle_hash64 of cp[starts[i]:ends[i]] for every i (polynomial hash via prefixes), in window order."""
    n = cp.shape[0]
    prefix = np.empty(n + 1, dtype=np.uint64)
    prefix[0] = 0
    p = np.uint64(POLY)
    for i in range(n):
        prefix[i + 1] = prefix[i] * p + np.uint64(cp[i])
    longest = 0
    for i in range(starts.shape[0]):
        if ends[i] - starts[i] > longest:
            longest = ends[i] - starts[i]
    powers = np.empty(longest + 1, dtype=np.uint64)
    powers[0] = 1
    for i in range(longest):
        powers[i + 1] = powers[i] * p
    out = np.empty(starts.shape[0], dtype=np.uint64)
    for i in range(starts.shape[0]):
        left, right = starts[i], ends[i]
        out[i] = _fmix64(prefix[right] - prefix[left] * powers[right - left])
    return out


@njit(cache=True, nogil=True)
def _mulmod61(a, b):
    """a * b mod 2^61 − 1 for a, b < 2^61, in 64-bit halves (numba has no 128-bit integers)."""
    p = np.uint64(P61)
    low32 = np.uint64(0xFFFFFFFF)
    a_hi, a_lo = a >> np.uint64(32), a & low32
    b_hi, b_lo = b >> np.uint64(32), b & low32
    lo = a_lo * b_lo  # < 2^64
    mid = a_hi * b_lo + a_lo * b_hi  # < 2^62
    hi = a_hi * b_hi  # < 2^58
    # hi·2^64 + mid·2^32 + lo, with 2^64 ≡ 8 and 2^61 ≡ 1 (mod p)
    r = ((lo & p) + (lo >> np.uint64(61)) + (hi << np.uint64(3)) + (mid >> np.uint64(29))
         + ((mid & np.uint64(0x1FFFFFFF)) << np.uint64(32)))
    r = (r & p) + (r >> np.uint64(61))
    if r >= p:
        r -= p
    return r


@njit(cache=True, nogil=True)
def _keyed_window_hashes(cp, starts, ends, base, mask):
    """verify_hash64 of cp[starts[i]:ends[i]] for every i (prefix hashes mod 2^61 − 1), in window order."""
    n = cp.shape[0]
    p = np.uint64(P61)
    prefix = np.empty(n + 1, dtype=np.uint64)
    prefix[0] = 0
    for i in range(n):
        v = _mulmod61(prefix[i], base) + np.uint64(cp[i]) + np.uint64(1)
        prefix[i + 1] = v - p if v >= p else v
    longest = 0
    for i in range(starts.shape[0]):
        if ends[i] - starts[i] > longest:
            longest = ends[i] - starts[i]
    powers = np.empty(longest + 1, dtype=np.uint64)
    powers[0] = 1
    for i in range(longest):
        powers[i + 1] = _mulmod61(powers[i], base)
    out = np.empty(starts.shape[0], dtype=np.uint64)
    for i in range(starts.shape[0]):
        left, right = starts[i], ends[i]
        h = prefix[right] + p - _mulmod61(prefix[left], powers[right - left])
        if h >= p:
            h -= p
        out[i] = _fmix64(h ^ mask)
    return out


def _sorted_unique(values: np.ndarray) -> np.ndarray:
    """Sorted, without repeats: numpy's sort (a radix sort for integers) is six times numba's here."""
    if values.shape[0] < 2:
        return values
    values.sort()
    keep = np.empty(values.shape[0], dtype=np.bool_)
    keep[0] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]


@njit(cache=True, nogil=True)
def _minhash32(hashes, a, b):
    """datasketch affine32: fmix32 of the 32-bit input, then min over a*h+b mod 2^32 per permutation."""
    num_perm = a.shape[0]
    mask = np.uint64(0xFFFFFFFF)
    out = np.full(num_perm, np.uint32(0xFFFFFFFF), dtype=np.uint32)
    for i in range(hashes.shape[0]):
        y = _fmix32(np.uint32(hashes[i] & mask))
        for k in range(num_perm):
            # min(), not a compare and store: LLVM turns it into vector minimums.
            out[k] = min(out[k], np.uint32(a[k] * y + b[k]))
    return out


@njit(cache=True, nogil=True)
def template_counts(x, y, template):
    """For sorted unique x, y and template: (|x∩y|, |x∩y∩T|, |x∩T|, |y∩T|), by merges and binary search."""
    shared = shared_t = 0
    i = j = 0
    m = template.shape[0]
    while i < x.shape[0] and j < y.shape[0]:
        if x[i] == y[j]:
            shared += 1
            k = np.searchsorted(template, x[i])
            if k < m and template[k] == x[i]:
                shared_t += 1
            i += 1
            j += 1
        elif x[i] < y[j]:
            i += 1
        else:
            j += 1
    return shared, shared_t, intersection_size(x, template), intersection_size(y, template)


@njit(cache=True, nogil=True)
def _run_length(a, i, b, j, length):
    """How far the match at a[i:], b[j:] (already `length` long) goes."""
    end = min(a.shape[0] - i, b.shape[0] - j)
    while length < end and a[i + length] == b[j + length]:
        length += 1
    return length


@njit(cache=True, nogil=True)
def _same(a, i, b, j, k):
    for t in range(k):
        if a[i + t] != b[j + t]:
            return False
    return True


@njit(cache=True, nogil=True)
def _common_runs(a, b, ha, hb, keys, head, after, k, anchors, nearby):
    """explain.common_runs_reference over code points: ha, hb are the k-gram hashes of a and b, (keys, head,
    after) _index(hb). Hashes only pick candidates; every match is checked character by character."""
    out = np.empty((a.shape[0] // k + 1, 3), dtype=np.int64)
    m = 0
    i = 0
    last_i, last_j = -1, 0
    while i <= a.shape[0] - k:
        h = ha[i]
        best_len, best_j = 0, -1
        if last_i >= 0:  # the first occurrence near where the previous run would continue is tried first
            expected = last_j + (i - last_i)
            j = max(0, expected - nearby)
            stop = min(expected + nearby + k, b.shape[0]) - k
            while j <= stop:
                if hb[j] == h and _same(a, i, b, j, k):
                    best_len, best_j = _run_length(a, i, b, j, k), j
                    break
                j += 1
        j = _first(keys, head, h)
        found = 0
        while j >= 0 and found < anchors:  # then the first `anchors` occurrences anywhere
            if _same(a, i, b, j, k):
                found += 1
                length = _run_length(a, i, b, j, k)
                if length > best_len:
                    best_len, best_j = length, j
            j = after[j]
        if best_len:
            out[m, 0], out[m, 1], out[m, 2] = i, best_j, best_len
            m += 1
            i += best_len
            last_i, last_j = i, best_j + best_len
        else:
            i += 1
    return out[:m]


def _windows_of(left: str, right: str, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Both texts' code points and the hashes of their k-character windows, for kernels whose hashes only
    pick candidates (every match is checked character by character)."""
    a, b = (np.frombuffer(t.encode("utf-32-le", "surrogatepass"), dtype=np.uint32) for t in (left, right))
    base, mask = np.uint64(0x1F3D5B79A1C3E5), np.uint64(0)  # any base below 2^61 − 1
    ha, hb = (_keyed_window_hashes(x, np.arange(x.shape[0] - k + 1, dtype=np.int64),
                                   np.arange(k, x.shape[0] + 1, dtype=np.int64), base, mask) for x in (a, b))
    return a, b, ha, hb


def common_runs(left: str, right: str, k: int, anchors: int, nearby: int) -> np.ndarray:
    """explain.common_runs_reference, compiled: rows (left_start, right_start, length)."""
    a, b, ha, hb = _windows_of(left, right, k)
    return _common_runs(a, b, ha, hb, *_index(hb), k, anchors, nearby)


@njit(cache=True, nogil=True)
def _less(a, i, b, j, k):
    """a[i:i+k] < b[j:j+k], by code points (as Python orders strings of one length)."""
    for t in range(k):
        if a[i + t] != b[j + t]:
            return a[i + t] < b[j + t]
    return False


@njit(cache=True, nogil=True)
def _smallest_shared(a, b, ha, keys, head, after, k, limit):
    """Left positions of the `limit` smallest distinct k-grams of a that b also has, smallest first. A
    k-gram not below the largest kept one is passed over before any lookup; a hash only picks candidates,
    each checked character by character."""
    best = np.empty(limit, dtype=np.int64)
    count = 0
    for i in range(a.shape[0] - k + 1):
        if count == limit and not _less(a, i, a, best[count - 1], k):
            continue
        j = _first(keys, head, ha[i])
        while j >= 0 and not _same(a, i, b, j, k):
            j = after[j]
        if j < 0:
            continue
        at = count
        while at > 0 and _less(a, i, a, best[at - 1], k):
            at -= 1
        if at > 0 and _same(a, i, a, best[at - 1], k):
            continue  # already kept
        if count < limit:
            count += 1
        for q in range(count - 1, at, -1):
            best[q] = best[q - 1]
        best[at] = i
    return best[:count]


def smallest_shared(left: str, right: str, k: int, limit: int) -> np.ndarray:
    """Where in `left` the `limit` smallest distinct k-character substrings shared with `right` start,
    smallest first: explain.shared_shingles_reference's answer for character shingles, without building
    either text's set of substrings."""
    if limit < 1 or k < 1 or len(left) < k or len(right) < k:
        return np.empty(0, dtype=np.int64)
    a, b, ha, hb = _windows_of(left, right, k)
    return _smallest_shared(a, b, ha, *_index(hb), k, limit)


def template_index(template: np.ndarray) -> tuple[np.ndarray, int, int, np.ndarray]:
    """The template shingles as (table, b1, b2, multipliers) for pair_counts and template_count (made once per
    verification job): a cuckoo table of two parts, each shingle in one of them, in the first (2^b1 slots) at the
    top b1 bits of it times multipliers[0] (1 unless the first try failed: a document's sorted shingles then
    read the first part in order), or in the second (2^b2) at the top b2 bits of it times multipliers[1], every
    free slot holding a template shingle too, so that a lookup is two loads and two compares without a branch,
    which the compiler turns into vector gathers. Behind a bitmap with a branch a shingle (bench/HISTORY.md)
    lookups were half as fast again, a quarter of the shingles being template ones (a coin toss to the
    processor)."""
    values = np.ascontiguousarray(template, dtype=np.uint64)  # np.unique would cost more than all the rest here
    bits = max(int(values.shape[0] - 1).bit_length(), 2)
    for attempt in itertools.count():
        # The first multipliers almost always do; a failure draws others, and every other one a larger table
        # (odd multipliers, so that distinct values stay distinct).
        b1, b2 = bits + 1 + attempt // 2, bits - 1 + attempt // 2
        multipliers = _fmix64(np.arange(2 * attempt + 1, 2 * attempt + 3, dtype=np.uint64)) | np.uint64(1)
        if attempt == 0:
            multipliers[0] = 1
        table = _cuckoo(values, b1, b2, multipliers[0], multipliers[1])
        if table.shape[0] or not values.shape[0]:
            return table, b1, b2, multipliers
    raise AssertionError("unreachable")


@njit(cache=True, nogil=True)
def _cuckoo(values, b1, b2, m1, m2):
    """template_index's table: empty when some value found no place after many moves (or there are none)."""
    n1, n2 = 1 << b1, 1 << b2
    table = np.empty(n1 + n2, dtype=np.uint64)
    used = np.zeros(n1 + n2, dtype=np.bool_)
    for v0 in values:
        v, first, placed = v0, True, False
        one, two = np.int64((v * m1) >> np.uint64(64 - b1)), n1 + np.int64((v * m2) >> np.uint64(64 - b2))
        if (used[one] and table[one] == v) or (used[two] and table[two] == v):
            continue  # a repeat
        for _ in range(500):  # a value displaced goes to its other slot
            slot = np.int64((v * m1) >> np.uint64(64 - b1)) if first else n1 + np.int64((v * m2) >> np.uint64(64 - b2))
            if not used[slot]:
                table[slot], used[slot], placed = v, True, True
                break
            table[slot], v = v, table[slot]
            first = slot >= n1  # the displaced value was in the second part: its other slot is in the first
        if not placed:
            return table[:0]
    for s in range(n1 + n2):
        if not used[s]:
            table[s] = values[0]  # finding it there is a true answer
    return table[: n1 + n2 if values.shape[0] else 0]


@njit(cache=True, nogil=True)
def _template_hits(x, lo, hi, table, b1, b2, multipliers):
    """How many of x[lo:hi] are template shingles (template_index's table): no branch a value."""
    if table.shape[0] == 0:
        return 0
    s1, s2, m1, m2, n1 = np.uint64(64 - b1), np.uint64(64 - b2), multipliers[0], multipliers[1], 1 << b1
    count = 0
    for i in range(lo, hi):
        v = x[i]
        count += (table[np.int64((v * m1) >> s1)] == v) | (table[n1 + np.int64((v * m2) >> s2)] == v)
    return count


@njit(cache=True, nogil=True)
def template_count(x, table, b1, b2, multipliers):
    """|x ∩ T|, T the template (template_index's table)."""
    return _template_hits(x, 0, x.shape[0], table, b1, b2, multipliers)


@njit(cache=True, nogil=True)
def _pair_counts(x, y, table, b1, b2, multipliers, shared_values):
    """pair_counts, the shared shingles written into shared_values (room for the smaller set) on the way: one
    merge without a branch on the values, then the template looked up for those only (most candidates share
    few: a lookup for every shingle of every document was much of verification)."""
    i = j = shared = 0
    while i < x.shape[0] and j < y.shape[0]:
        a, b = x[i], y[j]
        shared_values[shared] = a
        shared += a == b
        i += a <= b
        j += b <= a
    return shared, _template_hits(shared_values, 0, shared, table, b1, b2, multipliers)


@njit(cache=True, nogil=True)
def pair_counts(x, y, table, b1, b2, multipliers):
    """(|x ∩ y|, |x ∩ y ∩ T|) for sorted unique x and y, T the template (template_index's table)."""
    return _pair_counts(x, y, table, b1, b2, multipliers, np.empty(min(x.shape[0], y.shape[0]) + 1, dtype=np.uint64))


@njit(cache=True, nogil=True)
def pair_counts_many(hashes, offsets, left, right, table, b1, b2, multipliers):
    """pair_counts of many pairs in one call: the documents' hashes one after another (document d's are
    hashes[offsets[d]:offsets[d + 1]]), a pair's documents left[p] and right[p]; rows (|x ∩ y|, |x ∩ y ∩ T|)."""
    out = np.empty((left.shape[0], 2), dtype=np.int64)
    longest = 0
    for d in range(offsets.shape[0] - 1):
        longest = max(longest, offsets[d + 1] - offsets[d])
    shared_values = np.empty(longest + 1, dtype=np.uint64)
    for p in range(left.shape[0]):
        a, b = left[p], right[p]
        out[p, 0], out[p, 1] = _pair_counts(hashes[offsets[a]:offsets[a + 1]], hashes[offsets[b]:offsets[b + 1]],
                                            table, b1, b2, multipliers, shared_values)
    return out


@njit(cache=True, nogil=True)
def template_count_many(hashes, offsets, docs, table, b1, b2, multipliers):
    """template_count of each of these documents (laid out as for pair_counts_many) in one call."""
    out = np.empty(docs.shape[0], dtype=np.int64)
    for k in range(docs.shape[0]):
        out[k] = _template_hits(hashes, offsets[docs[k]], offsets[docs[k] + 1], table, b1, b2, multipliers)
    return out


def jaccard(x: np.ndarray, y: np.ndarray) -> float | None:
    """Jaccard of two shingle-hash sets (sorted, unique); None when both are empty."""
    shared = intersection_size(x, y)
    union = x.shape[0] + y.shape[0] - shared
    return shared / union if union else None


def _windows(text: str, policy: Policy, spec: ShingleSpec):
    """The code points the shingles are cut from and each shingle's (start, end), or None without shingles."""
    cp = foldtable.normalized_codepoints(text, policy, words=spec.kind == "word")
    if spec.kind == "char":
        count = cp.shape[0] - spec.k + 1
        if count <= 0:
            return None
        starts = np.arange(count, dtype=np.int64)
        return cp, starts, starts + spec.k
    if cp.shape[0] == 0:
        return None
    spaces = np.flatnonzero(cp == 32)  # words are joined by single spaces and hold none
    word_starts = np.concatenate(([0], spaces + 1))
    word_ends = np.concatenate((spaces, [cp.shape[0]]))
    count = word_starts.shape[0] - spec.k + 1
    if count <= 0:
        return None
    return cp, word_starts[:count], word_ends[spec.k - 1 :]


def shingle_hashes(text: str, policy: Policy, spec: ShingleSpec) -> np.ndarray:
    """Sorted unique signing hashes (shingle_hash64) of the shingle set of a raw text (empty without shingles)."""
    windows = _windows(text, policy, spec)
    return _EMPTY if windows is None else _sorted_unique(_window_hashes(*windows))


def verify_hashes(text: str, policy: Policy, spec: ShingleSpec, key: VerifyKey) -> np.ndarray:
    """Sorted unique keyed verification hashes (verify_hash64) of the shingle set: what exact Jaccard,
    template scores and the audit compare, which crafted text cannot collide without the key."""
    windows = _windows(text, policy, spec)
    if windows is None:
        return _EMPTY
    return _sorted_unique(_keyed_window_hashes(*windows, np.uint64(key.base), np.uint64(key.mask)))


BMP = 0x10000


@njit(cache=True, nogil=True)
def _build_key_table(base, k):
    powers = np.empty(k, dtype=np.uint64)
    powers[0] = 1
    for j in range(1, k):
        powers[j] = _mulmod61(powers[j - 1], base)
    table = np.empty((BMP, k), dtype=np.uint64)
    for c in range(BMP):
        for j in range(k):
            table[c, j] = _mulmod61(np.uint64(c + 1), powers[k - 1 - j])
    return table


@functools.cache
def _key_table(base: int, k: int) -> np.ndarray:
    """(c + 1)·base^(k − 1 − j) mod 2^61 − 1 for every BMP code point c (row) and position j < k: a character
    k-gram's polynomial is then the sum of k entries, instead of a chain of multiplications mod p, each waiting
    for the last. Built once per process and key."""
    return _build_key_table(np.uint64(base), k)


FINISHED, TO_POLICY, UNSORTED, NO_ROOM = 0, 1, 2, 3  # why _keyed_chars stopped


@njit(cache=True, nogil=True)
def _keyed_chars(cp, offsets, first, kind, start, length, ccc, pool, alnum, pairs, simple, k, table, mask, scratch,
                 out, ends, spare, counts):
    """verify_hash64 of every character k-gram of each text from `first` on, sorted and without repeats, one text
    after another into `out` from ends[first] on, text d's ending at ends[d + 1]. Stops at a text it cannot
    finish: returns (d, why), why TO_POLICY (the table cannot normalise it, or it normalises beyond the BMP:
    nothing written), UNSORTED (its hashes written in window order up to ends[d + 1]: the caller sorts them) or
    NO_ROOM (`out` is too small for it); (number of texts, FINISHED) when all are done. `table` is _key_table's,
    flattened; `spare` and `counts` are _sort_unique's room, for the longest text."""
    pos = ends[first]
    for d in range(first, offsets.shape[0] - 1):
        # fold_field is map_text without words, its `simple` entry one lookup a code point where map_text's
        # general path makes six (most of the corpus is not ASCII).
        n = foldtable.fold_field(cp, offsets[d], offsets[d + 1], kind, start, length, ccc, pool, alnum, pairs, simple,
                                 scratch, 0)
        seen = np.uint32(0)
        for i in range(max(n, 0)):
            seen |= scratch[i]  # an OR the compiler vectorises, not a test and store a code point
        if n < 0 or seen >= BMP:
            return d, TO_POLICY
        count = n - k + 1
        if count > 0:
            if pos + count > out.shape[0]:
                return d, NO_ROOM
            _hash_windows(scratch, count, k, table, mask, out, pos)
            kept = _sort_unique(out, pos, pos + count, spare, counts)
            if kept < 0:
                ends[d + 1] = pos + count
                return d, UNSORTED
            pos += kept
        ends[d + 1] = pos
    return offsets.shape[0] - 1, FINISHED


@njit(cache=True, nogil=True)
def _hash_windows(cp, count, k, table, mask, out, pos):
    """verify_hash64 of the `count` windows of k code points of cp into out[pos:], by the flattened key table."""
    p = np.uint64(P61)
    if k == 5:
        # The default k written out, each code point's row found once and carried along: a third faster than
        # the loop over k on numba's two-dimensional table (bench/HISTORY.md).
        c1, c2, c3, c4 = np.int64(cp[0]) * 5, np.int64(cp[1]) * 5, np.int64(cp[2]) * 5, np.int64(cp[3]) * 5
        for w in range(count):
            c0, c1, c2, c3, c4 = c1, c2, c3, c4, np.int64(cp[w + 4]) * 5
            h = table[c0] + table[c1 + 1] + table[c2 + 2] + table[c3 + 3] + table[c4 + 4]
            h = (h & p) + (h >> np.uint64(61))  # five terms below 2^61: one fold leaves it below p + 5
            out[pos + w] = _fmix64((h - p if h >= p else h) ^ mask)
        return
    for w in range(count):
        h = np.uint64(0)
        for j in range(k):  # k terms below 2^61: no overflow for k ≤ 8
            h += table[np.int64(cp[w + j]) * k + j]
        h = (h & p) + (h >> np.uint64(61))
        h = (h & p) + (h >> np.uint64(61))
        out[pos + w] = _fmix64((h - p if h >= p else h) ^ mask)


@njit(cache=True, nogil=True)
def _sort_unique(values, lo, hi, spare, counts):
    """Sort values[lo:hi] and drop repeats in place, for values spread evenly over uint64 (keyed, mixed hashes):
    a bucket per value by its top bits, then an insertion sort that moves each value within its bucket only.
    Returns how many are left, or -1 (values untouched) when the insertion sort takes more than a few moves a
    value, as many different values repeated would make it: the caller sorts those. Faster than numpy's sort of a
    text's hashes, which was much of verifying it (bench/HISTORY.md)."""
    n = hi - lo
    if n < 2:
        return n
    bits = 1
    while (1 << bits) < n:
        bits += 1
    shift = np.uint64(64 - bits)
    buckets = 1 << bits
    for b in range(buckets + 1):
        counts[b] = 0
    for i in range(lo, hi):
        counts[np.int64(values[i] >> shift) + 1] += 1
    for b in range(buckets):
        counts[b + 1] += counts[b]
    for i in range(lo, hi):
        b = np.int64(values[i] >> shift)
        spare[counts[b]] = values[i]
        counts[b] += 1
    moves, budget = 0, 4 * n + 64
    top = spare[0]
    for i in range(1, n):
        # Each value swapped with the one before it without a branch (an eighth are out of order, as often in a
        # bucket of two, which the processor could not foresee), then moved further back, as it seldom is.
        v = spare[i]
        low = min(top, v)
        spare[i - 1] = low
        top = max(top, v)
        spare[i] = top
        if i >= 2 and spare[i - 2] > low:
            j = i - 2
            while j >= 0 and spare[j] > low:
                spare[j + 1] = spare[j]
                j -= 1
            spare[j + 1] = low
            moves += i - 2 - j
            if moves > budget:
                return -1
    kept = 1
    values[lo] = spare[0]
    for i in range(1, n):  # without a branch: whether a value repeats the last one is a coin toss to the CPU
        values[lo + kept] = spare[i]
        kept += spare[i] != spare[i - 1]
    return kept


def verify_hashes_many(texts: list[str], policy: Policy, spec: ShingleSpec, key: VerifyKey) -> list[np.ndarray]:
    """verify_hashes of each text, a batch in one compiled pass for character shingles (k ≤ 8)."""
    return verify_hashes_laid(texts, policy, spec, key)[0]


def verify_hashes_laid(texts: list[str], policy: Policy, spec: ShingleSpec, key: VerifyKey
                       ) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """verify_hashes_many, and the hashes one after another with where each text's begin (text d's are
    laid[offsets[d]:offsets[d + 1]]): as the compiled pass left them when one pass did them all, else copied."""
    found = _verify_hashes_batch(texts, policy, spec, key)
    if isinstance(found, tuple):
        return found
    offsets = np.zeros(len(found) + 1, dtype=np.int64)
    np.cumsum(np.fromiter((h.shape[0] for h in found), dtype=np.int64, count=len(found)), out=offsets[1:])
    return found, np.concatenate([_EMPTY, *found]), offsets


def _verify_hashes_batch(texts: list[str], policy: Policy, spec: ShingleSpec, key: VerifyKey):
    """verify_hashes of each text; with the hashes laid out and their offsets when the compiled pass did them, in
    the order of the texts. A text the pass cannot finish is hashed (or sorted) here and put in its place, and the
    pass goes on after it (main copied every text's hashes to put one in its place)."""
    if spec.kind != "char" or spec.k > 8 or not texts:
        return [verify_hashes(text, policy, spec, key) for text in texts]
    t = foldtable.table_for(policy)
    cp, offsets = _batch(texts)
    widest = t.widest * int(np.diff(offsets).max()) + 64
    scratch = np.empty(widest, dtype=np.uint32)
    spare, counts = np.empty(widest, dtype=np.uint64), np.empty(2 * widest + 2, dtype=np.int64)
    out = np.empty(2 * cp.shape[0] + 64, dtype=np.uint64)  # a text rarely folds longer than twice itself
    ends = np.zeros(len(texts) + 1, dtype=np.int64)
    table, mask = _key_table(key.base, spec.k).ravel(), np.uint64(key.mask)
    first = 0
    while True:
        first, why = _keyed_chars(cp, offsets, first, t.kind, t.start, t.length, t.ccc, t.pool, t.alnum, t.pairs,
                                  t.simple, spec.k, table, mask, scratch, out, ends, spare, counts)
        if why == FINISHED:
            break
        begin = ends[first]
        if why == NO_ROOM:
            out = np.concatenate((out[:begin], np.empty(out.shape[0] + widest, dtype=np.uint64)))
            continue
        hashes = verify_hashes(texts[first], policy, spec, key) if why == TO_POLICY else _sorted_unique(
            out[begin : ends[first + 1]])
        if begin + hashes.shape[0] > out.shape[0]:
            out = np.concatenate((out[:begin], np.empty(out.shape[0] + hashes.shape[0], dtype=np.uint64)))
        out[begin : begin + hashes.shape[0]] = hashes
        ends[first + 1] = begin + hashes.shape[0]
        first += 1
    # Copied out, and `out` freed here: kept as the hashes' buffer, or made smaller, it left glibc's thresholds
    # such that the token kernels' fresh arrays faulted their pages in each window (5 µs a candidate, more than
    # the copy's 1; bench/HISTORY.md).
    laid, bounds = out[: ends[-1]].copy(), ends.tolist()
    return [laid[a:b] for a, b in zip(bounds, bounds[1:], strict=False)], laid, ends


@njit(cache=True, nogil=True)
def _fmix32(h):
    h ^= h >> np.uint32(16)
    h = np.uint32(h * np.uint32(0x85EBCA6B))
    h ^= h >> np.uint32(13)
    h = np.uint32(h * np.uint32(0xC2B2AE35))
    h ^= h >> np.uint32(16)
    return h


@njit(cache=True, nogil=True)
def _sign_chars(cp, offsets, normalize, kind, start, length, ccc, pool, alnum, pairs, k, a, b, scratch, seen, stamps,
                sigs, counts):
    """For each text of a batch (cp[offsets[d]:offsets[d + 1]]): normalise it through the table (unless
    `normalize` is off: the text is normalised already), hash its character k-grams (shingle_hash64, rolled
    along the text), count the distinct ones and fold each into the MinHash signature, in one pass.
    counts[d] = -1 when the table cannot normalise the text (foldtable: the policy must)."""
    p = np.uint64(POLY)
    pk = np.uint64(1)
    for _ in range(k):
        pk = pk * p
    mask32 = np.uint64(0xFFFFFFFF)
    num = a.shape[0]
    slots = np.uint64(seen.shape[0] - 1)
    for d in range(offsets.shape[0] - 1):
        row = sigs[d]
        for j in range(num):
            row[j] = np.uint32(0xFFFFFFFF)
        if normalize:
            n = foldtable.map_text(cp, offsets[d], offsets[d + 1], kind, start, length, ccc, pool, alnum, pairs,
                                   False, scratch)
            if n < 0:
                counts[d] = -1
                continue
            text, base = scratch, 0
        else:
            text, base, n = cp, offsets[d], offsets[d + 1] - offsets[d]
        if n < k:
            counts[d] = 0
            continue
        h = np.uint64(0)
        for i in range(k):
            h = h * p + np.uint64(text[base + i])
        distinct = 0
        stamp = np.int32(d + 1)
        for w in range(n - k + 1):
            if w > 0:
                h = h * p - np.uint64(text[base + w - 1]) * pk + np.uint64(text[base + w + k - 1])
            x = _fmix64(h)
            # Distinct shingles, in a table stamped per text (nothing to clear between texts).
            slot = x & slots
            while stamps[slot] == stamp and seen[slot] != x:
                slot = (slot + np.uint64(1)) & slots
            if stamps[slot] != stamp:
                stamps[slot] = stamp
                seen[slot] = x
                distinct += 1
            y = _fmix32(np.uint32(x & mask32))
            for j in range(num):
                row[j] = min(row[j], np.uint32(a[j] * y + b[j]))  # vector minimums, as in _minhash32
        counts[d] = distinct


def _batch(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    cp = foldtable.codepoints("".join(texts))
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts)), out=offsets[1:])
    return cp, offsets


def _run_chars(cp, offsets, normalize, table, k, permutations, sigs, counts) -> None:
    longest = int(np.max(np.diff(offsets))) if offsets.shape[0] > 1 else 0
    scratch = np.empty(max(table.widest * longest, 1), dtype=np.uint32)
    slots = 1 << max(4, int(2 * max(longest, 1) * (table.widest if normalize else 1)).bit_length())
    seen, stamps = np.zeros(slots, dtype=np.uint64), np.zeros(slots, dtype=np.int32)
    a, b = (x.astype(np.uint32) for x in permutations)
    _sign_chars(cp, offsets, normalize, table.kind, table.start, table.length, table.ccc, table.pool, table.alnum,
                table.pairs, k, a, b, scratch, seen, stamps, sigs, counts)


def sign_texts(texts: list[str], policy: Policy, spec: ShingleSpec, permutations: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """The MinHash signatures (uint32[n, num_perm]) of raw texts and their numbers of distinct shingles (0:
    no shingle; its row means nothing): what signature(shingle_hashes(text)) gives, value for value, for a
    batch at a time."""
    sigs = np.empty((len(texts), permutations.shape[1]), dtype=np.uint32)
    counts = np.zeros(len(texts), dtype=np.int64)
    if not texts:
        return sigs, counts
    if spec.kind != "char":  # word shingles: fewer, cut from the normalised words
        for i, text in enumerate(texts):
            hashes = shingle_hashes(text, policy, spec)
            counts[i] = hashes.shape[0]
            if hashes.shape[0]:
                sigs[i] = signature(hashes, permutations)
        return sigs, counts
    table = foldtable.table_for(policy)
    _run_chars(*_batch(texts), True, table, spec.k, permutations, sigs, counts)
    left = np.flatnonzero(counts < 0)
    if left.shape[0]:  # texts the table cannot normalise: the policy does, then the same kernel
        cp, offsets = _batch([policy.normalize(texts[i]) for i in left])
        sub_sigs, sub_counts = sigs[left], counts[left]
        _run_chars(cp, offsets, False, table, spec.k, permutations, sub_sigs, sub_counts)
        sigs[left], counts[left] = sub_sigs, sub_counts
    return sigs, counts


def signature(hashes: np.ndarray, permutations: np.ndarray) -> np.ndarray:
    """The MinHash signature (uint32[num_perm]) of a non-empty shingle-hash set."""
    a, b = permutations
    return _minhash32(hashes, a.astype(np.uint32), b.astype(np.uint32))


def warm() -> None:
    """Load every kernel once (from numba's cache, else compile). A worker calls this before it forks its
    work-horses, so each job starts with the kernels ready instead of loading them first."""
    from screening.engine.normalize import DEFAULT_POLICY, POLICIES, get_policy

    for policy in POLICIES.values():
        foldtable.table_for(policy)  # built once, before a worker forks
    sign_texts(["warm up the kernels"], get_policy(DEFAULT_POLICY), ShingleSpec("char", 5),
               np.arange(2 * 4, dtype=np.uint64).reshape(2, 4) + np.uint64(1))
    hashes = shingle_hashes("warm up the kernels", get_policy(DEFAULT_POLICY), ShingleSpec("char", 5))
    verify_hashes("warm up the kernels", get_policy(DEFAULT_POLICY), ShingleSpec("char", 5), VerifyKey(1 << 40, 1))
    verify_hashes_many(["warm up the kernels"], get_policy(DEFAULT_POLICY), ShingleSpec("char", 5),
                       VerifyKey(1 << 40, 1))
    signature(hashes, np.arange(2 * 4, dtype=np.uint64).reshape(2, 4) + np.uint64(1))
    jaccard(hashes, hashes)
    common_runs("warm up the kernels", "warm the kernels up", 4, 8, 64)
    smallest_shared("warm up the kernels", "warm the kernels up", 4, 20)
    template_counts(hashes, hashes, hashes)
    index = template_index(hashes)
    pair_counts(hashes, hashes, *index)
    template_count(hashes, *index)
    offsets = np.array([0, hashes.shape[0]], dtype=np.int64)
    pair_counts_many(hashes, offsets, np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), *index)
    template_count_many(hashes, offsets, np.zeros(1, dtype=np.int64), *index)
