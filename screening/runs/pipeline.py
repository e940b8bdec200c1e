"""A run's work from its documents to its results, in steps that the in-process path (`run_execute`) and
the fan-out over workers (`fanout`) share:

    sign_chunks → screen (exact pass, signatures, template) → band (in partitions of band keys) → verify
    → publish.run_publish

The exact pass runs once per run; a fanned-out run stages its result for the publishing job.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from django.conf import settings

from dedup_site.progress import StageProgress as Progress
from screening.engine import cluster
from screening.models import ScreeningRun
from screening.runs import near
from screening.runs.exact import ExactResult, exact_pass
from screening.runs.lifecycle import documents_of, near_config_of, run_mark_running, verification_key_check
from screening.runs.publish import Outcome, run_publish


class StageClock:
    """Passes progress on, and notes when each stage first reported: the seconds each stage took."""

    def __init__(self, on_progress: Progress | None = None, spent: dict[str, float] | None = None):
        self.outer = on_progress or (lambda fraction, stage: None)
        self.began: dict[str, float] = {}
        self.spent = dict(spent or {})  # seconds of stages done by earlier jobs

    def report(self, fraction: float, stage: str) -> None:
        self.began.setdefault(stage, time.perf_counter())
        self.outer(fraction, stage)

    def seconds(self) -> dict[str, float]:
        began = dict(self.began, end=time.perf_counter())
        order = sorted(began, key=began.get)
        return {**self.spent, **{a: round(began[b] - began[a], 3) for a, b in zip(order, order[1:], strict=False)}}


@dataclass
class Screened:
    """A run up to verification: its outcome when nothing is left to verify (exact only, incremental), else
    its banding plan and, once banded, the LSH candidates of its near pass."""

    exact: ExactResult
    stats: dict
    plan: near.BandPlan | None = None
    candidates: near.Candidates | None = None
    outcome: Outcome | None = None


def sign_chunks(run: ScreeningRun) -> list[list[int]]:
    """The run's unsigned documents in chunks for parallel signing jobs; [] when one job is enough."""
    if not run.near:
        return []
    config = near_config_of(run)
    missing = list(documents_of(run).exclude(signatures__key=config.signature_key).order_by("pk")
                   .values_list("pk", flat=True))
    size = settings.DEDUP_SIGN_CHUNK
    if len(missing) <= size:
        return []
    return [missing[i : i + size] for i in range(0, len(missing), size)]


def screen(*, run: ScreeningRun, report: Progress, band_here: bool = True) -> Screened:
    """Mark the run running (unless its signing chunks did), do the exact pass, then sign the near pass's
    representatives and plan their banding; band here too, unless `band_here` is off and the plan has several
    partitions (the fan-out gives each to a job). An incremental run also verifies, through its index."""
    verification_key_check(run)
    if run.status != ScreeningRun.Status.RUNNING:
        run_mark_running(run=run)
    stats: dict = {"documents": documents_of(run).count()}
    # Exact groups are always found: the near pass signs one representative per group.
    report(0.0, "exact")
    exact = exact_pass(run, report)
    report(1.0, "exact")
    if run.exact:
        stats.update(exact_groups=len(exact.groups), exact_singletons=exact.singletons,
                     exact_grouped_documents=sum(len(g.members) for g in exact.groups))
    if not run.near:
        return Screened(exact, stats, outcome=Outcome(exact, stats))
    config = near_config_of(run)
    duplicates = exact.duplicates
    representatives = representatives_of(run, duplicates).tolist()
    if run.config.get("incremental"):
        doc_ids = dict(documents_of(run).order_by("pk").values_list("pk", "doc_id"))
        result, update = near.incremental_pass(run.corpus, run.upload_ids, representatives, doc_ids, config, report)
        stats["near"] = result.stats
        return Screened(exact, stats, outcome=Outcome(exact, stats, result, update, doc_ids))
    screened = Screened(exact, stats, plan=near.prepare_banding(representatives, config, report))
    if band_here or screened.plan.parts == 1:
        screened.candidates = band(run=run, screened=screened, parts=range(screened.plan.parts), report=report)
    return screened


def representatives_of(run: ScreeningRun, duplicates: set[int]) -> np.ndarray:
    """The pks of the run's documents that the near pass signs, sorted: all but the exact copies of another
    (8 bytes a document)."""
    pks = np.fromiter(documents_of(run).order_by("pk").values_list("pk", flat=True).iterator(10_000), dtype=np.int64)
    if duplicates:
        pks = pks[~np.isin(pks, np.fromiter(duplicates, dtype=np.int64, count=len(duplicates)))]
    return pks


def band(*, run: ScreeningRun, screened: Screened, parts, report: Progress) -> near.Candidates:
    """Band these partitions of the plan here, one after the other, and merge their candidates."""
    parts, pks = list(parts), representatives_of(run, screened.exact.duplicates)
    report(0.0, "band")
    found = []
    for done, part in enumerate(parts, start=1):
        found.append(near.band_part(pks, near_config_of(run), part, screened.plan.parts)[0])
        report(done / len(parts), "band")
    return near.candidates_of(found, screened.plan)


def outcome_of(screened: Screened, pairs: list[near.NearPair], below_floor: int, config, doc_ids: dict[int, str],
               candidates: int, stats: dict) -> Outcome:
    """The run's outcome once its `candidates` are verified, here or gathered from chunk jobs (`stats`: the
    banding's figures)."""
    result = near.near_result(pairs, below_floor, candidates, stats, config, doc_ids)
    return Outcome(screened.exact, {**screened.stats, "near": result.stats}, result, None, doc_ids)


def verify_chunks(screened: Screened) -> list[list[tuple[int, int]]]:
    """The candidates in chunks for verification jobs, when there are enough to spread; else []."""
    size = settings.DEDUP_VERIFY_CHUNK
    if screened.candidates is None or len(screened.candidates.pairs) <= size:
        return []
    return cluster.chunks_by_component(screened.candidates.pairs, size)


def finish(*, run: ScreeningRun, screened: Screened, clock: StageClock,
           workers: Callable[[], list[str]] | None = None) -> ScreeningRun:
    """Verify what is left to verify here, then publish the run."""
    outcome = screened.outcome
    if outcome is None:
        config = near_config_of(run)
        near.warmed()
        # Verification's CPU beside its wall-clock seconds: on a busy machine the seconds say more of the rest.
        cpu = time.process_time()
        pairs, below_floor, doc_ids = near.verify(screened.candidates, config, clock.report)
        found = screened.candidates
        outcome = outcome_of(screened, pairs, below_floor, config, doc_ids, len(found.pairs),
                             {**found.stats, "verify_cpu_seconds": round(time.process_time() - cpu, 3)})
    outcome.seconds = clock.seconds()
    return run_publish(run=run, outcome=outcome, workers=workers, report=clock.report)


def run_execute(*, run: ScreeningRun, on_progress: Progress | None = None) -> ScreeningRun:
    """The whole run in this process (`screen --sync`, tests): the steps the fan-out spreads over workers,
    one after the other. Its results are published at once, with its status, in one transaction."""
    if run.status == ScreeningRun.Status.COMPLETE:
        return run  # a retried job must not publish twice
    clock = StageClock(on_progress)
    return finish(run=run, screened=screen(run=run, report=clock.report), clock=clock)
