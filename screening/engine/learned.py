"""A suggestion model learned from a corpus's labels (no Django imports).

Labels say whether a pair is a copy to merge (1) or not (0), so the model learns the probability that a pair
is a copy from its evidence: a logistic regression over standardised features, calibrated with a Platt
sigmoid fitted on out-of-fold scores, validated with folds by source family (no family on both sides of a
fold). Its parameters are plain numbers, kept as JSON and applied with numpy: no pickle is ever loaded.

Applied, it decides copy or not; when not, the verdict among those that keep both texts is
the rules' (the labels do not say which), with the model's confidence that it is not a copy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from screening.engine import suggest
from screening.engine.evidence import Evidence

FEATURES = [
    "jaccard", "containment_min", "containment_max", "same_normalised", "changed_share", "moved_share",
    "length_ratio", "languages_differ", "same_source", "versions_differ", "exact", "template_share",
    "jaccard_without_template", "signals", "number", "date", "month", "sign", "unit", "negation",
]
MIN_LABELS, MIN_PER_CLASS, FOLDS = 40, 10, 5


def features(e: Evidence) -> list[float]:
    kinds = [kind for kind, _, _ in e.signals]
    return [
        e.jaccard, min(e.containment_left, e.containment_right), e.containment, float(e.same_normalised),
        e.changed_share, e.moved_share, e.length_ratio, float(e.languages_differ), float(e.same_source),
        float(e.version_order in ("left-older", "right-older")), float(e.exact), e.template_share or 0.0,
        e.jaccard_without_template if e.jaccard_without_template is not None else e.jaccard, float(len(kinds)),
        *(float(kinds.count(k)) for k in ("number", "date", "month", "sign", "unit", "negation")),
    ]


class NotEnoughLabels(ValueError):
    """Too few labelled pairs (or of one class) with evidence to learn from; the message says how many."""


@dataclass
class Model:
    mean: list[float]
    scale: list[float]
    coef: list[float]
    intercept: float
    platt: tuple[float, float]  # calibration: p = sigmoid(a * score + b)
    scores: dict  # cross-validated, by family folds: the model's and the rules'

    def probability(self, e: Evidence) -> float:
        x = (np.asarray(features(e)) - np.asarray(self.mean)) / np.asarray(self.scale)
        score = float(x @ np.asarray(self.coef) + self.intercept)
        a, b = self.platt
        return 1.0 / (1.0 + math.exp(-(a * score + b)))

    def suggest(self, e: Evidence) -> suggest.Suggestion:
        rules = suggest.suggest(e)
        if e.languages_differ or e.partial:
            # A twin asks a person which tag is right; a pair without its diff has no features to learn from.
            return rules
        p = self.probability(e)
        if p >= 0.5:
            reasons = rules.reasons if rules.verdict == suggest.MERGE else ("learned from this corpus's labels",)
            return suggest.Suggestion(suggest.MERGE, round(p, 3), reasons, "model")
        verdict = rules.verdict if rules.verdict != suggest.MERGE else suggest.KEEP
        reasons = rules.reasons if rules.verdict != suggest.MERGE else ("not a copy, by the labels learned from",)
        return suggest.Suggestion(verdict, round(1 - p, 3), reasons, "model")

    def as_dict(self) -> dict:
        return {"features": FEATURES, "mean": self.mean, "scale": self.scale, "coef": self.coef,
                "intercept": self.intercept, "platt": list(self.platt), "scores": self.scores}

    @classmethod
    def from_dict(cls, data: dict) -> Model:
        if data.get("features") != FEATURES:
            raise ValueError("the model was learned over other features; learn it again")
        return cls(data["mean"], data["scale"], data["coef"], data["intercept"], tuple(data["platt"]),
                   data.get("scores", {}))


def train(evidence: list[Evidence], labels: list[int], families: list[str]) -> Model:
    """Learn the model; its scores are cross-validated by family (never a family on both sides)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold
    from sklearn.preprocessing import StandardScaler

    y = np.asarray(labels)
    if len(y) < MIN_LABELS or min((y == 1).sum(), (y == 0).sum()) < MIN_PER_CLASS:
        raise NotEnoughLabels(f"{len(y)} labelled pairs with evidence ({int((y == 1).sum())} copies, "
                              f"{int((y == 0).sum())} others): a model needs {MIN_LABELS}, with "
                              f"{MIN_PER_CLASS} of each")
    x = np.asarray([features(e) for e in evidence], dtype=float)
    groups = np.asarray(families)
    folds = min(FOLDS, len(set(families)))
    if folds < 2:
        raise NotEnoughLabels("the labelled pairs come from one source family: no fold could be held out")

    def fit(xs, ys):
        scaler = StandardScaler().fit(xs)
        return scaler, LogisticRegression(C=1.0, max_iter=1000, class_weight="balanced").fit(
            scaler.transform(xs), ys)

    out_of_fold = np.zeros(len(y))
    for tr, te in GroupKFold(n_splits=folds).split(x, y, groups):
        if len(set(y[tr])) < 2:
            raise NotEnoughLabels("a family fold holds only one class of labels")
        scaler, model = fit(x[tr], y[tr])
        out_of_fold[te] = model.decision_function(scaler.transform(x[te]))
    platt = LogisticRegression(C=1e6, max_iter=1000).fit(out_of_fold.reshape(-1, 1), y)
    a, b = float(platt.coef_[0][0]), float(platt.intercept_[0])
    calibrated = 1.0 / (1.0 + np.exp(-(a * out_of_fold + b)))
    rules = np.asarray([suggest.suggest(e).verdict == suggest.MERGE for e in evidence])
    scaler, model = fit(x, y)
    scores = {
        "pairs": len(y), "copies": int(y.sum()), "folds": folds,
        "model_accuracy": float(((calibrated >= 0.5) == (y == 1)).mean()),
        "rules_accuracy": float((rules == (y == 1)).mean()),
        "brier": float(((calibrated - y) ** 2).mean()),
        "confident_share": float((np.maximum(calibrated, 1 - calibrated) >= 0.95).mean()),
        "confident_accuracy": _accuracy_where(calibrated, y, 0.95),
    }
    return Model(scaler.mean_.tolist(), [s or 1.0 for s in scaler.scale_.tolist()], model.coef_[0].tolist(),
                 float(model.intercept_[0]), (a, b), scores)


def _accuracy_where(p: np.ndarray, y: np.ndarray, confidence: float) -> float | None:
    sure = np.maximum(p, 1 - p) >= confidence
    return float(((p[sure] >= 0.5) == (y[sure] == 1)).mean()) if sure.any() else None
