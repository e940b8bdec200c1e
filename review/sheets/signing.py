"""Signed review sheets: CSV bytes, manifest, Ed25519 signature and the offline check (no Django imports).

The CSV is UTF-8 without BOM, RFC 4180 (CRLF, every field quoted), fixed columns, rows in a fixed order.
Each row carries its number and a hash chain (SHA-256 of the previous row's chain value and this row's
cells), so a verifier can say which row was edited, dropped or moved. The manifest names the export, the
run, who exported it and when, the row count, the SHA-256 of the CSV bytes, the previous export's manifest
hash and the meaning of the signature; it is signed with the site's Ed25519 key.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from dedup_site.csvcells import neutralise
from dedup_site.private_files import create_private

# v2: a row's record may also be "self-arbitration"; rows in time order. v3: two columns before the chain,
# decided_for_cluster (the cluster a judgement was decided for) and bulk_action (the bulk decision's number).
# v4: three more before the chain, api_token (the token that made the record), token_created_by (who made that
# token: a user name, or "command line") and by_others_token ("yes" when not the record's own maker); signed_at
# may say "refused"; the manifest carries the trail of administrative acts (trail_rows, trail_last_entry,
# trail_sha256).
FORMAT = "dedup-review-sheet-v4"
READABLE_FORMATS = ("dedup-review-sheet-v1", "dedup-review-sheet-v2", "dedup-review-sheet-v3", FORMAT)
MEANING = ("The exporting site attests that this sheet holds every judgement and arbitration of the run that "
           "matched the selection at export time, as recorded; each reviewer's own signature is shown per row.")
REVIEWER_MEANING = "I reviewed these pairs and these verdicts are mine."
COLUMNS = [
    "export_id", "row", "run_id", "pair_id", "record", "left_doc_id", "right_doc_id", "left_source_id",
    "right_source_id", "left_version", "right_version", "left_source_sha256", "right_source_sha256", "jaccard",
    "minhash_estimate", "revision_signals", "reviewer", "verdict", "reason", "retained_version", "related_source",
    "reviewed_at", "signed_at", "arbitration_status", "final_verdict", "arbiter", "arbitrated_at",
    "decided_for_cluster", "bulk_action", "api_token", "token_created_by", "by_others_token", "chain",
]
COLUMNS_V3 = [c for c in COLUMNS if c not in ("api_token", "token_created_by", "by_others_token")]
COLUMNS_V2 = [c for c in COLUMNS_V3 if c not in ("decided_for_cluster", "bulk_action")]  # v1 and v2 sheets
GENESIS = "0" * 64


def _chain(previous: str, cells: list[str]) -> str:
    payload = json.dumps([previous, cells], ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return hashlib.sha256(payload).hexdigest()


def csv_lines(export_id: int, records: Iterable[dict]) -> Iterator[bytes]:
    """The sheet's bytes, line by line: the header, then each record (a dict of COLUMNS without export_id,
    row and chain) numbered and chained in the order given."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, quoting=csv.QUOTE_ALL, lineterminator="\r\n")

    def line(cells: list[str]) -> bytes:
        buffer.seek(0)
        buffer.truncate()
        writer.writerow(cells)
        return buffer.getvalue().encode("utf-8")

    yield line(COLUMNS)
    previous = GENESIS
    for number, record in enumerate(records, start=1):
        cells = [str(export_id), str(number)] + [neutralise(record.get(c, "")) for c in COLUMNS[2:-1]]
        previous = _chain(previous, cells)
        yield line(cells + [previous])


def trail_sha256(rows: Iterable[list[str]]) -> tuple[int, str]:
    """The hash chain over the trail of administrative acts, its entries in order, each as its cells
    (dedup_site.trail.trail_cells), chained as the sheet's rows are: (how many entries, the last chain value;
    GENESIS for none). A manifest carries it, so that the trail as it stood at the export can be checked later."""
    previous, count = GENESIS, 0
    for cells in rows:
        previous = _chain(previous, cells)
        count += 1
    return count, previous


def canonical(manifest: dict) -> bytes:
    body = {k: v for k, v in manifest.items() if k != "signature"}
    return json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")


def manifest_sha256(manifest: dict) -> str:
    return hashlib.sha256(canonical(manifest)).hexdigest()


# --- keys ------------------------------------------------------------------------------------------


def load_or_create_key(path: Path) -> Ed25519PrivateKey:
    """The site's signing key, generated on first use and kept (mode 0600) outside the repository."""
    if path.exists():
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
        if not isinstance(key, Ed25519PrivateKey):
            raise ValueError(f"{path} is not an Ed25519 private key")
        return key
    path.parent.mkdir(parents=True, exist_ok=True)
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    create_private(path, pem)  # never replaces a key another process created meanwhile
    return load_or_create_key(path)


def public_pem(key: Ed25519PrivateKey | Ed25519PublicKey) -> bytes:
    public = key.public_key() if isinstance(key, Ed25519PrivateKey) else key
    return public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def fingerprint(key: Ed25519PrivateKey | Ed25519PublicKey) -> str:
    public = key.public_key() if isinstance(key, Ed25519PrivateKey) else key
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:32]


def sign(manifest: dict, key: Ed25519PrivateKey) -> dict:
    signed = dict(manifest, public_key_fingerprint=fingerprint(key))
    signed["signature"] = base64.b64encode(key.sign(canonical(signed))).decode("ascii")
    return signed


# --- verification ----------------------------------------------------------------------------------


@dataclass
class Verdict:
    valid: bool
    problems: list[str]


def _diagnose(data: bytes) -> list[str]:
    """Say which rows were edited, dropped or moved, from the row numbers and the hash chain."""
    try:
        rows = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
    except (UnicodeDecodeError, csv.Error) as error:
        return [f"the CSV cannot be read ({error})"]
    if not rows or rows[0] not in (COLUMNS, COLUMNS_V3, COLUMNS_V2):
        return ["the header row was changed"]
    body = rows[1:]
    for line, row in enumerate(body, start=2):
        if len(row) != len(rows[0]) or not row[1].isdigit():
            return [f"line {line} is malformed (its cells or its row number were changed)"]
    numbers = [int(row[1]) for row in body]
    lines_of: dict[int, list[int]] = {}
    for line, number in enumerate(numbers, start=2):
        lines_of.setdefault(number, []).append(line)
    problems = []
    repeated = [(number, lines) for number, lines in sorted(lines_of.items()) if len(lines) > 1]
    if repeated:  # a copy of a row carries its number and its chain hash: it is a duplicate, not an edit
        shown = "; ".join(f"row {number} on lines {', '.join(map(str, lines[:-1]))} and {lines[-1]}"
                          for number, lines in repeated[:10]) + (" …" if len(repeated) > 10 else "")
        problems.append(f"{'rows were' if len(repeated) > 1 else 'a row was'} duplicated: {shown}")
    missing = sorted(set(range(1, max(numbers, default=0) + 1)) - set(numbers))
    if missing:
        shown = ", ".join(map(str, missing[:10])) + (" …" if len(missing) > 10 else "")
        problems.append(f"row{'s' if len(missing) > 1 else ''} {shown} {'are' if len(missing) > 1 else 'is'} "
                        f"missing (dropped)")
    if problems:
        return problems
    if numbers != sorted(numbers):
        line = next(i for i, n in enumerate(numbers) if n != i + 1) + 2
        return [f"rows were reordered: line {line} holds row {numbers[line - 2]}, where row {line - 1} belongs"]
    previous = GENESIS
    for line, row in enumerate(body, start=2):
        if _chain(previous, row[:-1]) != row[-1]:
            return [f"row {row[1]} (line {line}) was edited: its cells do not match its chain hash"]
        previous = row[-1]
    return []


class ManifestError(ValueError):
    """A manifest that cannot be checked as it stands; the message says why."""


def _unique_keys(items: list[tuple[str, object]]) -> dict:
    seen = {}
    for key, value in items:
        if key in seen:
            raise ManifestError(f"the manifest repeats the key {key!r}: a reader would see one of its values and a "
                                f"check another")
        seen[key] = value
    return seen


# A manifest nests three levels; one nested deeper than this was not written by an export, and walking it (the
# json module, a check's recursion) could exhaust the stack.
MAX_MANIFEST_DEPTH = 32


def _deeper_than(value, limit: int) -> bool:
    """Whether objects and arrays nest more than `limit` levels (a walk with a stack, not recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > limit:
                return True
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return False


def manifest_read(text: str) -> dict:
    """A manifest's JSON: one object, no key twice, nested no deeper than MAX_MANIFEST_DEPTH (ManifestError
    otherwise)."""
    deep = ManifestError(f"the manifest nests deeper than {MAX_MANIFEST_DEPTH} levels (a sheet's manifest nests "
                         f"3): it was not written by an export")
    try:
        manifest = json.loads(text, object_pairs_hook=_unique_keys)
    except ManifestError:
        raise
    except RecursionError:
        raise deep from None
    except ValueError as error:
        raise ManifestError(f"the manifest is not JSON ({error})") from None
    if not isinstance(manifest, dict):
        raise ManifestError(f"the manifest is a JSON {type(manifest).__name__}, not an object")
    if _deeper_than(manifest, MAX_MANIFEST_DEPTH):
        raise deep
    return manifest


def verify(data: bytes, manifest: dict, public_key: Ed25519PublicKey) -> Verdict:
    """Check a sheet's bytes against its manifest and the manifest against the public key."""
    if not isinstance(manifest, dict):
        return Verdict(False, [f"the manifest is a JSON {type(manifest).__name__}, not an object"])
    problems = []
    if not isinstance(manifest.get("signature", ""), str):
        problems.append(f"the manifest's signature is a JSON {type(manifest['signature']).__name__}, not base64 text")
    try:
        signature = base64.b64decode(str(manifest.get("signature", "")), validate=True)
        public_key.verify(signature, canonical(manifest))
    except (InvalidSignature, ValueError, TypeError):
        problems.append("the manifest's signature is not valid for this public key: the manifest was edited, or "
                        "signed by another key")
    if manifest.get("format") not in READABLE_FORMATS:
        problems.append(f"the manifest format is {manifest.get('format')!r}, expected one of "
                        f"{', '.join(READABLE_FORMATS)}")
    if manifest.get("format") == FORMAT and not _trail_fields_hold(manifest):
        problems.append("the manifest's trail fields (trail_rows, trail_last_entry, trail_sha256) are missing or "
                        "not of their types")
    digest = hashlib.sha256(data).hexdigest()
    if digest != manifest.get("csv_sha256"):
        first = data.split(b"\r\n", 2)
        export_cell = (next(csv.reader([first[1].decode("utf-8", "replace")]), None) or [""])[0] if len(first) > 1 \
            else ""
        if export_cell and export_cell != str(manifest.get("export_id")):
            problems.append(f"this CSV belongs to export {export_cell}, the manifest to export "
                            f"{manifest.get('export_id')}")
        problems.extend(_diagnose(data))
        problems.append(f"the CSV's SHA-256 is {digest}, the manifest says {manifest.get('csv_sha256')}")
    return Verdict(not problems, problems)


def _trail_fields_hold(manifest: dict) -> bool:
    rows, last, digest = (manifest.get(k) for k in ("trail_rows", "trail_last_entry", "trail_sha256"))
    return (type(rows) is int and rows >= 0 and (last is None or type(last) is int) and isinstance(digest, str)
            and len(digest) == 64 and all(c in "0123456789abcdef" for c in digest))


def trail_check(manifest: dict, rows: int, digest: str) -> str:
    """What a manifest's trail hash says against the trail as recomputed up to its last entry ("" if the same)."""
    if not _trail_fields_hold(manifest):
        return "the manifest carries no trail hash (a sheet before dedup-review-sheet-v4)"
    if (rows, digest) != (manifest["trail_rows"], manifest["trail_sha256"]):
        return (f"the trail of administrative acts up to entry {manifest['trail_last_entry']} is not what was "
                f"exported: {rows} entries hashing to {digest} now, {manifest['trail_rows']} hashing to "
                f"{manifest['trail_sha256']} then (an entry was changed, removed or added before it)")
    return ""


def load_public_key(pem: bytes) -> Ed25519PublicKey:
    key = serialization.load_pem_public_key(pem)
    if not isinstance(key, Ed25519PublicKey):
        raise ValueError("not an Ed25519 public key")
    return key
