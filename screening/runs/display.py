"""What a pair page shows of the two texts (coloured common runs, differences, shared shingles, excerpts),
worked out the first time the pair is opened and kept (PairPanes) as plain data that the pair panes'
template escapes: it follows from two documents and a run that never change, and working it out cost most
of a pair page's time."""

from __future__ import annotations

from django.utils import timezone

from dedup_site.prepared import upsert
from screening.engine import explain, panes
from screening.models import CandidatePair, PairPanes
from screening.runs.lifecycle import near_config_of

# A change to what is kept of a drawing (its shape or how it is worked out): drawn again, once.
VERSION = "panes-3"


def pair_explanation(pair: CandidatePair) -> dict:
    """Shared shingles and raw excerpts of a pair, computed on demand (bounded for large documents)."""
    left, right = pair.left.body, pair.right.body
    if pair.pass_name == CandidatePair.Pass.EXACT:
        return {"shared": [], "excerpts": [left[:500]] if left == right else [], "k": 0}
    config = near_config_of(pair.run)
    policy, spec = config.policy_rules, config.spec
    return {
        "shared": explain.shared_shingles(left, right, policy, spec),
        "excerpts": explain.raw_excerpts(left, right, spec.k if spec.kind == "char" else 5),
        "k": spec.k,
        "spec": str(spec),
    }


def _segments(segments: list[panes.Segment]) -> list[list]:
    return [[s.text, s.run] for s in segments]


def _diff(diff: list[panes.DiffRow]) -> list[list]:
    return [[row.left, row.right, [row.signal.kind, row.signal.left, row.signal.right] if row.signal else None]
            for row in diff]


def _draw(pair: CandidatePair) -> tuple[dict, dict]:
    config = pair.run.config.get("near", {})
    k = int(config.get("shingle", "char:8").split(":")[1]) if config.get("shingle", "").startswith("char") else 8
    left, right, run_count = panes.matched_segments(pair.left.body, pair.right.body, max(k, 4))
    diff, diff_cut, diff_total = panes.diff_rows(pair.left.body, pair.right.body)
    explanation = pair_explanation(pair)
    drawn = {"left": _segments(left), "right": _segments(right), "diff": _diff(diff),
             "shared": [str(s) for s in explanation["shared"]], "excerpts": explanation["excerpts"],
             "spec": explanation.get("spec", "")}
    counts = {"run_count": run_count, "diff_total": diff_total, "diff_cut": diff_cut, "diff_shown": len(diff)}
    return drawn, counts


def pair_panes(pair: CandidatePair) -> tuple[dict, dict]:
    """What the pair's panes show (texts in coloured runs, diff rows, shingles, excerpts: plain data, which
    the pair panes' template escapes) and their counts."""
    read = CandidatePair._meta.get_field("panes")
    if read.is_cached(pair):  # read with the pair (select_related("panes")): None when never drawn
        row = read.get_cached_value(pair)
        kept = (row.html, row.counts) if row is not None and row.version == VERSION else None
    else:
        kept = PairPanes.objects.filter(pair_id=pair.pk, version=VERSION).values_list("html", "counts").first()
    if kept is None:
        drawn, counts = _draw(pair)
        # One upsert (an older version's drawing is replaced); two requests drawing at once write the same.
        upsert(PairPanes, {"pair_id": pair.pk, "version": VERSION, "html": drawn, "counts": counts,
                           "created_at": timezone.now()},
               unique=("pair",), update=("version", "html", "counts", "created_at"))
        kept = drawn, counts
    return kept
