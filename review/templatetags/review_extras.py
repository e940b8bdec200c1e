from html import escape

from django import template
from django.urls import reverse
from django.utils.safestring import mark_safe

from review.forms import SheetForm

register = template.Library()


@register.filter
def get_item(mapping, key):
    return mapping.get(key, "")


@register.inclusion_tag("review/_run_sheets.html", takes_context=True)
def run_sheets(context, run):
    """The run page's review-sheet section (exports and the export form), which belongs to the review app:
    the screening app's page includes it by template, never by import."""
    return {**context.flatten(), "run": run, "exports": run.sheet_exports.select_related("exported_by"),
            "sheet_form": SheetForm()}


@register.simple_tag
def queue_rows(rows) -> str:
    """The queue's rows, written in Python: 50 rows through the template engine were half of the page's CPU
    (a template variable costs microseconds, an f-string with escape() a fraction of one)."""
    cluster_href = reverse("review:cluster", args=[1, 2]).replace("/1/", "/{run}/", 1).replace("/2/", "/{n}/", 1)
    return mark_safe("".join(_queue_row(p, href, cluster_href) for p, href in rows))  # noqa: S308 - all escaped


def _queue_row(p, href: str, cluster_href: str) -> str:
    title = f"{p.left} · {p.right}" + (f" — {p.left_title}" if p.left_title else "")
    hint = f' <span class="hint" dir="auto">{escape(p.left_title)}</span>' if p.left_title else ""
    below = ' <span class="badge below-threshold" title="below the run\'s review threshold">below</span>' \
        if p.below else ""
    cluster = "—" if p.cluster is None else (
        f'<a href="{cluster_href.format(run=p.run_id, n=p.cluster)}" title="decide the whole cluster">{p.cluster}</a>')
    signals_title = "&#10;".join(f"{escape(k)}: {escape(a)} → {escape(b)}" for k, a, b in p.revision_signals)
    signals = " ".join(f'<span class="signal" title="{escape(k)}" dir="auto">{escape(a)} → {escape(b)}</span>'
                       for k, a, b in p.revision_signals)
    suggestion = f'{escape(p.suggestion)} <span class="hint">{p.confidence_text}</span>' if p.suggestion else ""
    verdict = f": {escape(p.final_verdict)}" if p.final_verdict else ""
    row_class = ' class="below"' if p.below else ""
    return (
        f'<tr{row_class}>'
        f'<td class="cut" title="{escape(title)}"><a href="{escape(href)}">{escape(p.left)} · {escape(p.right)}</a>'
        f'{hint}</td><td>{escape(p.pass_name)}</td><td class="num">{p.score}{below}</td>'
        f'<td class="num">{cluster}</td><td class="cut" title="{signals_title}">{signals}</td>'
        f'<td class="cut">{suggestion}</td><td class="status-{escape(p.status)}">{escape(p.status_label)}{verdict}</td>'
        f'<td>{"✓" if p.mine else ""}</td></tr>\n')
