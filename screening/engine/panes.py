"""Pieces of the pair page, as plain data for the template (no Django imports): every matched run of the
two raw texts with one colour on both sides, and the token diff with its revision signals."""

from __future__ import annotations

from dataclasses import dataclass

from screening.engine import explain, revision

PALETTE = 8
MAX_CHANGES = 300


@dataclass(frozen=True)
class Segment:
    text: str
    run: int | None = None  # matched-run number, the same on both sides

    @property
    def colour(self) -> int | None:
        return None if self.run is None else self.run % PALETTE


def _split(text: str, spans: list[tuple[int, int, int]]) -> list[Segment]:
    """Cut text into plain and matched segments; spans are (start, end, run) sorted and disjoint."""
    out, at = [], 0
    for start, end, run in spans:
        if start > at:
            out.append(Segment(text[at:start]))
        out.append(Segment(text[start:end], run))
        at = end
    if at < len(text):
        out.append(Segment(text[at:]))
    return out


def matched_segments(left: str, right: str, min_len: int) -> tuple[list[Segment], list[Segment], int]:
    """Both texts as segments, every common run of at least min_len characters numbered the same on both
    sides (runs that would overlap on the right side are left plain). Returns (left, right, run count)."""
    runs = explain.common_runs(left, right, min_len)
    kept, right_end = [], -1
    for i, j, length in sorted(runs, key=lambda r: r[1]):
        if j >= right_end:
            kept.append((i, j, length))
            right_end = j + length
    kept.sort()
    left_spans = [(i, i + n, number) for number, (i, _, n) in enumerate(kept)]
    right_spans = sorted((j, j + n, number) for number, (_, j, n) in enumerate(kept))
    return _split(left, left_spans), _split(right, right_spans), len(kept)


@dataclass(frozen=True)
class DiffRow:
    left: str
    right: str
    signal: revision.Signal | None


def diff_rows(left: str, right: str) -> tuple[list[DiffRow], bool, int]:
    """The differing stretches (the first MAX_CHANGES), whether the diff was cut, and the total count."""
    changes, truncated = revision.diff(left, right)
    rows = [DiffRow(left[c.left[0]:c.left[1]], right[c.right[0]:c.right[1]], c.signal) for c in changes[:MAX_CHANGES]]
    return rows, truncated or len(changes) > MAX_CHANGES, len(changes)
