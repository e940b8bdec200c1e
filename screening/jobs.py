"""RQ jobs of the screening app: each takes ids, loads its row and calls one service."""

from __future__ import annotations

from dedup_site import background
from screening.evaluation import audit
from screening.ingest import detection, uploads
from screening.models import RunAudit, ScreeningRun, Upload
from screening.runs import lifecycle, pipeline
from screening.runs.selectors import run_summary


def upload_job(upload_id: int) -> dict:
    upload = Upload.objects.select_related("source", "corpus").get(pk=upload_id)
    with background.failure_recorded(lambda error: uploads.upload_fail(upload_id=upload_id, error=error)):
        upload = uploads.upload_process(upload=upload, on_progress=background.reporter("upload", upload_id),
                                        check_follows=True)
    # After the import's commit: the documents are there meanwhile, and a failure here leaves them be (the
    # upload stays complete, its check failed, and detect_languages checks it again).
    with background.failure_recorded(lambda error: detection.language_check_fail(upload_id=upload_id)):
        upload = detection.upload_language_check(upload=upload)
    return {"status": upload.status, "documents": upload.document_count,
            "language_mismatches": upload.language_mismatch_count}


def upload_job_failed(job, connection, exc_type, exc_value, tb) -> None:
    # Also called when the work-horse dies (killed, out of memory): the job body could not say so itself.
    uploads.upload_fail(upload_id=int(job.args[0]), error=background.failure_message(exc_type, exc_value))
    detection.language_check_fail(upload_id=int(job.args[0]))


def audit_job(audit_id: int) -> dict:
    row = RunAudit.objects.select_related("run__corpus").get(pk=audit_id)
    with background.failure_recorded(lambda error: audit.audit_fail(audit_id=audit_id, error=error)):
        row = audit.audit_execute(audit=row, on_progress=background.reporter("audit", audit_id))
    return {"pairs_at_threshold": row.result["pairs_at_threshold"], "missed": len(row.result["missed"])}


def audit_job_failed(job, connection, exc_type, exc_value, tb) -> None:
    audit.audit_fail(audit_id=int(job.args[0]), error=background.failure_message(exc_type, exc_value))


def run_job(run_id: int) -> str:
    # The job drives the run: its steps go to the executor `runs.run_execute` chooses (this process, or Ray).
    run = ScreeningRun.objects.select_related("corpus").get(pk=run_id)
    with background.failure_recorded(lambda error: lifecycle.run_fail(run_id=run_id, error=error)):
        run = pipeline.run_execute(run=run, on_progress=pipeline.stage_reporter(run))
    return run_summary(run)


def run_job_failed(job, connection, exc_type, exc_value, tb) -> None:
    lifecycle.run_fail(run_id=int(job.args[0]), error=background.failure_message(exc_type, exc_value))
