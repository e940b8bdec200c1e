"""Token diff of two raw texts and the revision signals in it (no Django imports).

Tokens are compared *normalised*: NFKC, casefold, Arabic/Persian letters and digits folded, ZWNJ and
punctuation dropped, digits read by value. So a change of width (ＲＴＬＤ / RTLD), case, CJK–Latin spacing,
punctuation, Persian or Arabic digits or line breaks is no difference at all.

A *revision signal* is an aligned change of small extent (at most SMALL tokens a side) that changes a
number, date, month, sign, unit beside a number, or inserts or removes a negation: a hint that the pair
may be a valid revision rather than a copy. A stretch that only moved (it reads the same, with a word of its
context, in the other text) carries no signal, nor does a long rewritten stretch. Each signal is shown as
a short `before → after` from the raw texts, with a word of context, at most MAX_SHOWN characters a side.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from screening.engine import foldtable, tokdiff, tokscan
from screening.engine.normalize import POLICIES

MAX_TOKENS = 50_000  # per side; beyond it the diff covers the beginning only (and says so)
SMALL = 4  # tokens a side: a longer changed stretch is a rewrite, not a revision of a detail
MAX_SHOWN = 40  # characters a side of a signal
MOVED_SHARE = 0.8  # of a long stretch's runs of three words found in the other text: it moved
TILE = 5  # tokens: the shortest run found in both texts that counts as shared wherever it lies
ANCHORS = 8  # positions tried per run of TILE tokens (a text repeating itself stays bounded)

_DIGIT, _LETTER = tokscan.DIGIT_SET, tokscan.LETTER_SET
_WORD = rf"{_LETTER}(?:{_LETTER}|{tokscan.JOINER_SET}(?={_LETTER}))*"  # letters, with joiners inside
TOKEN_RE = re.compile(
    rf"(?P<date>{_DIGIT}{{1,4}}{tokscan.DATE_SEP_SET}{_DIGIT}{{1,2}}{tokscan.DATE_SEP_SET}{_DIGIT}{{1,4}})"
    rf"|(?P<number>(?:(?<!{tokscan.NO_SIGN_AFTER_SET}){tokscan.SIGN_SET})?"  # -5 (not 1-5 or a-5)
    rf"{_DIGIT}+(?:{tokscan.NUMBER_SEP_SET}{_DIGIT}+)*)"  # 12, 12.5, 1,000, ۱۲٫۵
    rf"|(?P<cjk>{tokscan.IDEOGRAPH_SET})"  # each CJK ideograph is a token
    rf"|(?P<word>°[CF]|{_WORD})"  # words (and °C, °F)
    rf"|(?P<mark>{tokscan.PERCENT_SET})",  # per cent is meaningful; other punctuation is not a token
    re.UNICODE,
)
_FOLD_POLICY = POLICIES["persian-arabic-fold-v1"]
_FOLD = _FOLD_POLICY.fold

UNITS = {
    # Beside a number only: `12 V → 12 mV`. Case matters before folding (mV is not MV), so units are
    # compared on the raw token.
    "V", "mV", "kV", "MV", "µV", "μV", "A", "mA", "kA", "µA", "W", "mW", "kW", "MW", "GW", "Wh", "kWh", "MWh",
    "Hz", "kHz", "MHz", "GHz", "Ω", "kΩ", "MΩ", "F", "µF", "nF", "pF", "H", "mH", "J", "kJ", "N", "Pa", "kPa",
    "MPa", "bar", "psi", "m", "cm", "mm", "µm", "nm", "km", "in", "ft", "mi", "g", "mg", "kg", "t", "lb", "oz",
    "l", "L", "ml", "mL", "s", "ms", "µs", "ns", "min", "h", "hr", "d", "°C", "°F", "K", "%", "‰", "dB", "B",
    "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "bit", "kbit", "Mbit", "rpm", "px", "pt",
    "second", "seconds", "minute", "minutes", "hour", "hours", "day", "days", "week", "weeks", "month", "months",
    "year", "years", "volt", "volts", "watt", "watts", "meter", "meters", "metre", "metres", "gram", "grams",
    "kilogram", "kilograms", "litre", "litres", "liter", "liters", "byte", "bytes", "percent",
    "秒", "分", "时", "天", "日", "周", "月", "年", "次", "米", "克", "升", "伏", "安", "瓦", "度", "元", "吨", "赫",
    "ولت", "میلی\u200cولت", "میلیولت", "کیلوولت", "آمپر", "وات", "کیلووات", "ثانیه", "دقیقه", "ساعت", "روز",
    "هفته", "ماه", "سال", "متر", "سانتیمتر", "میلیمتر", "کیلومتر", "گرم", "کیلوگرم", "لیتر", "درصد", "بایت",
    "کیلوبایت", "مگابایت", "گیگابایت",
}
PERIODS = {"daily", "weekly", "monthly", "yearly", "hourly", "每"}  # "every day" words: a changed period
CJK_UNIT_PREFIXES = set("毫千微纳厘公兆吉分")  # 伏 → 毫伏, 千克 → 克
NEGATIONS = {
    "not", "no", "never", "none", "without", "cannot", "nor", "neither", "nobody", "nothing",
    "不", "没", "無", "无", "未", "非", "别", "勿", "否", "莫", "毋",
    "نه", "نیست", "نیستند", "نمی", "نباید", "بدون", "هیچ", "نخواهد", "نشود", "نکنید",
}
MONTHS = {
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
    "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
    "فروردین", "اردیبهشت", "خرداد", "تیر", "مرداد", "شهریور", "مهر", "آبان", "آذر", "دی", "بهمن", "اسفند",
    "ژانویه", "فوریه", "مارس", "آوریل", "مه", "ژوئن", "ژوئیه", "اوت", "سپتامبر", "اکتبر", "نوامبر", "دسامبر",
}
NUMBER_WORDS = {
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty", "thirty",
    "forty", "fifty", "sixty", "seventy", "eighty", "ninety", "hundred", "thousand", "million", "billion",
    "once", "twice", "single", "double", "half", "dozen", "first", "second", "third", "fourth", "fifth",
    "صفر", "یک", "دو", "سه", "چهار", "پنج", "شش", "هفت", "هشت", "ده", "یازده", "دوازده", "بیست", "سی", "چهل",
    "پنجاه", "صد", "هزار", "میلیون", "نیم",
    "零", "〇", "一", "二", "两", "三", "四", "五", "六", "七", "八", "九", "十", "百", "千", "万", "亿", "半",
}
_SEPARATORS = str.maketrans({"٫": ".", "٬": ",", "．": "."})
_CONTRACTED = re.compile(r"n['’]t$", re.IGNORECASE)
# Normalised tokens a signal can rest on (a superset: units compared folded, any word ending like a "n't").
# A small change with none of them, in it or beside it, is no revision signal, so it is not examined.
_TELLING = {t.casefold() for t in (*NEGATIONS, *MONTHS, *NUMBER_WORDS, *UNITS, *PERIODS, *CJK_UNIT_PREFIXES,
                                   "月", "month", "ماه")}

_TELLING_HASHES = tokdiff.index(tokdiff.hash_strings(sorted(_TELLING))[0])

_NOT_WORD = re.compile(r"[^\w\x1f]|_")
_STOP = re.compile(r"[.!?;:。！？；：؟،，、\n]")


class Token(NamedTuple):
    raw: str
    start: int
    end: int
    norm: str  # what is compared
    group: str  # date | number | cjk | word | mark


@dataclass(frozen=True)
class Signal:
    kind: str  # number | date | month | sign | unit | negation
    left: str
    right: str

    def __str__(self) -> str:
        return f"{self.left} → {self.right}"


@dataclass(frozen=True)
class Change:
    """One differing stretch: `left`/`right` are (start, end) character spans in each raw text; `moved` says
    it reads the same elsewhere in the other text."""

    left: tuple[int, int]
    right: tuple[int, int]
    signal: Signal | None
    moved: bool = False


def _number_norm(raw: str) -> str:
    if raw.isascii() and raw.isdigit():  # most numbers: already what they read as
        return raw
    sign = "-" if raw[:1] in "-−－" else ""
    digits = "".join(str(unicodedata.decimal(c)) if c.isdigit() else c for c in raw.lstrip("+-−＋－"))
    digits = digits.translate(_SEPARATORS)
    if re.fullmatch(r"\d{1,3}(,\d{3})+(\.\d+)?", digits):
        digits = digits.replace(",", "")  # 1,000 is 1000; 1,5 stays a decimal written with a comma
    return sign + digits


def tokens(text: str) -> list[Token]:
    """The text's comparable tokens (punctuation, spaces and anything that folds to nothing are left out)."""
    found = [(m.lastgroup, m.group(), m.start(), m.end()) for m in TOKEN_RE.finditer(text)]
    # Words are folded all at once (one C call for the text, not two per word); \x1f survives the fold.
    words = _NOT_WORD.sub("", _FOLD("\x1f".join(raw for group, raw, _, _ in found if group in ("word", "cjk"))))
    folded = iter(words.split("\x1f"))
    out = []
    for group, raw, start, end in found:
        if group == "number":
            norm = _number_norm(raw)
        elif group == "date":
            norm = "".join(str(unicodedata.decimal(c)) if c.isdigit() else "-" for c in raw)
        elif group == "mark":
            norm = "%" if raw == "％" else raw
        else:
            norm = next(folded)
        if norm:
            out.append(Token(raw, start, end, norm, group))
    return out


class TokenList(Sequence):
    """A text's tokens as arrays: group codes, spans, each token's normalised code points (`buf[fs:fe]`),
    their hashes and flags (tokdiff). A Token tuple, with its normalised string, is made only for a token
    that is looked at (a diff looks at a few around each change; building all of them cost more than the
    diff)."""

    __slots__ = ("text", "codes", "starts", "ends", "buf", "fs", "fe", "hashes", "flags")

    def __init__(self, text: str, codes: np.ndarray, starts: np.ndarray, ends: np.ndarray, buf: np.ndarray,
                 fs: np.ndarray, fe: np.ndarray, hashes: np.ndarray, flags: np.ndarray):
        self.text, self.codes, self.starts, self.ends, self.buf, self.fs, self.fe = (
            text, codes, starts, ends, buf, fs, fe)
        self.hashes, self.flags = hashes, flags

    @classmethod
    def of_strings(cls, text: str, groups: list[str], starts: list[int], ends: list[int], norms: list[str]
                   ) -> TokenList:
        lengths = np.fromiter(map(len, norms), dtype=np.int64, count=len(norms))
        fe = np.cumsum(lengths)
        fs = fe - lengths
        codes = np.array([tokscan.GROUPS.index(g) for g in groups], dtype=np.uint8)
        buf = foldtable.codepoints("".join(norms))
        return cls(text, codes, np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64), buf, fs, fe,
                   *tokdiff.token_hashes(codes, buf, fs, fe, _TELLING_HASHES))

    def head(self, n: int) -> TokenList:
        """The first n tokens."""
        return TokenList(self.text, self.codes[:n], self.starts[:n], self.ends[:n], self.buf, self.fs[:n],
                         self.fe[:n], self.hashes[:n], self.flags[:n])

    def norm(self, i: int) -> str:
        return self.buf[self.fs[i]:self.fe[i]].tobytes().decode("utf-32-le")

    def __len__(self) -> int:
        return self.codes.shape[0]

    def _token(self, i: int) -> Token:
        start, end = int(self.starts[i]), int(self.ends[i])
        return Token(self.text[start:end], start, end, self.norm(i), tokscan.GROUPS[self.codes[i]])

    def span(self, a: int, b: int) -> list[Token]:
        """Tokens a..b (0 ≤ a ≤ b ≤ len), read with one slice an array and one decode: their normalised forms lie
        one after another in buf (a Token a numpy read of each array was most of a signal)."""
        if b <= a:
            return []
        fs, fe = self.fs[a:b].tolist(), self.fe[a:b].tolist()
        base, text, groups = fs[0], self.text, tokscan.GROUPS
        norms = self.buf[base:fe[-1]].tobytes().decode("utf-32-le")
        return [Token(text[s:e], s, e, norms[f - base:g - base], groups[c])
                for s, e, f, g, c in zip(self.starts[a:b].tolist(), self.ends[a:b].tolist(), fs, fe,
                                         self.codes[a:b].tolist(), strict=True)]

    def __getitem__(self, index):
        if isinstance(index, slice):
            a, b, step = index.indices(len(self))
            return self.span(a, max(a, b)) if step == 1 else [self._token(i) for i in range(a, b, step)]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._token(index)


class _LaidTokens(TokenList):
    """A text's tokens in a batch of tokenize_laid: each array a view of the batch's, made when first read (a
    window's evidence reads one or two of the nine; making all of them was most of preparing a text)."""

    __slots__ = ("_batch", "_at")
    _VIEWS = {"codes": 0, "starts": 0, "ends": 0, "fs": 0, "fe": 0, "hashes": 0, "flags": 0, "buf": 1}  # 1: of buf

    def __init__(self, text: str, batch: tokdiff.Batch, at: tuple[int, int, int, int]):
        self.text, self._batch, self._at = text, batch, at  # at: first token, end of its tokens, buf start, end

    def __getattr__(self, name: str):  # only for a slot not set yet: the view, kept in it
        if name not in _LaidTokens._VIEWS:
            raise AttributeError(name)
        a, z, b0, b1 = self._at
        view = getattr(self._batch, name)[b0:b1] if _LaidTokens._VIEWS[name] else getattr(self._batch, name)[a:z]
        setattr(self, name, view)
        return view

    def __len__(self) -> int:
        return self._at[1] - self._at[0]


def _fast_tokens(text: str) -> TokenList | None:
    """tokens(text) through one compiled pass (tokdiff.tokenize); None when the text is for the regular
    expression and the policy (a code point outside the BMP, or one the table cannot fold on its own)."""
    found = tokdiff.tokenize(text, foldtable.table_for(_FOLD_POLICY), _TELLING_HASHES)
    return None if found is None else TokenList(text, *found)


class Prepared:
    """A text ready to be compared with many others: its tokens with their hashes and flags. A run verifying
    many pairs prepares each document once (prepare_many: a batch of them in one compiled call)."""

    __slots__ = ("text", "toks", "truncated", "quotes", "laid", "_grams", "_sorted")

    def __init__(self, text: str, toks: TokenList | None = None, quotes: np.ndarray | None = None,
                 laid: tuple[tokdiff.Batch, int] | None = None, count: int = -1):
        self.text = text
        self.quotes = quotes  # the positions of its quotation marks (overlap), once found
        self.laid = laid  # (the batch its tokens are views of, its text's place in it), when prepare_many made it
        self._grams = self._sorted = None
        if toks is None:
            toks = _fast_tokens(text)
            if toks is None:  # the regular expression and the policy: the same tokens, slower
                listed = tokens(text)
                toks = TokenList.of_strings(text, [t.group for t in listed], [t.start for t in listed],
                                            [t.end for t in listed], [t.norm for t in listed])
        # count: len(toks) when the caller knows it (prepare_many: a call of _LaidTokens.__len__ less a text)
        self.truncated = (len(toks) if count < 0 else count) > MAX_TOKENS
        self.toks = toks.head(MAX_TOKENS) if self.truncated else toks

    def grams(self) -> tuple[np.ndarray, tuple]:
        """Its runs of TILE tokens as keys, and their index: made once for all the pairs it is in."""
        if self._grams is None:
            self._grams = tokdiff.gram_index(self.toks.hashes, TILE)
        return self._grams

    def sorted_hashes(self) -> np.ndarray:
        """Its token hashes in order of value (the token multiset), made once for all the pairs it is in."""
        if self._sorted is None:
            self._sorted = np.sort(self.toks.hashes)
        return self._sorted


def prepare_many(texts: list[str]) -> list[Prepared]:
    """Prepared of each text, their tokens and quotation marks found in one compiled call for the batch (a text
    the call leaves to the expression is prepared as Prepared prepares it)."""
    out = []
    table = foldtable.table_for(_FOLD_POLICY)
    batch = tokdiff.tokenize_laid(texts, table, _TELLING_HASHES)
    if batch is None:
        return out
    marks, append = batch.marks, out.append
    for t, (text, (count, a, b0, b1, m0, m1)) in enumerate(zip(texts, batch.rows, strict=True)):
        if count >= 0:
            append(Prepared(text, _LaidTokens(text, batch, (a, a + count, b0, b1)), marks[m0:m1], (batch, t), count))
        elif count == -2:  # folds longer than its room in the batch: on its own, with room for its widest fold
            found = tokdiff.tokenize(text, table, _TELLING_HASHES)
            out.append(Prepared(text) if found is None else Prepared(text, TokenList(text, *found), marks[m0:m1]))
        else:
            out.append(Prepared(text))
    return out


def prepare(text: str | Prepared) -> Prepared:
    return text if isinstance(text, Prepared) else Prepared(text)


# --- kinds -----------------------------------------------------------------------------------------


def _is_negation(t: Token) -> bool:
    return t.norm in NEGATIONS or bool(_CONTRACTED.search(t.raw))


def _persian_negation(a: str, b: str) -> bool:
    """است ↔ نیست, and verbs with the negative prefix ن/نمی (می‌رود ↔ نمی‌رود, دارد ↔ ندارد)."""
    a, b = sorted((a, b), key=len)
    return (a, b) == ("است", "نیست") or b in ("ن" + a, "نمی" + a.removeprefix("می"))


def _is_number(t: Token) -> bool:
    return t.group == "number" or t.norm in NUMBER_WORDS


def _is_unit(t: Token) -> bool:
    return t.raw in UNITS or t.norm in UNITS or t.norm in PERIODS


def _kind(left: list[Token], right: list[Token], before: Token | None, after: Token | None) -> str | None:
    """What a small aligned change changes, or None when it is no revision signal."""
    lneg, rneg = any(map(_is_negation, left)), any(map(_is_negation, right))
    if lneg != rneg:
        return "negation"
    if len(left) == len(right) == 1 and _persian_negation(left[0].norm, right[0].norm):
        return "negation"
    if any(t.group == "date" for t in left + right):
        return "date"
    lnum, rnum = [t for t in left if _is_number(t)], [t for t in right if _is_number(t)]
    if lnum and rnum:
        if len(lnum) == len(rnum) == 1 and lnum[0].norm.lstrip("-") == rnum[0].norm.lstrip("-"):
            return "sign"
        month_context = after is not None and after.norm in ("月", "month", "ماه")
        return "month" if month_context and not any(t.group == "number" for t in lnum + rnum) else "number"
    if any(t.norm in MONTHS for t in left) and any(t.norm in MONTHS for t in right):
        return "month"
    return _unit_kind(left, right, before, after)


def _scaled(a: str, b: str) -> bool:
    """One unit for a multiple of the other: V ↔ mV, Hz ↔ kHz, ولت ↔ میلی‌ولت."""
    short, long_ = sorted((a.replace("\u200c", ""), b.replace("\u200c", "")), key=len)
    return a in UNITS and b in UNITS and short != long_ and long_.endswith(short)


def _unit_kind(left: list[Token], right: list[Token], before: Token | None, after: Token | None) -> str | None:
    """A unit changed beside a number (`12 V → 12 mV`, `12伏 → 12毫伏`, `每周 → 每天`), or one unit written
    for another (`V → mV`: two units, nothing else)."""
    beside_number = before is not None and (_is_number(before) or before.norm in PERIODS)
    changed = left + right
    if len(left) == len(right) == 1 and _scaled(left[0].raw, right[0].raw):
        return "unit"
    if any(_is_unit(t) for t in changed) and (beside_number or any(_is_number(t) for t in changed)):
        return "unit"
    prefix = [t for t in changed if t.norm in CJK_UNIT_PREFIXES]
    if prefix and len(prefix) == len(changed) and beside_number and after is not None and _is_unit(after):
        return "unit"
    return None


# --- the diff --------------------------------------------------------------------------------------


def _shown(text: str, toks: TokenList, i1: int, i2: int) -> str:
    """The raw text of tokens i1..i2 with a word of context each side (two ideographs, about a Chinese
    word), on one line, at most MAX_SHOWN characters. Read from the token arrays (a Token a look cost most of
    a signal)."""
    n = len(toks)
    lo, hi = max(i1 - 1, 0), min(i2 + 1, n)
    if lo > 0 or hi < n:
        codes = toks.codes
        if lo > 0 and codes[lo] == tokscan.CJK and codes[lo - 1] == tokscan.CJK:
            lo -= 1
        if hi < n and codes[hi - 1] == tokscan.CJK and codes[hi] == tokscan.CJK:
            hi += 1
    starts, ends = toks.starts, toks.ends
    # Context stops at the end of a sentence: the word before a full stop is not this sentence's.
    while lo < i1 and _STOP.search(text[ends[lo]:starts[lo + 1] if lo + 1 < n else ends[lo]]):
        lo += 1
    while hi > i2 and _STOP.search(text[ends[hi - 2]:starts[hi - 1]]):
        hi -= 1
    if lo >= hi:
        return ""
    shown = " ".join(text[starts[lo]:ends[hi - 1]].split())
    if len(shown) > MAX_SHOWN:
        core = " ".join(text[starts[i1]:ends[i2 - 1]].split()) if i2 > i1 else ""
        shown = core if len(core) <= MAX_SHOWN else core[: MAX_SHOWN - 1] + "…"
    return shown


def _span(toks: TokenList, i1: int, i2: int) -> tuple[int, int]:
    if i2 > i1:
        return int(toks.starts[i1]), int(toks.ends[i2 - 1])
    return (int(toks.ends[i1 - 1]),) * 2 if i1 else (0, 0)


def _rows(lp: Prepared, rp: Prepared) -> np.ndarray:
    """The differing stretches of two prepared texts, a row each (tokdiff.changes): none when they read the
    same once normalised (a copy reformatted: nothing to align), and none where only spacing differs."""
    if np.array_equal(lp.toks.hashes, rp.toks.hashes):
        return np.zeros((0, 6), dtype=np.int64)
    rows = tokdiff.changes(lp.toks.hashes, rp.toks.hashes, lp.toks.flags, rp.toks.flags, SMALL, MOVED_SHARE)
    keep = [not _respaced(lp, rp, *row[:4]) for row in rows.tolist()]
    return rows if all(keep) else rows[np.array(keep, dtype=bool)]


_BREAK = re.compile(r"\s*(?:[-\u00ad\u2010]\s*\n)?\s*")  # spacing, or a word hyphenated across a line end


@functools.cache
def spaces() -> np.ndarray:
    """Which code points of the BMP are spacing to the regular expressions (\\s: str.isspace), for
    tokdiff.respaced (no spacing lies beyond the BMP)."""
    return np.array([chr(c).isspace() for c in range(0x10000)], dtype=np.bool_)


def _respaced(lp: Prepared, rp: Prepared, i1: int, i2: int, j1: int, j2: int) -> bool:
    """Whether a differing stretch is one text's tokens cut or joined by spacing alone: `864 00` for `86400`,
    a token broken across a re-wrapped line. Its normalised characters are the same on both sides, and only
    spaces, line breaks or an end-of-line hyphen stand between the tokens of either side."""
    if i2 - i1 == j2 - j1 or i1 == i2 or j1 == j2:  # one for one is a change; a stretch on one side an insertion
        return False
    lt, rt = lp.toks, rp.toks
    if not np.array_equal(lt.buf[lt.fs[i1]:lt.fe[i2 - 1]], rt.buf[rt.fs[j1]:rt.fe[j2 - 1]]):
        return False
    return all(_BREAK.fullmatch(p.text, int(t.ends[k]), int(t.starts[k + 1])) is not None
               for p, t, a, b in ((lp, lt, i1, i2), (rp, rt, j1, j2)) for k in range(a, b - 1))


def signal(lp: Prepared, rp: Prepared, i1: int, i2: int, j1: int, j2: int, examine: int) -> Signal | None:
    """The revision signal of a small stretch tokdiff marked for a look; tokens become tuples only here."""
    lt, rt = lp.toks, rp.toks
    if not examine or (examine == 2 and not _persian_negation(lt.norm(i1), rt.norm(j1))):
        return None
    lo, hi = max(i1 - 1, 0), min(i2 + 1, len(lt))
    around = lt.span(lo, hi)  # the stretch with a token each side, in one read
    before = around[0] if i1 > 0 else None
    after = around[-1] if i2 < len(lt) else None
    kind = _kind(around[i1 - lo:i2 - lo], rt.span(j1, j2), before, after)
    return None if kind is None else Signal(kind, _shown(lp.text, lt, i1, i2), _shown(rp.text, rt, j1, j2))


def diff(left: str | Prepared, right: str | Prepared) -> tuple[list[Change], bool]:
    """The differing stretches of two raw texts, each with its revision signal if any; and whether the texts
    were too long to diff in full (then only their first MAX_TOKENS tokens are compared)."""
    lp, rp = prepare(left), prepare(right)
    changes = [Change(_span(lp.toks, i1, i2), _span(rp.toks, j1, j2), signal(lp, rp, i1, i2, j1, j2, examine),
                      bool(moved))
               for i1, i2, j1, j2, moved, examine in _rows(lp, rp).tolist()]
    return changes, lp.truncated or rp.truncated


def signals(left: str, right: str) -> list[Signal]:
    return [c.signal for c in diff(left, right)[0] if c.signal is not None]


@dataclass(frozen=True)
class Comparison:
    """What the diff of two texts says in brief: its signals, and the share of both texts' tokens in changed
    stretches (a light edit changes a few per cent; a rewrite most) and in stretches that only moved."""

    signals: list[Signal]
    changed_share: float
    moved_share: float


def tiles(lp: Prepared, rp: Prepared) -> np.ndarray:
    """The runs of at least TILE tokens the two texts share, longest first and each token once, in any order
    (tokdiff.tiles): rows (left token, right token, length) in left order."""
    lkeys, _ = lp.grams()
    _, rindex = rp.grams()
    return tokdiff.tiles(lp.toks.hashes, rp.toks.hashes, lkeys, rindex, TILE, ANCHORS)


def covered(tiled: np.ndarray, n: int, side: int) -> np.ndarray:
    """For each of a text's n tokens, 1 where a tile covers it (side 0: left, 1: right), as prefix sums
    (tokdiff.covered; covered_reference in numpy)."""
    return tokdiff.covered(tiled, n, side)


def covered_reference(tiled: np.ndarray, n: int, side: int) -> np.ndarray:
    marks = np.zeros(n + 1, dtype=np.int64)
    np.add.at(marks, tiled[:, side], 1)
    np.add.at(marks, tiled[:, side] + tiled[:, 2], -1)
    return np.concatenate(([0], np.cumsum(np.cumsum(marks)[:n])))


def compare(left: str | Prepared, right: str | Prepared, tiled: np.ndarray | None = None) -> Comparison:
    """The diff in brief. A stretch the alignment could not match but whose tokens lie in tiles (runs found
    in the other text, wherever) moved: the tokens of a permutation, of paragraphs, lines or sentences alike,
    count as moved, not changed, and a stretch covered on both sides carries no signal."""
    lp, rp = prepare(left), prepare(right)
    rows = _rows(lp, rp)
    total = (len(lp.toks) + len(rp.toks)) or 1
    if rows.shape[0] == 0:
        return Comparison([], 0.0, 0.0)
    tiled = tiles(lp, rp) if tiled is None else tiled
    # Of the stretches that did not move as a whole, the tiled tokens moved and the rest changed.
    moved, changed, shifted = tokdiff.moved_rows(rows, tiled, len(lp.toks), len(rp.toks), MOVED_SHARE)
    found = [signal(lp, rp, *row[:4], row[5]) for row in rows[(rows[:, 5] > 0) & ~moved].tolist()]
    return Comparison([s for s in found if s is not None], changed / total, shifted / total)


def signals_text(found: list[Signal]) -> str:
    """`V → mV; 每周 → 每天` (empty when there is none): the export column."""
    return "; ".join(str(s) for s in found)


def warm() -> None:
    """Load the token diff's kernels once (from numba's cache, else compile), as fast.warm does the shingle
    kernels', before a worker forks its work-horses."""
    compare("warm up 12 V", "warm up the 13 mV")
