"""RQ jobs: thin functions that take ids, load rows and call one service."""

from __future__ import annotations

import traceback

from django.conf import settings

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
    """Start a run: fan its signing out to chunk jobs when it is large, else do it all here."""
    from rq import Callback, Retry

    from dedup_site.queues import get_queue
    from screening import runs
    from screening.models import ScreeningRun

    run = ScreeningRun.objects.get(pk=run_id)
    chunks = runs.sign_chunks(run)
    if not chunks:
        return run_finish_job(run_id)
    runs.run_mark_running(run=run)
    queue = get_queue()
    connection = queue.connection
    connection.delete(f"dedup:run:{run_id}:workers", f"dedup:run:{run_id}:chunks-done")
    connection.set(f"dedup:run:{run_id}:chunks", len(chunks), ex=progress.TTL)
    jobs = [queue.enqueue("screening.jobs.sign_chunk_job", run_id, pks, retry=Retry(max=2),
                          on_failure=Callback("screening.jobs.sign_chunk_failed"),
                          job_timeout=settings.RQ_JOB_TIMEOUT) for pks in chunks]
    queue.enqueue("screening.jobs.run_finish_job", run_id, depends_on=jobs,
                  on_failure=Callback("screening.jobs.run_job_failed"), job_timeout=settings.RQ_JOB_TIMEOUT)
    return f"run {run_id}: signing in {len(chunks)} chunk jobs"


def sign_chunk_job(run_id: int, pks: list[int]) -> int:
    from rq import get_current_job

    from screening import near, runs
    from screening.models import ScreeningRun

    run = ScreeningRun.objects.get(pk=run_id)
    computed = near.store_signatures(pks, runs.near_config_of(run))
    connection = get_current_job().connection
    worker = getattr(get_current_job(), "worker_name", "") or "unknown"
    connection.sadd(f"dedup:run:{run_id}:workers", worker)
    done = connection.incr(f"dedup:run:{run_id}:chunks-done")
    total = int(connection.get(f"dedup:run:{run_id}:chunks") or 1)
    progress.report("run", run_id, 0.5 * done / total, "sign", stages={"sign": done / total})
    return computed


def sign_chunk_failed(job, connection, exc_type, exc_value, tb) -> None:
    if job.retries_left:
        return  # RQ will run the chunk again
    from screening import runs

    runs.run_fail(run_id=int(job.args[0]), error=f"a signing chunk failed for good: {exc_type.__name__}: {exc_value}")


def run_finish_job(run_id: int) -> str:
    from screening import runs
    from screening.models import ScreeningRun

    run = ScreeningRun.objects.select_related("corpus").get(pk=run_id)
    if run.status == ScreeningRun.Status.FAILED and run.error.startswith("a signing chunk failed"):
        return runs.run_summary(run)
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
    workers = progress.members(f"dedup:run:{run_id}:workers")
    if workers:
        runs.run_note_workers(run=run, workers=workers)
    return runs.run_summary(run)


def run_job_failed(job, connection, exc_type, exc_value, tb) -> None:
    from screening import runs

    runs.run_fail(run_id=int(job.args[0]), error=f"{exc_type.__name__}: {exc_value}")
