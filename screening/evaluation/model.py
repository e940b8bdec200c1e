"""Learning a corpus's suggestion model from a label set, over a run's evidence, and applying the corpus's
suggester to a run's pairs again (screening.engine.learned holds the model itself)."""

from __future__ import annotations

from django.db import transaction
from django.utils.translation import gettext

from dedup_site import accounts
from screening import runs
from screening.engine import learned
from screening.engine.cluster import components
from screening.engine.evidence import Evidence
from screening.evaluation.labelsets import EvaluationRefused
from screening.models import CandidatePair, ExactGroupMember, LabelSet, ScreeningRun, SuggestionModel
from screening.suggestions import suggester_for

BATCH = 2000


def _labelled_evidence(run: ScreeningRun, label_set: LabelSet) -> tuple[list[Evidence], list[int], list[str]]:
    """The evidence of every labelled pair the run stored (directly, or between the exact groups'
    representatives), its label, and its source family (sources linked by labelled pairs)."""
    rep = dict(ExactGroupMember.objects.filter(group__run=run).values_list("document_id",
                                                                           "group__representative_id"))
    stored = {(p.left_id, p.right_id): p.evidence for p in CandidatePair.objects.filter(run=run).only(
        "left_id", "right_id", "evidence")}
    rows = list(label_set.labels.select_related("left", "right"))
    family = {}
    for number, members in enumerate(components((r.left.source_id, r.right.source_id) for r in rows)):
        family.update(dict.fromkeys(members, str(number)))
    out: tuple[list, list, list] = ([], [], [])
    for r in rows:
        found = None
        for a, b in ((r.left_id, r.right_id), (rep.get(r.left_id, r.left_id), rep.get(r.right_id, r.right_id))):
            found = stored.get((a, b)) or stored.get((b, a))
            if found:
                break
        if found and found.get("partial"):  # below the threshold and never opened: its diff first
            pair = CandidatePair.objects.select_related("left", "right", "run").get(
                run=run, left_id=a, right_id=b) if (a, b) in stored else CandidatePair.objects.select_related(
                "left", "right", "run").get(run=run, left_id=b, right_id=a)
            found = runs.pair_evidence_complete(pair=pair).evidence
        if found:
            out[0].append(Evidence.from_dict(found))
            out[1].append(r.label)
            out[2].append(family.get(r.left.source_id, r.left.source_id))
    return out


def model_train(*, run: ScreeningRun, label_set: LabelSet, user=None) -> SuggestionModel:
    """Learn a model from the label set over the run's evidence. It is put in use when, in folds held out by
    source family, it is at least as accurate as the rules; the run's pairs are then suggested again."""
    if refusal := accounts.admin_refusal(user):
        raise EvaluationRefused(refusal)
    if label_set.corpus_id != run.corpus_id or run.status != ScreeningRun.Status.COMPLETE:
        raise EvaluationRefused(gettext("the label set and the complete run must belong to the same corpus"))
    evidence, labels, families = _labelled_evidence(run, label_set)
    try:
        model = learned.train(evidence, labels, families)
    except learned.NotEnoughLabels as error:
        raise EvaluationRefused(f"no model learned: {error}") from None
    better = model.scores["model_accuracy"] >= model.scores["rules_accuracy"]
    with transaction.atomic():
        if better:
            SuggestionModel.objects.filter(corpus_id=run.corpus_id, in_use=True).update(in_use=False)
        row = SuggestionModel.objects.create(corpus_id=run.corpus_id, label_set=label_set, run=run,
                                             created_by=user, params=model.as_dict(), scores=model.scores,
                                             in_use=better)
    if better:
        suggestions_refresh(run=run)
    return row


def suggestions_refresh(*, run: ScreeningRun) -> int:
    """Suggest every pair of the run again with the corpus's suggester (after a model was learned)."""
    suggester = suggester_for(run.corpus_id)
    count = 0
    pairs = CandidatePair.objects.filter(run=run).exclude(evidence={}).only("pk", "evidence").order_by("pk")
    batch = []
    for pair in pairs.iterator(chunk_size=BATCH):
        s = suggester(Evidence.from_dict(pair.evidence))
        pair.suggested_verdict, pair.suggestion_confidence = s.verdict, s.confidence
        pair.suggestion_reasons, pair.suggestion_source = list(s.reasons), s.source
        batch.append(pair)
        if len(batch) >= BATCH:
            count += _save(batch)
    return count + _save(batch)


def _save(batch: list[CandidatePair]) -> int:
    CandidatePair.objects.bulk_update(batch, ["suggested_verdict", "suggestion_confidence", "suggestion_reasons",
                                              "suggestion_source"])
    n = len(batch)
    batch.clear()
    return n
