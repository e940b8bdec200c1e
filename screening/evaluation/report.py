"""Evaluating a run against a label set: per threshold tp, fp, fn, precision, recall and candidate recall
(the pure metrics are in screening.engine.metrics), the split by language and by source family, and
configurations side by side."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from django.utils.translation import gettext

from screening.engine import fast, metrics, minhash
from screening.evaluation.labelsets import EvaluationRefused
from screening.models import (
    CandidatePair,
    Corpus,
    DocumentSignature,
    ExactGroupMember,
    LabelSet,
    ScreeningRun,
    SuggestionModel,
)
from screening.runs import near
from screening.runs.lifecycle import near_config_of

DEFAULT_THRESHOLDS = (0.5, 0.7, 0.9)

CHART_THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(1, 21))


def _representatives(run: ScreeningRun, pks: Iterable[int]) -> dict[int, int]:
    """Each document's exact-group representative in this run (itself when alone)."""
    pks = list(pks)
    reps = {pk: pk for pk in pks}
    members = ExactGroupMember.objects.filter(group__run=run, document_id__in=pks).values_list(
        "document_id", "group__representative_id")
    reps.update(dict(members))
    return reps


def _signatures(config: minhash.NearConfig, pks: set[int]) -> dict[int, np.ndarray | None]:
    """Stored signatures (None: no shingle); documents signed by no run yet are signed now (not stored)."""
    out: dict[int, np.ndarray | None] = {}
    for pk, count, values in DocumentSignature.objects.filter(document_id__in=pks, key=config.signature_key) \
            .values_list("document_id", "shingle_count", "values"):
        out[pk] = minhash.from_bytes(bytes(values), config) if count else None
    for row, _ in near.compute_signatures(sorted(pks - set(out)), config):
        out[row.document_id] = minhash.from_bytes(row.values, config) if row.shingle_count else None
    return out


def _share_band(a: np.ndarray | None, b: np.ndarray | None, bands: int, rows: int) -> bool:
    if a is None or b is None:
        return False
    equal = (a == b).reshape(bands, rows)
    return bool(equal.all(axis=1).any())


def labelled_pairs(run: ScreeningRun, label_set: LabelSet) -> list[metrics.LabelledPair]:
    """Every label with its exact Jaccard and estimate under the run's configuration, and whether the run's
    LSH (or exact pass) returned it at all."""
    if not run.near:
        raise EvaluationRefused(gettext("run %(run)s has no near pass to evaluate") % {"run": run.pk})
    if label_set.corpus_id != run.corpus_id:
        raise EvaluationRefused(gettext("label set %(name)s belongs to another corpus") % {
            "name": repr(label_set.name)})
    config = near_config_of(run)
    rows = list(label_set.labels.select_related("left", "right"))
    docs = {d.pk: d for r in rows for d in (r.left, r.right)}
    reps = _representatives(run, docs)
    sigs = _signatures(config, set(reps.values()))
    hashes = {pk: near.verification_hashes(d.body, config) for pk, d in docs.items()}
    stored = {
        (min(a, b), max(a, b)): (pk, verdict) for pk, a, b, verdict in CandidatePair.objects.filter(
            run=run, left_id__in=set(reps.values()) | set(docs), right_id__in=set(reps.values()) | set(docs))
        .values_list("pk", "left_id", "right_id", "suggested_verdict")}
    out = []
    for r in rows:
        ra, rb = reps[r.left_id], reps[r.right_id]
        pair_id, suggestion = stored.get((min(r.left_id, r.right_id), max(r.left_id, r.right_id))) or stored.get(
            (min(ra, rb), max(ra, rb)), (None, ""))
        candidate = ra == rb or _share_band(sigs[ra], sigs[rb], config.bands, config.rows)
        sa, sb = sigs[ra], sigs[rb]
        out.append(metrics.LabelledPair(
            left=r.left.doc_id, right=r.right.doc_id, label=r.label,
            jaccard=fast.jaccard(hashes[r.left_id], hashes[r.right_id]) if hashes[r.left_id].size and
            hashes[r.right_id].size else None,
            estimate=minhash.estimate(sa, sb) if sa is not None and sb is not None else None,
            # One name for a pair of languages whichever side each is on (en/de and de/en are one table).
            candidate=candidate, language=r.left.language if r.left.language == r.right.language else
            "/".join(sorted((r.left.language, r.right.language))), split=r.split, left_source=r.left.source_id,
            right_source=r.right.source_id, suggestion=suggestion, pair_id=pair_id,
        ))
    return out


EVALUATION_CACHE_SECONDS = 600


def _labelled_pairs_cached(run: ScreeningRun, label_set: LabelSet) -> list[metrics.LabelledPair]:
    """labelled_pairs, kept a while: a complete run and a label set never change, only the suggestions do
    (when a model is learned), so paging the evaluation page does not hash every labelled text again."""
    from django.core.cache import cache

    model = SuggestionModel.objects.filter(corpus_id=run.corpus_id).order_by("-pk").values_list("pk", flat=True)
    key = f"evaluation:pairs:{run.pk}:{label_set.pk}:{model.first() or 0}"
    pairs = cache.get(key)
    if pairs is None:
        pairs = labelled_pairs(run, label_set)
        cache.set(key, pairs, EVALUATION_CACHE_SECONDS)
    return pairs


@dataclass
class Report:
    run: ScreeningRun
    label_set: LabelSet
    thresholds: list[float]
    split: str
    pairs: list[metrics.LabelledPair]
    metrics: list[metrics.Metrics]
    by_language: dict[str, list[metrics.Metrics]]
    by_split: dict[str, list[metrics.Metrics]]
    family: dict[str, list[metrics.Metrics]] = field(default_factory=dict)  # when labels carry no split
    curve: list[metrics.Metrics] = field(default_factory=list)
    suggestions: dict = field(default_factory=dict)  # "all", "by_language", "by_split": suggestion tables

    @property
    def languages_shown(self) -> dict[str, list[metrics.Metrics]]:
        """The languages' tables with something in them: a language whose pairs are all negatives no threshold
        predicts has only zeros, and a corpus of many tags had dozens of those."""
        return {k: v for k, v in self.by_language.items() if any(m.tp or m.fp or m.fn for m in v)}

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
        raise EvaluationRefused(gettext("thresholds must be numbers between 0 and 1"))
    every = _labelled_pairs_cached(run, label_set)
    family = {}
    if not any(p.split for p in every):
        # No split in the labels: offer one by source family, never mixing a family across the sides; none
        # when one family holds them all (a split that leaves a side empty is no split).
        fs = metrics.family_split(every)
        if fs.tuning and fs.acceptance:
            every = [metrics.LabelledPair(**{**p.__dict__, "split": fs.side(p)}) for p in every]
            family = metrics.breakdown(every, thresholds, "split")
    chosen = [p for p in every if not split or p.split == split]
    suggestions = {"all": metrics.suggestion_table(chosen),
                   "by_language": list(metrics.suggestion_breakdown(chosen, "language").items()),
                   "by_split": list(metrics.suggestion_breakdown(every, "split").items())}
    return Report(run, label_set, thresholds, split, chosen, metrics.metrics(chosen, thresholds),
                  metrics.breakdown(chosen, thresholds, "language"), metrics.breakdown(every, thresholds, "split"),
                  family, metrics.metrics(chosen, CHART_THRESHOLDS), suggestions)


def compare_runs(*, corpus: Corpus, label_set: LabelSet, thresholds=DEFAULT_THRESHOLDS) -> list[dict]:
    """One row per complete near run of the corpus: configuration, candidates, candidate recall, precision and
    recall at each threshold, run time."""
    out = []
    for run in corpus.runs.complete().filter(near=True).order_by("pk"):
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
