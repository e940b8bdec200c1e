"""What a pair page shows of the two texts (coloured common runs, differences, shared shingles, excerpts),
rendered the first time the pair is opened and kept (PairPanes): it follows from two documents and a run
that never change, and drawing it cost most of a pair page's time."""

from __future__ import annotations

from html import escape

from django.utils import timezone
from django.utils.safestring import mark_safe

from dedup_site.prepared import upsert
from screening.engine import explain, panes
from screening.models import CandidatePair, PairPanes
from screening.runs.lifecycle import near_config_of

# A change to how panes are written (here or in the templates) or to what they are given: drawn again, once.
VERSION = "panes-2"


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


def _pane_html(segments: list[panes.Segment]) -> str:
    """A text as its plain and coloured segments, escaped: written here rather than by a template, whose loop
    over a few hundred segments was most of a drawing's time."""
    return "".join(escape(s.text, quote=False) if s.run is None else
                   f'<span class="run c{s.colour}" data-run="{s.run}" tabindex="0">{escape(s.text, quote=False)}</span>'
                   for s in segments)


def _diff_html(diff: list[panes.DiffRow]) -> str:
    if not diff:
        return ('<p class="empty">No difference in words, numbers or punctuation (whitespace and line endings '
                'are not compared here).</p>')
    rows = []
    for row in diff:
        mark = ' class="has-signal"' if row.signal else ""
        rows.append(f'<tr{mark}><td dir="auto"><del>{escape(row.left, quote=False)}</del></td>'
                    f'<td dir="auto"><ins>{escape(row.right, quote=False)}</ins></td></tr>')
        if row.signal:
            rows.append(f'<tr class="has-signal"><td colspan="2"><span class="signal">{escape(row.signal.kind)}: '
                        f'{escape(row.signal.left, quote=False)} → {escape(row.signal.right, quote=False)}'
                        f'</span></td></tr>')
    return '<table class="diff"><tbody>' + "".join(rows) + "</tbody></table>"


def _details_html(explanation: dict) -> str:
    """The shared shingles and raw excerpts below the panes."""
    out = []
    if explanation["shared"]:
        out.append(f'<h2>Shared shingles <small class="hint">(the first 20 in sorted order, '
                   f'{escape(explanation.get("spec", ""))})</small></h2>\n<p class="shingles">'
                   + "".join(f"<code>{escape(str(s))}</code>" for s in explanation["shared"]) + "</p>\n")
    if explanation["excerpts"]:
        out.append('<h2>Raw excerpts <small class="hint">(the first 5 common runs, from the raw text)</small></h2>\n'
                   + "".join(f'<div class="excerpt" dir="auto">{escape(e)}</div>' for e in explanation["excerpts"])
                   + "\n")
    return "".join(out)


def _draw(pair: CandidatePair) -> tuple[dict, dict]:
    config = pair.run.config.get("near", {})
    k = int(config.get("shingle", "char:8").split(":")[1]) if config.get("shingle", "").startswith("char") else 8
    left, right, run_count = panes.matched_segments(pair.left.body, pair.right.body, max(k, 4))
    diff, diff_cut, diff_total = panes.diff_rows(pair.left.body, pair.right.body)
    html = {
        "left": _pane_html(left),
        "right": _pane_html(right),
        "diff": _diff_html(diff),
        "details": _details_html(pair_explanation(pair)),
    }
    counts = {"run_count": run_count, "diff_total": diff_total, "diff_cut": diff_cut, "diff_shown": len(diff)}
    return html, counts


def pair_panes(pair: CandidatePair) -> tuple[dict, dict]:
    """The pair's rendered panes (safe HTML: the templates escaped every text) and their counts."""
    read = CandidatePair._meta.get_field("panes")
    if read.is_cached(pair):  # read with the pair (select_related("panes")): None when never drawn
        row = read.get_cached_value(pair)
        kept = (row.html, row.counts) if row is not None and row.version == VERSION else None
    else:
        kept = PairPanes.objects.filter(pair_id=pair.pk, version=VERSION).values_list("html", "counts").first()
    if kept is None:
        html, counts = _draw(pair)
        # One upsert (an older version's drawing is replaced); two requests drawing at once write the same.
        upsert(PairPanes, {"pair_id": pair.pk, "version": VERSION, "html": html, "counts": counts,
                           "created_at": timezone.now()},
               unique=("pair",), update=("version", "html", "counts", "created_at"))
        kept = html, counts
    html, counts = kept
    return {name: mark_safe(part) for name, part in html.items()}, counts  # noqa: S308 - rendered by our templates
