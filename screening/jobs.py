"""RQ jobs: thin functions that take ids, load rows and call one service."""

from __future__ import annotations

import dataclasses
import json
import time
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


def audit_job(audit_id: int) -> dict:
    from screening import evaluation
    from screening.models import RunAudit

    audit = RunAudit.objects.select_related("run__corpus").get(pk=audit_id)
    try:
        audit = evaluation.audit_execute(
            audit=audit, on_progress=lambda fraction: progress.report("audit", audit_id, fraction))
    except Exception:
        evaluation.audit_fail(audit_id=audit_id, error=traceback.format_exc(limit=5))
        raise
    return {"pairs_at_threshold": audit.result["pairs_at_threshold"], "missed": len(audit.result["missed"])}


def audit_job_failed(job, connection, exc_type, exc_value, tb) -> None:
    from screening import evaluation

    evaluation.audit_fail(audit_id=int(job.args[0]), error=f"{exc_type.__name__}: {exc_value}")


def _key(run_id: int, name: str) -> str:
    return f"dedup:run:{run_id}:{name}"


def _report_stages(run_id: int, stages: dict[str, float], stage: str) -> None:
    from screening import runs

    total = sum(runs.STAGES[name] for name in stages)
    overall = sum(runs.STAGES[name] * done for name, done in stages.items()) / total
    progress.report("run", run_id, overall, stage, stages=stages)


def _fan_out(run_id: int, function: str, chunks: list, then: str, phase: str) -> None:
    """Queue one chunk job per chunk (retried twice; one failing for good fails the run), and `then` after all."""
    from rq import Callback, Retry

    from dedup_site.queues import get_queue

    queue = get_queue()
    connection = queue.connection
    connection.delete(_key(run_id, f"{phase}-done"))
    connection.set(_key(run_id, f"{phase}-chunks"), len(chunks), ex=progress.TTL)
    jobs = [queue.enqueue(function, run_id, number, chunk, retry=Retry(max=2),
                          on_failure=Callback("screening.jobs.chunk_failed"), job_timeout=settings.RQ_JOB_TIMEOUT)
            for number, chunk in enumerate(chunks)]
    queue.enqueue(then, run_id, depends_on=jobs, on_failure=Callback("screening.jobs.run_job_failed"),
                  job_timeout=settings.RQ_JOB_TIMEOUT)


def _chunk_done(run_id: int, phase: str) -> float:
    """Count a finished chunk and record which worker did it; returns the phase's fraction done."""
    from rq import get_current_job

    job = get_current_job()
    job.connection.sadd(_key(run_id, "workers"), getattr(job, "worker_name", "") or "unknown")
    job.connection.expire(_key(run_id, "workers"), progress.TTL)
    done = job.connection.incr(_key(run_id, f"{phase}-done"))
    return done / int(job.connection.get(_key(run_id, f"{phase}-chunks")) or 1)


def chunk_failed(job, connection, exc_type, exc_value, tb) -> None:
    if job.retries_left:
        return  # RQ will run the chunk again
    from screening import runs

    runs.run_fail(run_id=int(job.args[0]), error=f"a chunk job failed for good: {exc_type.__name__}: {exc_value}")


def run_job(run_id: int) -> str:
    """Start a run: fan its signing out to chunk jobs when it is large, else go straight to banding."""
    from dedup_site.queues import get_queue
    from screening import runs
    from screening.models import ScreeningRun

    run = ScreeningRun.objects.get(pk=run_id)
    get_queue().connection.delete(_key(run_id, "workers"), _key(run_id, "verified"))  # from an earlier attempt
    chunks = runs.sign_chunks(run)
    if not chunks:
        return run_finish_job(run_id)
    runs.run_mark_running(run=run)
    _fan_out(run_id, "screening.jobs.sign_chunk_job", chunks, then="screening.jobs.run_finish_job", phase="sign")
    return f"run {run_id}: signing in {len(chunks)} chunk jobs"


def sign_chunk_job(run_id: int, number: int, pks: list[int]) -> int:
    from screening import near, runs
    from screening.models import ScreeningRun

    run = ScreeningRun.objects.get(pk=run_id)
    computed = near.store_signatures(pks, runs.near_config_of(run))
    _report_stages(run_id, {"exact": 0.0, "sign": _chunk_done(run_id, "sign")}, "sign")
    return computed


def _workers(run_id: int) -> list[str]:
    """The workers whose chunk jobs did part of the run (recorded with its results, in the same transaction)."""
    return progress.members(_key(run_id, "workers"))


def _failed_by_a_chunk(run) -> bool:
    from screening.models import ScreeningRun

    return run.status == ScreeningRun.Status.FAILED and run.error.startswith("a chunk job failed")


def run_finish_job(run_id: int) -> str:
    """Exact pass, signatures, banding; then verification here, or in chunk jobs when there are many
    candidates (a publishing job then ends the run)."""
    from dedup_site.queues import get_queue
    from screening import near, runs
    from screening.models import ScreeningRun

    run = ScreeningRun.objects.select_related("corpus").get(pk=run_id)
    if _failed_by_a_chunk(run):
        return runs.run_summary(run)
    stages = {name: 0.0 for name in runs.STAGES if run.near or name in ("exact", "publish")}

    def report(fraction: float, stage: str) -> None:
        stages[stage] = fraction
        _report_stages(run_id, stages, stage)

    def split(found: near.Candidates, seconds: dict[str, float]) -> bool:
        size = settings.DEDUP_VERIFY_CHUNK
        if len(found.pairs) <= size:
            return False
        connection = get_queue().connection
        connection.delete(_key(run_id, "verified"))
        connection.set(_key(run_id, "template"), found.template.astype("<u8").tobytes(), ex=progress.TTL)
        connection.set(_key(run_id, "staged"), json.dumps({
            "candidates": len(found.pairs), "stats": found.stats, "seconds": seconds, "at": time.time(),
        }), ex=progress.TTL)
        chunks = [found.pairs[i : i + size] for i in range(0, len(found.pairs), size)]
        _fan_out(run_id, "screening.jobs.verify_chunk_job", chunks, then="screening.jobs.run_publish_job",
                 phase="verify")
        return True

    try:
        run = runs.run_execute(run=run, on_progress=report, split=split, workers=lambda: _workers(run_id))
    except Exception:
        runs.run_fail(run_id=run_id, error=traceback.format_exc(limit=8))
        raise
    if run.status == ScreeningRun.Status.RUNNING:
        return f"run {run_id}: verifying in chunk jobs"
    return runs.run_summary(run)


def verify_chunk_job(run_id: int, number: int, pairs: list[list[int]]) -> int:
    import numpy as np
    from rq import get_current_job

    from screening import near, runs
    from screening.models import ScreeningRun

    run = ScreeningRun.objects.get(pk=run_id)
    runs.verification_key_check(run)
    connection = get_current_job().connection
    template = np.frombuffer(connection.get(_key(run_id, "template")) or b"", dtype="<u8")
    found, below_floor = near.verify_chunk([tuple(p) for p in pairs], template, runs.near_config_of(run),
                                           lambda fraction, stage: None)
    # Keyed by chunk number: a chunk run twice (retried after a kill) leaves one result.
    connection.hset(_key(run_id, "verified"), str(number), json.dumps(
        {"pairs": [dataclasses.astuple(p) for p in found], "below_floor": below_floor}))
    connection.expire(_key(run_id, "verified"), progress.TTL)
    _report_stages(run_id, {"exact": 1.0, "sign": 1.0, "band": 1.0, "verify": _chunk_done(run_id, "verify")},
                   "verify")
    return len(found)


def run_publish_job(run_id: int) -> str:
    """Gather what the verification chunks found and publish the run (in one transaction)."""
    from dedup_site.queues import get_queue
    from screening import near, runs
    from screening.models import ScreeningRun

    run = ScreeningRun.objects.select_related("corpus").get(pk=run_id)
    if _failed_by_a_chunk(run):
        return runs.run_summary(run)
    connection = get_queue().connection
    raw = connection.get(_key(run_id, "staged"))
    if raw is None:
        raise RuntimeError("the run's verification results are gone from Redis (restarted without persistence?); "
                           "run it again")
    staged = json.loads(raw)
    chunks = [json.loads(v) for v in connection.hvals(_key(run_id, "verified"))]
    seconds = dict(staged["seconds"], verify=round(time.time() - staged["at"], 3))
    verified = runs.Verified(
        candidates=staged["candidates"], stats=staged["stats"], seconds=seconds,
        pairs=[near.NearPair(*p) for chunk in chunks for p in chunk["pairs"]],
        below_floor=sum(chunk["below_floor"] for chunk in chunks),
    )
    stages = {name: 1.0 for name in runs.STAGES}

    def report(fraction: float, stage: str) -> None:
        if stage == "publish":
            stages[stage] = fraction
            _report_stages(run_id, stages, stage)

    try:
        run = runs.run_execute(run=run, on_progress=report, verified=verified, workers=lambda: _workers(run_id))
    except Exception:
        runs.run_fail(run_id=run_id, error=traceback.format_exc(limit=8))
        raise
    connection.delete(_key(run_id, "verified"), _key(run_id, "template"), _key(run_id, "staged"))
    return runs.run_summary(run)


def run_job_failed(job, connection, exc_type, exc_value, tb) -> None:
    from screening import runs

    runs.run_fail(run_id=int(job.args[0]), error=f"{exc_type.__name__}: {exc_value}")
