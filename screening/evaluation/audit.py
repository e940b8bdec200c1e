"""The all-pairs audit of a run: exact Jaccard over every pair of its representatives (a stated sample
above AUDIT_LIMIT), listing the pairs at or above the threshold that LSH did not return. Admins start it;
a worker does it; its result is kept with the run."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext

from dedup_site import accounts, background
from screening.evaluation.labelsets import EvaluationRefused
from screening.evaluation.report import _share_band, _signatures
from screening.models import Document, ExactGroupMember, RunAudit, ScreeningRun
from screening.runs import near
from screening.runs.lifecycle import near_config_of

AUDIT_LIMIT = 5_000  # documents: above it the all-pairs audit samples this many and says so


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
    from scipy import sparse  # only an audit needs scipy: loaded when one runs, not by every page and job

    report = on_progress or (lambda fraction: None)

    if not run.near:
        raise EvaluationRefused(f"run {run.pk} has no near pass to audit")
    config = near_config_of(run)
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
    if refusal := accounts.admin_refusal(user):
        raise EvaluationRefused(refusal)
    if run.status != ScreeningRun.Status.COMPLETE or not run.near:
        raise EvaluationRefused(gettext("run %(run)s has no complete near pass to audit") % {"run": run.pk})
    with transaction.atomic():
        ScreeningRun.objects.select_for_update().filter(pk=run.pk).first()  # two quick clicks: one audit
        if run.audits.filter(status__in=[RunAudit.Status.QUEUED, RunAudit.Status.RUNNING]).exists():
            raise EvaluationRefused(gettext("an audit of run %(run)s is already under way") % {"run": run.pk})
        threshold = near_config_of(run).threshold if threshold is None else threshold
        return RunAudit.objects.create(run=run, threshold=threshold, requested_by=user)


def audit_enqueue(*, audit: RunAudit) -> RunAudit:
    """Queue the audit; QueueUnavailable (the audit then failed, saying why) when Redis is away."""
    return background.start(audit, "screening.jobs.audit_job", on_failure="screening.jobs.audit_job_failed",
                            kind="audit", fail=lambda error: audit_fail(audit_id=audit.pk, error=error))


def audit_execute(*, audit: RunAudit, on_progress: Callable[[float], None] | None = None) -> RunAudit:
    RunAudit.objects.filter(pk=audit.pk).update(status=RunAudit.Status.RUNNING, error="")
    result = run_audit(run=audit.run, threshold=audit.threshold, on_progress=on_progress)
    RunAudit.objects.filter(pk=audit.pk).update(status=RunAudit.Status.COMPLETE, finished_at=timezone.now(),
                                                result=dataclasses.asdict(result))
    audit.refresh_from_db()
    return audit


def audit_fail(*, audit_id: int, error: str) -> None:
    background.mark_failed(RunAudit, audit_id, error, final=(RunAudit.Status.COMPLETE,))


def audit_latest(run: ScreeningRun) -> tuple[RunAudit | None, Audit | None]:
    """The run's newest audit, and its result when complete."""
    audit = run.audits.select_related("requested_by").first()
    if audit is None or audit.status != RunAudit.Status.COMPLETE:
        return audit, None
    data = dict(audit.result)
    data["missed"] = [tuple(m) for m in data["missed"]]
    return audit, Audit(**data)
