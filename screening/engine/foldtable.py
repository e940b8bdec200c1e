"""A policy's normalisation as a table per code point, applied by a compiled loop (no Django imports).

`Policy.normalize` (the policy's folds around NFKC and casefold, then only `str.isalnum()` characters kept)
costs more in Python than all the rest of signing (bench/HISTORY.md). For almost every text it is
the same as mapping each code point on its own, which a table built from the policy itself does in one
compiled pass.

Mapping per code point differs from the policy only where NFKC joins neighbours: it composes a character
with a following one (e + U+0301 → é, ا + U+0654 → أ) and reorders combining marks. So:
- a character that can compose with the one before it (the second of a canonical pair: the combining
  acute, the Arabic hamza above, U+0BBE) is mapped on its own only after a character it does not compose
  with under this policy; after one it does, the text goes to the policy itself;
- a combining mark is safe only if nothing of it is kept (reordering moves it, and it is dropped anyway);
- Hangul (jamo compose into syllables), characters whose normal form ends in a combining mark, and code
  points outside the Basic Multilingual Plane send the text to the policy itself.
Tests compare the table with `Policy.normalize` on the development corpus and on random text dense in
marks, Arabic, Persian, CJK and compatibility forms.
"""

from __future__ import annotations

import hashlib
import os
import unicodedata
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from numba import njit

from screening.engine.normalize import Policy

BMP = 0x10000
UNSAFE, PLAIN, SECOND, GONE = 0, 1, 2, 3  # kinds of code point; GONE: deleted by the policy's first fold
NONE = 0xFFFFFFFF
# Hangul jamo, syllables and their compatibility and half-width forms: NFKC composes jamo into syllables.
HANGUL = [(0x1100, 0x1200), (0x3130, 0x3190), (0xA960, 0xA980), (0xAC00, 0xD7B0), (0xD7B0, 0xD800),
          (0xFFA0, 0xFFE0)]


@dataclass(frozen=True)
class Table:
    """For a code point c < BMP: kind[c]; its output pool[start[c] : start[c] + length[c]], of which
    alnum[i] says whether pool[i] is kept; whether it is a combining mark (ccc[c] > 0); and `pairs`, sorted
    (first << 32 | second) of the characters that compose under this policy."""

    kind: np.ndarray  # uint8[BMP]
    start: np.ndarray  # int32[BMP]
    length: np.ndarray  # int32[BMP]
    ccc: np.ndarray  # uint8[BMP]
    pool: np.ndarray  # uint32
    alnum: np.ndarray  # uint8
    pairs: np.ndarray  # uint64, sorted
    simple: np.ndarray  # uint32[BMP]: a PLAIN code point of one output and no mark's its kept output or 0, else NONE
    widest: int  # the most code points one code point maps to (U+FDFA: 18)


@cache
def _canonical_pairs() -> tuple[tuple[str, str], ...]:
    """(first, second) of every primary composite (NFC composes them)."""
    out = []
    for x in range(0x110000):
        parts = unicodedata.decomposition(chr(x)).split()
        if len(parts) == 2 and not parts[0].startswith("<"):
            a, b = (chr(int(p, 16)) for p in parts)
            if unicodedata.normalize("NFC", a + b) == chr(x):
                out.append((a, b))
    return tuple(out)


def _hangul(ch: str) -> bool:
    return any(lo <= ord(ch) < hi for lo, hi in HANGUL)


def _forms(ch: str, policy: Policy) -> set[str]:
    """The characters of a code point's forms: itself, its fold, and their decompositions (U+0340 → U+0300)."""
    folded = policy.fold(ch)
    return {ch, *folded, *unicodedata.normalize("NFKD", folded), *unicodedata.normalize("NFKD", ch)}


def _kind(ch: str, policy: Policy, seconds: set[str]) -> int:
    out = policy.fold(ch)
    composed = unicodedata.normalize("NFKC", ch)
    if _hangul(ch) or any(_hangul(c) for c in composed):
        return UNSAFE
    if composed and unicodedata.combining(composed[-1]) and not unicodedata.combining(ch):
        return UNSAFE  # a character ending in a mark: what follows it could compose with its base
    if unicodedata.combining(ch) and any(o.isalnum() for o in out):
        return UNSAFE  # a mark that is kept would be kept where NFKC reorders it
    if _forms(ch, policy) & seconds:
        return SECOND
    if not policy.fold(ch + "a").removesuffix(policy.fold("a")):
        return GONE  # deleted before NFKC: it does not stand between its neighbours (ZWNJ, tatweel)
    return PLAIN


def _pairs(policy: Policy, kinds: np.ndarray) -> np.ndarray:
    """(first, second) code points whose policy normal form is not the two mapped on their own, among every
    first that holds the first of a canonical pair in its forms (ｅ, ü: a mark after ü can compose with its u
    once NFKC puts it before the diaeresis) and every second that holds its second (U+0340 is U+0300),
    checked one by one."""
    by_first: dict[str, set[str]] = {}
    for a, b in _canonical_pairs():
        by_first.setdefault(a, set()).add(b)
    seconds = {b for _, b in _canonical_pairs()}
    holding: dict[str, set[str]] = {}  # a canonical second -> the code points that hold it in their forms
    for c in range(BMP):
        if kinds[c] == SECOND:
            for b in _forms(chr(c), policy) & seconds:
                holding.setdefault(b, set()).add(chr(c))
    out = set()
    for c in range(BMP):
        if kinds[c] == UNSAFE or 0xD800 <= c < 0xE000:
            continue
        ch = chr(c)
        candidates = {s for a in _forms(ch, policy) for b in by_first.get(a, ()) for s in holding.get(b, ())}
        for second in candidates:
            if policy.fold(ch + second) != policy.fold(ch) + policy.fold(second):
                out.add((c << 32) | ord(second))
    return np.asarray(sorted(out), dtype=np.uint64)


CACHE = Path(__file__).resolve().parent / "__pycache__"  # beside numba's compiled kernels


def _cache_path(policy: Policy) -> Path:
    """Where the policy's table is kept: named for what it depends on (this module's code, the Unicode data,
    the policy), so a change of any of them builds it again."""
    source = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]
    return CACHE / f"foldtable-{policy.name}-{unicodedata.unidata_version}-{source}.npz"


@cache
def table_for(policy: Policy) -> Table:
    """The policy's table: read from the cache, else built (one to two seconds) and kept there."""
    path = _cache_path(policy)
    try:
        with np.load(path) as data:
            return Table(**{name: data[name] for name in Table.__dataclass_fields__ if name != "widest"},
                         widest=int(data["widest"]))
    except (OSError, KeyError, ValueError):
        pass
    table = _build(policy)
    try:
        CACHE.mkdir(exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.npz")
        np.savez(partial, **{name: getattr(table, name) for name in Table.__dataclass_fields__})
        os.replace(partial, path)  # whole or not at all: another process may be reading it
        for old in CACHE.glob(f"foldtable-{policy.name}-*.npz"):
            if old != path:
                old.unlink(missing_ok=True)  # built by another version of this module
    except OSError:
        pass  # a read-only install builds it in each process instead
    return table


def _build(policy: Policy) -> Table:
    seconds = {b for _, b in _canonical_pairs()}
    kind = np.zeros(BMP, dtype=np.uint8)
    start = np.zeros(BMP, dtype=np.int32)
    length = np.zeros(BMP, dtype=np.int32)
    ccc = np.zeros(BMP, dtype=np.uint8)
    pool: list[int] = []
    alnum: list[int] = []
    for c in range(BMP):
        if 0xD800 <= c < 0xE000:
            continue  # surrogates: never in a str's code points
        ch = chr(c)
        kind[c] = _kind(ch, policy, seconds)
        ccc[c] = min(unicodedata.combining(ch), 255)
        out = policy.fold(ch)
        start[c], length[c] = len(pool), len(out)
        pool.extend(ord(o) for o in out)
        alnum.extend(int(o.isalnum()) for o in out)
    pool_array, alnum_array = np.asarray(pool, dtype=np.uint32), np.asarray(alnum, dtype=np.uint8)
    return Table(kind, start, length, ccc, pool_array, alnum_array, _pairs(policy, kind),
                 _simple(kind, start, length, ccc, pool_array, alnum_array), int(length.max()))


def _simple(kind: np.ndarray, start: np.ndarray, length: np.ndarray, ccc: np.ndarray, pool: np.ndarray,
            alnum: np.ndarray) -> np.ndarray:
    """Table.simple: what fold_field does with most code points, in one entry (one lookup, not six: a CJK
    text reaches a different part of every table at nearly every character)."""
    simple = np.full(BMP, NONE, dtype=np.uint32)
    one = (kind == PLAIN) & (ccc == 0) & (length == 1)
    first = start[one]
    simple[one] = np.where(alnum[first] != 0, pool[first], 0)
    return simple


@njit(cache=True, nogil=True)
def _composes(pairs, first, second):
    key = (np.uint64(first) << np.uint64(32)) | np.uint64(second)
    i = np.searchsorted(pairs, key)
    return i < pairs.shape[0] and pairs[i] == key


@njit(cache=True, nogil=True)
def map_text(cp, begin, end, kind, start, length, ccc, pool, alnum, pairs, words, out):
    """The normalised text of cp[begin:end] into `out`: its kept code points, or with `words` its runs of
    kept code points joined by single spaces. Returns the length; -1 when the text must be normalised by
    the policy itself (see the module's docstring), -2 when `out` is too small."""
    # ASCII by one entry a character, written without a branch: its one kept code point, 0 when dropped, NONE
    # where the general path is needed (with `words`, and for a character the policy deletes, maps to more
    # or fewer than one, or that composes). Three times the general path on English text.
    ascii = np.empty(128, dtype=np.uint32)
    for c in range(128):
        if words or kind[c] != PLAIN or ccc[c] != 0 or length[c] != 1:
            ascii[c] = NONE
        else:
            ascii[c] = pool[start[c]] if alnum[start[c]] else 0
    room = out.shape[0] - 2
    n = 0
    gap = False
    before = np.uint32(NONE)  # the character a following one would compose with (the last starter)
    for i in range(begin, end):
        c = cp[i]
        if c < 128 and n <= room and ascii[c] != NONE:
            out[n] = ascii[c]
            n += ascii[c] != 0
            before = c
            continue
        if c >= 0x10000:
            return -1
        k = kind[c]
        if k == UNSAFE:
            return -1
        if k == GONE:
            continue
        if k == SECOND and before != NONE and _composes(pairs, before, c):
            return -1
        if ccc[c] == 0:
            before = c
        s = start[c]
        if n + length[c] + 1 > out.shape[0]:
            return -2  # out is too small for what this text folds to
        for j in range(s, s + length[c]):
            if alnum[j]:
                if words and gap and n > 0:
                    out[n] = 32
                    n += 1
                gap = False
                out[n] = pool[j]
                n += 1
            else:
                gap = True
    return n


def codepoints(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)


def normalized_codepoints(text: str, policy: Policy, words: bool = False) -> np.ndarray:
    """The policy's normalised text as code points (words: its words joined by spaces), through the table
    when the text allows it, else through the policy itself: the same result either way."""
    t = table_for(policy)
    cp = codepoints(text)
    # Room for twice the text first: a text rarely folds longer (the widest case is 18 code points for one),
    # and a buffer of the widest size cost more than the fold (fresh pages from the system each time).
    for room in (2 * cp.shape[0] + 64, t.widest * cp.shape[0] + 64):
        out = np.empty(room, dtype=np.uint32)
        n = map_text(cp, 0, cp.shape[0], t.kind, t.start, t.length, t.ccc, t.pool, t.alnum, t.pairs, words, out)
        if n != -2:
            break
    if n >= 0:
        return out[:n]
    return codepoints(" ".join(policy.words(text)) if words else policy.normalize(text))


@njit(cache=True, nogil=True)
def fold_field(cp, begin, end, kind, start, length, ccc, pool, alnum, pairs, simple, out, n):
    """cp[begin:end] normalised on its own (as if a separator stood before it): its kept code points written
    into `out` from n on. Returns the new end; -1 when it must go to the policy, -2 when `out` is too small."""
    # The gate below (policy, folds to nothing, through the table) is map_text's, written again on purpose:
    # as a shared helper it was called per character, not inlined, and map_text ran slower (inlined by
    # numba with a tuple result, slower still: bench/HISTORY.md); tests/test_near_engine.py holds both to
    # the policy's answers.
    # A code point with a `simple` entry (PLAIN, no mark, one output) by that entry alone, as the general path
    # below would do it: its kept output or nothing, and it is what a following one would compose with.
    before = np.uint32(NONE)
    for i in range(begin, end):
        c = cp[i]
        if c < 0x10000 and n < out.shape[0] and simple[c] != NONE:
            out[n] = simple[c]
            n += simple[c] != 0
            before = c
            continue
        if c >= 0x10000:
            return -1
        k = kind[c]
        if k == UNSAFE:
            return -1
        if k == GONE:
            continue
        if k == SECOND and before != NONE and _composes(pairs, before, c):
            return -1
        if ccc[c] == 0:
            before = c
        s = start[c]
        if n + length[c] > out.shape[0]:
            return -2
        for j in range(s, s + length[c]):
            if alnum[j]:
                out[n] = pool[j]
                n += 1
    return n
