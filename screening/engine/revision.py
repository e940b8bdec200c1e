"""Token diff of two raw texts and the revision signals in it (no Django imports).

Tokens keep numbers, dates and units whole, so `12.5 V → 12.5 mV` is one unit change, not letters. A
*revision signal* is a changed number, date, unit or negation: a hint that the pair may be a valid revision
rather than a copy. Whitespace and line endings are not tokens, so a pure reformat has no difference at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rapidfuzz.distance import Indel

MAX_TOKENS = 50_000  # per side; beyond it the diff covers the beginning only (and says so)

_DIGIT = r"[0-9\u0660-\u0669\u06F0-\u06F9]"
TOKEN_RE = re.compile(
    rf"{_DIGIT}{{1,4}}[-/.]{_DIGIT}{{1,2}}[-/.]{_DIGIT}{{1,4}}"  # dates: 2024-05-01, 1403/07/24, 01.05.2024
    rf"|{_DIGIT}+(?:[.,٫٬]{_DIGIT}+)*"  # numbers: 12, 12.5, 1,000, ۱۲٫۵
    r"|[\u3400-\u9FFF\uF900-\uFAFF]"  # each CJK ideograph is a token
    r"|[^\W\d_]+"  # words (letters only)
    r"|[^\w\s]",  # any other visible character, alone
    re.UNICODE,
)
DATE_RE = re.compile(rf"{_DIGIT}{{1,4}}[-/.]{_DIGIT}{{1,2}}[-/.]{_DIGIT}{{1,4}}")
NUMBER_RE = re.compile(rf"{_DIGIT}+(?:[.,٫٬]{_DIGIT}+)*")
UNITS = {
    # SI and common technical units (case matters: mV is not MV)
    "V", "mV", "kV", "MV", "µV", "A", "mA", "kA", "µA", "W", "mW", "kW", "MW", "GW", "Wh", "kWh", "MWh", "Hz", "kHz",
    "MHz", "GHz", "Ω", "kΩ", "MΩ", "F", "µF", "nF", "pF", "H", "mH", "J", "kJ", "N", "Pa", "kPa", "MPa", "bar", "psi",
    "m", "cm", "mm", "µm", "nm", "km", "in", "ft", "mi", "g", "mg", "kg", "t", "lb", "oz", "l", "L", "ml", "mL",
    "s", "ms", "µs", "ns", "min", "h", "hr", "d", "°C", "°F", "K", "%", "‰", "dB", "B", "KB", "MB", "GB", "TB",
    "bit", "kbit", "Mbit", "rpm",
    "second", "seconds", "minute", "minutes", "hour", "hours", "day", "days", "week", "weeks", "month", "months",
    "year", "years", "daily", "weekly", "monthly", "yearly", "hourly",
    # Chinese units and periods (single ideographs: tokens are per character)
    "秒", "分", "时", "天", "日", "周", "月", "年", "次", "米", "克", "升", "伏", "安", "瓦", "度", "元",
    # Persian units and periods
    "ولت", "میلی‌ولت", "آمپر", "وات", "ثانیه", "دقیقه", "ساعت", "روز", "هفته", "ماه", "سال", "متر", "کیلوگرم", "درصد",
}
NEGATIONS = {
    "not", "no", "never", "none", "without", "cannot", "n't", "nor",
    "不", "没", "無", "无", "未", "非", "别", "勿",
    "نه", "نیست", "نمی", "نباید", "بدون", "هیچ",
}
_CJK = re.compile(r"[\u3400-\u9FFF\uF900-\uFAFF]")


@dataclass(frozen=True)
class Signal:
    kind: str  # number | date | unit | negation
    left: str
    right: str

    def __str__(self) -> str:
        return f"{self.left}→{self.right}"


@dataclass(frozen=True)
class Change:
    """One differing stretch: `left`/`right` are (start, end) character spans in each raw text."""

    left: tuple[int, int]
    right: tuple[int, int]
    signal: Signal | None


def tokens(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(), m.start(), m.end()) for m in TOKEN_RE.finditer(text)]


def _kind(token: str) -> str | None:
    if DATE_RE.fullmatch(token):
        return "date"
    if NUMBER_RE.fullmatch(token):
        return "number"
    if token in UNITS:
        return "unit"
    if token.lower() in NEGATIONS:
        return "negation"
    return None


def _is_persian_negation(a: str, b: str) -> bool:
    """است ↔ نیست, and verbs with the negative prefix ن/نمی (می‌رود ↔ نمی‌رود, دارد ↔ ندارد)."""
    a, b = sorted((a, b), key=len)
    return (a, b) == ("است", "نیست") or b in ("ن" + a, "نمی" + a.removeprefix("می"))


def _signal(left: list[str], right: list[str], before: str) -> Signal | None:
    kinds = {_kind(t) for t in left + right} - {None}
    changed_left, changed_right = "".join(left) if _all_cjk(left) else " ".join(left), (
        "".join(right) if _all_cjk(right) else " ".join(right))
    if "negation" in kinds and (not left or not right or kinds == {"negation"}):
        # An inserted or dropped negation: show it with the word before it ("is → is not").
        return Signal("negation", f"{before} {changed_left}".strip(), f"{before} {changed_right}".strip())
    if len(left) == 1 and len(right) == 1 and _is_persian_negation(left[0], right[0]):
        return Signal("negation", left[0], right[0])
    for kind in ("date", "number", "unit", "negation"):
        if kind in kinds:
            if _all_cjk(left) and _all_cjk(right) and before and _CJK.fullmatch(before):
                # One ideograph alone reads badly: 周 → 天 is shown as 每周 → 每天.
                return Signal(kind, before + changed_left, before + changed_right)
            return Signal(kind, changed_left, changed_right)
    return None


def _all_cjk(toks: list[str]) -> bool:
    return bool(toks) and all(_CJK.fullmatch(t) for t in toks)


def opcodes(left: list[str], right: list[str]) -> list[tuple[str, int, int, int, int]]:
    """difflib-style opcodes of two token lists from a longest-common-subsequence alignment (rapidfuzz's
    Indel, in C++: about 8× faster than difflib.SequenceMatcher). A deletion next to an insertion is one
    replacement, as difflib reports it."""
    out: list[tuple[str, int, int, int, int]] = []
    for op in Indel.opcodes(left, right):
        if op.tag != "equal" and out and out[-1][0] != "equal":
            _, i1, _, j1, _ = out.pop()
            out.append(("replace", i1, op.src_end, j1, op.dest_end))
        else:
            out.append((op.tag, op.src_start, op.src_end, op.dest_start, op.dest_end))
    return out


def diff(left: str, right: str) -> tuple[list[Change], bool]:
    """The differing stretches of two raw texts, each with its revision signal if any; and whether the
    texts were too long to diff in full (then only their first MAX_TOKENS tokens are compared)."""
    lt, rt = tokens(left), tokens(right)
    truncated = len(lt) > MAX_TOKENS or len(rt) > MAX_TOKENS
    lt, rt = lt[:MAX_TOKENS], rt[:MAX_TOKENS]
    changes = []
    for op, i1, i2, j1, j2 in opcodes([t[0] for t in lt], [t[0] for t in rt]):
        if op == "equal":
            continue
        before = lt[i1 - 1][0] if i1 > 0 else ""
        signal = _signal([t[0] for t in lt[i1:i2]], [t[0] for t in rt[j1:j2]], before)
        lspan = (lt[i1][1], lt[i2 - 1][2]) if i2 > i1 else ((lt[i1 - 1][2],) * 2 if i1 else (0, 0))
        rspan = (rt[j1][1], rt[j2 - 1][2]) if j2 > j1 else ((rt[j1 - 1][2],) * 2 if j1 else (0, 0))
        changes.append(Change(lspan, rspan, signal))
    return changes, truncated


def signals(left: str, right: str) -> list[Signal]:
    return [c.signal for c in diff(left, right)[0] if c.signal is not None]


def signals_text(found: list[Signal]) -> str:
    """`V→mV; 每周→每天` (empty when there is none): the export column."""
    return "; ".join(str(s) for s in found)
