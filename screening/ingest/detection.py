"""The language check: what each document's text reads as (screening.engine.langcheck), kept beside its tag,
and the documents whose tag disagrees with a confident detection listed on their upload.

It runs once the import has committed (the upload job, import_corpus and detect_languages call it), not
inside it: the identifier costs 6-25 times what storing a document does (README, "Language check"), and
the documents are there to be screened meanwhile. The tag itself is never changed."""

from __future__ import annotations

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from screening.engine import langcheck
from screening.models import Document, Upload

MAX_LISTED = 1000  # mismatches kept on the upload; the count says how many there were


def _mismatch(doc_id: str, place: str, tag: str, found: langcheck.Detection) -> dict:
    return {"doc_id": doc_id, "place": place, "tag": tag, "detected": found.language,
            "confidence": found.confidence}


def _store(values: list[tuple]) -> None:
    table = connection.ops.quote_name(Document._meta.db_table)
    with connection.cursor() as cursor:
        # The table's name comes from the model; values are parameters. The guard lets these columns change.
        cursor.executemany(f"UPDATE {table} SET detected_language = %s, language_confidence = %s "  # noqa: S608
                           "WHERE id = %s", values)


def _detect(documents) -> tuple[list[tuple], list[dict]]:
    values, mismatches = [], []
    for pk, doc_id, place, tag, title, body in documents:
        found = langcheck.detect(f"{title}\n{body}" if title else body)
        values.append((found.language, found.confidence, pk))
        if langcheck.disagrees(tag, found):
            mismatches.append(_mismatch(doc_id, place, tag, found))
    return values, mismatches


def upload_language_check(*, upload: Upload) -> Upload:
    """Detect the language of every document of a completed upload not checked yet, and list on the upload
    those whose tag disagrees with a confident detection (with the ones checked before, if any)."""
    if upload.status != Upload.Status.COMPLETE:
        return upload
    # The upload's row says how far the check is (language_check_done), for the corpus page and the API.
    Upload.objects.filter(pk=upload.pk).update(language_check=Upload.Status.RUNNING, language_check_done=0)
    documents = Document.objects.filter(upload=upload).order_by("pk")
    mismatches, last = [], 0
    while True:
        batch = list(documents.filter(pk__gt=last).values_list(
            "pk", "doc_id", "place", "language", "title", "body", "detected_language", "language_confidence",
        )[:settings.DEDUP_LANGUAGE_CHECK_BATCH])
        if not batch:
            break
        last = batch[-1][0]
        fresh = [row[:6] for row in batch if row[7] is None]
        for _pk, doc_id, place, tag, _title, _body, detected, confidence in batch:
            found = langcheck.Detection(detected, confidence or 0.0)
            if confidence is not None and langcheck.disagrees(tag, found):  # checked before: found again
                mismatches.append(_mismatch(doc_id, place, tag, found))
        values, found_now = _detect(fresh)
        mismatches += found_now
        with transaction.atomic():
            _store(values)
            Upload.objects.filter(pk=upload.pk).update(language_check_done=F("language_check_done") + len(batch))
    Upload.objects.filter(pk=upload.pk).update(
        language_checked_at=timezone.now(), language_mismatches=mismatches[:MAX_LISTED],
        language_mismatch_count=len(mismatches), language_check=Upload.Status.COMPLETE)
    upload.refresh_from_db()
    return upload


def language_check_fail(*, upload_id: int) -> None:
    """The check stopped (an error, or the work-horse died): the pages stop waiting for it; the documents it
    did not reach stay unchecked for detect_languages."""
    Upload.objects.filter(pk=upload_id, language_check__in=[Upload.Status.QUEUED, Upload.Status.RUNNING]).update(
        language_check=Upload.Status.FAILED)


def language_check_pending(*, corpus_name: str = "") -> int:
    """Check every completed upload not checked yet (documents imported before the check existed): the
    detect_languages command. Returns how many documents were detected."""
    uploads = Upload.objects.filter(status=Upload.Status.COMPLETE, language_checked_at__isnull=True)
    if corpus_name:
        uploads = uploads.filter(corpus__name=corpus_name)
    count = 0
    for upload in uploads.order_by("pk"):
        count += Document.objects.filter(upload=upload, language_confidence__isnull=True).count()
        upload_language_check(upload=upload)
    return count
