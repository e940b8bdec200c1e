"""Reading a labels CSV: `left_id,right_id,label` plus optional `reason`, `split` (no Django imports).

Label 1 = a copy that should go to merge review, 0 = should not. Every problem is reported with its line;
the caller stores all rows or none. Unknown doc ids are checked by the caller (it knows the corpus).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

REQUIRED = ("left_id", "right_id", "label")
OPTIONAL = ("reason", "split")
SPLITS = ("tuning", "acceptance")


@dataclass(frozen=True)
class LabelRow:
    left_id: str
    right_id: str
    label: int
    reason: str
    split: str
    line: int

    @property
    def key(self) -> tuple[str, str]:
        return tuple(sorted((self.left_id, self.right_id)))


def _records(reader: csv.DictReader, name: str, problems: list[str]):
    """The reader's rows; a row the csv module cannot read (a cell over its size limit, a stray quote in
    strict mode) ends the reading with a problem naming its line, rather than an exception."""
    while True:
        try:
            yield next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            problems.append(f"{name} line {reader.line_num + 1}: cannot be read as CSV ({error}); a label row's cells "
                            f"are at most {csv.field_size_limit():,} characters")
            return


def read_labels(data: bytes, name: str) -> tuple[list[LabelRow], list[str], list[str]]:
    """(valid rows, problems, notices): with any problem the caller must store nothing."""
    problems: list[str] = []
    notices: list[str] = []
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
        notices.append(f"{name}: a leading UTF-8 byte-order mark was dropped")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return [], [f"{name}: is not UTF-8 (invalid byte at {error.start}); save it as UTF-8"], notices
    if "\x00" in text:
        return [], [f"{name}: contains a NUL byte"], notices
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = reader.fieldnames or []
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        return [], [f"{name} line 1: missing column(s) {', '.join(missing)}; "
                    f"the columns are {', '.join(REQUIRED + OPTIONAL)}"], notices
    extra = [c for c in header if c not in REQUIRED + OPTIONAL]
    if extra:
        notices.append(f"{name} line 1: extra column(s) {', '.join(extra)} ignored")
    rows: list[LabelRow] = []
    seen: dict[tuple[str, str], LabelRow] = {}
    for record in _records(reader, name, problems):
        line = reader.line_num
        place = f"{name} line {line}"
        left, right = (record.get("left_id") or "").strip(), (record.get("right_id") or "").strip()
        raw_label = (record.get("label") or "").strip()
        split = (record.get("split") or "").strip()
        ok = True
        if not left or not right:
            problems.append(f"{place}: left_id and right_id are required")
            ok = False
        elif left == right:
            problems.append(f"{place}: pairs a document with itself ({left!r})")
            ok = False
        if raw_label not in ("0", "1"):
            problems.append(f"{place}, field label: {raw_label!r} is not 0 or 1")
            ok = False
        if split and split not in SPLITS:
            problems.append(f"{place}, field split: {split!r} is not one of {', '.join(SPLITS)}")
            ok = False
        if not ok:
            continue
        row = LabelRow(left, right, int(raw_label), (record.get("reason") or "").strip(), split, line)
        earlier = seen.get(row.key)
        if earlier is not None:
            if earlier.label != row.label:
                problems.append(f"{place}: pair ({left}, {right}) is labelled {row.label} here and {earlier.label} "
                                f"on line {earlier.line}")
            else:
                notices.append(f"{place}: pair ({left}, {right}) repeats line {earlier.line}; kept once")
            continue
        seen[row.key] = row
        rows.append(row)
    if not rows and not problems:
        problems.append(f"{name}: has no label rows")
    return rows, problems, notices
