"""The driver of a run: it owns the order of the steps (`steps`) and the run's state, hands the steps to an
executor (`executors`) and reports progress as their results come back:

    exact → sign (slices of representatives) → template → band (partitions of band keys), or the persistent
    index for an incremental run → verify (chunks of whole components) → publish

The spec (`RunSpec`) is built once, from the run's record, and given to every step.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from urllib.parse import quote

import numpy as np
from django.conf import settings
from django.db import connection

from dedup_site import progress, ray_cluster
from dedup_site.progress import StageProgress as Progress
from screening.engine import cluster, lsh
from screening.models import Corpus, ScreeningRun, StagedPair
from screening.runs import near, steps
from screening.runs.exact import ExactResult
from screening.runs.executors import Executor, InProcess
from screening.runs.lifecycle import STAGES, run_mark_running, spec_of, verification_key_check
from screening.runs.publish import Outcome, run_publish
from screening.runs.spec import RunSpec


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
    """A run up to verification: its exact groups and figures; with the near pass, its representatives, template
    and the partitions of its band keys, and once banded (or looked up in its index) its candidates."""

    exact: ExactResult
    stats: dict
    pks: np.ndarray | None = None  # the representatives, sorted
    template: np.ndarray | None = None
    parts: int = 1
    near_stats: dict = field(default_factory=dict)
    candidates: near.Candidates | None = None
    index_update: near.IndexUpdate | None = None


def screen(spec: RunSpec, executor: Executor, report: Progress) -> Screened:
    """The exact pass, then the near pass's signing, template and candidates: banded through the executor, or
    looked up in the corpus's index for an incremental run."""
    stats: dict = {"documents": steps.documents(spec).count()}
    # Exact groups are always found: the near pass signs one representative per group.
    report(0.0, "exact")
    exact = steps.exact_step(spec, report)
    report(1.0, "exact")
    if spec.exact:
        stats.update(exact_groups=len(exact.groups), exact_singletons=exact.singletons,
                     exact_grouped_documents=sum(len(g.members) for g in exact.groups))
    if spec.near is None:
        return Screened(exact, stats)
    pks = steps.representatives(spec, exact.duplicates)
    signed = sign(spec, executor, pks, report)
    count = len(pks) - signed.empty  # no shingle, no signature: never paired, not even with another empty one
    template = steps.template_step(spec, pks, count)
    screened = Screened(exact, stats, pks, template, near_stats={
        "representatives": len(pks), "signed": count, "newly_signed": signed.computed,
        "reused_signatures": len(pks) - signed.computed, "empty": signed.empty, "template_shingles": int(template.size),
    })
    if spec.incremental:
        report(0.0, "band")
        pairs, screened.index_update, index = near.incremental_candidates(
            Corpus.objects.get(pk=spec.corpus), list(spec.uploads), pks, spec.near)
        screened.candidates = near.Candidates(pairs, template, {**screened.near_stats, "index": index})
        report(1.0, "band")
        return screened
    screened.parts = lsh.parts_for(count, spec.near.bands, spec.sizes.band_keys)
    screened.candidates = band(spec, executor, screened, report)
    return screened


def sign(spec: RunSpec, executor: Executor, pks: np.ndarray, report: Progress) -> steps.Signed:
    """Every representative signed (reused when stored under the same configuration), a slice a task."""
    report(0.0, "sign")
    size, done = spec.sizes.sign, steps.Signed()
    slices = range(0, len(pks), size)
    for number, signed in enumerate(executor.map(steps.sign_step, ((spec, pks[at : at + size]) for at in slices)),
                                    start=1):
        done += signed
        report(number / len(slices), "sign")
    report(1.0, "sign")
    return done


def band(spec: RunSpec, executor: Executor, screened: Screened, report: Progress) -> near.Candidates:
    """The band keys of every representative, read once by map tasks (a slice of representatives each, as for
    signing) and paired by reduce tasks (a partition of the keys each); their candidates merged."""
    report(0.0, "band")
    pks, found, size = screened.pks, [], spec.sizes.sign
    slices = ((spec, pks[at : at + size], screened.parts) for at in range(0, len(pks), size))
    for done, pairs in enumerate(executor.shuffle(steps.band_keys_step, slices, screened.parts,
                                                  steps.band_pairs_step, (spec,)), start=1):
        found.append(pairs)
        report(done / screened.parts, "band")
    return candidates_of(found, screened)


def candidates_of(found: list[np.ndarray], screened: Screened) -> near.Candidates:
    return near.Candidates(steps.candidates_merged(found), screened.template,
                           {**screened.near_stats, "band_parts": screened.parts})


def verify(spec: RunSpec, executor: Executor, screened: Screened, report: Progress) -> Outcome:
    """Every candidate verified, a chunk a task, which stages the pairs it keeps in the database: the run's
    outcome, ready to publish."""
    found = screened.candidates
    chunks = cluster.chunks_by_component(found.pairs, spec.sizes.verify)  # a component's pairs together
    if executor.local:
        near.warmed()  # the kernels load once a process, before the stage's clock: no candidate's verification
    report(0.0, "verify")
    verified = steps.Verified()
    tasks = ((spec, number, chunk, found.template) for number, chunk in enumerate(chunks))
    for done, part in enumerate(executor.map(steps.verify_step, tasks), start=1):
        verified += part
        report(done / len(chunks), "verify")
    report(1.0, "verify")
    return outcome_of(screened, verified, len(found.pairs), found.stats)


def outcome_of(screened: Screened, verified: steps.Verified, candidates: int, stats: dict) -> Outcome:
    """The run's outcome once its candidates are verified (`stats`: the signing's and banding's figures)."""
    # Verification's CPU beside its wall-clock seconds: on a busy machine the seconds say more of the rest.
    return Outcome(screened.exact, {**screened.stats, "near": {**stats, **verified.stats(candidates)}},
                   verified.edges, screened.index_update)


def drive(*, run: ScreeningRun, executor: Executor, on_progress: Progress | None = None) -> ScreeningRun:
    """The whole run through this executor, from its first step to its results, published at once with its
    status in one transaction (a run that fails on the way shows nothing)."""
    if run.status == ScreeningRun.Status.COMPLETE:
        return run  # a retried job must not publish twice
    spec = spec_of(run)
    verification_key_check(spec)
    run_mark_running(run=run)
    StagedPair.objects.filter(run=run).delete()  # an earlier attempt's
    clock = StageClock(on_progress)
    screened = screen(spec, executor, clock.report)
    if screened.candidates is None:
        outcome = Outcome(screened.exact, screened.stats)
    else:
        outcome = verify(spec, executor, screened, clock.report)
    outcome.seconds = clock.seconds()
    return run_publish(run=run, outcome=outcome, nodes=executor.places, report=clock.report)


def database_url() -> str:
    """The database this process reads, as a URL another process (a Ray task) reads it by."""
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    password = f":{quote(db['PASSWORD'], safe='')}" if db.get("PASSWORD") else ""
    return f"postgresql://{quote(db['USER'] or '', safe='')}{password}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}"


def executor_for(run: ScreeningRun) -> Executor:
    """Where the run's steps run: the Ray cluster of DEDUP_RAY_ADDRESS; a Ray started on this machine for a run
    of DEDUP_RAY_LOCAL_DOCUMENTS documents or more; else this process. RayUnavailable says why a cluster is
    out of reach."""
    documents = sum(entry["documents"] for entry in run.manifest)
    if settings.DEDUP_RAY_ADDRESS:
        return ray_cluster.RayExecutor(address=settings.DEDUP_RAY_ADDRESS,
                                       env=ray_cluster.task_env(database_url(), secrets=False))
    if run.near and documents >= settings.DEDUP_RAY_LOCAL_DOCUMENTS:
        return ray_cluster.RayExecutor(env=ray_cluster.task_env(database_url(), secrets=True),
                                       cpus=settings.DEDUP_RAY_CPUS or None,
                                       token_file=settings.DATA_DIR / "ray-auth-token")
    return InProcess()


def stage_reporter(run: ScreeningRun, draw: Progress | None = None) -> Progress:
    """The run's progress as its page shows it, each stage weighed by its share of a run's time (STAGES), kept
    where the pages read it; `draw` is given the whole's fraction too (a command's bar)."""
    stages = {name: 0.0 for name in STAGES if run.near or name in ("exact", "publish")}

    def report(fraction: float, stage: str) -> None:
        stages[stage] = fraction
        overall = sum(STAGES[name] * done for name, done in stages.items()) / sum(STAGES[name] for name in stages)
        progress.report("run", run.pk, overall, stage, stages=dict(stages))
        if draw is not None:
            draw(overall, stage)

    return report


def run_execute(*, run: ScreeningRun, on_progress: Progress | None = None,
                executor: Executor | None = None) -> ScreeningRun:
    """The whole run, driven from this process (the run's job, `screen --sync`, tests), its steps where
    `executor_for` says unless an executor is given."""
    if run.status == ScreeningRun.Status.COMPLETE:
        return run
    chosen = executor or executor_for(run)
    try:
        return drive(run=run, executor=chosen, on_progress=on_progress)
    finally:
        if executor is None:
            chosen.close()
