"""Spreading a run over workers on any number of machines. Signing and verification go to chunk jobs (each
retried twice; one failing for good fails the run); what the chunks and the banding job find is staged in
Redis under `dedup:run:<id>:…` until the publishing job writes it all in one transaction. The only module
that knows these keys."""

from __future__ import annotations

import json
import time
import traceback

import numpy as np
from django.conf import settings
from rq import Callback, Retry, get_current_job

from dedup_site import progress
from dedup_site.progress import StageProgress as Progress
from dedup_site.redis_direct import get_queue
from screening.models import ScreeningRun, StagedPair
from screening.runs import pipeline, steps
from screening.runs.exact import ExactResult
from screening.runs.executors import InProcess
from screening.runs.lifecycle import (
    STAGES,
    documents_of,
    near_config_of,
    run_fail,
    run_mark_running,
    spec_of,
    verification_key_check,
)
from screening.runs.publish import Outcome, run_publish
from screening.runs.selectors import run_summary

CHUNK_FAILED = "a chunk job failed for good"


def _key(run_id: int, name: str) -> str:
    return f"dedup:run:{run_id}:{name}"


def _connection():
    return get_queue().connection


def _report_stages(run_id: int, stages: dict[str, float], stage: str) -> None:
    total = sum(STAGES[name] for name in stages)
    overall = sum(STAGES[name] * done for name, done in stages.items()) / total
    progress.report("run", run_id, overall, stage, stages=stages)


def _fan_out(run_id: int, function: str, chunks: list, then: str, phase: str) -> None:
    """Queue one chunk job per chunk (retried twice; one failing for good fails the run), and `then` after all."""
    queue = get_queue()
    queue.connection.delete(_key(run_id, f"{phase}-done"))
    queue.connection.set(_key(run_id, f"{phase}-chunks"), len(chunks), ex=progress.TTL)
    jobs = [queue.enqueue(function, run_id, number, chunk, retry=Retry(max=2),
                          on_failure=Callback("screening.jobs.chunk_failed"), job_timeout=settings.RQ_JOB_TIMEOUT)
            for number, chunk in enumerate(chunks)]
    queue.enqueue(then, run_id, depends_on=jobs, on_failure=Callback("screening.jobs.run_job_failed"),
                  job_timeout=settings.RQ_JOB_TIMEOUT)


def _chunk_done(run_id: int, phase: str) -> float:
    """Count a finished chunk and record which worker did it; returns the phase's fraction done."""
    job = get_current_job()
    job.connection.sadd(_key(run_id, "workers"), getattr(job, "worker_name", "") or "unknown")
    job.connection.expire(_key(run_id, "workers"), progress.TTL)
    done = job.connection.incr(_key(run_id, f"{phase}-done"))
    return done / int(job.connection.get(_key(run_id, f"{phase}-chunks")) or 1)


def _workers(run_id: int) -> list[str]:
    """The workers whose chunk jobs did part of the run (recorded with its results, in the same transaction)."""
    return progress.members(_key(run_id, "workers"))


def _failed_by_a_chunk(run: ScreeningRun) -> bool:
    return run.status == ScreeningRun.Status.FAILED and run.error.startswith(CHUNK_FAILED)


def chunk_failed_for_good(*, run_id: int, error: str) -> None:
    run_fail(run_id=run_id, error=f"{CHUNK_FAILED}: {error}")


def run_begin(*, run_id: int) -> str:
    """Start a run: fan its signing out to chunk jobs when it is large, else go straight to screening."""
    run = ScreeningRun.objects.get(pk=run_id)
    _connection().delete(_key(run_id, "workers"), _key(run_id, "verified"))  # from an earlier attempt
    StagedPair.objects.filter(run_id=run_id).delete()
    chunks = _sign_chunks(run)
    if not chunks:
        return run_finish(run_id=run_id)
    run_mark_running(run=run)
    _fan_out(run_id, "screening.jobs.sign_chunk_job", chunks, then="screening.jobs.run_finish_job", phase="sign")
    return f"run {run_id}: signing in {len(chunks)} chunk jobs"


def _sign_chunks(run: ScreeningRun) -> list[list[int]]:
    """The run's unsigned documents in chunks for parallel signing jobs; [] when one job is enough."""
    if not run.near:
        return []
    missing = list(documents_of(run).exclude(signatures__key=near_config_of(run).signature_key).order_by("pk")
                   .values_list("pk", flat=True))
    size = settings.DEDUP_SIGN_CHUNK
    if len(missing) <= size:
        return []
    return [missing[i : i + size] for i in range(0, len(missing), size)]


def sign_chunk(*, run_id: int, number: int, pks: list[int]) -> int:
    run = ScreeningRun.objects.get(pk=run_id)
    computed = steps.sign_step(spec_of(run), np.array(sorted(pks), dtype=np.int64)).computed
    _report_stages(run_id, {"exact": 0.0, "sign": _chunk_done(run_id, "sign")}, "sign")
    return computed


def run_finish(*, run_id: int) -> str:
    """Exact pass, signatures, template; then banding here, or in partition jobs when the corpus is large (a
    gathering job then goes on); then verification (`_after_banding`)."""
    run = ScreeningRun.objects.select_related("corpus").get(pk=run_id)
    if _failed_by_a_chunk(run) or run.status == ScreeningRun.Status.COMPLETE:
        return run_summary(run)
    clock = pipeline.StageClock(_stage_reporter(run, run_id))
    try:
        verification_key_check(run)
        if run.status != ScreeningRun.Status.RUNNING:
            run_mark_running(run=run)
        screened = pipeline.screen(spec_of(run), InProcess(), clock.report, band_all=False)
        if run.near and screened.candidates is None:
            _stage_banding(run_id, screened, clock.seconds())
            return f"run {run_id}: banding in {screened.parts} partition jobs"
        return _after_banding(run, screened, clock)
    except Exception:
        run_fail(run_id=run_id, error=traceback.format_exc(limit=8))
        raise


def _stage_reporter(run: ScreeningRun, run_id: int, done: tuple[str, ...] = ()) -> Progress:
    stages = {name: 1.0 if name in done else 0.0 for name in STAGES if run.near or name in ("exact", "publish")}

    def report(fraction: float, stage: str) -> None:
        stages[stage] = fraction
        _report_stages(run_id, stages, stage)

    return report


def _after_banding(run: ScreeningRun, screened: pipeline.Screened, clock: pipeline.StageClock) -> str:
    """Verify here, or in chunk jobs when there are many candidates (a publishing job then ends the run)."""
    spec = spec_of(run)
    if screened.candidates is None:
        outcome = Outcome(screened.exact, screened.stats)
    elif len(chunks := pipeline.verify_chunks(screened.candidates, spec.sizes.verify)) > 1:
        _stage(run.pk, screened, chunks, clock.seconds())
        return f"run {run.pk}: verifying in {len(chunks)} chunk jobs"
    else:
        outcome = pipeline.verify(spec, InProcess(), screened, clock.report)
    outcome.seconds = clock.seconds()
    run = run_publish(run=run, outcome=outcome, workers=lambda: _workers(run.pk), report=clock.report)
    return run_summary(run)


def _stage_banding(run_id: int, screened: pipeline.Screened, seconds: dict[str, float]) -> None:
    """Keep what the banding jobs and the gathering job need (the exact groups, the plan) and queue a banding
    job per partition of band keys."""
    connection = _connection()
    connection.delete(_key(run_id, "banded"))
    connection.set(_key(run_id, "template"), screened.template.astype("<u8").tobytes(), ex=progress.TTL)
    connection.set(_key(run_id, "banding"), json.dumps({
        "parts": screened.parts, "stats": screened.near_stats, "run_stats": screened.stats, "seconds": seconds,
        "at": time.time(), "exact": screened.exact.as_json(),
    }), ex=progress.TTL)
    _fan_out(run_id, "screening.jobs.band_part_job", list(range(screened.parts)),
             then="screening.jobs.run_gather_job", phase="band")


def _staged(run_id: int, name: str) -> dict:
    raw = _connection().get(_key(run_id, name))
    if raw is None:
        raise RuntimeError(f"the run's staged {name} is gone from Redis (restarted without persistence?); "
                           "run it again")
    return json.loads(raw)


def _template(run_id: int) -> np.ndarray:
    return np.frombuffer(_connection().get(_key(run_id, "template")) or b"", dtype="<u8")


def band_part(*, run_id: int, number: int, part: int) -> int:
    """Band one partition of the run's band keys over all its documents; the candidates found go to Redis."""
    run = ScreeningRun.objects.get(pk=run_id)
    staged = _staged(run_id, "banding")
    spec = spec_of(run)
    pks = steps.representatives(spec, ExactResult.from_json(staged["exact"]).duplicates)
    pairs = steps.band_step(spec, pks, part, staged["parts"])
    connection = get_current_job().connection
    # Keyed by partition: a partition banded twice (retried after a kill) leaves one result.
    connection.hset(_key(run_id, "banded"), str(part), pairs.astype("<i8").tobytes())
    connection.expire(_key(run_id, "banded"), progress.TTL)
    _report_stages(run_id, {"exact": 1.0, "sign": 1.0, "band": _chunk_done(run_id, "band")}, "band")
    return int(pairs.shape[0])


def run_gather(*, run_id: int) -> str:
    """Merge the candidates of every banding job, then verify (`_after_banding`)."""
    run = ScreeningRun.objects.select_related("corpus").get(pk=run_id)
    if _failed_by_a_chunk(run) or run.status == ScreeningRun.Status.COMPLETE:
        return run_summary(run)
    try:
        staged = _staged(run_id, "banding")
        banded = _connection().hgetall(_key(run_id, "banded"))
        if len(banded) != staged["parts"]:
            raise RuntimeError(f"{len(banded)} of the run's {staged['parts']} banding partitions are in Redis")
        screened = pipeline.Screened(ExactResult.from_json(staged["exact"]), staged["run_stats"],
                                     template=_template(run_id), parts=staged["parts"], near_stats=staged["stats"])
        screened.candidates = pipeline.candidates_of(
            [np.frombuffer(value, dtype="<i8").reshape(-1, 2) for value in banded.values()], screened)
        clock = pipeline.StageClock(_stage_reporter(run, run_id, done=("exact", "sign", "band")), staged["seconds"])
        clock.began["band"] = time.perf_counter() - (time.time() - staged["at"])  # banding began when staged
        _connection().delete(_key(run_id, "banded"))
        return _after_banding(run, screened, clock)
    except Exception:
        run_fail(run_id=run_id, error=traceback.format_exc(limit=8))
        raise


def _stage(run_id: int, screened: pipeline.Screened, chunks: list, seconds: dict[str, float]) -> None:
    """Keep what the publishing job needs (the exact groups, the banding's figures, the template) and queue
    a verification job per chunk of candidates."""
    found = screened.candidates
    connection = _connection()
    connection.delete(_key(run_id, "verified"))
    connection.set(_key(run_id, "template"), found.template.astype("<u8").tobytes(), ex=progress.TTL)
    connection.set(_key(run_id, "staged"), json.dumps({
        "candidates": len(found.pairs), "stats": found.stats, "run_stats": screened.stats, "seconds": seconds,
        "at": time.time(), "exact": screened.exact.as_json(),
    }), ex=progress.TTL)
    _fan_out(run_id, "screening.jobs.verify_chunk_job", [chunk.tolist() for chunk in chunks],
             then="screening.jobs.run_publish_job", phase="verify")


def verify_chunk(*, run_id: int, number: int, pairs: list[list[int]]) -> int:
    run = ScreeningRun.objects.get(pk=run_id)
    connection = get_current_job().connection
    verified = steps.verify_step(spec_of(run), number, np.array(pairs, dtype=np.int64).reshape(-1, 2),
                                 _template(run_id))
    # Keyed by chunk number: a chunk run twice (retried after a kill) leaves one result.
    connection.hset(_key(run_id, "verified"), str(number), json.dumps({
        "stored": verified.stored, "below_floor": verified.below_floor, "histogram": verified.histogram.tolist(),
        "edges": verified.edges.tolist(), "cpu": verified.cpu}))
    connection.expire(_key(run_id, "verified"), progress.TTL)
    _report_stages(run_id, {"exact": 1.0, "sign": 1.0, "band": 1.0, "verify": _chunk_done(run_id, "verify")},
                   "verify")
    return verified.stored


def run_publish_staged(*, run_id: int) -> str:
    """Gather what the verification chunks found and publish the run (in one transaction)."""
    run = ScreeningRun.objects.select_related("corpus").get(pk=run_id)
    if _failed_by_a_chunk(run) or run.status == ScreeningRun.Status.COMPLETE:
        return run_summary(run)
    connection = _connection()
    staged = _staged(run_id, "staged")
    chunks = [json.loads(v) for v in connection.hvals(_key(run_id, "verified"))]
    stages = dict.fromkeys(STAGES, 1.0)

    def report(fraction: float, stage: str) -> None:
        if stage == "publish":
            stages[stage] = fraction
            _report_stages(run_id, stages, stage)

    try:
        verified = steps.Verified()
        for chunk in chunks:
            verified += steps.Verified(chunk["stored"], chunk["below_floor"], np.array(chunk["histogram"]),
                                       np.array(chunk["edges"], dtype=np.int64).reshape(-1, 2), chunk["cpu"])
        screened = pipeline.Screened(ExactResult.from_json(staged["exact"]), staged["run_stats"])
        outcome = pipeline.outcome_of(screened, verified, staged["candidates"], staged["stats"])
        outcome.seconds = dict(staged["seconds"], verify=round(time.time() - staged["at"], 3))
        run = run_publish(run=run, outcome=outcome, workers=lambda: _workers(run_id), report=report)
    except Exception:
        run_fail(run_id=run_id, error=traceback.format_exc(limit=8))
        raise
    connection.delete(_key(run_id, "verified"), _key(run_id, "template"), _key(run_id, "staged"))
    return run_summary(run)
