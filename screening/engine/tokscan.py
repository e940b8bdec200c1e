"""revision.TOKEN_RE as a compiled scanner over code points (no Django imports).

Tokenising a document with the regular expression and building a tuple per match was most of
verification. This scanner finds the same tokens (the same groups, the same spans) by a
table of character classes built from the very character sets of the expression, one pass per text.
Tests compare it with TOKEN_RE.finditer on the development corpus and on random text. A text with a code
point outside the Basic Multilingual Plane is left to the expression (returns None).
"""

from __future__ import annotations

import re
from functools import cache

import numpy as np
from numba import njit

BMP = 0x10000
DATE, NUMBER, CJK, WORD, MARK = 0, 1, 2, 3, 4
GROUPS = ("date", "number", "cjk", "word", "mark")
# Character classes (bits), each from the same character set as in revision.TOKEN_RE.
DIGIT, LETTER, IDEOGRAPH, SIGN, NO_SIGN_AFTER, DATE_SEP, NUMBER_SEP, JOINER, PERCENT, QUOTE = (
    1 << i for i in range(10))


# The character sets of the tokens, as regular-expression classes: revision.TOKEN_RE is written with them,
# and classes() reads the scanner's table from them, so the two cannot drift apart. Full-width forms are in
# every set: a copy in full-width letters and digits must read as the same tokens, not lose its numbers.
DIGIT_SET = r"[0-9\u0660-\u0669\u06F0-\u06F9\uFF10-\uFF19]"  # ASCII, Arabic-Indic, Persian, full width
LETTER_SET = r"[^\W\d_\u3400-\u9FFF\uF900-\uFAFF]"  # a letter that is not a CJK ideograph
IDEOGRAPH_SET = r"[\u3400-\u9FFF\uF900-\uFAFF]"
SIGN_SET = r"[+\-−＋－]"
# -5 is a number, not 1-5 or a-5
NO_SIGN_AFTER_SET = r"[0-9A-Za-z\u0660-\u0669\u06F0-\u06F9.,\uFF10-\uFF19\uFF21-\uFF3A\uFF41-\uFF5A．]"
DATE_SEP_SET = r"[-/.－／．]"
NUMBER_SEP_SET = r"[.,٫٬．]"  # not the full-width comma: Chinese lists 1，2，3 with it
JOINER_SET = r"[\u200c'’＇]"  # ZWNJ and apostrophes, inside a word
PERCENT_SET = r"[%‰％]"
# Not a token: the quotation marks overlap looks for around a shared block, found in the same pass.
QUOTE_MARKS = "\"“”«»„‟「」『』〝〞‘’‚'‹›"


@cache
def classes() -> np.ndarray:
    sets = {
        DIGIT: DIGIT_SET, LETTER: LETTER_SET, IDEOGRAPH: IDEOGRAPH_SET, SIGN: SIGN_SET,
        NO_SIGN_AFTER: NO_SIGN_AFTER_SET, DATE_SEP: DATE_SEP_SET, NUMBER_SEP: NUMBER_SEP_SET,
        JOINER: JOINER_SET, PERCENT: PERCENT_SET, QUOTE: "[" + re.escape(QUOTE_MARKS) + "]",
    }
    out = np.zeros(BMP, dtype=np.uint16)
    for bit, pattern in sets.items():
        compiled = re.compile(pattern)
        for c in range(BMP):
            if not 0xD800 <= c < 0xE000 and compiled.fullmatch(chr(c)):
                out[c] |= bit
    return out


@njit(cache=True, nogil=True)
def _run(cp, cls, i, bit):
    """How many code points from i on are of the class."""
    j = i
    while j < cp.shape[0] and cls[cp[j]] & bit:
        j += 1
    return j - i


@njit(cache=True, nogil=True)
def _date(cp, cls, i):
    """The end of a date at i (D{1,4} sep D{1,2} sep D{1,4}), or -1. A shorter first or middle part cannot
    be followed by its separator, so each part is its whole run of digits, within its bounds."""
    n = cp.shape[0]
    a = _run(cp, cls, i, DIGIT)
    if a < 1 or a > 4 or i + a >= n or not cls[cp[i + a]] & DATE_SEP:
        return -1
    j = i + a + 1
    b = _run(cp, cls, j, DIGIT)
    if b < 1 or b > 2 or j + b >= n or not cls[cp[j + b]] & DATE_SEP:
        return -1
    k = j + b + 1
    c = _run(cp, cls, k, DIGIT)
    return k + min(c, 4) if c >= 1 else -1


@njit(cache=True, nogil=True)
def _number(cp, cls, i):
    """The end of a number at i (an optional sign not after a letter, digit or separator; digits; groups of
    a separator and digits), or -1."""
    n = cp.shape[0]
    j = i
    if cls[cp[i]] & SIGN:
        if (i > 0 and cls[cp[i - 1]] & NO_SIGN_AFTER) or i + 1 >= n or not cls[cp[i + 1]] & DIGIT:
            return -1
        j = i + 1
    d = _run(cp, cls, j, DIGIT)
    if d == 0:
        return -1
    j += d
    while j + 1 < n and cls[cp[j]] & NUMBER_SEP and cls[cp[j + 1]] & DIGIT:
        j += 1 + _run(cp, cls, j + 1, DIGIT)
    return j


@njit(cache=True, nogil=True)
def _word(cp, cls, i):
    """The end of a word at i (°C, °F; letters, with a joiner between two letters), or -1."""
    n = cp.shape[0]
    if cp[i] == 0xB0 and i + 1 < n and (cp[i + 1] == 67 or cp[i + 1] == 70):
        return i + 2
    if not cls[cp[i]] & LETTER:
        return -1
    j = i + 1
    while j < n:
        if cls[cp[j]] & LETTER:
            j += 1
        elif cls[cp[j]] & JOINER and j + 1 < n and cls[cp[j + 1]] & LETTER:
            j += 2
        else:
            break
    return j


@njit(cache=True, nogil=True)
def _scan(cp, cls, groups, starts, ends):
    """Every token, as finditer finds them: at each position the first alternative that matches. Only the
    alternatives that can start with the position's class are tried (a date or number starts with a digit or
    a sign, a word with a letter or °): most positions are letters inside words or spaces between them."""
    n, count, i = cp.shape[0], 0, 0
    while i < n:
        c = cls[cp[i]]
        end, group = -1, WORD
        if c & DIGIT:
            end, group = _date(cp, cls, i), DATE
            if end < 0:
                end, group = _number(cp, cls, i), NUMBER
        elif c & SIGN:
            end, group = _number(cp, cls, i), NUMBER
        elif c & IDEOGRAPH:
            end, group = i + 1, CJK
        elif c & LETTER or cp[i] == 0xB0:
            end, group = _word(cp, cls, i), WORD
        elif c & PERCENT:
            end, group = i + 1, MARK
        if end < 0:
            i += 1
            continue
        groups[count], starts[count], ends[count] = group, i, end
        count += 1
        i = end
    return count


def scan(text: str, cp: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(group codes, starts, ends) of the text's tokens (cp: its code points, when at hand), or None when the
    text is for the expression."""
    if not text:
        return np.zeros(0, np.uint8), np.zeros(0, np.int64), np.zeros(0, np.int64)
    cp = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32) if cp is None else cp
    if int(cp.max()) >= BMP:
        return None
    groups = np.empty(cp.shape[0], dtype=np.uint8)
    starts, ends = np.empty(cp.shape[0], dtype=np.int64), np.empty(cp.shape[0], dtype=np.int64)
    count = _scan(cp, classes(), groups, starts, ends)
    return groups[:count], starts[:count], ends[:count]
