"""Corpus services: the rules and transactions behind the pages, the jobs and the commands."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models.functions import Lower
from django.utils import timezone
from django.utils.translation import gettext

from dedup_site import accounts, background, buckets, names
from screening.ingest import formats, reading, sources
from screening.models import Corpus, Document, SourceFile, Upload

CORPUS_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
BATCH = reading.BATCH  # document rows stored at a time
MAX_STORED_PROBLEMS = 1000


class UploadRefused(Exception):
    """The upload was refused before anything was stored (bad corpus name, too large, wrong type), or its
    bytes could not be stored (the bucket unreachable): nothing is recorded or imported."""


def limits() -> formats.Limits:
    return formats.Limits(**settings.DEDUP_LIMITS)


class CorpusExists(UploadRefused):
    """A new corpus was asked for under a name one already has (`corpus` is that one)."""

    def __init__(self, corpus: Corpus):
        super().__init__(gettext("a corpus named %(name)s exists (id %(id)s)") % {"name": repr(corpus.name),
                                                                                "id": corpus.pk})
        self.corpus = corpus


def _check_name(name: str) -> None:
    if not CORPUS_NAME_RE.fullmatch(name or ""):
        raise UploadRefused(gettext(
            "corpus name %(name)s: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit") % {
            "name": repr(name)})


def corpus_named(name: str) -> Corpus | None:
    """The corpus whose name is `name` up to case (dedup_site.names.canonical: for the names the alphabet allows,
    lower(), which the database holds unique), or None."""
    return Corpus.objects.annotate(key=Lower("name")).filter(key=names.canonical(name)).first()


def corpus_get_or_create(*, name: str, user=None) -> Corpus:
    """The corpus of this name, made if there is none; refused when one differs from it only by case (an upload
    meant for `evalc` typed as `EVALC` must not land in a second corpus, nor in the first unasked)."""
    _check_name(name)
    corpus = corpus_named(name)
    if corpus is None:
        try:
            return corpus_create(name=name, user=user)
        except CorpusExists as exists:  # made at the same moment
            corpus = exists.corpus
    if corpus.name != name:
        raise UploadRefused(gettext(
            "corpus name %(name)s: the corpus %(existing)s has it up to case (corpus names are told apart without "
            "case); use %(existing)s, or another name") % {"name": repr(name), "existing": repr(corpus.name)})
    return corpus


def corpus_create(*, name: str, user=None) -> Corpus:
    """A new, empty corpus; CorpusExists when the name is taken, in any case (also by a create at the same
    moment: the unique constraint on the name's canonical form decides)."""
    _check_name(name)
    existing = corpus_named(name)
    if existing is not None:
        raise CorpusExists(existing)
    try:
        with transaction.atomic():
            return Corpus.objects.create(name=name, created_by=user)
    except IntegrityError:
        raise CorpusExists(corpus_named(name)) from None


def upload_create(*, corpus_name: str, chunks: sources.Chunks, size: int, original_name: str,
                  language: str = "", user=None) -> Upload:
    """Store the file (read-only, by SHA-256) and record a queued upload. Nothing is parsed yet. `chunks` is
    a list or a function returning the file's chunks anew (a bucket's store reads them twice)."""
    if refusal := accounts.admin_refusal(user):
        raise UploadRefused(refusal)
    original_name = Path(original_name or "").name
    if formats.detect_format(original_name) is None:
        raise UploadRefused(gettext("%(file)s: unsupported type; upload one of %(formats)s") % {
            "file": original_name or gettext("the file"), "formats": ", ".join(formats.FORMATS)})
    cap = settings.DEDUP_LIMITS["upload_bytes"]
    if size > cap:
        raise UploadRefused(gettext("%(file)s: %(size)s bytes is over the upload limit of %(cap)s bytes") % {
            "file": original_name, "size": f"{size:,}", "cap": f"{cap:,}"})
    language = (language or "").strip()
    if language and not formats.LANGUAGE_RE.fullmatch(language):
        raise UploadRefused(gettext("language %(language)s is not a lowercase language tag such as fa, en, zh-hant")
                            % {"language": repr(language)})
    corpus = corpus_get_or_create(name=corpus_name, user=user)
    try:
        sha, stored_size = sources.store(chunks)
    except buckets.BucketError as error:
        raise UploadRefused(gettext("%(file)s could not be stored, so nothing was imported: %(error)s") % {
            "file": original_name, "error": error}) from error
    source, _ = SourceFile.objects.get_or_create(sha256=sha, defaults={"size": stored_size})
    return Upload.objects.create(corpus=corpus, source=source, original_name=original_name,
                                 language=language, uploaded_by=user)


def upload_create_from_path(*, corpus_name: str, path: Path, language: str = "", user=None) -> Upload:
    def chunks():
        with open(path, "rb") as stream:
            yield from iter(lambda: stream.read(1 << 20), b"")

    return upload_create(corpus_name=corpus_name, chunks=chunks, size=path.stat().st_size,
                         original_name=path.name, language=language, user=user)


class _Rejected(Exception):
    """Raised inside the transaction to roll back every document of a rejected upload."""


@dataclass
class _Store:
    upload: Upload
    report: formats.Report

    def add(self, rows: list[tuple]) -> None:
        """Insert the rows, unless a doc_id is already in the corpus (or the upload is rejected anyway)."""
        # A set, not a list: Django walks a list item by item looking for expressions.
        existing = set(
            Document.objects.filter(corpus=self.upload.corpus, doc_id__in_texts={r[0] for r in rows})
            .values_list("doc_id", flat=True)
        )
        for r in rows:
            if r[0] in existing:
                self.report.problem(r[8], "doc_id", formats.Rule("in-corpus", doc_id=repr(r[0]),
                                                                   corpus=self.upload.corpus.name))
        if self.report.problems:
            return  # rejected anyway: keep checking, stop writing
        corpus, upload = self.upload.corpus_id, self.upload.pk
        _insert_documents([(corpus, upload, *r) for r in rows])


DOCUMENT_COLUMNS = ("corpus_id", "upload_id", "doc_id", "source_id", "version", "language", "title", "body",
                    "collected_at", "member_path", "place", "content_sha256")


def _insert_documents(values: list[tuple]) -> None:
    """Rows straight into the documents table, inside the upload's transaction: COPY on PostgreSQL, one
    prepared INSERT for the batch elsewhere. Building a model instance per document cost four fifths of an
    import; the database's own constraints and guards still check every row."""
    quote = connection.ops.quote_name
    table, columns = quote(Document._meta.db_table), ", ".join(quote(c) for c in DOCUMENT_COLUMNS)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in values:
                    copy.write_row(row)
        else:
            marks = ", ".join(["%s"] * len(DOCUMENT_COLUMNS))
            # Table and column names come from the model, never from input; values are parameters.
            cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", values)  # noqa: S608


def upload_process(*, upload: Upload, on_progress: Callable[[float], None] | None = None,
                   check_follows: bool = False) -> Upload:
    """Read the stored file and add all of its documents to the corpus, or none of them.

    Every problem found is recorded on the upload (file, line or member, field, rule). With `check_follows`
    (the caller runs detection.upload_language_check next), a complete upload's language check is marked
    queued in the same update, so no page sees the upload done before its check is planned.
    """
    if upload.status not in (Upload.Status.QUEUED, Upload.Status.FAILED):
        return upload  # already processed: a retried job must not import twice
    Upload.objects.filter(pk=upload.pk).update(status=Upload.Status.RUNNING, error="")
    report = formats.Report()
    store = _Store(upload=upload, report=report)
    count = 0
    try:
        path = sources.readable(upload.source.sha256, upload.source.size)
        with transaction.atomic():
            parallel = upload.source.size >= settings.DEDUP_IMPORT_PARALLEL_BYTES
            for found in reading.chunks(path, upload.original_name, upload.language, limits(), parallel):
                report.problems += found.problems
                report.notices += found.notices
                report.done, report.total, count = found.done, found.total, found.count
                if found.rows:
                    store.add(found.rows)
                if on_progress:
                    on_progress(report.fraction)
            if report.problems:
                raise _Rejected
    except _Rejected:
        pass
    except IntegrityError as error:
        # Another upload to the same corpus took one of these doc_ids meanwhile.
        report.problem(upload.original_name, "doc_id", formats.Rule("in-corpus-race", error=error))
    except buckets.BucketError as error:  # the source missing, changed or out of reach: not the file's fault
        _finish(upload, Upload.Status.FAILED, error=f"upload {upload.pk} ({upload.original_name}): {error}")
        upload.refresh_from_db()
        return upload
    if report.problems:
        _finish(upload, Upload.Status.REJECTED, problems=report.problems, notices=report.notices)
    else:
        _finish(upload, Upload.Status.COMPLETE, count=count, notices=report.notices,
                language_check=Upload.Status.QUEUED if check_follows else "")
    if on_progress:
        on_progress(1.0)
    upload.refresh_from_db()
    return upload


def _finish(upload: Upload, status: str, *, count: int = 0, problems=(), notices=(), error: str = "",
            language_check: str = "") -> None:
    problems = list(problems)
    Upload.objects.filter(pk=upload.pk).update(
        status=status,
        language_check=language_check,
        language_check_done=0,
        finished_at=timezone.now(),
        document_count=count,
        problems=[str(p) for p in problems[:MAX_STORED_PROBLEMS]],
        problem_count=len(problems),
        problem_groups=formats.group_problems(problems),
        notices=list(notices)[:MAX_STORED_PROBLEMS],
        error=error,
    )


def upload_fail(*, upload_id: int, error: str) -> None:
    """Mark an upload failed because the program (not the file) failed. Its documents were rolled back."""
    background.mark_failed(Upload, upload_id, error, final=(Upload.Status.COMPLETE, Upload.Status.REJECTED))


def upload_enqueue(*, upload: Upload) -> Upload:
    """Queue the import; QueueUnavailable (the upload then failed, saying why) when Redis is away."""
    return background.start(upload, "screening.jobs.upload_job", on_failure="screening.jobs.upload_job_failed",
                            kind="upload", fail=lambda error: upload_fail(upload_id=upload.pk, error=error))


def sources_verify() -> list[tuple[SourceFile, str]]:
    """Every stored source whose bytes, presence or read-only mode changed, with what changed."""
    bad = []
    for source in SourceFile.objects.order_by("pk").iterator():
        problem = sources.verify(source.sha256, source.size)
        if problem:
            bad.append((source, problem))
    return bad
