"""Exact-content contract `doc-content-v1` (seed 000).

Content bytes are the UTF-8 of the JSON array ["doc-content-v1", language, title, body], non-ASCII kept and
no spaces. `doc_id` and `source_id` are outside equality; language is inside. Nothing is normalised: LF vs
CRLF, NFC vs NFD, ی vs ي, case and trailing spaces all stay distinct. The digest only buckets candidates;
two documents share a group only when their full content bytes are equal. The representative is the
smallest doc_id, members are listed in doc_id order, and input order changes nothing.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

CONTRACT = "doc-content-v1"
HEX64 = re.compile(r"[0-9a-f]{64}")
_STRING = json.encoder.encode_basestring  # json.dumps's own escaping of a str (ensure_ascii=False)
# What that escaping changes, as UTF-8 bytes (no byte of a multi-byte sequence is below 0x80, so escaping the
# bytes is escaping the text): the backslash first, since every other escape adds one.
_ESCAPES = ((b"\\", b"\\\\"), (b'"', b'\\"'), (b"\n", b"\\n"), (b"\r", b"\\r"), (b"\t", b"\\t"),
            (b"\b", b"\\b"), (b"\f", b"\\f"))
_RARE = bytes(c for c in range(0x20) if c not in b"\n\r\t\b\f")  # escaped as \u00XX: left to json's function

_OPEN, _CLOSE = f'["{CONTRACT}",'.encode(), b'"]'

Digest = Callable[[bytes], str]


def content_bytes(language: str, title: str, body: str) -> bytes:
    for name, value in (("language", language), ("title", title), ("body", body)):
        if type(value) is not str:
            raise ValueError(f"{name} must be a str, not {type(value).__name__}")
    # What json.dumps([CONTRACT, language, title, body], ensure_ascii=False, separators=(",", ":")) writes.
    try:
        # Language and title are short: json's own function is quicker there than seven replacements.
        return b"".join((_OPEN, _STRING(language).encode(), b",", _STRING(title).encode(), b',"', _escaped(body),
                         _CLOSE))
    except UnicodeEncodeError as error:
        raise ValueError(f"text is not encodable as UTF-8 ({error.reason} at {error.start})") from error


def _escaped(value: str) -> bytes:
    """json's escaping of a str, as UTF-8 without the quotes, by bytes.replace: json's own C function takes
    about twice as long (bench/HISTORY.md)."""
    raw = value.encode("utf-8")
    # The rare control characters are ASCII: look for them among the ASCII ones only (one C loop each; a
    # regex or `in` per byte took longer).
    ascii_part = raw if value.isascii() else value.encode("ascii", "ignore")
    if len(ascii_part.translate(None, _RARE)) != len(ascii_part):
        return _STRING(value)[1:-1].encode("utf-8")
    for plain, escaped in _ESCAPES:
        raw = raw.replace(plain, escaped)
    return raw


def sha256_hex(payload: bytes) -> str:
    return hashlib.sha256(payload).hexdigest()


def checked_digest(digest: Digest, payload: bytes) -> str:
    value = digest(payload)
    if type(value) is not str or HEX64.fullmatch(value) is None:
        raise ValueError(f"digest function returned {value!r}; expected 64 lowercase hexadecimal characters")
    return value


@dataclass(frozen=True)
class Member:
    doc_id: str
    source_id: str


@dataclass(frozen=True)
class Group:
    representative: str
    digest: str
    length: int  # content bytes
    members: tuple[Member, ...]


def group_records(records: Iterable[Mapping], digest: Digest = sha256_hex) -> list[Group]:
    """Group records with equal content bytes. Records need doc_id, source_id, language, title, body.

    Returns every group (singletons included) ordered by representative doc_id. The result holds copies,
    so mutating an input record afterwards changes nothing in it.
    """
    prepared = []
    seen: set[str] = set()
    for record in records:
        doc_id, source_id = record["doc_id"], record["source_id"]
        if type(doc_id) is not str or type(source_id) is not str:
            raise ValueError(f"doc_id and source_id must be str (record {doc_id!r})")
        if doc_id in seen:
            raise ValueError(f"doc_id {doc_id!r} appears twice")
        seen.add(doc_id)
        try:
            content = content_bytes(record["language"], record["title"], record["body"])
        except ValueError as error:
            raise ValueError(f"record {doc_id!r}: {error}") from error
        prepared.append((doc_id, source_id, content, checked_digest(digest, content)))

    buckets: dict[str, list[tuple[bytes, list]]] = {}
    groups: list[tuple[str, str, bytes, list]] = []
    for doc_id, source_id, content, key in sorted(prepared):
        bucket = buckets.setdefault(key, [])
        # Equal digests only make candidates: the full bytes decide.
        found = next((members for other, members in bucket if other == content), None)
        if found is None:
            found = []
            bucket.append((content, found))
            groups.append((doc_id, key, content, found))
        found.append(Member(doc_id, source_id))
    return [Group(rep, key, len(content), tuple(members)) for rep, key, content, members in groups]
