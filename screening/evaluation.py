"""Labels and evaluation services: import a label set (all or nothing), evaluate a run against it, audit
every pair of a small corpus, compare runs."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from screening import near, runs, storage
from screening.engine import evaluate as ev
from screening.engine import fast, labels
from screening.engine import near as engine
from screening.models import (
    CandidatePair,
    Corpus,
    Document,
    DocumentSignature,
    ExactGroupMember,
    Label,
    LabelSet,
    RunAudit,
    ScreeningRun,
    SourceFile,
)

DEFAULT_THRESHOLDS = (0.5, 0.7, 0.9)
CHART_THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(1, 21))
AUDIT_LIMIT = 5_000  # documents: above it the all-pairs audit samples this many and says so


class LabelsRejected(Exception):
    def __init__(self, problems: list[str]):
        super().__init__(f"{len(problems)} problem(s)")
        self.problems = problems


class EvaluationRefused(Exception):
    pass


# --- label sets ----------------------------------------------------------------------------------


def labelset_import(*, corpus: Corpus, data: bytes, original_name: str, name: str = "", user=None) -> LabelSet:
    """Store a labels CSV for the corpus: every row or none. Problems name their line."""
    original_name = Path(original_name).name
    name = (name or Path(original_name).stem).strip()[:100]
    rows, problems, notices = labels.read_labels(data, original_name)
    if LabelSet.objects.filter(corpus=corpus, name=name).exists():
        problems.append(f"a label set named {name!r} already exists in corpus {corpus.name}; choose another name")
    ids = {r.left_id for r in rows} | {r.right_id for r in rows}
    pks = dict(Document.objects.filter(corpus=corpus, doc_id__in=ids).values_list("doc_id", "pk"))
    for r in rows:
        for doc_id in (r.left_id, r.right_id):
            if doc_id not in pks:
                problems.append(f"{original_name} line {r.line}: unknown doc_id {doc_id!r} in corpus {corpus.name}")
    if problems:
        raise LabelsRejected(problems)
    sha, size, _ = storage.store_chunks(settings.SOURCES_DIR, [data])
    source, _ = SourceFile.objects.get_or_create(sha256=sha, defaults={"size": size})
    with transaction.atomic():
        label_set = LabelSet.objects.create(
            corpus=corpus, name=name, source=source, original_name=original_name, uploaded_by=user, notices=notices,
            size=len(rows), positives=sum(r.label for r in rows),
        )
        Label.objects.bulk_create(
            Label(label_set=label_set, left_id=pks[r.left_id], right_id=pks[r.right_id], label=r.label,
                  reason=r.reason, split=r.split, line=r.line) for r in rows
        )
    return label_set


def labelset_from_verdicts(*, run: ScreeningRun, user=None) -> LabelSet:
    """Settled pairs of a run as labels: merge-entry → 1; keep-both, public-quote, valid-revision → 0
    (arbitrated pairs use the arbiter's decision, which is their final verdict)."""
    settled = list(CandidatePair.objects.filter(run=run, status="settled").values_list(
        "left_id", "right_id", "final_verdict"))
    if not settled:
        raise EvaluationRefused(f"run {run.pk} has no settled pair yet")
    with transaction.atomic():
        count = LabelSet.objects.filter(corpus=run.corpus, name__startswith=f"verdicts of run {run.pk}").count()
        label_set = LabelSet.objects.create(
            corpus=run.corpus, name=f"verdicts of run {run.pk}" + (f" ({count + 1})" if count else ""),
            from_run=run, uploaded_by=user, size=len(settled),
            positives=sum(v == "merge-entry" for _, _, v in settled),
        )
        Label.objects.bulk_create(
            Label(label_set=label_set, left_id=a, right_id=b, label=int(v == "merge-entry"), reason=f"verdict {v}")
            for a, b, v in settled
        )
    return label_set


# --- evaluation ----------------------------------------------------------------------------------


def _representatives(run: ScreeningRun, pks: Iterable[int]) -> dict[int, int]:
    """Each document's exact-group representative in this run (itself when alone)."""
    pks = list(pks)
    reps = {pk: pk for pk in pks}
    members = ExactGroupMember.objects.filter(group__run=run, document_id__in=pks).values_list(
        "document_id", "group__representative_id")
    reps.update(dict(members))
    return reps


def _signatures(config: engine.NearConfig, pks: set[int]) -> dict[int, np.ndarray | None]:
    """Stored signatures (None: no shingle); documents signed by no run yet are signed now (not stored)."""
    out: dict[int, np.ndarray | None] = {}
    for pk, count, values in DocumentSignature.objects.filter(document_id__in=pks, key=config.signature_key) \
            .values_list("document_id", "shingle_count", "values"):
        out[pk] = engine.from_bytes(bytes(values), config) if count else None
    for row, _ in near.compute_signatures(sorted(pks - set(out)), config):
        out[row.document_id] = engine.from_bytes(row.values, config) if row.shingle_count else None
    return out


def _share_band(a: np.ndarray | None, b: np.ndarray | None, bands: int, rows: int) -> bool:
    if a is None or b is None:
        return False
    equal = (a == b).reshape(bands, rows)
    return bool(equal.all(axis=1).any())


def labelled_pairs(run: ScreeningRun, label_set: LabelSet) -> list[ev.LabelledPair]:
    """Every label with its exact Jaccard and estimate under the run's configuration, and whether the run's
    LSH (or exact pass) returned it at all."""
    if not run.near:
        raise EvaluationRefused(f"run {run.pk} has no near pass to evaluate")
    if label_set.corpus_id != run.corpus_id:
        raise EvaluationRefused(f"label set {label_set.name!r} belongs to another corpus")
    config = runs.near_config_of(run)
    rows = list(label_set.labels.select_related("left", "right"))
    docs = {d.pk: d for r in rows for d in (r.left, r.right)}
    reps = _representatives(run, docs)
    sigs = _signatures(config, set(reps.values()))
    hashes = {pk: near.verification_hashes(d.body, config) for pk, d in docs.items()}
    out = []
    for r in rows:
        ra, rb = reps[r.left_id], reps[r.right_id]
        candidate = ra == rb or _share_band(sigs[ra], sigs[rb], config.bands, config.rows)
        sa, sb = sigs[ra], sigs[rb]
        out.append(ev.LabelledPair(
            left=r.left.doc_id, right=r.right.doc_id, label=r.label,
            jaccard=fast.jaccard(hashes[r.left_id], hashes[r.right_id]) if hashes[r.left_id].size and
            hashes[r.right_id].size else None,
            estimate=engine.estimate(sa, sb) if sa is not None and sb is not None else None,
            candidate=candidate, language=r.left.language if r.left.language == r.right.language else
            f"{r.left.language}/{r.right.language}", split=r.split, left_source=r.left.source_id,
            right_source=r.right.source_id,
        ))
    return out


@dataclass
class Report:
    run: ScreeningRun
    label_set: LabelSet
    thresholds: list[float]
    split: str
    pairs: list[ev.LabelledPair]
    metrics: list[ev.Metrics]
    by_language: dict[str, list[ev.Metrics]]
    by_split: dict[str, list[ev.Metrics]]
    family: dict[str, list[ev.Metrics]] = field(default_factory=dict)  # when labels carry no split
    curve: list[ev.Metrics] = field(default_factory=list)

    def as_dict(self) -> dict:
        def table(ms):
            return [m.as_dict() for m in ms]

        return {
            "run": self.run.pk, "labels": self.label_set.name, "split": self.split or None,
            "thresholds": self.thresholds, "metrics": table(self.metrics),
            "by_language": {k: table(v) for k, v in self.by_language.items()},
            "by_split": {k: table(v) for k, v in self.by_split.items()},
            "family_split": {k: table(v) for k, v in self.family.items()},
            "pairs": [{"left": p.left, "right": p.right, "label": p.label, "jaccard": p.jaccard,
                       "estimate": p.estimate, "candidate": p.candidate,
                       "predicted": {str(t): p.predicted(t) for t in self.thresholds},
                       "error": {str(t): p.error(t) for t in self.thresholds}} for p in self.pairs],
        }


def run_evaluate(*, run: ScreeningRun, label_set: LabelSet, thresholds: Iterable[float] = DEFAULT_THRESHOLDS,
                 split: str = "") -> Report:
    thresholds = sorted({float(t) for t in thresholds})
    if not thresholds or any(not 0 <= t <= 1 for t in thresholds):
        raise EvaluationRefused("thresholds must be numbers between 0 and 1")
    every = labelled_pairs(run, label_set)
    family = {}
    if not any(p.split for p in every):
        # No split in the labels: offer one by source family, never mixing a family across the sides.
        fs = ev.family_split(every)
        every = [ev.LabelledPair(**{**p.__dict__, "split": fs.side(p)}) for p in every]
        family = ev.breakdown(every, thresholds, "split")
    chosen = [p for p in every if not split or p.split == split]
    return Report(run, label_set, thresholds, split, chosen, ev.metrics(chosen, thresholds),
                  ev.breakdown(chosen, thresholds, "language"), ev.breakdown(every, thresholds, "split"), family,
                  ev.metrics(chosen, CHART_THRESHOLDS))


# --- all-pairs audit ------------------------------------------------------------------------------


@dataclass
class Audit:
    documents: int
    audited: int
    sampled: bool
    pairs_at_threshold: int
    missed: list[tuple[str, str, float]]  # (doc_id, doc_id, exact Jaccard) at or above it, not returned
    threshold: float
    limit: int = AUDIT_LIMIT


def run_audit(*, run: ScreeningRun, threshold: float | None = None, limit: int = AUDIT_LIMIT,
              on_progress: Callable[[float], None] | None = None) -> Audit:
    """Exact Jaccard over every pair of the run's representatives (a sample of `limit` above that size):
    the pairs at or above the threshold that LSH did not return."""
    from scipy import sparse

    report = on_progress or (lambda fraction: None)

    if not run.near:
        raise EvaluationRefused(f"run {run.pk} has no near pass to audit")
    config = runs.near_config_of(run)
    threshold = config.threshold if threshold is None else threshold
    # Copies in exact groups are represented by their group's representative, as in the run.
    grouped = set(ExactGroupMember.objects.filter(group__run=run).exclude(
        document_id=F("group__representative_id")).values_list("document_id", flat=True))
    pks = [pk for pk in Document.objects.filter(corpus=run.corpus, upload_id__in=run.upload_ids).order_by("pk")
           .values_list("pk", flat=True) if pk not in grouped]
    total = len(pks)
    sampled = total > limit
    if sampled:
        step = math.ceil(total / limit)
        pks = pks[::step][:limit]
    ids, hashes = {}, {}
    for start in range(0, len(pks), 1000):
        for pk, doc_id, body in Document.objects.filter(pk__in=pks[start : start + 1000]).values_list(
                "pk", "doc_id", "body"):
            ids[pk], hashes[pk] = doc_id, near.verification_hashes(body, config)
        report(0.5 * min(1.0, (start + 1000) / max(len(pks), 1)))  # reading and hashing: half the time
    pks = [pk for pk in pks if hashes[pk].size]
    sigs = _signatures(config, set(pks))
    missed, at_threshold = [], 0
    if len(pks) > 1:
        vocabulary = np.unique(np.concatenate([hashes[pk] for pk in pks]))
        rows = np.repeat(np.arange(len(pks)), [hashes[pk].size for pk in pks])
        cols = np.searchsorted(vocabulary, np.concatenate([hashes[pk] for pk in pks]))
        m = sparse.csr_matrix((np.ones(rows.size, dtype=np.int32), (rows, cols)), shape=(len(pks), vocabulary.size))
        inter = sparse.triu(m @ m.T, k=1).tocoo()
        sizes = np.array([hashes[pk].size for pk in pks])
        scores = inter.data / (sizes[inter.row] + sizes[inter.col] - inter.data)
        for i, j, score in zip(inter.row, inter.col, scores, strict=True):
            if score >= threshold:
                at_threshold += 1
                a, b = pks[i], pks[j]
                if not _share_band(sigs[a], sigs[b], config.bands, config.rows):
                    missed.append((*sorted((ids[a], ids[b])), float(score)))
    missed.sort(key=lambda m: (-m[2], m[0], m[1]))
    report(1.0)
    return Audit(total, len(pks), sampled, at_threshold, missed, threshold, limit)


def audit_create(*, run: ScreeningRun, user=None, threshold: float | None = None) -> RunAudit:
    """Record an audit to be done by a worker (admins start it; it takes seconds to minutes)."""
    if run.status != ScreeningRun.Status.COMPLETE or not run.near:
        raise EvaluationRefused(f"run {run.pk} has no complete near pass to audit")
    with transaction.atomic():
        ScreeningRun.objects.select_for_update().filter(pk=run.pk).first()  # two quick clicks: one audit
        if run.audits.filter(status__in=[RunAudit.Status.QUEUED, RunAudit.Status.RUNNING]).exists():
            raise EvaluationRefused(f"an audit of run {run.pk} is already under way")
        threshold = runs.near_config_of(run).threshold if threshold is None else threshold
        return RunAudit.objects.create(run=run, threshold=threshold, requested_by=user)


def audit_enqueue(*, audit: RunAudit) -> RunAudit:
    from dedup_site.queues import enqueue

    audit.job_id = enqueue("screening.jobs.audit_job", audit.pk, kind="audit",
                           on_failure="screening.jobs.audit_job_failed")
    RunAudit.objects.filter(pk=audit.pk).update(job_id=audit.job_id)
    return audit


def audit_execute(*, audit: RunAudit, on_progress: Callable[[float], None] | None = None) -> RunAudit:
    RunAudit.objects.filter(pk=audit.pk).update(status=RunAudit.Status.RUNNING, error="")
    result = run_audit(run=audit.run, threshold=audit.threshold, on_progress=on_progress)
    RunAudit.objects.filter(pk=audit.pk).update(status=RunAudit.Status.COMPLETE, finished_at=timezone.now(),
                                                result=dataclasses.asdict(result))
    audit.refresh_from_db()
    return audit


def audit_fail(*, audit_id: int, error: str) -> None:
    # A failure already recorded (with its traceback, by the job) is kept.
    RunAudit.objects.filter(pk=audit_id).exclude(status__in=[RunAudit.Status.COMPLETE, RunAudit.Status.FAILED]).update(
        status=RunAudit.Status.FAILED, finished_at=timezone.now(), error=error[:5000])


def audit_latest(run: ScreeningRun) -> tuple[RunAudit | None, Audit | None]:
    """The run's newest audit, and its result when complete."""
    audit = run.audits.select_related("requested_by").first()
    if audit is None or audit.status != RunAudit.Status.COMPLETE:
        return audit, None
    data = dict(audit.result)
    data["missed"] = [tuple(m) for m in data["missed"]]
    return audit, Audit(**data)


# --- comparison ----------------------------------------------------------------------------------


def compare_runs(*, corpus: Corpus, label_set: LabelSet, thresholds=DEFAULT_THRESHOLDS) -> list[dict]:
    """One row per complete near run of the corpus: configuration, candidates, candidate recall, precision and
    recall at each threshold, run time."""
    out = []
    for run in corpus.runs.filter(status=ScreeningRun.Status.COMPLETE, near=True).order_by("pk"):
        report = run_evaluate(run=run, label_set=label_set, thresholds=thresholds)
        near = run.config["near"]
        seconds = (run.finished_at - run.started_at).total_seconds() if run.finished_at and run.started_at else None
        out.append({
            "run": run, "shingle": near["shingle"], "policy": near["policy"], "bands": near["bands"],
            "rows": near["rows"], "candidates": run.stats["near"]["lsh_candidates"],
            "candidate_recall": report.metrics[0].candidate_recall if report.metrics else None,
            "metrics": report.metrics, "seconds": seconds,
        })
    return out
