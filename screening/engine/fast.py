"""Compiled kernels (numba) for the hot loops: shingle hashes, MinHash signatures, Jaccard of hash sets.

They compute exactly what the readable reference does: `shingle.shingle_hash64` (signing) and
`shingle.verify_hash64` (keyed, for exact Jaccard) for every shingle, and the signature datasketch
`MinHash(num_perm, seed, hashfunc=shingle_hash32)` (scheme affine32) gives for the same shingles — tests
compare them value for value.
"""

from __future__ import annotations

import functools

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


def template_index(template: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The template shingles as (table, bits) for pair_counts and template_count (made once per verification
    job): a set of them by open addressing, up to three eighths full, and in front of it a bitmap of 32 bits a
    template shingle that rules most others out without reading the set. A set up to three quarters full behind
    16 bits was a third slower a document where a quarter of its shingles are template (its probes ran on
    past the first slot), at 3,000 template shingles and at 40,000 alike (bench/HISTORY.md)."""
    return _template_set(template), _template_bits(template)


@njit(cache=True, nogil=True)
def _template_set(template):
    """Slots holding the values, 0 for a free slot; the last entry is 1 when 0 itself is one of them."""
    size = 16
    while 3 * size < 8 * template.shape[0]:
        size *= 2
    table = np.zeros(size + 1, dtype=np.uint64)
    for v in template:
        if v == 0:
            table[size] = 1
            continue
        slot = np.int64((v ^ (v >> np.uint64(29))) & np.uint64(size - 1))
        while table[slot] != 0 and table[slot] != v:
            slot = (slot + 1) & (size - 1)
        table[slot] = v
    return table


@njit(cache=True, nogil=True)
def _template_bits(template):
    size = 64
    while size < 32 * template.shape[0]:
        size *= 2
    bits = np.zeros(size // 64, dtype=np.uint64)
    for v in template:
        at = np.int64((v >> np.uint64(32)) & np.uint64(size - 1))
        bits[at >> 6] |= np.uint64(1) << np.uint64(at & 63)
    return bits


@njit(cache=True, nogil=True)
def _in_template(table, bits, v):
    at = np.int64((v >> np.uint64(32)) & np.uint64(bits.shape[0] * 64 - 1))
    if not (bits[at >> 6] >> np.uint64(at & 63)) & np.uint64(1):
        return False
    size = table.shape[0] - 1
    if v == 0:
        return table[size] == 1
    slot = np.int64((v ^ (v >> np.uint64(29))) & np.uint64(size - 1))
    while table[slot] != 0:
        if table[slot] == v:
            return True
        slot = (slot + 1) & (size - 1)
    return False


@njit(cache=True, nogil=True)
def template_count(x, table, bits):
    """|x ∩ T|, T the template (template_index's table and bits)."""
    count = 0
    for i in range(x.shape[0]):
        count += _in_template(table, bits, x[i])
    return count


@njit(cache=True, nogil=True)
def pair_counts(x, y, table, bits):
    """(|x ∩ y|, |x ∩ y ∩ T|) for sorted unique x and y, T the template (template_index's table and bits): one
    merge, the template looked up for shared shingles only (most candidates share few: a lookup for every
    shingle of every document was much of verification)."""
    i = j = shared = shared_t = 0
    while i < x.shape[0] and j < y.shape[0]:
        a, b = x[i], y[j]
        if a == b:
            shared += 1
            shared_t += _in_template(table, bits, a)
        i += a <= b
        j += b <= a
    return shared, shared_t


@njit(cache=True, nogil=True)
def pair_counts_many(hashes, offsets, left, right, table, bits):
    """pair_counts of many pairs in one call: the documents' hashes one after another (document d's are
    hashes[offsets[d]:offsets[d + 1]]), a pair's documents left[p] and right[p]; rows (|x ∩ y|, |x ∩ y ∩ T|)."""
    out = np.empty((left.shape[0], 2), dtype=np.int64)
    for p in range(left.shape[0]):
        a, b = left[p], right[p]
        out[p, 0], out[p, 1] = pair_counts(hashes[offsets[a]:offsets[a + 1]], hashes[offsets[b]:offsets[b + 1]],
                                           table, bits)
    return out


@njit(cache=True, nogil=True)
def template_count_many(hashes, offsets, docs, table, bits):
    """template_count of each of these documents (laid out as for pair_counts_many) in one call."""
    out = np.empty(docs.shape[0], dtype=np.int64)
    for k in range(docs.shape[0]):
        out[k] = template_count(hashes[offsets[docs[k]]:offsets[docs[k] + 1]], table, bits)
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


@njit(cache=True, nogil=True)
def _keyed_chars(cp, offsets, first, kind, start, length, ccc, pool, alnum, pairs, simple, k, table, mask, scratch,
                 out, ends, ok, done, spare, counts):
    """verify_hash64 of every character k-gram of each text from `first` on, one text after another into `out`,
    text d ending at ends[d], sorted and without repeats where done[d] (else in window order: the caller sorts
    them); ok[d] is False when the table cannot normalise it (or it normalises beyond the BMP): the caller
    hashes it the slow way. Returns the first text that did not fit in `out` (the number of texts when all
    did). `spare` and `counts` are _sort_unique's room, for the longest text."""
    p = np.uint64(P61)
    pos = 0
    for d in range(first, offsets.shape[0] - 1):
        # fold_field is map_text without words, its `simple` entry one lookup a code point where map_text's
        # general path makes six (most of the corpus is not ASCII).
        n = foldtable.fold_field(cp, offsets[d], offsets[d + 1], kind, start, length, ccc, pool, alnum, pairs, simple,
                                 scratch, 0)
        seen = np.uint32(0)
        for i in range(max(n, 0)):
            seen |= scratch[i]  # an OR the compiler vectorises, not a test and store a code point
        ok[d] = n >= 0 and seen < BMP
        if not ok[d] or n < k:
            ends[d] = pos
            continue
        if pos + n - k + 1 > out.shape[0]:
            return d
        for w in range(n - k + 1):
            # k terms below 2^61: no overflow for k ≤ 8. The default k written out: twice as fast as the loop.
            if k == 5:
                h = (table[scratch[w], 0] + table[scratch[w + 1], 1] + table[scratch[w + 2], 2]
                     + table[scratch[w + 3], 3] + table[scratch[w + 4], 4])
            else:
                h = np.uint64(0)
                for j in range(k):
                    h += table[scratch[w + j], j]
            h = (h & p) + (h >> np.uint64(61))
            h = (h & p) + (h >> np.uint64(61))
            if h >= p:
                h -= p
            out[pos] = _fmix64(h ^ mask)
            pos += 1
        begin = pos - (n - k + 1)
        kept = _sort_unique(out, begin, pos, spare, counts)
        done[d] = kept >= 0
        if done[d]:
            pos = begin + kept
        ends[d] = pos
    return offsets.shape[0] - 1


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
    for i in range(1, n):
        v = spare[i]
        if spare[i - 1] <= v:
            continue  # in order already, as most are: no store
        j = i - 1
        while j >= 0 and spare[j] > v:
            spare[j + 1] = spare[j]
            j -= 1
        spare[j + 1] = v
        moves += i - 1 - j
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
    """verify_hashes of each text; with the hashes laid out and their offsets when one compiled pass did them
    all, in the order of the texts."""
    if spec.kind != "char" or spec.k > 8 or not texts:
        return [verify_hashes(text, policy, spec, key) for text in texts]
    t = foldtable.table_for(policy)
    cp, offsets = _batch(texts)
    lengths = np.diff(offsets)
    scratch = np.empty(t.widest * int(lengths.max()) + 64, dtype=np.uint32)
    spare, counts = np.empty(scratch.shape[0], dtype=np.uint64), np.empty(2 * scratch.shape[0] + 2, dtype=np.int64)
    room = 2 * cp.shape[0] + 64  # a text rarely folds longer than twice itself
    ends, ok = np.zeros(len(texts), dtype=np.int64), np.zeros(len(texts), dtype=np.bool_)
    done = np.zeros(len(texts), dtype=np.bool_)
    table, mask = _key_table(key.base, spec.k), np.uint64(key.mask)
    found: list[np.ndarray] = []
    first = 0
    while first < len(texts):
        out = np.empty(room, dtype=np.uint64)  # each text's hashes are a view of it: a new one each pass
        stop = _keyed_chars(cp, offsets, first, t.kind, t.start, t.length, t.ccc, t.pool, t.alnum, t.pairs, t.simple,
                            spec.k, table, mask, scratch, out, ends, ok, done, spare, counts)
        if first == 0 and stop == len(texts):  # one pass did them all (as almost always)
            return _laid_out(texts, out, ends, ok, done, policy, spec, key)
        pos = 0
        for d in range(first, stop):
            if not ok[d]:
                found.append(verify_hashes(texts[d], policy, spec, key))
                continue
            hashes = out[pos : ends[d]]
            found.append(hashes if done[d] else _sorted_unique(hashes))
            pos = ends[d]
        if stop == first:  # this text alone folds longer than `out`: room for its widest fold
            room = t.widest * int(lengths[first]) + 64
        first = stop
    return found


def _laid_out(texts, out, ends, ok, done, policy, spec, key) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """One compiled pass's hashes as verify_hashes_laid returns them: a text it did not finish (one the table
    cannot normalise, or whose hashes it left unsorted) hashed or sorted here and put in its place, the others
    left where they are (one such text in a batch no longer copies every other text's hashes)."""
    starts = np.concatenate((np.zeros(1, dtype=np.int64), ends[:-1]))
    sizes = ends - starts
    left = np.flatnonzero(~ok | (~done & (sizes > 0))).tolist()  # a text without shingles is finished
    if not left:
        laid, offsets = out[: ends[-1]], np.concatenate((np.zeros(1, dtype=np.int64), ends))
    else:
        pieces, at = [], 0
        for d in left:
            segment = out[starts[d] : ends[d]]
            hashes = _sorted_unique(segment) if ok[d] else verify_hashes(texts[d], policy, spec, key)
            pieces += [out[at : starts[d]], hashes]
            sizes[d], at = hashes.shape[0], ends[d]
        pieces.append(out[at : ends[-1]])
        laid = np.concatenate(pieces)
        offsets = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
    bounds = offsets.tolist()
    return [laid[a:b] for a, b in zip(bounds, bounds[1:], strict=False)], laid, offsets


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
