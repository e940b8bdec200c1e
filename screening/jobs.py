"""RQ jobs: thin functions that take ids, load rows and call one service."""

from __future__ import annotations

import traceback

from dedup_site import progress
from screening import services
from screening.models import Upload


def upload_job(upload_id: int) -> dict:
    upload = Upload.objects.select_related("source", "corpus").get(pk=upload_id)
    try:
        upload = services.upload_process(
            upload=upload, on_progress=lambda fraction: progress.report("upload", upload_id, fraction)
        )
    except Exception:
        services.upload_fail(upload_id=upload_id, error=traceback.format_exc(limit=5))
        raise
    return {"status": upload.status, "documents": upload.document_count}


def upload_job_failed(job, connection, exc_type, exc_value, tb) -> None:
    # Also called when the work-horse dies (killed, out of memory): the job body could not say so itself.
    services.upload_fail(upload_id=int(job.args[0]), error=f"{exc_type.__name__}: {exc_value}")


def run_job(run_id: int) -> str:
    from screening import runs
    from screening.models import ScreeningRun

    run = ScreeningRun.objects.select_related("corpus").get(pk=run_id)
    stages = {name: 0.0 for name in runs.STAGES if run.near or name in ("exact", "publish")}

    def report(fraction: float, stage: str) -> None:
        stages[stage] = fraction
        total = sum(runs.STAGES[name] for name in stages)
        overall = sum(runs.STAGES[name] * done for name, done in stages.items()) / total
        progress.report("run", run_id, overall, stage, stages=stages)

    try:
        run = runs.run_execute(run=run, on_progress=report)
    except Exception:
        runs.run_fail(run_id=run_id, error=traceback.format_exc(limit=8))
        raise
    return runs.run_summary(run)


def run_job_failed(job, connection, exc_type, exc_value, tb) -> None:
    from screening import runs

    runs.run_fail(run_id=int(job.args[0]), error=f"{exc_type.__name__}: {exc_value}")
