"""Decisions, for the next step of a pipeline: every pair of a run with its review state (the API's
/runs/{id}/decisions/)."""

from __future__ import annotations

from screening.models import CandidatePair, ScreeningRun

DECISION_COLUMNS = ("pair", "left_doc_id", "right_doc_id", "pass_name", "jaccard", "cluster", "status",
                    "final_verdict", "flag")


def decisions(run: ScreeningRun, *, after: int = 0, limit: int | None = None) -> list[tuple]:
    """Every pair of the run with its review status and current final verdict (DECISION_COLUMNS), by pair id
    after `after`: what a pipeline takes once the editors are done. Not blind: for those who see all."""
    rows = (CandidatePair.objects.filter(run=run, pk__gt=after).order_by("pk")
            .values_list("pk", "left__doc_id", "right__doc_id", "pass_name", "jaccard", "cluster", "status",
                         "final_verdict", "flag"))
    return list(rows[:limit] if limit is not None else rows.iterator(chunk_size=5000))
