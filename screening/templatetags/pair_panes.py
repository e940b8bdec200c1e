"""The pair panes' grid (both documents and the evidence beside them), written in Python: through the template
engine its hundred or so variables were a tenth of a pair page's CPU (a template variable costs microseconds,
an f-string with escape() a fraction of one). Every text is escaped here; the panes' own HTML was escaped
when they were drawn (screening.runs.display)."""

from __future__ import annotations

from html import escape

from django import template
from django.template.defaultfilters import floatformat
from django.utils import dateformat, timezone
from django.utils.safestring import SafeString, mark_safe

from screening.models import CandidatePair, Document

register = template.Library()


@register.simple_tag(takes_context=True)
def pair_grid(context) -> SafeString:
    pair, panes = context["pair"], context["panes"]
    return mark_safe(  # noqa: S308 - every text below is escaped
        '<div class="pair-grid">\n'
        f'{_document_pane("left", "Left", pair.left, panes["left"])}\n'
        f'{_document_pane("right", "Right", pair.right, panes["right"])}\n'
        '<aside class="pair-aside" id="pair-evidence" aria-label="Evidence">\n'
        f'{_judgements(context.get("judgements"), context.get("arbitrations"))}'
        f'{_suggestion(pair)}{_signals(pair)}{_scores(pair, context["nav"]["review"])}'
        f'{_evidence(context.get("evidence"))}{_differences(context["counts"], panes["diff"])}'
        '</aside>\n</div>')


def _document_pane(side: str, label: str, doc: Document, body: str) -> str:
    title = (escape(doc.title) if doc.title else '<span class="hint">(no title)</span>')
    collected = f" · collected {escape(doc.collected_at)}" if doc.collected_at else ""
    source = doc.upload.source.sha256
    return (
        f'<section class="doc-pane" id="doc-{side}">\n  <header class="doc-head">\n'
        f'    <h2 dir="auto" title="{escape(doc.title)}"><span class="side">{label}</span> {title}</h2>\n'
        f'    <p class="doc-meta"><a href="{escape(doc.get_absolute_url())}">{escape(doc.doc_id)}</a> · '
        f'<span class="lang" title="language">{escape(doc.language)}</span> · source '
        f'<strong>{escape(doc.source_id)}</strong> · version {escape(doc.version) or "—"}{collected}</p>\n'
        f'  </header>\n  <pre class="body pane" id="pane-{side}" dir="auto">{body}</pre>\n'
        f'  <details class="doc-source"><summary>Source file</summary><p class="small">'
        f'{escape(doc.upload.original_name)} <code title="{escape(source)}">{escape(source)}</code></p></details>\n'
        '</section>')


def _when(instant, fmt: str = "Y-m-d H:i") -> str:
    """As the template's |date filter writes it: in the current time zone."""
    return dateformat.format(timezone.localtime(instant) if timezone.is_aware(instant) else instant, fmt)


def _judgements(judgements, arbitrations) -> str:
    if not judgements:
        return ""
    items = "".join(
        f"<li><strong>{escape(j.verdict)}</strong> · {escape(str(j.reviewer))} · {_when(j.created_at)}"
        + (f" · retain {escape(j.retained)}" if j.retained else "")
        + (f" · related {escape(j.related_source)}" if j.related_source else "")
        + f'<br><span class="hint">{escape(j.reason)}</span></li>' for j in judgements)
    settled = "".join(
        f"<p>Arbitration by {escape(str(a.arbiter))}{' (self-arbitrated)' if a.self_arbitrated else ''} "
        f"({_when(a.created_at)}): <strong>{escape(a.verdict)}</strong> — {escape(a.reason)}</p>"
        for a in arbitrations or ())
    return (f'  <section id="every-judgement">\n    <h2>Every judgement</h2>\n    <ul>{items}</ul>\n'
            f"    {settled}\n  </section>\n")


def _suggestion(pair: CandidatePair) -> str:
    if not pair.suggested_verdict:
        return ""
    reasons = "".join(f"<li>{escape(reason)}</li>" for reason in pair.suggestion_reasons)
    return (f'  <section class="suggestion" id="suggestion">\n    <h2>Suggested: <strong>'
            f'{escape(pair.suggested_verdict)}</strong> <span class="hint">'
            f'{floatformat(pair.suggestion_confidence, 2)} · {escape(pair.suggestion_source)}</span></h2>\n'
            f"    <ul>{reasons}</ul>\n  </section>\n")


def _signals(pair: CandidatePair) -> str:
    lines = "".join(f'<p class="signal-line"><span class="signal" title="{escape(kind)}">{escape(kind)}</span> '
                    f'<span dir="auto">{escape(left)}</span> → <span dir="auto">{escape(right)}</span></p>'
                    for kind, left, right in pair.revision_signals) or '<p class="empty">none</p>'
    return f'  <section id="signals">\n    <h2>Revision signals</h2>\n    {lines}\n  </section>\n'


def _score(value, places: int) -> str:
    return floatformat(value, places) or "—"


def _scores(pair: CandidatePair, queue: str) -> str:
    cluster = (f'<a href="{escape(queue)}?run={pair.run_id}&amp;cluster={pair.cluster}&amp;sort=cluster">'
               f"{pair.cluster}</a>" if pair.cluster else "—")
    return (
        '  <section id="scores">\n    <h2>Scores</h2>\n    <dl class="meta small">\n'
        f"      <dt>Exact Jaccard</dt><dd>{floatformat(pair.jaccard, 4)}</dd>\n"
        f"      <dt>MinHash estimate</dt><dd>{_score(pair.minhash_estimate, 4)}</dd>\n"
        f"      <dt>Template share</dt><dd>{_score(pair.template_share, 3)}</dd>\n"
        f"      <dt>Jaccard without template</dt><dd>{_score(pair.jaccard_without_template, 4)}</dd>\n"
        f"      <dt>Pass · cluster</dt><dd>{escape(pair.pass_name)} · {cluster}</dd>\n"
        "    </dl>\n  </section>\n")


def _evidence(rows) -> str:
    if not rows:
        return ""
    items = "".join(f'<dt>{escape(label)}</dt><dd{" class=\"flag\"" if flagged else ""}>{escape(value)}</dd>'
                    for label, value, flagged in rows)
    return (f'  <section id="evidence">\n    <h2>Evidence</h2>\n    <dl class="meta evidence small">\n'
            f"      {items}\n    </dl>\n  </section>\n")


def _differences(counts: dict, diff: str) -> str:
    total = counts.get("diff_total")
    shown = f"; the first {counts.get('diff_shown')}" if counts.get("diff_cut") else ""
    hint = f'<small class="hint">({total}{shown})</small>' if total else ""
    return f'  <section id="differences">\n    <h2>Differences {hint}</h2>\n    {diff}\n  </section>\n'
