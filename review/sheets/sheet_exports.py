"""The review sheet's export: which records a sheet holds and in what order (`sheet_records`, with each
reviewer's signature time), and the export an admin starts, built by a worker into a CSV and a signed
manifest (`sheet_export_*`). Reviewers sign their judgements through review.services.signature_record."""

from __future__ import annotations

import bisect
import hashlib
import json
import os
import secrets
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime, time
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from dedup_site import accounts, background, buckets, object_storage, trail
from dedup_site.trail import trail_record
from review.models import Arbitration, Judgement, ReviewerSignature, SheetExport
from review.selectors import SETTLED
from review.services import ReviewRefused
from review.sheets import signing
from screening import runs
from screening.models import CandidatePair, ScreeningRun

BATCH = 500


def key_path() -> Path:
    return settings.DATA_DIR / "keys" / "sheet-signing-ed25519.pem"


def site_key():
    return signing.load_or_create_key(key_path())


# --- the records of a sheet --------------------------------------------------------------------------


class _SignedAt:
    """When a user's record was signed: their first signature at or after the record's time; for one made with
    a token the user did not make, their first signature that accepted it ("refused" when one refused it and
    none accepted it, "unsigned" otherwise)."""

    def __init__(self):
        self.signatures: dict[int, list[tuple[datetime, dict, dict]]] = {}

    def __call__(self, user_id: int, record: Judgement | Arbitration) -> str:
        if user_id not in self.signatures:
            self.signatures[user_id] = list(ReviewerSignature.objects.filter(reviewer_id=user_id).order_by(
                "signed_at", "id").values_list("signed_at", "accepted", "refused"))
        signatures = self.signatures[user_id]
        if not record.by_others_token(user_id):
            i = bisect.bisect_left(signatures, record.created_at, key=lambda s: s[0])
            return iso(signatures[i][0]) if i < len(signatures) else "unsigned"
        kind = "judgements" if isinstance(record, Judgement) else "arbitrations"
        for signed_at, accepted, _ in signatures:
            if record.pk in (accepted or {}).get(kind, ()):
                return iso(signed_at)
        refused = any(record.pk in (r or {}).get(kind, ()) for _, _, r in signatures)
        return "refused" if refused else "unsigned"


def _token_cells(record: Judgement | Arbitration, maker_id: int) -> dict:
    """Which API token made the record and who made that token ("command line": the server's), and whether
    that was someone other than the record's maker ("" for a record made in a session)."""
    if record.api_token_id is None:
        return {}
    made_by = record.token_created_by.get_username() if record.token_created_by else "command line"
    return {"api_token": str(record.api_token_id), "token_created_by": made_by,
            "by_others_token": "yes" if record.by_others_token(maker_id) else "no"}


def iso(moment: datetime | None) -> str:
    return "" if moment is None else moment.astimezone(UTC).isoformat().replace("+00:00", "Z")



@dataclass
class Selection:
    since: date | None = None
    until: date | None = None
    reviewer: str = ""
    settled_only: bool = False

    def as_dict(self) -> dict:
        return {k: (v.isoformat() if isinstance(v, date) else v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: dict) -> Selection:
        return cls(since=date.fromisoformat(data["since"]) if data.get("since") else None,
                   until=date.fromisoformat(data["until"]) if data.get("until") else None,
                   reviewer=data.get("reviewer", ""), settled_only=bool(data.get("settled_only")))

    def window(self, field: str) -> Q:
        """Records from the start of `since` to the end of `until` (UTC days)."""
        q = Q()
        if self.since:
            q &= Q(**{f"{field}__gte": datetime.combine(self.since, time.min, UTC)})
        if self.until:
            q &= Q(**{f"{field}__lte": datetime.combine(self.until, time.max, UTC)})
        return q

    def contains(self, moment: datetime) -> bool:
        return (not self.since or moment >= datetime.combine(self.since, time.min, UTC)) and (
            not self.until or moment <= datetime.combine(self.until, time.max, UTC))


def _pairs(run: ScreeningRun, selection: Selection):
    pairs = CandidatePair.objects.filter(run=run).filter(Q(judgements__isnull=False) | Q(arbitrations__isnull=False))
    if selection.settled_only:
        pairs = pairs.filter(status=SETTLED)
    return pairs.distinct().order_by("pk")


def _action_cells(action) -> dict:
    """Which cluster or bulk decision recorded a judgement (an undo is marked like the decision it undoes)."""
    if action is None:
        return {}
    decided = action.undoes if action.kind == "undo" and action.undoes else action
    undo = " (undo)" if action.kind == "undo" else ""
    if decided.kind == "cluster":
        return {"decided_for_cluster": f"{decided.cluster}{undo}"}
    return {"bulk_action": f"bulk #{decided.pk}{undo}"}


def sheet_records(run: ScreeningRun, selection: Selection, on_progress: Callable[[float], None] | None = None
                  ) -> Iterator[dict]:
    """One record per judgement and per arbitration, by pair, in the order they were recorded."""
    signed_at = _SignedAt()
    pks = list(_pairs(run, selection).values_list("pk", flat=True))
    for start in range(0, len(pks), BATCH):
        chunk = pks[start : start + BATCH]
        pairs = list(CandidatePair.objects.filter(pk__in=chunk).select_related(
            "left__upload__source", "right__upload__source", "run").order_by("pk"))
        # A judged pair below the threshold may never have been opened (a bulk decision): its signals first.
        pairs = [runs.pair_evidence_complete(pair=p) for p in pairs]
        judgements: dict[int, list[Judgement]] = {}
        for j in Judgement.objects.filter(pair_id__in=chunk).filter(selection.window("created_at")).filter(
                Q(reviewer__username=selection.reviewer) if selection.reviewer else Q()
        ).select_related("reviewer", "action__undoes", "token_created_by").order_by("created_at", "id"):
            judgements.setdefault(j.pair_id, []).append(j)
        arbitrations: dict[int, list[Arbitration]] = {}
        for a in Arbitration.objects.filter(pair_id__in=chunk).select_related("arbiter", "token_created_by").order_by(
                "created_at", "id"):
            arbitrations.setdefault(a.pair_id, []).append(a)
        for pair in pairs:
            final = (arbitrations.get(pair.pk) or [None])[-1]
            common = {
                "run_id": run.pk, "pair_id": pair.pk, "left_doc_id": pair.left.doc_id,
                "right_doc_id": pair.right.doc_id, "left_source_id": pair.left.source_id,
                "right_source_id": pair.right.source_id, "left_version": pair.left.version,
                "right_version": pair.right.version, "left_source_sha256": pair.left.upload.source.sha256,
                "right_source_sha256": pair.right.upload.source.sha256, "jaccard": repr(pair.jaccard),
                "minhash_estimate": "" if pair.minhash_estimate is None else repr(pair.minhash_estimate),
                "revision_signals": pair.signals_text, "arbitration_status": pair.status,
                "final_verdict": pair.final_verdict, "arbiter": final.arbiter.get_username() if final else "",
                "arbitrated_at": iso(final.created_at) if final else "",
            }
            # Rows follow the order in which things happened (a reviewer's selection holds their judgements only).
            records = list(judgements.get(pair.pk, []))
            if not selection.reviewer:
                records += [a for a in arbitrations.get(pair.pk, []) if selection.contains(a.created_at)]
            for r in sorted(records, key=lambda r: (r.created_at, isinstance(r, Arbitration), r.pk)):
                if isinstance(r, Judgement):
                    yield dict(common, record="judgement", reviewer=r.reviewer.get_username(), verdict=r.verdict,
                               reason=r.reason, retained_version=r.retained, related_source=r.related_source,
                               reviewed_at=iso(r.created_at), signed_at=signed_at(r.reviewer_id, r),
                               **_action_cells(r.action), **_token_cells(r, r.reviewer_id))
                else:
                    yield dict(common, record="self-arbitration" if r.self_arbitrated else "arbitration",
                               reviewer="", verdict=r.verdict, reason=r.reason, retained_version=r.retained,
                               related_source=r.related_source, reviewed_at=iso(r.created_at),
                               signed_at=signed_at(r.arbiter_id, r), **_token_cells(r, r.arbiter_id))
        if on_progress:
            on_progress(min(1.0, (start + BATCH) / max(len(pks), 1)))


def trail_state(upto: int | None = None) -> tuple[int, int | None, str]:
    """The trail of administrative acts as it stands (up to entry `upto`): its number of entries, its last
    entry's id and the hash chain over them in order (review.sheets.signing.trail_sha256)."""
    last = None

    def cells():
        nonlocal last
        for row in trail.trail_rows(upto=upto):
            last = int(row[0])
            yield row

    count, digest = signing.trail_sha256(cells())
    return count, last, digest


def export_dir(export: SheetExport) -> Path:
    return settings.DATA_DIR / "exports" / str(export.pk)


def export_names(export: SheetExport) -> tuple[str, str]:
    return f"run-{export.run_id}-sheet-{export.pk}.csv", f"run-{export.run_id}-sheet-{export.pk}.manifest.json"


def export_paths(export: SheetExport) -> tuple[Path, Path]:
    """The CSV and manifest in the local exports folder (exports kept in a bucket: `export_object`)."""
    directory = export_dir(export)
    csv_name, manifest_name = export_names(export)
    return directory / csv_name, directory / manifest_name


def export_object(export: SheetExport, part: str) -> tuple[buckets.Bucket, str] | None:
    """The bucket and key of a complete export's "csv" or "manifest", or None when it is a local file."""
    if not export.bucket_prefix:
        return None
    bucket = object_storage.bucket(object_storage.EXPORTS)
    if bucket is None:
        raise buckets.BucketError(f"export {export.pk} is in a bucket ({export.bucket_prefix}), but "
                                  f"DEDUP_EXPORTS_URL is not set here")
    csv_name, manifest_name = export_names(export)
    return bucket, f"{export.bucket_prefix}/{csv_name if part == 'csv' else manifest_name}"


def export_chunks(export: SheetExport, part: str) -> Iterator[bytes]:
    """A complete export's CSV or manifest, read in chunks from wherever it is kept."""
    found = export_object(export, part)
    if found is None:
        csv_path, manifest_path = export_paths(export)
        with open(csv_path if part == "csv" else manifest_path, "rb") as stream:
            yield from iter(lambda: stream.read(1 << 20), b"")
        return
    bucket, key = found
    head = bucket.head(key)
    if head is None:
        raise buckets.ObjectMissing(f"{bucket.where(key)}: missing")
    yield from buckets.ObjectSource(bucket.name, key, head["ETag"], head["ContentLength"]).chunks()


def sheet_export_create(*, run: ScreeningRun, user=None, selection: Selection | None = None) -> SheetExport:
    """An export of the run's sheet, queued by the caller; started by `user` (None: the server's command line),
    which the trail records."""
    if run.status != ScreeningRun.Status.COMPLETE:
        raise ReviewRefused(f"run {run.pk} is not complete")
    if refusal := accounts.admin_refusal(user):
        raise ReviewRefused(refusal)
    with transaction.atomic():
        export = SheetExport.objects.create(run=run, exported_by=user, selection=(selection or Selection()).as_dict())
        trail_record(actor=user, action="sheet.export", target=run, after={
            "export": export.pk, "selection": export.selection})
    return export


def sheet_export_enqueue(*, export: SheetExport) -> SheetExport:
    """Queue the export; QueueUnavailable (the export then failed, saying why) when Redis is away."""
    return background.start(export, "review.jobs.sheet_job", on_failure="review.jobs.sheet_job_failed",
                            kind="sheet", fail=lambda error: sheet_export_fail(export_id=export.pk, error=error))


def sheet_export_build(*, export: SheetExport, on_progress: Callable[[float], None] | None = None) -> SheetExport:
    """Write the CSV and its signed manifest (read-only files) and mark the export complete. A finished
    export is never rebuilt or changed."""
    if export.status == SheetExport.Status.COMPLETE:
        return export
    SheetExport.objects.filter(pk=export.pk).update(status=SheetExport.Status.RUNNING, error="")
    files = _ExportFiles(export)
    tally = _Tally(signing.csv_lines(export.pk, sheet_records(export.run, Selection.from_dict(export.selection),
                                                              on_progress)))
    files.write("csv", tally)
    digest, rows = tally.digest, tally.lines - 1
    previous = (SheetExport.objects.filter(run=export.run, status=SheetExport.Status.COMPLETE, pk__lt=export.pk)
                .order_by("-pk").first())
    trail_rows, trail_last, trail_hash = trail_state()
    manifest = signing.sign({
        "format": signing.FORMAT, "export_id": export.pk, "run": export.run_id, "corpus": export.run.corpus.name,
        "exported_by": export.exported_by.get_username() if export.exported_by else "command line",
        "exported_at": iso(timezone.now()), "row_count": rows, "csv_sha256": digest.hexdigest(),
        "csv_file": export_names(export)[0], "selection": export.selection,
        "previous_export": previous.pk if previous else None,
        "previous_manifest_sha256": signing.manifest_sha256(previous.manifest) if previous else None,
        "meaning": signing.MEANING,
        "trail_rows": trail_rows, "trail_last_entry": trail_last, "trail_sha256": trail_hash,
    }, site_key())
    files.write("manifest", [(json.dumps(manifest, ensure_ascii=False, indent=2) + "\n").encode("utf-8")])
    files.seal()
    SheetExport.objects.filter(pk=export.pk).update(status=SheetExport.Status.COMPLETE, finished_at=timezone.now(),
                                                     row_count=rows, csv_sha256=digest.hexdigest(), manifest=manifest,
                                                     bucket_prefix=files.prefix)
    export.refresh_from_db()
    return export


class _Tally:
    """The CSV's lines as they go by, hashed and counted."""

    def __init__(self, lines: Iterable[bytes]):
        self.source, self.digest, self.lines = lines, hashlib.sha256(), 0

    def __iter__(self) -> Iterator[bytes]:
        for line in self.source:
            self.digest.update(line)
            self.lines += 1
            yield line


class _ExportFiles:
    """Where one attempt writes its CSV and manifest: read-only files in the local exports folder, or objects
    written once under a key prefix of its own in the exports bucket (an attempt that died leaves its
    objects behind, never in the way: the prefix is recorded only when the export completes)."""

    def __init__(self, export: SheetExport):
        self.export, self.bucket = export, object_storage.bucket(object_storage.EXPORTS)
        self.prefix = "" if self.bucket is None else self.bucket.key(f"{export.pk}/{secrets.token_hex(8)}")
        if self.bucket is None:
            for path in export_paths(export):
                path.parent.mkdir(parents=True, exist_ok=True)
                if path.exists():  # left by an attempt that died before completing
                    path.chmod(0o600)
                    path.unlink()

    def write(self, part: str, chunks: Iterable[bytes]) -> None:
        csv_name, manifest_name = export_names(self.export)
        name = csv_name if part == "csv" else manifest_name
        if self.bucket is not None:
            content_type = "text/csv; charset=utf-8" if part == "csv" else "application/json"
            self.bucket.put_once(f"{self.prefix}/{name}", chunks, content_type=content_type)
            return
        with open(export_dir(self.export) / name, "wb") as out:
            for chunk in chunks:
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())

    def seal(self) -> None:
        if self.bucket is None:
            for path in export_paths(self.export):
                path.chmod(0o444)


def sheet_export_fail(*, export_id: int, error: str) -> None:
    background.mark_failed(SheetExport, export_id, error, final=(SheetExport.Status.COMPLETE,))
