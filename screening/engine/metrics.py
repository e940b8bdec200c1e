"""Evaluation of a run against labels (no Django imports): per threshold tp, fp, fn, precision, recall and
candidate recall; the per-pair table with each error's kind; family splits."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from screening.engine.cluster import components
from screening.vocabulary import COPY_VERDICTS

MISSED_BY_LSH = "missed by LSH"
BELOW_THRESHOLD = "below threshold"
FALSE_POSITIVE = "false positive"


@dataclass(frozen=True)
class LabelledPair:
    left: str
    right: str
    label: int
    jaccard: float | None  # exact Jaccard under the run's configuration (None: a document has no shingle)
    estimate: float | None
    candidate: bool  # returned by the run's LSH (or its exact pass) at all, whatever the score
    language: str = ""
    split: str = ""
    left_source: str = ""
    right_source: str = ""
    suggestion: str = ""  # the run's suggested verdict for the pair, "" when it has none
    pair_id: int | None = None  # the run's stored pair for it (directly or between representatives)

    def predicted(self, threshold: float) -> bool:
        return self.candidate and self.jaccard is not None and self.jaccard >= threshold

    def error(self, threshold: float) -> str:
        # Missed by LSH only when LSH is to blame: found, it would have scored at or above the threshold.
        if self.label == 1 and not self.candidate and self.jaccard is not None and self.jaccard >= threshold:
            return MISSED_BY_LSH
        if self.label == 1 and not self.predicted(threshold):
            return BELOW_THRESHOLD
        if self.label == 0 and self.predicted(threshold):
            return FALSE_POSITIVE
        return ""


@dataclass
class Metrics:
    threshold: float
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    positives: int = 0
    candidate_positives: int = 0

    @property
    def precision(self) -> float | None:
        """None (shown empty) when nothing is predicted: neither 0 nor 1."""
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / self.positives if self.positives else None

    @property
    def candidate_recall(self) -> float | None:
        return self.candidate_positives / self.positives if self.positives else None

    def as_dict(self) -> dict:
        return {"threshold": self.threshold, "tp": self.tp, "fp": self.fp, "fn": self.fn, "tn": self.tn,
                "precision": self.precision, "recall": self.recall, "candidate_recall": self.candidate_recall,
                "positives": self.positives}


def metrics(pairs: Iterable[LabelledPair], thresholds: Iterable[float]) -> list[Metrics]:
    pairs = list(pairs)
    out = []
    for t in thresholds:
        m = Metrics(threshold=t)
        for p in pairs:
            predicted = p.predicted(t)
            if p.label == 1:
                m.positives += 1
                m.candidate_positives += int(p.candidate)
                m.tp += int(predicted)
                m.fn += int(not predicted)
            else:
                m.fp += int(predicted)
                m.tn += int(not predicted)
        out.append(m)
    return out


@dataclass
class SuggestionRow:
    """How often a suggested verdict met each label: copies (1) and the rest (0)."""

    suggestion: str
    copies: int = 0
    others: int = 0


def suggestion_table(pairs: Iterable[LabelledPair]) -> tuple[list[SuggestionRow], float | None]:
    """Suggested verdict against labels, and the share of agreement (a copy verdict for a copy, anything
    else for the rest) among pairs with a suggestion."""
    rows: dict[str, SuggestionRow] = {}
    agree = total = 0
    for p in pairs:
        name = p.suggestion or "no suggestion"
        row = rows.setdefault(name, SuggestionRow(name))
        if p.label == 1:
            row.copies += 1
        else:
            row.others += 1
        if p.suggestion:
            total += 1
            agree += (p.suggestion in COPY_VERDICTS) == (p.label == 1)
    return sorted(rows.values(), key=lambda r: r.suggestion), (agree / total if total else None)


def suggestion_breakdown(pairs: Iterable[LabelledPair], key: str) -> dict[str, tuple[list[SuggestionRow],
                                                                                        float | None]]:
    groups: dict[str, list[LabelledPair]] = defaultdict(list)
    for p in pairs:
        groups[getattr(p, key) or "—"].append(p)
    return {name: suggestion_table(group) for name, group in sorted(groups.items())}


def breakdown(pairs: Iterable[LabelledPair], thresholds: list[float], key: str) -> dict[str, list[Metrics]]:
    """Metrics per value of `key` ("language" or "split")."""
    groups: dict[str, list[LabelledPair]] = defaultdict(list)
    for p in pairs:
        groups[getattr(p, key) or "—"].append(p)
    return {name: metrics(group, thresholds) for name, group in sorted(groups.items())}


@dataclass
class FamilySplit:
    tuning: set[str] = field(default_factory=set)  # source_ids
    acceptance: set[str] = field(default_factory=set)

    def side(self, pair: LabelledPair) -> str:
        return "tuning" if pair.left_source in self.tuning else "acceptance"


def family_split(pairs: Iterable[LabelledPair]) -> FamilySplit:
    """Split sources into tuning and acceptance so that every labelled pair has both its sources on one
    side: families are connected components of sources linked by labelled pairs; each family, largest
    first, goes to the side with fewer labelled pairs so far (ties to tuning)."""
    pairs = list(pairs)
    weight: dict[str, int] = defaultdict(int)
    for p in pairs:
        weight[p.left_source] += 1
    split = FamilySplit()
    counts = {"tuning": 0, "acceptance": 0}
    families = components((p.left_source, p.right_source) for p in pairs)
    for family in sorted(families, key=lambda f: (-sum(weight[s] for s in f), f[0])):
        side = "tuning" if counts["tuning"] <= counts["acceptance"] else "acceptance"
        getattr(split, side).update(family)
        counts[side] += sum(weight[s] for s in family)
    return split
