"""The token diff's compiled parts (no Django imports): a hash per normalised token, the alignment of two
token sequences, and which differing stretches only moved or may hold a revision signal.

Python over token lists cost most of a candidate pair's verification (bench/HISTORY.md). Here tokens
are 64-bit hashes of their normalised code points (FNV-1a: equal tokens, equal hashes; two different
tokens of one pair share one with odds near 2^-64), and `revision` builds strings only for the few tokens
around a change that may be a signal.

The alignment is the longest common subsequence of the two sequences, recovered exactly as rapidfuzz's
`Indel.opcodes` recovers it (common prefix and suffix first, then Hyyrö's bit-parallel LCS matrix, walked
back from the end preferring a deletion, then an insertion, then a match), so the stretches equal those of
the earlier Python diff; tests compare the two on random sequences dense in ties and on the corpus.
"""

from __future__ import annotations

import sys
from typing import NamedTuple

import numpy as np
from numba import njit

from screening.engine import foldtable, tokscan
from screening.engine.kernels import first as _first
from screening.engine.kernels import index as _index
from screening.engine.kernels import index_into as _index_into
from screening.engine.kernels import intersection_size as _intersection_size
from screening.engine.kernels import table_size as _table_size
from screening.engine.tokscan import CJK, DATE, MARK, NUMBER, WORD

FNV_OFFSET = np.uint64(0xCBF29CE484222325)
FNV_PRIME = np.uint64(0x100000001B3)
_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_G1 = np.uint64(0x9E3779B97F4A7C15)
_G2 = np.uint64(0xC2B2AE3D27D4EB4F)
NUN = 0x0646  # ن: Persian negative verbs start with it (see revision._persian_negation)
TELLS, NT, STARTS_NUN = 1, 2, 4  # token flags
SCANNED = 8  # small stretches a side up to which changes() reads the other text through rather than index it


@njit(cache=True, nogil=True)
def segment_hashes(cp, starts, ends, codes, telling, hashes, flags):
    """FNV-1a of each token's normalised code points cp[starts[i]:ends[i]] into hashes[i]; flags[i] gets NT
    when it ends in "nt"; TELLS when it does, when its hash is one of `telling` (a table made by `index`), or
    when it is a number, date or mark (which tell whatever they say); STARTS_NUN when it starts with ن."""
    for i in range(starts.shape[0]):
        h = FNV_OFFSET
        a, b = starts[i], ends[i]
        for k in range(a, b):
            h = (h ^ np.uint64(cp[k])) * FNV_PRIME
        hashes[i] = h
        f = 0
        if b - a >= 2 and cp[b - 2] == 110 and cp[b - 1] == 116:
            f |= NT | TELLS
        if _first(telling[0], telling[1], h) >= 0 or codes[i] == DATE or codes[i] == NUMBER or codes[i] == MARK:
            f |= TELLS
        if b > a and cp[a] == NUN:
            f |= STARTS_NUN
        flags[i] = f


def hash_strings(strings: list[str], telling: tuple | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(hashes, flags) of each string, as segment_hashes gives them for the same code points."""
    cp = np.frombuffer("".join(strings).encode("utf-32-le"), dtype=np.uint32)
    ends = np.cumsum(np.fromiter(map(len, strings), dtype=np.int64, count=len(strings)))
    starts = ends - np.fromiter(map(len, strings), dtype=np.int64, count=len(strings))
    hashes, flags = np.empty(len(strings), dtype=np.uint64), np.empty(len(strings), dtype=np.uint8)
    codes = np.full(len(strings), WORD, dtype=np.uint8)
    segment_hashes(cp, starts, ends, codes, index(np.zeros(0, np.uint64)) if telling is None else telling, hashes,
                   flags)
    return hashes, flags


@njit(cache=True, nogil=True)
def _digit(c):
    """The ASCII digit of a digit of the scanner's DIGIT class (ASCII, Arabic-Indic, Persian, full width)."""
    if c >= 0xFF10:
        return 48 + c - 0xFF10
    if c >= 0x6F0:
        return 48 + c - 0x6F0
    if c >= 0x660:
        return 48 + c - 0x660
    return c


@njit(cache=True, nogil=True)
def _number(cp, a, b, buf, n):
    """revision._number_norm of cp[a:b] into buf from n on: a minus sign kept (+ dropped), digits by value,
    ٫ and ٬ as . and , (a full-width ． as .); thousands commas dropped when the number is written 1,000 or
    1,000.5. Returns the end."""
    begin = n
    if cp[a] == 45 or cp[a] == 0x2212 or cp[a] == 0xFF0D:
        buf[n] = 45
        n += 1
        a += 1
    elif cp[a] == 43 or cp[a] == 0xFF0B:
        a += 1
    digits = n
    for i in range(a, b):
        c = cp[i]
        if c == 0x66B or c == 0xFF0E:
            c = 46
        elif c == 0x66C:
            c = 44
        elif c != 46 and c != 44:
            c = _digit(c)
        buf[n] = c
        n += 1
    # \d{1,3}(,\d{3})+(\.\d+)?: a first group of 1-3 digits, groups of a comma and three, then a decimal part.
    i = digits
    while i < n and buf[i] != 44 and buf[i] != 46:
        i += 1
    grouped = 1 <= i - digits <= 3 and i < n and buf[i] == 44
    while grouped and i < n and buf[i] == 44:
        grouped = i + 3 < n and buf[i + 1] != 44 and buf[i + 2] != 44 and buf[i + 3] != 44 \
            and buf[i + 1] != 46 and buf[i + 2] != 46 and buf[i + 3] != 46 and (
                i + 4 == n or buf[i + 4] == 44 or buf[i + 4] == 46)
        i += 4
    if grouped and i < n:  # a decimal part: a point and digits to the end
        grouped = buf[i] == 46
        for k in range(i + 1, n):
            grouped = grouped and buf[k] != 44 and buf[k] != 46
        grouped = grouped and i + 1 < n
    if grouped:
        m = digits
        for k in range(digits, n):
            if buf[k] != 44:
                buf[m] = buf[k]
                m += 1
        n = m
    return n if n > begin else begin


_GONE = 0xFFFFFFFE  # word_fold's entry for a code point the policy deletes before all else (foldtable.GONE)
_STARTS = tokscan.DIGIT | tokscan.SIGN | tokscan.IDEOGRAPH | tokscan.PERCENT  # classes that start other tokens


@njit(cache=True, nogil=True)
def _flags(first, second_last, last, g, telling):
    """segment_hashes' flags of a token of group g from its first, second last (0 for none) and last normalised
    code point, `telling` when its hash is in the table. (Scalars only: numba counts the references of a
    helper's array arguments, a pair of atomic operations each a call, more than the rest of a token.)"""
    f = 0
    if second_last == 110 and last == 116:
        f |= NT | TELLS
    if telling or g == DATE or g == NUMBER or g == MARK:
        f |= TELLS
    if first == NUN:
        f |= STARTS_NUN
    return f


@njit(cache=True, nogil=True)
def _word(cp, i, cls, simple, buf, n, marks, m):
    """The word at i (a letter: tokscan._word) scanned, folded by `simple` (word_fold's) into buf from n on and
    hashed in the same pass, its quotation marks (apostrophes between letters) recorded from marks[m] on.
    Returns (its end, the end of its fold, its hash, the end of the marks, whether a code point needs
    fold_field: then the fold is not the word's, and the hash FNV's start)."""
    size, room = cp.shape[0], buf.shape[0]
    h = FNV_OFFSET
    slow = False
    j = i
    while True:
        s = simple[cp[j]]
        if s >= _GONE:  # (fold_field drops what the policy deletes as it comes: ZWNJ, in a Persian word in ten)
            slow |= s == foldtable.NONE
        elif n >= room:
            slow = True
        elif s != 0:
            buf[n] = s
            h = (h ^ np.uint64(s)) * FNV_PRIME
            n += 1
        j += 1
        if j >= size:
            break
        k = cls[cp[j]]
        if k & tokscan.LETTER:
            continue
        if not (k & tokscan.JOINER and j + 1 < size and cls[cp[j + 1]] & tokscan.LETTER):
            break
        if k & tokscan.QUOTE:  # ' and ’ join the letters around them and are quotation marks too
            marks[m] = j
            m += 1
    return j, n, FNV_OFFSET if slow else h, m, slow


@njit(cache=True, nogil=True)
def _other(cp, i, k, cls, buf, n):
    """A token at i that is not a word starting with a letter nor an ideograph of word_fold's run (tokscan._scan's
    other alternatives): (its group, its end or -1 for none, the end of its normalised form in buf from n on:
    numbers, dates and marks normalised here, an ideograph or °C left to fold_field). Few arrays: numba counts
    the references of each, twice a call."""
    end, g = -1, WORD
    if k & tokscan.DIGIT:
        end, g = tokscan._date(cp, cls, i), DATE
        if end < 0:
            end, g = tokscan._number(cp, cls, i), NUMBER
    elif k & tokscan.SIGN:
        end, g = tokscan._number(cp, cls, i), NUMBER
    elif k & tokscan.IDEOGRAPH:
        end, g = i + 1, CJK
    elif cp[i] == 0xB0:
        end = tokscan._word(cp, cls, i)
    elif k & tokscan.PERCENT:
        end, g = i + 1, MARK
    if end < 0:
        return g, end, n
    if g == DATE:
        for j in range(i, end):
            buf[n] = _digit(cp[j]) if cls[cp[j]] & tokscan.DIGIT else 45
            n += 1
    elif g == NUMBER:
        n = _number(cp, i, end, buf, n)
    elif g == MARK:  # % and ‰ as they are, a full-width ％ as %
        buf[n] = 37 if cp[i] == 0xFF05 else cp[i]
        n += 1
    return g, end, n


@njit(cache=True, nogil=True)
def _in_bmp(cp):
    """Whether every code point is below U+10000 (no early exit: the loop is vectorised)."""
    top = 0
    for i in range(cp.shape[0]):
        top |= cp[i]
    return top < 0x10000


@njit(cache=True, nogil=True)
def _tokenize(cp, cls, kind, start, length, ccc, pool, alnum, pairs, simple, telling, bits, same, dropping, codes,
              starts, ends, buf, fs, fe, hashes, flags, marks):
    """revision.tokens in one pass: the scanner's tokens (as tokscan._scan finds them), each normalised into
    buf[fs:fe] (words and ideographs by the fold table, numbers and dates by value, marks as they are), hashed
    and flagged as segment_hashes would, and the positions of the text's quotation marks; tokens that
    normalise to nothing are dropped. `same` and `dropping` are word_fold's. Returns (how many or -1 when
    the text is for the expression and the policy, -2 when buf is too small; how many marks, all of them only
    for a count >= 0)."""
    if not _in_bmp(cp):
        return -1, 0
    size, room, lo, hi, keys, head = cp.shape[0], buf.shape[0], same[0], same[1], telling[0], telling[1]
    i = n = kept = m = 0
    while i < size:
        c = cp[i]
        while lo <= c < hi:  # a run of ideographs, each a token (half the tokens of a Chinese text)
            if n >= room:
                return -2, m
            h = (FNV_OFFSET ^ np.uint64(c)) * FNV_PRIME
            buf[n], codes[kept], starts[kept], ends[kept], fs[kept], fe[kept] = c, CJK, i, i + 1, n, n + 1
            hashes[kept] = h
            top = h >> np.uint64(48)  # one code point: neither "nt" nor ن, only its hash tells
            flags[kept] = TELLS if (bits[top >> np.uint64(6)] >> (top & np.uint64(63))) & _ONE and _first(
                keys, head, h) >= 0 else 0
            i, n, kept = i + 1, n + 1, kept + 1
            c = cp[i] if i < size else hi
        if i >= size:
            break
        begin, slow, h = n, False, FNV_OFFSET
        k = cls[c]
        if k & tokscan.LETTER:
            g = WORD
            end, n, h, m, slow = _word(cp, i, cls, dropping, buf, n, marks, m)
        else:
            end = -1
            if k & _STARTS or c == 0xB0:  # (a call at every space cost more than its work)
                g, end, n = _other(cp, i, k, cls, buf, n)
            if end < 0:  # no token here
                if k & tokscan.QUOTE:
                    marks[m] = i
                    m += 1
                i += 1
                continue
            slow = True
        if slow and (g == WORD or g == CJK):  # folded (again) from its start by fold_field
            n = foldtable.fold_field(cp, i, end, kind, start, length, ccc, pool, alnum, pairs, simple, buf, begin)
            if n < 0:
                return n, m  # -1: for the policy; -2: buf is too small for what this text folds to
        for q in range(begin, n if slow else begin):  # hashed here (a helper's array, two calls)
            h = (h ^ np.uint64(buf[q])) * FNV_PRIME
        if n > begin:
            codes[kept], starts[kept], ends[kept], fs[kept], fe[kept], hashes[kept] = g, i, end, begin, n, h
            # `bits` (telling_bits) rules out most tokens without a probe of the table (a third of its slots
            # filled made a branch the processor mispredicted a token in three).
            top = h >> np.uint64(48)
            tells = (bits[top >> np.uint64(6)] >> (top & np.uint64(63))) & _ONE and _first(keys, head, h) >= 0
            flags[kept] = _flags(buf[begin], buf[n - 2] if n - begin >= 2 else 0, buf[n - 1], g, tells)
            kept += 1
        i = end
    return kept, m


@njit(cache=True, nogil=True)
def _tokenized(cp, cls, kind, start, length, ccc, pool, alnum, pairs, simple, widest, telling, bits, same,
               dropping):
    """_tokenize with its arrays made here (one call from Python instead of a dozen allocations there):
    (count or -1, codes, starts, ends, buf, fs, fe, hashes, flags), each trimmed to the tokens kept."""
    size = cp.shape[0]
    codes = np.empty(size, dtype=np.uint8)
    starts, ends = np.empty(size, dtype=np.int64), np.empty(size, dtype=np.int64)
    fs, fe = np.empty(size, dtype=np.int64), np.empty(size, dtype=np.int64)
    hashes, flags = np.empty(size, dtype=np.uint64), np.empty(size, dtype=np.uint8)
    marks = np.empty(size, dtype=np.int64)
    # Room for twice the text first (a text rarely folds longer; the widest case is 18 code points for one).
    buf = np.empty(2 * size + 64, dtype=np.uint32)
    count, _ = _tokenize(cp, cls, kind, start, length, ccc, pool, alnum, pairs, simple, telling, bits, same, dropping,
                         codes, starts, ends, buf, fs, fe, hashes, flags, marks)
    if count == -2:
        buf = np.empty(widest * size + 64, dtype=np.uint32)
        count, _ = _tokenize(cp, cls, kind, start, length, ccc, pool, alnum, pairs, simple, telling, bits, same,
                             dropping, codes, starts, ends, buf, fs, fe, hashes, flags, marks)
    n = max(count, 0)
    return count, codes[:n], starts[:n], ends[:n], buf, fs[:n], fe[:n], hashes[:n], flags[:n]


# What the kernels derive from a telling table or a fold table, kept by the identity of its array (a few: the
# run's fold table and telling words, a test's).
_DERIVED: dict[tuple[str, int], tuple[np.ndarray, object]] = {}
_DERIVED_MOST = 16


def telling_bits(telling: tuple) -> np.ndarray:
    """For _tokenize: bit t of the 65,536 set when a telling hash has t as its top 16 bits."""
    keys, head = telling[0], telling[1]
    got = _DERIVED.get(("bits", id(keys)))
    if got is None or got[0] is not keys:
        top = keys[head >= 0] >> np.uint64(48)
        bits = np.zeros(1 << 10, dtype=np.uint64)
        np.bitwise_or.at(bits, (top >> np.uint64(6)).astype(np.int64), np.left_shift(_ONE, top & np.uint64(63)))
        if len(_DERIVED) >= _DERIVED_MOST:
            _DERIVED.clear()
        got = _DERIVED[("bits", id(keys))] = (keys, bits)
    return got[1]


def word_fold(table: foldtable.Table) -> tuple[tuple[int, int], np.ndarray]:
    """What _tokenize reads of the table besides it: the run of code points around U+4E00 that are ideographs
    (the scanner's class, nothing else) and that the table folds to themselves, each a token of itself without
    a look at a table (a Chinese text reaches a different part of both tables at nearly every character),
    (0, 0) for none; and `simple` with _GONE for a code point the policy deletes (one entry a code point for
    nearly every word)."""
    got = _DERIVED.get(("words", id(table.simple)))
    if got is None or got[0] is not table.simple:
        ok = (table.simple == np.arange(tokscan.BMP, dtype=np.uint32)) & (tokscan.classes() == tokscan.IDEOGRAPH)
        run = (0, 0)
        if ok[0x4E00]:
            off = np.flatnonzero(~ok)
            run = (int(off[off < 0x4E00].max(initial=-1)) + 1, int(off[off > 0x4E00].min(initial=tokscan.BMP)))
        dropping = np.where(table.kind == foldtable.GONE, np.uint32(_GONE), table.simple).astype(np.uint32)
        if len(_DERIVED) >= _DERIVED_MOST:
            _DERIVED.clear()
        got = _DERIVED[("words", id(table.simple))] = (table.simple, (run, dropping))
    return got[1]


def tokenize(text: str, table: foldtable.Table, telling: tuple):
    """(codes, starts, ends, buf, fs, fe, hashes, flags) of the text's tokens, or None when the text is for
    the expression and the policy (a code point outside the BMP, or one the table cannot fold on its own)."""
    count, *found = _tokenized(foldtable.codepoints(text), tokscan.classes(), table.kind, table.start,
                               table.length, table.ccc, table.pool, table.alnum, table.pairs, table.simple,
                               table.widest, telling, telling_bits(telling), *word_fold(table))
    return None if count < 0 else tuple(found)


@njit(cache=True, nogil=True)
def _quotes(cp, cls, marks):
    """The positions of the quotation marks of a text into marks: how many, -1 for a text outside the BMP."""
    m = 0
    for i in range(cp.shape[0]):
        if cp[i] >= 0x10000:
            return -1
        if cls[cp[i]] & tokscan.QUOTE:
            marks[m] = i
            m += 1
    return m


@njit(cache=True, nogil=True)
def _tokenized_many(cp, offsets, cls, kind, start, length, ccc, pool, alnum, pairs, simple, telling, bits, same,
                    dropping, codes, starts, ends, buf, fs, fe, hashes, flags, marks):
    """_tokenize of each text cp[offsets[d]:offsets[d + 1]], its arrays and marks one after another in arrays for
    all (one call a batch: a call a text, its arguments and nine arrays boxed, cost as much as a short text's
    tokens); in the arrays given when they are large enough (a spare batch's), else in new ones. Returns (a
    row a text: tokens or -1 (for the expression) or -2 (for _tokenized, which makes room), first token, buf
    start, buf end, first mark, end of marks; then codes, starts, ends, buf, fs, fe, hashes, flags, marks)."""
    total, texts = cp.shape[0], offsets.shape[0] - 1
    if codes.shape[0] < total or buf.shape[0] < 2 * total + 64 * texts:
        codes = np.empty(total, dtype=np.uint8)
        starts, ends = np.empty(total, dtype=np.int64), np.empty(total, dtype=np.int64)
        fs, fe = np.empty(total, dtype=np.int64), np.empty(total, dtype=np.int64)
        hashes, flags = np.empty(total, dtype=np.uint64), np.empty(total, dtype=np.uint8)
        marks = np.empty(total, dtype=np.int64)
        buf = np.empty(2 * total + 64 * texts, dtype=np.uint32)  # as _tokenized's first room, for each text
    rows = np.zeros((texts, 6), dtype=np.int64)
    pos = bpos = mpos = 0
    for d in range(texts):
        a, b = offsets[d], offsets[d + 1]
        rows[d, 1], rows[d, 2], rows[d, 4] = pos, bpos, mpos
        room = 2 * (b - a) + 64
        count, m = _tokenize(cp[a:b], cls, kind, start, length, ccc, pool, alnum, pairs, simple, telling, bits, same,
                             dropping, codes[pos:], starts[pos:], ends[pos:], buf[bpos:bpos + room], fs[pos:], fe[pos:],
                             hashes[pos:], flags[pos:], marks[mpos:])
        rows[d, 0] = count
        if count < 0:  # its marks are kept (for _tokenized to make room for it), not its tokens; none outside the BMP
            m = max(_quotes(cp[a:b], cls, marks[mpos:]), 0)
            rows[d, 3], rows[d, 5], mpos = bpos, mpos + m, mpos + m
            continue
        end = bpos + (fe[pos + count - 1] if count else 0)
        rows[d, 3], rows[d, 5] = end, mpos + m
        pos, bpos, mpos = pos + count, end, mpos + m
    return rows, codes, starts, ends, buf, fs, fe, hashes, flags, marks


class Batch(NamedTuple):
    """A batch's tokens as tokenize_laid left them, its texts' one after another (a text's tokens views of them):
    token d of the batch's text t lies at its row's first token + d, its normalised code points from its buf
    start on (fs, fe count from there), its marks from its first mark on; cp holds the texts, text t from
    offsets[t] on (starts and ends count from there)."""

    codes: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    buf: np.ndarray
    fs: np.ndarray
    fe: np.ndarray
    hashes: np.ndarray
    flags: np.ndarray
    marks: np.ndarray
    cp: np.ndarray
    offsets: np.ndarray
    rows: list[list[int]]  # a text: tokens or -1/-2, first token, buf start, buf end, first mark, end of marks
    table: np.ndarray  # the same rows as an array


# Batches recently made, whose arrays the next batch fills once nothing reads them any more (no Prepared, no
# view): a window's documents are tokenised while the window before's are still in use, so two suffice. Fresh
# arrays cost a page fault every few tokens (the allocator gives a freed batch's memory back to the system).
_SPARE: list[Batch] = []
_SPARE_MOST = 1 << 22  # code points (a batch of them holds about 70 MB of tokens): a larger one is not kept
_HELD = sys.getrefcount(_SPARE)  # a reference held by a list, as the spare batches' arrays by their batch
# Reference counts tell "nothing reads it" only on a GIL build of CPython before 3.14: from 3.14 the interpreter
# borrows references and a count may read lower than the holders, which could refill a batch still in use.
_REUSE = (sys.implementation.name == "cpython" and sys.version_info < (3, 14)
          and getattr(sys, "_is_gil_enabled", lambda: True)())


def release_spares() -> None:
    """Let go of the spare batches (a task's verification is done: the next may come much later, or never)."""
    _SPARE.clear()


def _spare_arrays(total: int, room: int) -> tuple:
    """The arrays of a spare batch nothing reads any more and large enough for `total` code points and `room`
    folded ones (taken out of the spares), else empty ones (the kernel makes them)."""
    for k in range(len(_SPARE)):
        batch = _SPARE[k]  # (not enumerate: its tuple, reused, would hold the batch too)
        # The list, this name and the call's argument: nothing else holds the batch or its arrays.
        if (sys.getrefcount(batch) == _HELD + 1 and batch.codes.shape[0] >= total and batch.buf.shape[0] >= room
                and all(sys.getrefcount(getattr(batch, name)) == _HELD for name in Batch._fields[:9])):
            del _SPARE[k]
            return batch[:9]
    return (np.zeros(0, np.uint8), np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.uint32),
            np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.uint64), np.zeros(0, np.uint8),
            np.zeros(0, np.int64))


def tokenize_laid(texts: list[str], table: foldtable.Table, telling: tuple) -> Batch | None:
    """The batch of the texts' tokens in one compiled call (_tokenized_many), no views made: a text's tokens
    are read from its row (revision.prepare_many makes its views when read)."""
    if not texts:
        return None
    cp = foldtable.codepoints("".join(texts))
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)), out=offsets[1:])
    rows, codes, starts, ends, buf, fs, fe, hashes, flags, marks = _tokenized_many(
        cp, offsets, tokscan.classes(), table.kind, table.start, table.length, table.ccc, table.pool, table.alnum,
        table.pairs, table.simple, telling, telling_bits(telling), *word_fold(table),
        *_spare_arrays(cp.shape[0], 2 * cp.shape[0] + 64 * len(texts)))
    batch = Batch(codes, starts, ends, buf, fs, fe, hashes, flags, marks, cp, offsets, rows.tolist(), rows)
    if _REUSE and cp.shape[0] <= _SPARE_MOST:
        _SPARE.append(batch)
        del _SPARE[:-2]
    return batch


def token_hashes(codes: np.ndarray, buf: np.ndarray, fs: np.ndarray, fe: np.ndarray, telling: tuple
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(hashes, flags) of tokens normalised into buf[fs:fe]; a number, date or mark tells whatever it says."""
    hashes, flags = np.empty(codes.shape[0], dtype=np.uint64), np.empty(codes.shape[0], dtype=np.uint8)
    segment_hashes(buf, fs, fe, codes, telling, hashes, flags)
    return hashes, flags


def index(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A table of these hashes for segment_hashes' `telling`."""
    return _index(values)


@njit(cache=True, nogil=True)
def _gram_keys(h):
    """A key for each run of three tokens (equal runs, equal keys)."""
    if h.shape[0] < 3:
        return np.zeros(0, dtype=np.uint64)
    return h[:-2] * _G1 + h[1:-1] * _G2 + h[2:]


@njit(cache=True, nogil=True)
def _lcs_matrix(a, b):
    """Hyyrö's bit-parallel LCS of a and b, every row kept: row j is the state after b[j], bit i of it clear
    where a[i] is matched in an LCS of a[:i + 1] and b[:j + 1] (as rapidfuzz's lcs_matrix)."""
    len1, len2 = a.shape[0], b.shape[0]
    words = (len1 + 63) // 64
    # A row of match bits per distinct token of a: the row of a token is the first position it holds in a.
    keys, head, after = _index(a)
    pm = np.zeros((len1, words), dtype=np.uint64)
    for slot in range(head.shape[0]):
        first = head[slot]
        i = first
        while i >= 0:
            pm[first, i >> 6] |= _ONE << np.uint64(i & 63)
            i = after[i]
    matrix = np.empty((len2, words), dtype=np.uint64)
    state = np.full(words, _ALL, dtype=np.uint64)
    for j in range(len2):
        r = _first(keys, head, b[j])
        carry = _ZERO
        for w in range(words):
            matches = pm[r, w] if r >= 0 else _ZERO
            st = state[w]
            u = st & matches
            x = st + carry
            c1 = _ONE if x < carry else _ZERO
            x = x + u
            c2 = _ONE if x < u else _ZERO
            carry = c1 | c2
            state[w] = x | (st - u)
            matrix[j, w] = state[w]
    return matrix


@njit(cache=True, nogil=True)
def _gaps(a, b):
    """The differing stretches (i1, i2, j1, j2) of the LCS alignment of a and b, in order (see module)."""
    n1, n2 = a.shape[0], b.shape[0]
    p = 0
    while p < n1 and p < n2 and a[p] == b[p]:
        p += 1
    s = 0
    while s < n1 - p and s < n2 - p and a[n1 - 1 - s] == b[n2 - 1 - s]:
        s += 1
    len1, len2 = n1 - p - s, n2 - p - s
    out = np.empty((min(len1, len2) + 1, 4), dtype=np.int64)
    if len1 == 0 or len2 == 0:
        if len1 or len2:
            out[0, 0], out[0, 1], out[0, 2], out[0, 3] = p, p + len1, p, p + len2
            return out[:1]
        return out[:0]
    matrix = _lcs_matrix(a[p : p + len1], b[p : p + len2])
    # Walk back from the end: a set bit is a deletion; else an insertion, or a match.
    col, row = len1, len2
    count = 0
    mi = np.empty(min(len1, len2), dtype=np.int64)
    mj = np.empty(min(len1, len2), dtype=np.int64)
    while row > 0 and col > 0:
        c = col - 1
        if (matrix[row - 1, c >> 6] >> np.uint64(c & 63)) & _ONE:
            col -= 1
        else:
            row -= 1
            if row == 0 or (matrix[row - 1, c >> 6] >> np.uint64(c & 63)) & _ONE:  # else an insertion
                col -= 1
                mi[count], mj[count] = col, row
                count += 1
    n = 0
    pi, pj = -1, -1
    for k in range(count - 1, -2, -1):
        ci, cj = (mi[k], mj[k]) if k >= 0 else (len1, len2)
        if ci > pi + 1 or cj > pj + 1:
            out[n, 0], out[n, 1], out[n, 2], out[n, 3] = p + pi + 1, p + ci, p + pj + 1, p + cj
            n += 1
        pi, pj = ci, cj
    return out[:n]


@njit(cache=True, nogil=True)
def _moved_at(needle, hay, s, core, size, hay_diff):
    """Whether `needle` occurs at hay[s:] (needle[0] there already) with a token of its core (needle[core:core +
    size]) inside a differing stretch of `hay` (`hay_diff`): an occurrence that stayed in place is the same words
    written again, not these moved there."""
    k = needle.shape[0]
    if s + k > hay.shape[0]:
        return False
    for t in range(1, k):
        if hay[s + t] != needle[t]:
            return False
    for t in range(s + core, s + core + size):
        if hay_diff[t]:
            return True
    return False


@njit(cache=True, nogil=True)
def _occurs(needle, hay, keys, head, after, core, size, hay_diff):
    """Whether the sequence `needle` occurs contiguously in `hay` (indexed by _index) as _moved_at says, at any
    of the places its first token holds."""
    s = _first(keys, head, needle[0])
    while s >= 0:
        if _moved_at(needle, hay, s, core, size, hay_diff):
            return True
        s = after[s]
    return False


@njit(cache=True, nogil=True)
def _occurs_scanned(needle, hay, core, size, hay_diff):
    """_occurs by reading `hay` through: for a pair with a few small stretches, cheaper than indexing it."""
    first = needle[0]
    for s in range(hay.shape[0] - needle.shape[0] + 1):
        if hay[s] == first and _moved_at(needle, hay, s, core, size, hay_diff):
            return True
    return False


@njit(cache=True, nogil=True)
def _long_moved(keys, i1, i2, other, share):
    """Whether nearly all runs of three tokens of the stretch i1..i2 are found among the other's (`other`: an
    index of them, kernels.index; a set lookup instead of numba's sort and a bisection)."""
    part = keys[i1 : i2 - 2]
    if other[2].shape[0] == 0:
        return part.shape[0] == 0
    hits = 0
    for k in range(part.shape[0]):
        if _first(other[0], other[1], part[k]) >= 0:
            hits += 1
    return hits >= share * part.shape[0]


@njit(cache=True, nogil=True)
def _moved(h, i1, i2, other, index, keys, other_keys, small, share, other_diff, scan):
    if i1 == i2:
        return True
    if i2 - i1 > small:
        return _long_moved(keys, i1, i2, other_keys, share)
    lo, hi = max(i1 - 1, 0), min(i2 + 1, h.shape[0])
    if hi - lo == i2 - i1:
        return False
    if scan:
        return _occurs_scanned(h[lo:hi], other, i1 - lo, i2 - i1, other_diff)
    return _occurs(h[lo:hi], other, index[0], index[1], index[2], i1 - lo, i2 - i1, other_diff)


@njit(cache=True, nogil=True)
def _scans(gaps, small):
    """Whether each side's small stretches are few enough to look for by reading the other text through
    (_occurs_scanned) rather than by its index: most pairs have one or two, and indexing a text cost more."""
    lsmall = rsmall = 0
    for g in range(gaps.shape[0]):
        lsmall += 0 < gaps[g, 1] - gaps[g, 0] <= small
        rsmall += 0 < gaps[g, 3] - gaps[g, 2] <= small
    return lsmall <= SCANNED, rsmall <= SCANNED


@njit(cache=True, nogil=True)
def changes(lh, rh, lflags, rflags, small, share):
    """The differing stretches of two token-hash sequences, a row each: i1, i2, j1, j2, moved (1 when it
    reads the same elsewhere in the other text), examine (1: a token in or beside it may tell a revision;
    2: only a one-for-one change of a word starting with ن, for the Persian negation check)."""
    gaps = _gaps(lh, rh)
    out = np.zeros((gaps.shape[0], 6), dtype=np.int64)
    ldiff, rdiff = np.zeros(lh.shape[0], dtype=np.bool_), np.zeros(rh.shape[0], dtype=np.bool_)
    for g in range(gaps.shape[0]):
        ldiff[gaps[g, 0]:gaps[g, 1]] = True
        rdiff[gaps[g, 2]:gaps[g, 3]] = True
    # Each side's runs of three, their index and the index of its tokens only once a stretch needs them (many
    # pairs need none).
    lkeys, rkeys = lh[:0], rh[:0]
    lindex, rindex = _index(lh[:0]), _index(rh[:0])
    lgrams, rgrams = lindex, rindex
    have_lk = have_rk = have_l = have_r = have_li = have_ri = False
    lscan, rscan = _scans(gaps, small)
    for g in range(gaps.shape[0]):
        i1, i2, j1, j2 = gaps[g, 0], gaps[g, 1], gaps[g, 2], gaps[g, 3]
        out[g, 0], out[g, 1], out[g, 2], out[g, 3] = i1, i2, j1, j2
        if i2 - i1 > small:
            if not have_lk:
                lkeys, have_lk = _gram_keys(lh), True
            if not have_rk:
                rkeys, have_rk = _gram_keys(rh), True
            if not have_r:
                rgrams, have_r = _index(rkeys), True
        if i1 != i2 and i2 - i1 <= small and not have_ri and not lscan:
            rindex, have_ri = _index(rh), True
        moved = _moved(lh, i1, i2, rh, rindex, lkeys, rgrams, small, share, rdiff, lscan)
        if moved:
            if j2 - j1 > small:
                if not have_lk:
                    lkeys, have_lk = _gram_keys(lh), True
                if not have_rk:
                    rkeys, have_rk = _gram_keys(rh), True
                if not have_l:
                    lgrams, have_l = _index(lkeys), True
            if j1 != j2 and j2 - j1 <= small and not have_li and not rscan:
                lindex, have_li = _index(lh), True
            moved = _moved(rh, j1, j2, lh, lindex, rkeys, lgrams, small, share, ldiff, rscan)
        if moved:
            out[g, 4] = 1
            continue
        if i2 - i1 > small or j2 - j1 > small:
            continue
        tells = False
        for i in range(max(i1 - 1, 0), min(i2 + 1, lh.shape[0])):
            tells |= (lflags[i] & TELLS) != 0
        for j in range(j1, j2):
            tells |= (rflags[j] & TELLS) != 0
        if tells:
            out[g, 5] = 1
        elif i2 - i1 == 1 and j2 - j1 == 1 and ((lflags[i1] | rflags[j1]) & STARTS_NUN):
            out[g, 5] = 2
    return out


# --- shared blocks in any order ---------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def gram_keys(h, m):
    """A key for each run of m tokens (equal runs, equal keys; m ≥ 1)."""
    n = h.shape[0] - m + 1
    if n <= 0:
        return np.zeros(0, dtype=np.uint64)
    out = np.empty(n, dtype=np.uint64)
    for i in range(n):
        k = _ZERO
        for t in range(m):
            k = (k ^ h[i + t]) * _G1 + _G2
        out[i] = k
    return out


@njit(cache=True, nogil=True)
def tiles(a, b, akeys, bindex, m, anchors):
    """Greedy string tiling of two token-hash sequences: the longest common runs first, each token used at
    most once a side, none shorter than m tokens, in any order (a moved block is found wherever it went).
    `akeys` are a's m-gram keys (gram_keys) and `bindex` the index (kernels.index) of b's; at most `anchors`
    positions of b are tried per m-gram. Returns rows (i, j, length), in order of i."""
    na, nb = a.shape[0], b.shape[0]
    found = np.empty((max(na, 1), 3), dtype=np.int64)
    count = 0
    for i in range(akeys.shape[0]):
        s = _first(bindex[0], bindex[1], akeys[i])
        tried = 0
        while s >= 0 and tried < anchors:
            j = s
            tried += 1
            s = bindex[2][s]
            if i > 0 and j > 0 and a[i - 1] == b[j - 1]:
                continue  # inside a longer run, found from its start
            n = 0
            while i + n < na and j + n < nb and a[i + n] == b[j + n]:
                n += 1
            if n < m:
                continue
            if count == found.shape[0]:
                grown = np.empty((2 * count, 3), dtype=np.int64)
                grown[:count] = found
                found = grown
            found[count, 0], found[count, 1], found[count, 2] = n, i, j
            count += 1
    order = np.argsort(-found[:count, 0] * (na + 1) - (na - found[:count, 1]), kind="mergesort")
    amark = np.zeros(na, dtype=np.bool_)
    bmark = np.zeros(nb, dtype=np.bool_)
    out = np.empty((count + 1, 3), dtype=np.int64)
    kept = 0
    for o in order:
        n, i, j = found[o, 0], found[o, 1], found[o, 2]
        k = 0
        while k < n:  # the parts of the run on tokens neither side has used yet
            while k < n and (amark[i + k] or bmark[j + k]):
                k += 1
            start = k
            while k < n and not amark[i + k] and not bmark[j + k]:
                k += 1
            if k - start >= m:
                amark[i + start:i + k] = True
                bmark[j + start:j + k] = True
                out[kept, 0], out[kept, 1], out[kept, 2] = i + start, j + start, k - start
                kept += 1
    out = out[:kept]
    return out[np.argsort(out[:, 0], kind="mergesort")]


@njit(cache=True, nogil=True)
def multiset_shared(a, b):
    """How many tokens two hash sequences share counted with repeats (a merge of the two sorted)."""
    return _intersection_size(np.sort(a), np.sort(b))


@njit(cache=True, nogil=True)
def out_of_order(rows):
    """How many of the tiles (rows in order of i) are not in the longest run of tiles whose positions in b
    rise as well, weighted by length: the blocks that moved."""
    n = rows.shape[0]
    if n == 0:
        return 0
    best = np.zeros(n, dtype=np.int64)  # heaviest rising chain ending at each tile
    for t in range(n):
        best[t] = rows[t, 2]
        for u in range(t):
            if rows[u, 1] < rows[t, 1] and best[u] + rows[t, 2] > best[t]:
                best[t] = best[u] + rows[t, 2]
    # Walk the heaviest chain back to count its tiles.
    t = np.argmax(best)
    chain = 1
    while True:
        prev = -1
        for u in range(t):
            if rows[u, 1] < rows[t, 1] and best[u] + rows[t, 2] == best[t]:
                prev = u
                break
        if prev < 0:
            break
        t = prev
        chain += 1
    return n - chain


# --- where the shared blocks lie (overlap.analyse's arithmetic) -------------------------------------------

EDGE_TOP, EDGE_BOTTOM = 1, 2  # a text's edges a header or footer sits at, as bits


@njit(cache=True, nogil=True)
def _edge(start, end, n, share, least):
    """overlap's edge of a block of tokens start..end in a text of n: EDGE_TOP, EDGE_BOTTOM or 0."""
    slack = max(least, int(share * n))
    if start <= slack:
        return EDGE_TOP
    if end >= n - slack:
        return EDGE_BOTTOM
    return 0


@njit(cache=True, nogil=True)
def blocks(tiled, nl, nr, lstarts, lends, rstarts, rends, join, share, least, major):
    """The tiles (rows in order of i) joined into blocks, consecutive in both texts and at most `join` tokens
    apart, with where they lie: (blocks as token rows [i1, i2, j1, j2], the same as character spans [left
    start, end, right start, end], the five spans longest on the left, the left characters of all spans, free
    tokens of each text (in no tile), 1 when at least `major` of the shared tokens lie in blocks at an edge of
    both texts, the edges of each text those blocks sit at (bits))."""
    out = np.empty((max(tiled.shape[0], 1), 4), dtype=np.int64)
    lcovered, rcovered = np.zeros(nl, dtype=np.bool_), np.zeros(nr, dtype=np.bool_)
    k = 0
    for t in range(tiled.shape[0]):
        i, j, n = tiled[t, 0], tiled[t, 1], tiled[t, 2]
        lcovered[i:i + n] = True
        rcovered[j:j + n] = True
        if k and 0 <= i - out[k - 1, 1] <= join and 0 <= j - out[k - 1, 3] <= join:
            out[k - 1, 1], out[k - 1, 3] = i + n, j + n
        else:
            out[k, 0], out[k, 1], out[k, 2], out[k, 3] = i, i + n, j, j + n
            k += 1
    out = out[:k]
    spans = np.empty((k, 4), dtype=np.int64)
    at_edges = total = 0
    lsides = rsides = 0
    for b in range(k):
        i1, i2, j1, j2 = out[b, 0], out[b, 1], out[b, 2], out[b, 3]
        spans[b, 0], spans[b, 1], spans[b, 2], spans[b, 3] = lstarts[i1], lends[i2 - 1], rstarts[j1], rends[j2 - 1]
        total += i2 - i1
        left, right = _edge(i1, i2, nl, share, least), _edge(j1, j2, nr, share, least)
        if left and right:
            at_edges += i2 - i1
            lsides |= left
            rsides |= right
    edged = total > 0 and at_edges >= major * total
    # The five longest on the left, the first of equals first (a stable sort), and their characters in all.
    top = spans[np.argsort(spans[:, 0] - spans[:, 1], kind="mergesort")[:5]]
    chars = 0
    for b in range(k):
        chars += spans[b, 1] - spans[b, 0]
    return out, spans, top, chars, nl - lcovered.sum(), nr - rcovered.sum(), edged, lsides, rsides


@njit(cache=True, nogil=True)
def _free_pair_keys(h, tiled, side):
    """The keys of the text's pairs of neighbouring tokens that no tile covers, in text order (repeats kept)."""
    n = h.shape[0]
    free = np.ones(n, dtype=np.bool_)
    for t in range(tiled.shape[0]):
        free[tiled[t, side]:tiled[t, side] + tiled[t, 2]] = False
    keys = np.empty(max(n - 1, 0), dtype=np.uint64)
    count = 0
    for i in range(n - 1):
        if free[i] and free[i + 1]:
            keys[count] = h[i] * _G1 + h[i + 1]
            count += 1
    return keys[:count]


@njit(cache=True, nogil=True)
def _probe(table, used, v):
    """The slot of v in an open-addressing set (table, used), or the free slot where it would go."""
    mask = np.uint64(table.shape[0] - 1)
    slot = np.int64((v ^ (v >> np.uint64(29))) & mask)
    while used[slot] and table[slot] != v:
        slot = (slot + 1) & (table.shape[0] - 1)
    return slot


@njit(cache=True, nogil=True)
def _insert(table, used, v):
    """Put v in the set; True when it was not there yet."""
    slot = _probe(table, used, v)
    if used[slot]:
        return False
    table[slot], used[slot] = v, True
    return True


@njit(cache=True, nogil=True)
def _holds(table, used, v):
    return used[_probe(table, used, v)]


@njit(cache=True, nogil=True)
def rest_pairs(lh, rh, tiled):
    """(distinct word pairs of each remainder, how many both remainders hold): the remainder of a text is its
    tokens outside every tile, a word pair two neighbouring tokens of it. Counted in sets by open addressing
    (numba's sort of the keys cost more than the rest of where the shared text lies)."""
    lkeys, rkeys = _free_pair_keys(lh, tiled, 0), _free_pair_keys(rh, tiled, 1)
    ltable = np.empty(_table_size(lkeys.shape[0]), dtype=np.uint64)
    lused = np.zeros(ltable.shape[0], dtype=np.bool_)
    nl = 0
    for k in range(lkeys.shape[0]):
        nl += _insert(ltable, lused, lkeys[k])
    rtable = np.empty(_table_size(rkeys.shape[0]), dtype=np.uint64)
    rused = np.zeros(rtable.shape[0], dtype=np.bool_)
    nr = both = 0
    for k in range(rkeys.shape[0]):
        if _insert(rtable, rused, rkeys[k]):
            nr += 1
            both += _holds(ltable, lused, rkeys[k])
    return nl, nr, both


@njit(cache=True, nogil=True)
def covered(tiled, n, side):
    """For each of a text's n tokens, 1 where a tile covers it (side 0: the left text, 1: the right), as
    prefix sums: out[i] is how many of tokens 0..i-1 tiles cover (a token covered twice counts twice)."""
    marks = np.zeros(n + 1, dtype=np.int64)
    for t in range(tiled.shape[0]):
        marks[tiled[t, side]] += 1
        marks[tiled[t, side] + tiled[t, 2]] -= 1
    out = np.zeros(n + 1, dtype=np.int64)
    depth = 0
    for i in range(n):
        depth += marks[i]
        out[i + 1] = out[i] + depth
    return out


@njit(cache=True, nogil=True)
def boilerplate(buf, fs, fe, rows, words, longest, pairs, need):
    """Whether the tokens of these blocks (rows [i1, i2, ...]) hold `need` distinct terms: a word counts for
    the shortest of `words` it starts with (an index of their hashes, none shorter than 3 code points, none
    longer than `longest`), two neighbouring one-character tokens of a block for one of `pairs` (an index of
    the hashes of two-character terms). Hashes are segment_hashes' FNV-1a, a prefix's read on the way."""
    seen = np.full(need, -1, dtype=np.int64)
    count = 0
    for b in range(rows.shape[0]):
        previous = -1  # the code point of the one-character token before, if that is what it was
        for i in range(rows[b, 0], rows[b, 1]):
            a, e = fs[i], fe[i]
            hit = -1
            if e - a >= 3:
                h = FNV_OFFSET
                for k in range(a, min(e, a + longest)):
                    h = (h ^ np.uint64(buf[k])) * FNV_PRIME
                    if k - a >= 2:
                        w = _first(words[0], words[1], h)
                        if w >= 0:
                            hit = w
                            break
            elif e - a == 1 and previous >= 0:
                h = (((FNV_OFFSET ^ np.uint64(previous)) * FNV_PRIME) ^ np.uint64(buf[a])) * FNV_PRIME
                p = _first(pairs[0], pairs[1], h)
                if p >= 0:
                    hit = words[2].shape[0] + p
            previous = buf[a] if e - a == 1 else -1
            if hit >= 0:
                new = True
                for s in range(count):
                    new = new and seen[s] != hit
                if new:
                    seen[count] = hit
                    count += 1
                    if count >= need:
                        return True
    return False


@njit(cache=True, nogil=True)
def shared_blocks(lsorted, rsorted, lh, rh, tiled, lstarts, lends, rstarts, rends, join, share, least, major):
    """What overlap.analyse reads of two texts' tiles, in one call: (tokens the two share counted with
    repeats (their sorted hashes merged), then blocks' nine results, the tiles out of order, and
    rest_pairs' three; without tiles only the first is worked out)."""
    common = _intersection_size(lsorted, rsorted)
    nl, nr = lh.shape[0], rh.shape[0]
    rows, spans, top, chars, lfree, rfree, edged, lsides, rsides = blocks(tiled, nl, nr, lstarts, lends, rstarts,
                                                                          rends, join, share, least, major)
    if tiled.shape[0] == 0:
        return common, rows, spans, top, chars, lfree, rfree, edged, lsides, rsides, 0, 0, 0, 0
    lkeys, rkeys, both = rest_pairs(lh, rh, tiled)
    return (common, rows, spans, top, chars, lfree, rfree, edged, lsides, rsides, out_of_order(tiled), lkeys, rkeys,
            both)


@njit(cache=True, nogil=True)
def located_blocks(lsorted, rsorted, lh, rh, tiled, lstarts, lends, rstarts, rends, join, share, least, major,
                   lquotes, rquotes):
    """shared_blocks with its spans read for quotation marks here (`quoted`, from the sorted positions of each
    text's marks) instead of returned: (shared_blocks' results without the spans, then whether a span stands
    in quotation marks)."""
    common, rows, spans, top, chars, lfree, rfree, edged, lsides, rsides, moved, lkeys, rkeys, both = shared_blocks(
        lsorted, rsorted, lh, rh, tiled, lstarts, lends, rstarts, rends, join, share, least, major)
    return (common, rows, top, chars, lfree, rfree, edged, lsides, rsides, moved, lkeys, rkeys, both,
            quoted(spans, rows, lstarts, lends, rstarts, rends, lquotes, rquotes))


@njit(cache=True, nogil=True)
def gram_index(h, m):
    """gram_keys of h and their index (kernels.index), in one call."""
    keys = gram_keys(h, m)
    return keys, _index(keys)


@njit(cache=True, nogil=True)
def moved_rows(rows, tiled, nl, nr, share):
    """Which differing stretches (changes' rows) only moved: marked so by changes, or with at least `share` of
    their tokens on both sides inside tiles whose other side lies in a differing stretch too; and of all of
    them the tokens changed and the tokens moved (of a stretch not moved as a whole, those tiled tokens moved
    and the rest changed): revision.compare's sums. A tile whose other side stayed in place is text written
    again, not moved: a word added that makes a sentence read like another sentence of both texts (`is not
    available`, found elsewhere in both) is a change."""
    ldiff, rdiff = np.zeros(nl, dtype=np.bool_), np.zeros(nr, dtype=np.bool_)
    for g in range(rows.shape[0]):
        ldiff[rows[g, 0]:rows[g, 1]] = True
        rdiff[rows[g, 2]:rows[g, 3]] = True
    lcov, rcov = np.zeros(nl + 1, dtype=np.int64), np.zeros(nr + 1, dtype=np.int64)
    for t in range(tiled.shape[0]):
        i, j = tiled[t, 0], tiled[t, 1]
        for k in range(tiled[t, 2]):
            if ldiff[i + k] and rdiff[j + k]:
                lcov[i + k + 1] += 1
                rcov[j + k + 1] += 1
    for x in range(nl):
        lcov[x + 1] += lcov[x]
    for x in range(nr):
        rcov[x + 1] += rcov[x]
    moved = np.zeros(rows.shape[0], dtype=np.bool_)
    changed = shifted = 0
    for g in range(rows.shape[0]):
        i1, i2, j1, j2 = rows[g, 0], rows[g, 1], rows[g, 2], rows[g, 3]
        lsize, rsize = i2 - i1, j2 - j1
        lin, rin = lcov[i2] - lcov[i1], rcov[j2] - rcov[j1]
        moved[g] = rows[g, 4] == 1 or (lin >= share * lsize and rin >= share * rsize)
        if moved[g]:
            shifted += lsize + rsize
        else:
            changed += lsize - lin + rsize - rin
            shifted += lin + rin
    return moved, changed, shifted


@njit(cache=True, nogil=True)
def tiled_blocks(lh, rh, lkeys, rindex, m, anchors, lsorted, rsorted, lstarts, lends, rstarts, rends, join, share,
                 least, major, lquotes, rquotes):
    """tiles of the two texts and located_blocks of those tiles in one call (tiles first, then located_blocks'
    results): a stored pair's tiles and where they lie cost two calls from Python less."""
    tiled = tiles(lh, rh, lkeys, rindex, m, anchors)
    return (tiled, *located_blocks(lsorted, rsorted, lh, rh, tiled, lstarts, lends, rstarts, rends, join, share,
                                   least, major, lquotes, rquotes))


@njit(cache=True, nogil=True)
def quoted(spans, rows, lstarts, lends, rstarts, rends, lquotes, rquotes):
    """Whether a block (character spans [left start, end, right start, end], token rows [i1, i2, j1, j2])
    stands in quotation marks in either text: a mark among the three characters before it or before its
    second token, and one after its last token but one or among the three after its end (overlap._quoted;
    `lquotes`, `rquotes` the sorted positions of the marks in each text). A token the texts happen to share
    just outside the marks (`°C “…”`) then starts or ends the block, and it is still the quotation."""
    for b in range(spans.shape[0]):
        for side in range(2):
            marks = lquotes if side == 0 else rquotes
            starts = lstarts if side == 0 else rstarts
            ends = lends if side == 0 else rends
            start, end = spans[b, 2 * side], spans[b, 2 * side + 1]
            i1, i2 = rows[b, 2 * side], rows[b, 2 * side + 1]
            opened = starts[i1 + 1] if i2 - i1 > 1 else start + 1
            closed = ends[i2 - 2] if i2 - i1 > 1 else max(start, end - 1)
            lo = np.searchsorted(marks, max(0, start - 3))
            if lo < marks.shape[0] and marks[lo] < opened:
                at = np.searchsorted(marks, closed)
                if at < marks.shape[0] and marks[at] < end + 3:
                    return True
    return False


# --- a window of stored pairs in one call (the run's verification) ---------------------------------------

# The columns of pairs_evidence's row a pair.
(P_COMMON, P_TILES, P_CHARS, P_LFREE, P_RFREE, P_EDGED, P_LSIDES, P_RSIDES, P_MOVED, P_LKEYS, P_RKEYS, P_BOTH,
 P_QUOTED, P_BOILERPLATE, P_TOP, P_TOP_AT, P_ROWS, P_CHANGED, P_SHIFTED, P_SIGNALS, P_SIGNAL_AT) = range(21)
P_WIDTH = 21


@njit(cache=True, nogil=True)
def _breaks(cp, a, b, spaces):
    """Whether cp[a:b] is spacing alone, or spacing with one end-of-line hyphen in it followed by a line end
    (revision._BREAK in full: \\s*(?:[-\\u00ad\\u2010]\\s*\\n)?\\s*; `spaces` says which code points are \\s)."""
    hyphen = -1
    for k in range(a, b):
        c = cp[k]
        if c == 45 or c == 0xAD or c == 0x2010:
            if hyphen >= 0:
                return False
            hyphen = k
        elif c >= spaces.shape[0] or not spaces[c]:
            return False
    if hyphen < 0:
        return True
    for k in range(hyphen + 1, b):
        if cp[k] == 10:
            return True
    return False


@njit(cache=True, nogil=True)
def respaced(lbuf, lfs, lfe, lcp, lstarts, lends, rbuf, rfs, rfe, rcp, rstarts, rends, i1, i2, j1, j2, spaces):
    """revision._respaced compiled: whether a differing stretch is one text's tokens cut or joined by spacing
    alone (the same normalised characters both sides, only spacing or an end-of-line hyphen between the tokens
    of either side)."""
    if i2 - i1 == j2 - j1 or i1 == i2 or j1 == j2:
        return False
    a0, a1, b0, b1 = lfs[i1], lfe[i2 - 1], rfs[j1], rfe[j2 - 1]
    if a1 - a0 != b1 - b0:
        return False
    for k in range(a1 - a0):
        if lbuf[a0 + k] != rbuf[b0 + k]:
            return False
    for k in range(i1, i2 - 1):
        if not _breaks(lcp, lends[k], lstarts[k + 1], spaces):
            return False
    for k in range(j1, j2 - 1):
        if not _breaks(rcp, rends[k], rstarts[k + 1], spaces):
            return False
    return True


@njit(cache=True, nogil=True)
def _gram_tables(docs, m, gkeys, after, slots, heads):
    """Room for each document's m-gram keys and their index (kernels.index, written in place by _grams), in the
    arrays given when they are large enough (fresh pages cost more than filling them): (where each document's
    keys begin, where its slots begin, then the four arrays, and what _grams has made of each document: none)."""
    n_docs = docs.shape[0]
    key_at = np.zeros(n_docs + 1, dtype=np.int64)
    slot_at = np.zeros(n_docs + 1, dtype=np.int64)
    for d in range(n_docs):
        grams = max(docs[d, 1] - docs[d, 0] - m + 1, 0)
        key_at[d + 1], slot_at[d + 1] = key_at[d] + grams, slot_at[d] + _table_size(grams)
    if gkeys.shape[0] < key_at[n_docs]:
        gkeys = np.empty(2 * key_at[n_docs], dtype=np.uint64)
        after = np.empty(2 * key_at[n_docs], dtype=np.int64)
    if slots.shape[0] < slot_at[n_docs]:
        slots = np.empty(2 * slot_at[n_docs], dtype=np.uint64)
        heads = np.empty(2 * slot_at[n_docs], dtype=np.int64)
    return key_at, slot_at, gkeys, after, slots, heads, np.zeros(n_docs, dtype=np.uint8)


@njit(cache=True, nogil=True)
def _grams(hashes, docs, d, m, tables, indexed):
    """Document d's m-gram keys (made[d] 1), and their index too when `indexed` (made[d] 2), each made once for
    all its pairs and only when a pair needs it: a pair of equal token sequences needs neither, the left
    document of a pair only its keys (in a corpus of pairs, two thirds of the index went unread)."""
    key_at, slot_at, gkeys, after, slots, heads, made = tables
    k = gkeys[key_at[d]:key_at[d + 1]]
    if made[d] == 0:
        h = hashes[docs[d, 0]:docs[d, 1]]
        for i in range(k.shape[0]):
            v = _ZERO
            for t in range(m):
                v = (v ^ h[i + t]) * _G1 + _G2
            k[i] = v
        made[d] = 1
    if indexed and made[d] == 1:
        keys, head = slots[slot_at[d]:slot_at[d + 1]], heads[slot_at[d]:slot_at[d + 1]]
        keys[:] = 0
        head[:] = -1
        _index_into(k, keys, head, after[key_at[d]:key_at[d + 1]])
        made[d] = 2
    return k


@njit(cache=True, nogil=True)
def _pair_tiles(hashes, docs, left, right, m, anchors, tables):
    """tiles of two documents of pairs_evidence, on the keys of the left and the index of the right (_grams)."""
    key_at, slot_at, _, after, slots, heads, _ = tables
    lkeys = _grams(hashes, docs, left, m, tables, False)
    _grams(hashes, docs, right, m, tables, True)
    rindex = (slots[slot_at[right]:slot_at[right + 1]], heads[slot_at[right]:slot_at[right + 1]],
              after[key_at[right]:key_at[right + 1]])
    return tiles(hashes[docs[left, 0]:docs[left, 1]], hashes[docs[right, 0]:docs[right, 1]], lkeys, rindex, m,
                 anchors)


@njit(cache=True, nogil=True)
def _equal(lh, rh):
    """Whether two token-hash sequences are the same."""
    if lh.shape[0] != rh.shape[0]:
        return False
    for i in range(lh.shape[0]):
        if lh[i] != rh[i]:
            return False
    return True


@njit(cache=True, nogil=True)
def _whole(n, m):
    """What tiles gives two equal sequences of n tokens without the search: the whole of both, when it is a run
    at all."""
    tiled = np.empty((1 if n >= m else 0, 3), dtype=np.int64)
    if n >= m:
        tiled[0, 0], tiled[0, 1], tiled[0, 2] = 0, 0, n
    return tiled


@njit(cache=True, nogil=True)
def _diffed(lh, rh, lflags, rflags, lbuf, lfs, lfe, lcp, lst, len_, rbuf, rfs, rfe, rcp, rst, ren, tiled, small,
            moved_share, spaces):
    """revision.compare's arithmetic: changes less the stretches spacing explains (revision._rows), then
    moved_rows of those: (the stretches, which moved, tokens changed, tokens moved)."""
    found = changes(lh, rh, lflags, rflags, small, moved_share)
    kept = 0
    for g in range(found.shape[0]):
        if not respaced(lbuf, lfs, lfe, lcp, lst, len_, rbuf, rfs, rfe, rcp, rst, ren, found[g, 0], found[g, 1],
                        found[g, 2], found[g, 3], spaces):
            found[kept] = found[g]
            kept += 1
    found = found[:kept]
    if kept == 0:
        return found, np.zeros(0, dtype=np.bool_), 0, 0
    moved, changed, shifted = moved_rows(found, tiled, lh.shape[0], rh.shape[0], moved_share)
    return found, moved, changed, shifted


@njit(cache=True, nogil=True)
def _to_examine(signals, n_signals, found, moved):
    """The stretches of `found` to examine for a signal (marked so, and not moved) added to signals[:n_signals]
    as rows i1, i2, j1, j2, examine (the array grown when full): (the array, how many rows it holds)."""
    for g in range(found.shape[0]):
        if found[g, 5] > 0 and not moved[g]:
            if n_signals == signals.shape[0]:
                grown = np.empty((2 * n_signals, 5), dtype=np.int64)
                grown[:n_signals] = signals
                signals = grown
            for c in range(4):
                signals[n_signals, c] = found[g, c]
            signals[n_signals, 4] = found[g, 5]
            n_signals += 1
    return signals, n_signals


@njit(cache=True, nogil=True)
def _count_slot(keys, counts, v, size):
    """The slot of v in _shared_count's table of `size` slots, or the empty one where it would go."""
    s = np.int64((v ^ (v >> np.uint64(29))) & np.uint64(size - 1))
    while counts[s] >= 0 and keys[s] != v:
        s = (s + 1) & (size - 1)
    return s


@njit(cache=True, nogil=True)
def _shared_count(lh, rh, keys, counts, slots):
    """How many tokens two hash sequences share counted with repeats, by a table of the left's counts (open
    addressing in `keys`, `counts`: -1 an empty slot, at least table_size(len(lh)) long, a power of two; left as
    found): a document's hashes sorted by numpy cost more than all of a pair's counting, a call a document."""
    size = _table_size(lh.shape[0])
    used = 0
    for i in range(lh.shape[0]):
        v = lh[i]
        s = _count_slot(keys, counts, v, size)
        if counts[s] < 0:
            keys[s], counts[s] = v, 0
            slots[used] = s
            used += 1
        counts[s] += 1
    common = 0
    for j in range(rh.shape[0]):
        s = _count_slot(keys, counts, rh[j], size)
        if counts[s] > 0:  # a slot emptied of its count stays taken (-1 would cut the chains through it)
            counts[s] -= 1
            common += 1
    for k in range(used):
        counts[slots[k]] = -1
    return common


@njit(cache=True, nogil=True)
def _count_tables(docs):
    """_shared_count's arrays, for the longest of the documents (rows of pairs_evidence's docs)."""
    most = 0
    for d in range(docs.shape[0]):
        most = max(most, docs[d, 1] - docs[d, 0])
    return np.empty(_table_size(most), dtype=np.uint64), np.full(_table_size(most), -1, dtype=np.int64), np.empty(
        most, dtype=np.int64)


@njit(cache=True, nogil=True)
def pairs_evidence(hashes, flags, starts, ends, buf, fs, fe, cp, quotes, docs, pairs, m, anchors, join, share,
                   least, major, small, moved_share, words, longest, terms, need, spaces, gkeys, after, slots, heads):
    """Where the shared text of each pair lies and, for a pair marked for it, the diff in brief, a window of
    pairs in one call (a call a pair, its arguments and a dozen results boxed, was much of a stored pair's
    verification). The documents' arrays lie one after another: docs has a row a document (first token, end
    of its tokens, buf start, code points start, marks start, marks end; starts, ends, fs, fe and the marks
    are the document's own positions); pairs a row a pair (left document, right document, 1 to diff them).
    Each pair gets: its tokens shared with repeats (_shared_count), its tiles (revision.tiles), located_blocks
    of them and boilerplate of their blocks (at the edges; word pairs, quotation marks and boilerplate only
    where the blocks are not clearly the whole of both texts: only then does for_near_many read them); diffed,
    _diffed's sums and the stretches to examine for a signal. Returns (a row a pair, the P_* columns; the five
    longest spans of each, a pair's P_TOP of them from its P_TOP_AT on; the stretches to examine, rows i1, i2,
    j1, j2, examine, a pair's P_SIGNALS from its P_SIGNAL_AT on; then the scratch arrays for the documents'
    m-gram keys and their index, those given or larger ones, for the next window)."""
    tables = _gram_tables(docs, m, gkeys, after, slots, heads)
    n = pairs.shape[0]
    ckeys, counts, cslots = _count_tables(docs)
    out = np.zeros((n, P_WIDTH), dtype=np.int64)
    tops = np.empty((5 * n, 4), dtype=np.int64)
    signals = np.empty((16, 5), dtype=np.int64)
    n_tops = n_signals = 0
    for p in range(n):
        left, right = pairs[p, 0], pairs[p, 1]
        la, lb, ra, rb = docs[left, 0], docs[left, 1], docs[right, 0], docs[right, 1]
        lh, rh, lst, len_ = hashes[la:lb], hashes[ra:rb], starts[la:lb], ends[la:lb]
        rst, ren = starts[ra:rb], ends[ra:rb]
        same = _equal(lh, rh)
        tiled = _whole(lb - la, m) if same else _pair_tiles(hashes, docs, left, right, m, anchors, tables)
        # located_blocks, but the remainders' word pairs and the quotation marks only where the shared blocks
        # are not clearly the whole of both texts (only then are they read).
        nl, nr = lb - la, rb - ra
        rows, spans, top, chars, lfree, rfree, edged, lsides, rsides = blocks(tiled, nl, nr, lst, len_, rst, ren, join,
                                                                              share, least, major)
        o = out[p]
        o[P_COMMON] = nl if same else _shared_count(lh, rh, ckeys, counts, cslots)
        o[P_TILES], o[P_CHARS] = tiled.shape[0], chars
        o[P_LFREE], o[P_RFREE], o[P_EDGED], o[P_LSIDES], o[P_RSIDES] = lfree, rfree, edged, lsides, rsides
        lbuf, lfs, lfe = buf[docs[left, 2]:], fs[la:lb], fe[la:lb]
        if tiled.shape[0]:
            o[P_MOVED] = out_of_order(tiled)
            if lfree * 100 > 9 * nl or rfree * 100 > 9 * nr:
                o[P_LKEYS], o[P_RKEYS], o[P_BOTH] = rest_pairs(lh, rh, tiled)
                o[P_QUOTED] = quoted(spans, rows, lst, len_, rst, ren, quotes[docs[left, 4]:docs[left, 5]],
                                     quotes[docs[right, 4]:docs[right, 5]])
                # Boilerplate matters only at the edges, not for the whole of both (most of a corpus of pairs).
                o[P_BOILERPLATE] = edged and boilerplate(lbuf, lfs, lfe, rows, words, longest, terms, need)
        o[P_TOP], o[P_TOP_AT] = top.shape[0], n_tops
        tops[n_tops:n_tops + top.shape[0]] = top
        n_tops += top.shape[0]
        o[P_SIGNAL_AT] = n_signals
        if same or not pairs[p, 2]:
            continue
        found, moved, changed, shifted = _diffed(
            lh, rh, flags[la:lb], flags[ra:rb], lbuf, lfs, lfe, cp[docs[left, 3]:], lst, len_, buf[docs[right, 2]:],
            fs[ra:rb], fe[ra:rb], cp[docs[right, 3]:], rst, ren, tiled, small, moved_share, spaces)
        o[P_ROWS], o[P_CHANGED], o[P_SHIFTED] = found.shape[0], changed, shifted
        signals, n_signals = _to_examine(signals, n_signals, found, moved)
        o[P_SIGNALS] = n_signals - o[P_SIGNAL_AT]
    return out, tops[:n_tops], signals[:n_signals], tables[2], tables[3], tables[4], tables[5]
