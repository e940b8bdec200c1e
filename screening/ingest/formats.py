"""Reading uploaded files into document records (no Django imports).

Formats: a ZIP of UTF-8 `.txt` files (optional `manifest.csv` at its root), a single `.txt`, JSONL and
CSV with the fields of FIELDS. `read_records` streams: it yields every valid record and appends a
`Problem` for every invalid one, so a caller sees the whole list of problems in one pass and decides
(all-or-nothing) what to store. Limits are counted on the bytes actually read, never taken from sizes
that an archive declares.
"""

from __future__ import annotations

import csv
import json
import re
import stat
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path, PurePosixPath
from typing import BinaryIO, Protocol

from dedup_site import storable

FIELDS = ("doc_id", "source_id", "version", "language", "title", "body", "collected_at")
_FIELD_SET = frozenset(FIELDS)
MANIFEST_FIELDS = ("file", "doc_id", "source_id", "version", "language", "title", "collected_at")
FORMATS = {".zip": "zip", ".txt": "txt", ".jsonl": "jsonl", ".csv": "csv"}

LANGUAGE_RE = re.compile(r"[a-z]{2,3}(-[a-z0-9]{2,8})*")
# Unicode category Cc, exactly: one search instead of a category lookup per character.
CONTROL_RE = re.compile("[\x00-\x1f\x7f-\x9f]")
MAX_ID_CHARS = 200
MAX_VERSION_CHARS = 100
MAX_TITLE_CHARS = 2000
ARCHIVE_SUFFIXES = {".zip", ".gz", ".tgz", ".tar", ".bz2", ".xz", ".7z", ".rar", ".jar", ".zst"}
ARCHIVE_MAGIC = (
    b"PK\x03\x04", b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"7z\xbc\xaf\x27\x1c", b"Rar!", b"\x28\xb5\x2f\xfd"
)
IGNORED_MEMBERS = ("__MACOSX/", ".DS_Store")
CHUNK = 1 << 16


@dataclass(frozen=True)
class Limits:
    upload_bytes: int
    zip_members: int
    member_bytes: int
    expanded_bytes: int
    compression_ratio: int


def gettext_noop(text: str) -> str:
    """Marks a rule's words for the interface's catalogs (makemessages reads the name); it does nothing else:
    this module stays free of Django, and the pages say a rule in the reader's language from its code."""
    return text


# Every rule an upload can break, by code: the English words stored with each problem (and shown to the
# command line and the API), and the message the pages translate, with the same values.
RULES = {
    "utf16": gettext_noop("the file is UTF-16 (it starts with a UTF-16 byte-order mark); save it as UTF-8"),
    "not-utf8": gettext_noop("is not UTF-8: invalid byte(s) {bytes} at byte {at}; only UTF-8 text is accepted"),
    "not-utf8-utf16": gettext_noop("is not UTF-8: invalid byte(s) {bytes} at byte {at} (looks like UTF-16); only "
                                   "UTF-8 text is accepted"),
    "nul-byte": gettext_noop("contains a NUL byte (line {line}); NUL bytes are not allowed in text"),
    "nul-character": gettext_noop("contains a NUL character"),
    "surrogate": gettext_noop("is not valid UTF-8 text (it holds a lone surrogate, {code_point})"),
    "not-text": gettext_noop("must be text, not {type}"),
    "empty": gettext_noop("must not be empty"),
    "too-long": gettext_noop("is longer than {limit} characters"),
    "whitespace-ends": gettext_noop("must not start or end with whitespace"),
    "control-characters": gettext_noop("must not contain control characters"),
    "version-type": gettext_noop("must be text or an integer, not {type}"),
    "language-required": gettext_noop("is required (give it per record, in a ZIP's manifest.csv, or for the whole "
                                      "upload: the upload form's language, import_corpus --language)"),
    "language-tag": gettext_noop("{tag} is not a lowercase language tag such as fa, en, zh-hant"),
    "required": gettext_noop("is required"),
    "blank": gettext_noop("is empty or only whitespace"),
    "too-large": gettext_noop("is larger than the {limit}-byte document limit"),
    "unknown-field": gettext_noop("unknown field; the fields are {fields}"),
    "timestamp-type": gettext_noop("must be an ISO 8601 text, not {type}"),
    "timestamp": gettext_noop("{value} is not an ISO 8601 date or date-time"),
    "not-json": gettext_noop("is not valid JSON ({error} at column {column})"),
    "not-object": gettext_noop("must be a JSON object, not {type}"),
    "csv-empty": gettext_noop("is empty; the first line must name the columns"),
    "unknown-column": gettext_noop("unknown column; the columns are {columns}"),
    "column-twice": gettext_noop("a column name appears twice"),
    "cells": gettext_noop("has {cells} cells, the header has {header}"),
    "cell-too-large": gettext_noop("has a cell that is larger than the {limit}-byte document limit"),
    "not-csv": gettext_noop("is not valid CSV ({error})"),
    "member-too-large": gettext_noop("is larger than the {limit}-byte document limit once expanded"),
    "archive-too-large": gettext_noop("the archive expands to more than the {limit}-byte limit"),
    "zip-bomb": gettext_noop("expands more than {ratio}× its compressed size (a zip bomb?)"),
    "unreadable": gettext_noop("cannot be read ({error})"),
    "nested-archive": gettext_noop("is an archive; nested archives are not accepted"),
    "absolute-path": gettext_noop("has an absolute path; members must use relative paths"),
    "dot-dot": gettext_noop("contains '..'; members must stay inside the archive"),
    "symbolic-link": gettext_noop("is a symbolic link; links are not accepted"),
    "not-zip": gettext_noop("is not a readable ZIP archive ({error})"),
    "too-many-members": gettext_noop("has {count} members; the limit is {limit}"),
    "not-txt-member": gettext_noop("is not a .txt file; a ZIP may hold only .txt files and manifest.csv"),
    "manifest-missing-member": gettext_noop("names {file}, which is not a .txt member of the archive"),
    "listed-twice": gettext_noop("{file} is listed twice"),
    "upload-too-large": gettext_noop("is {size} bytes; the upload limit is {limit}"),
    "unsupported-type": gettext_noop("has an unsupported type; upload one of {formats}"),
    "doc-id-twice": gettext_noop("{doc_id} appears twice (first at {first})"),
    "in-corpus": gettext_noop("{doc_id} is already in corpus {corpus}"),
    "in-corpus-race": gettext_noop("a doc_id is already in the corpus ({error})"),
}


class Rule(str):
    """A broken rule: its English words (what is stored and printed), and its code and values, from which a
    page says it again in the reader's language. Integers are written with thousands separators."""

    code: str
    values: dict[str, str]

    def __new__(cls, code: str, **values) -> Rule:
        written = {k: f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v) for k, v in values.items()}
        rule = super().__new__(cls, RULES[code].format(**written))
        rule.code, rule.values = code, written
        return rule

    def __reduce__(self):  # pickled (a reading process hands its problems over) by code and values
        return _rule, (self.code, self.values)


def _rule(code: str, values: dict[str, str]) -> Rule:
    return Rule(code, **values)


@dataclass(frozen=True)
class Problem:
    place: str  # "docs.jsonl line 3", "guides.zip member a/b.txt"
    field: str  # "" when the problem is not about one field
    rule: str  # a Rule when made here (its code and values kept)

    def __str__(self) -> str:
        where = f"{self.place}, field {self.field}" if self.field else self.place
        return f"{where}: {self.rule}"

    def parts(self) -> dict:
        """What a page needs to say the problem in another language."""
        return {"place": self.place, "field": self.field, "code": getattr(self.rule, "code", ""),
                "values": getattr(self.rule, "values", {})}


LANGUAGE_REQUIRED = RULES["language-required"]
_SPECIFIC = re.compile(r"'[^']*'|\"[^\"]*\"|\d+")


def group_problems(problems: list[Problem], examples: int = 3) -> list[dict]:
    """One entry per rule broken (quoted values and numbers set aside, so "doc_id 'A' appears twice" and
    "doc_id 'B' appears twice" are one rule): the field, the rule as first met, how many times, and the
    first few places with their whole message. In the order the rules were first broken."""
    groups: dict[tuple[str, str], dict] = {}
    for problem in problems:
        key = (problem.field, _SPECIFIC.sub("…", problem.rule))
        group = groups.get(key)
        if group is None:
            group = groups[key] = {"field": problem.field, "rule": str(problem.rule), "count": 0, "examples": [],
                                   **{k: v for k, v in problem.parts().items() if k in ("code", "values")},
                                   "parts": []}
        group["count"] += 1
        if len(group["examples"]) < examples:
            group["examples"].append(str(problem))
            group["parts"].append(problem.parts())
    return list(groups.values())


@dataclass(frozen=True)
class Record:
    doc_id: str
    source_id: str
    version: str
    language: str
    title: str
    body: str
    collected_at: str
    place: str
    member_path: str = ""


@dataclass
class Report:
    """What reading found besides the records: problems (reject) and notices (informational)."""

    problems: list[Problem] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    done: int = 0  # bytes or members read so far, of `total`
    total: int = 0

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 0.0

    def problem(self, place: str, field_name: str, rule: str) -> None:
        self.problems.append(Problem(place, field_name, rule))


class Fatal(Exception):
    """Reading cannot go on (a broken or hostile archive); the problem is already reported."""


def detect_format(filename: str) -> str | None:
    return FORMATS.get(Path(filename).suffix.lower())


# --- text -----------------------------------------------------------------------------------------


def decode_text(data: bytes, place: str, report: Report, *, first: bool = True) -> str | None:
    """Strict UTF-8. A leading UTF-8 BOM is dropped and noted; other encodings are refused by name."""
    if first:
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):
            report.problem(place, "", Rule("utf16"))
            return None
        if data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]
            report.notices.append(f"{place}: a leading UTF-8 byte-order mark was dropped")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        bad = data[error.start : error.start + 4].hex(" ")
        utf16 = data[1::2].count(0) > len(data) // 4
        report.problem(place, "", Rule("not-utf8-utf16" if utf16 else "not-utf8", bytes=bad, at=error.start))
        return None
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        report.problem(place, "", Rule("nul-byte", line=line))
        return None
    return text


def _lines(stream: BinaryIO, place: str, report: Report) -> Iterator[tuple[int, str]]:
    """Decoded lines with their 1-based numbers; a line that fails decoding is reported and skipped."""
    for number, raw in enumerate(stream, start=1):
        report.done += len(raw)
        text = decode_text(raw, f"{place} line {number}", report, first=number == 1)
        if text is not None:
            yield number, text
        elif number == 1 and raw.startswith((b"\xff\xfe", b"\xfe\xff")):
            raise Fatal


# --- fields ---------------------------------------------------------------------------------------


def _check_id(value: object, place: str, name: str, report: Report) -> str | None:
    if not isinstance(value, str):
        report.problem(place, name, Rule("not-text", type=type(value).__name__))
        return None
    if not value:
        report.problem(place, name, Rule("empty"))
    elif len(value) > MAX_ID_CHARS:
        report.problem(place, name, Rule("too-long", limit=MAX_ID_CHARS))
    elif value != value.strip():
        report.problem(place, name, Rule("whitespace-ends"))
    elif CONTROL_RE.search(value):
        report.problem(place, name, Rule("control-characters"))
    else:
        return value
    return None


def _check_timestamp(value: str) -> bool:
    for parse in (date.fromisoformat, datetime.fromisoformat):
        try:
            parse(value)
            return True
        except ValueError:
            continue
    return False


def _check_version(version, place: str, report: Report) -> str:
    """Text or an integer, kept as text."""
    if isinstance(version, bool) or not isinstance(version, (str, int)):
        report.problem(place, "version", Rule("version-type", type=type(version).__name__))
        return ""
    if len(str(version)) > MAX_VERSION_CHARS:
        report.problem(place, "version", Rule("too-long", limit=MAX_VERSION_CHARS))
    return str(version)


def _check_language(language, place: str, report: Report) -> None:
    if not isinstance(language, str):
        report.problem(place, "language", Rule("not-text", type=type(language).__name__))
    elif not language:
        report.problem(place, "language", Rule("language-required"))
    elif not LANGUAGE_RE.fullmatch(language):
        report.problem(place, "language", Rule("language-tag", tag=repr(language)))


def _check_text(value, place: str, name: str, report: Report, *, limit: int) -> None:
    if not isinstance(value, str):
        report.problem(place, name, Rule("not-text", type=type(value).__name__))
    elif len(value) > limit:
        report.problem(place, name, Rule("too-long", limit=limit))


def too_large(limit: int) -> Rule:
    """The rule of the document limit, in the same words for a .txt file, a ZIP member and a record's body."""
    return Rule("too-large", limit=limit)


def _check_body(body, place: str, report: Report, limit: int | None) -> None:
    if body is None:
        report.problem(place, "body", Rule("required"))
    elif not isinstance(body, str):
        report.problem(place, "body", Rule("not-text", type=type(body).__name__))
    elif not body.strip():
        report.problem(place, "body", Rule("blank"))
    # Bytes as stored (UTF-8), measured only when the characters alone cannot settle it (4 bytes at most each).
    elif limit is not None and len(body) * 4 > limit and (
            len(body) > limit or len(body.encode("utf-8", "surrogatepass")) > limit):
        report.problem(place, "body", too_large(limit))


def validate(raw: dict, place: str, report: Report, *, default_language: str = "", member_path: str = "",
             typed: bool = True, max_body: int | None = None) -> Record | None:
    """Check one record's fields; report every broken rule; return the record when all hold.

    `typed` is True for JSON (values keep their JSON types) and False for CSV (everything is text,
    and an empty cell means "absent"). `max_body`: the document limit in bytes, for a body read from a
    record (a .txt file or a ZIP member was measured as it was read).
    """
    before = len(report.problems)
    known = raw.keys() <= _FIELD_SET
    if not known:
        for name in raw:
            if name not in _FIELD_SET:
                # A key is named as read, a lone surrogate escaped: no column (PostgreSQL's jsonb) stores one.
                report.problem(place, storable.shown(str(name)), Rule("unknown-field", fields=", ".join(FIELDS)))
    if typed:  # JSON: the object itself when every field is known (it is not changed here)
        values = raw if known else {k: v for k, v in raw.items() if k in _FIELD_SET}
    else:  # in CSV an empty cell means "absent", except for the body, whose emptiness is its own rule
        values = {k: v for k, v in raw.items() if k in _FIELD_SET and (v != "" or k == "body") and v is not None}

    doc_id = values.get("doc_id")
    if doc_id is None:
        report.problem(place, "doc_id", Rule("required"))
    else:
        doc_id = _check_id(doc_id, place, "doc_id", report)
    source_id = values.get("source_id", doc_id)
    if "source_id" in values:
        source_id = _check_id(values["source_id"], place, "source_id", report)

    version = _check_version(values.get("version", ""), place, report)
    language = values.get("language", default_language)
    _check_language(language, place, report)
    title = values.get("title", "")
    _check_text(title, place, "title", report, limit=MAX_TITLE_CHARS)
    body = values.get("body")
    _check_body(body, place, report, max_body)
    collected_at = values.get("collected_at", "")
    if not isinstance(collected_at, str):
        report.problem(place, "collected_at", Rule("timestamp-type", type=type(collected_at).__name__))
    elif collected_at and not _check_timestamp(collected_at):
        report.problem(place, "collected_at", Rule("timestamp", value=repr(collected_at)))

    # A NUL character, or a lone surrogate (a JSON \\ud800 escape): text no column can store.
    for name in ("title", "body", "source_id", "doc_id", "version"):
        value = values.get(name)
        if isinstance(value, str) and storable.problem(value):
            found = storable.SURROGATE.search(value)
            report.problem(place, name, Rule("surrogate", code_point=f"U+{ord(found.group()):04X}") if found
                           else Rule("nul-character"))

    if len(report.problems) > before:
        return None
    return Record(doc_id, source_id, version, language, title, body, collected_at, place, member_path)


# --- formats --------------------------------------------------------------------------------------


def _read_jsonl(stream: BinaryIO, name: str, report: Report, default_language: str, limit: int) -> Iterator[Record]:
    for number, line in _lines(stream, name, report):
        if not line or line.isspace():  # not line.strip(): that copies every line
            continue
        place = f"{name} line {number}"
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            report.problem(place, "", Rule("not-json", error=error.msg, column=error.colno))
            continue
        if not isinstance(value, dict):
            report.problem(place, "", Rule("not-object", type=type(value).__name__))
            continue
        record = validate(value, place, report, default_language=default_language, max_body=limit)
        if record:
            yield record


def _csv_rows(lines: Iterable[tuple[int, str]], name: str, report: Report, allowed: tuple[str, ...],
              limit: int | None = None) -> Iterator[tuple[int, dict]]:
    """Rows of a CSV as dicts with the physical line each starts on; the header is checked first. With
    `limit` (the document limit, for a CSV of documents), a cell may be that long rather than the csv
    module's 131,072 characters, and a longer one is refused by the document limit's rule."""
    current = [0]

    def text_lines():
        for number, line in lines:
            current[0] = number
            yield line

    reader = csv.reader(text_lines())
    previous = csv.field_size_limit(limit) if limit is not None else None  # the module's, set back after
    try:
        yield from _csv_checked(reader, name, report, allowed, current, limit)
    finally:
        if previous is not None:
            csv.field_size_limit(previous)


def _csv_checked(reader, name: str, report: Report, allowed: tuple[str, ...], current: list[int],
                 limit: int | None) -> Iterator[tuple[int, dict]]:
    header = next(reader, None)
    if header is None:
        report.problem(name, "", Rule("csv-empty"))
        return
    unknown = [h for h in header if h not in allowed]
    for h in unknown:
        report.problem(f"{name} line 1", h, Rule("unknown-column", columns=", ".join(allowed)))
    if len(set(header)) != len(header):
        report.problem(f"{name} line 1", "", Rule("column-twice"))
    if unknown or len(set(header)) != len(header):
        return
    start = current[0] + 1
    try:
        for row in reader:
            if row:
                if len(row) != len(header):
                    report.problem(f"{name} line {start}", "", Rule("cells", cells=len(row), header=len(header)))
                else:
                    yield start, dict(zip(header, row, strict=True))
            start = current[0] + 1
    except csv.Error as error:
        if limit is not None and "field limit" in str(error):  # a cell of more characters than the limit's bytes
            report.problem(f"{name} line {start}", "", Rule("cell-too-large", limit=limit))
        else:
            report.problem(f"{name} line {current[0]}", "", Rule("not-csv", error=error))


def _read_csv(stream: BinaryIO, name: str, report: Report, default_language: str, limit: int) -> Iterator[Record]:
    for number, row in _csv_rows(_lines(stream, name, report), name, report, FIELDS, limit):
        record = validate(row, f"{name} line {number}", report, default_language=default_language, typed=False,
                          max_body=limit)
        if record:
            yield record


def _read_txt(data: bytes, name: str, report: Report, defaults: dict, member_path: str = "") -> Iterator[Record]:
    text = decode_text(data, name, report)
    if text is None:
        return
    record = validate(dict(defaults, body=text), name, report, member_path=member_path, typed=False)
    if record:
        yield record


def _member_problem(info: zipfile.ZipInfo) -> Rule | None:
    name = info.filename
    path = PurePosixPath(name.replace("\\", "/"))
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
        return Rule("absolute-path")
    if ".." in path.parts:
        return Rule("dot-dot")
    if stat.S_ISLNK(info.external_attr >> 16):
        return Rule("symbolic-link")
    if path.suffix.lower() in ARCHIVE_SUFFIXES:
        return Rule("nested-archive")
    return None


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, place: str, limits: Limits, report: Report,
                 expanded: list[int]) -> bytes | None:
    """Read one member, counting real bytes against the caps. None after reporting a problem."""
    chunks, size = [], 0
    try:
        with zf.open(info) as stream:
            while chunk := stream.read(CHUNK):
                size += len(chunk)
                expanded[0] += len(chunk)
                if size > limits.member_bytes:
                    report.problem(place, "", Rule("member-too-large", limit=limits.member_bytes))
                    return None
                if expanded[0] > limits.expanded_bytes:
                    report.problem(place, "", Rule("archive-too-large", limit=limits.expanded_bytes))
                    raise Fatal
                if size > CHUNK and size > limits.compression_ratio * max(info.compress_size, 1):
                    report.problem(place, "", Rule("zip-bomb", ratio=limits.compression_ratio))
                    raise Fatal
                chunks.append(chunk)
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError) as error:
        report.problem(place, "", Rule("unreadable", error=error))
        return None
    data = b"".join(chunks)
    if data.startswith(ARCHIVE_MAGIC) or data[257:262] == b"ustar":
        report.problem(place, "", Rule("nested-archive"))
        return None
    return data


class Stored(Protocol):
    """A stored upload that is not a local file (an object in a bucket): its size and a seekable stream."""

    size: int

    def open(self) -> BinaryIO: ...


def _size(path: Path | Stored) -> int:
    return path.stat().st_size if isinstance(path, Path) else path.size


def _open(path: Path | Stored) -> BinaryIO:
    return open(path, "rb") if isinstance(path, Path) else path.open()  # noqa: SIM115 - the caller closes it


def _read_zip(path: Path | Stored, name: str, report: Report, default_language: str,
              limits: Limits) -> Iterator[Record]:
    try:
        zf = zipfile.ZipFile(path if isinstance(path, Path) else path.open())
    except (zipfile.BadZipFile, OSError) as error:
        report.problem(name, "", Rule("not-zip", error=error))
        return
    with zf:
        infos = zf.infolist()
        if len(infos) > limits.zip_members:
            report.problem(name, "", Rule("too-many-members", count=len(infos), limit=limits.zip_members))
            return
        expanded = [0]
        manifest: dict[str, dict] = {}
        members = []
        for info in infos:
            place = f"{name} member {info.filename}"
            problem = _member_problem(info)
            if problem:
                report.problem(place, "", problem)
                continue
            if info.is_dir() or info.filename.startswith(IGNORED_MEMBERS) or info.filename.endswith(IGNORED_MEMBERS):
                continue
            if info.filename == "manifest.csv":
                manifest = _read_manifest(zf, info, place, limits, report, expanded)
            elif PurePosixPath(info.filename).suffix.lower() == ".txt":
                members.append(info)
            else:
                report.problem(place, "", Rule("not-txt-member"))
        names = {info.filename for info in members}
        for missing in sorted(set(manifest) - names):
            report.problem(f"{name} member manifest.csv line {manifest[missing]['_line']}", "file",
                           Rule("manifest-missing-member", file=repr(missing)))
        report.done, report.total = 0, len(members)
        for info in members:
            report.done += 1
            place = f"{name} member {info.filename}"
            data = _read_member(zf, info, place, limits, report, expanded)
            if data is None:
                continue
            stem = info.filename[: -len(".txt")]
            defaults = {"doc_id": stem, "language": default_language}
            row = {k: v for k, v in manifest.get(info.filename, {}).items() if k not in ("file", "_line")}
            defaults.update(row)
            yield from _read_txt(data, place, report, defaults, member_path=info.filename)


def _read_manifest(zf, info, place, limits, report, expanded) -> dict[str, dict]:
    data = _read_member(zf, info, place, limits, report, expanded)
    if data is None:
        return {}
    text = decode_text(data, place, report)
    if text is None:
        return {}
    lines = enumerate(text.splitlines(keepends=True), start=1)
    rows: dict[str, dict] = {}
    for number, row in _csv_rows(lines, place, report, MANIFEST_FIELDS):
        file = row.get("file", "")
        if not file:
            report.problem(f"{place} line {number}", "file", Rule("required"))
        elif file in rows:
            report.problem(f"{place} line {number}", "file", Rule("listed-twice", file=repr(file)))
        else:
            rows[file] = dict({k: v for k, v in row.items() if v != ""}, _line=number)
    return rows


def read_records(path: Path | Stored, filename: str, report: Report, *, default_language: str = "",
                 limits: Limits) -> Iterator[Record]:
    """Yield the valid records of the upload stored at `path` (original name `filename`)."""
    fmt = detect_format(filename)
    size = _size(path)
    if size > limits.upload_bytes:
        report.problem(filename, "", Rule("upload-too-large", size=size, limit=limits.upload_bytes))
        return
    if fmt is None:
        report.problem(filename, "", Rule("unsupported-type", formats=", ".join(FORMATS)))
        return
    try:
        if fmt == "zip":
            yield from _read_zip(path, filename, report, default_language, limits)
        elif fmt == "txt":
            if size > limits.member_bytes:
                report.problem(filename, "", too_large(limits.member_bytes))
                return
            stem = Path(filename).stem
            with _open(path) as stream:
                data = stream.read()
            yield from _read_txt(data, filename, report, {"doc_id": stem, "language": default_language})
        else:
            reader = _read_jsonl if fmt == "jsonl" else _read_csv
            report.total = size
            with _open(path) as stream:
                yield from reader(stream, filename, report, default_language, limits.member_bytes)
    except Fatal:
        return


def read_all(path: Path, filename: str, *, default_language: str = "", limits: Limits) -> tuple[list[Record], Report]:
    """Convenience for small files and tests: every valid record and the report."""
    report = Report()
    records = list(read_records(path, filename, report, default_language=default_language, limits=limits))
    return records, report
