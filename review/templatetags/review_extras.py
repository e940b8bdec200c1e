from html import escape

from django import template
from django.template.defaultfilters import floatformat
from django.template.defaulttags import CsrfTokenNode
from django.utils.html import json_script
from django.utils.safestring import SafeString, mark_safe

from dedup_site.links import link
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
    cluster_href = link("review:cluster", 1, 2).replace("/1/", "/{run}/", 1).replace("/2/", "/{n}/", 1)
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


@register.simple_tag(takes_context=True)
def verdict_bar(context, action: str, submit_label: str, skip_form: bool = False, undo_form: bool = False
                ) -> SafeString:
    """The compact verdict bar: one key per verdict, its preset reason filled in (review.js), l/r/b, Enter
    saves. Written in Python as the queue rows are: through the template engine it was a tenth of the page."""
    pair, keys = context["pair"], context["keys"]
    suggested = pair.suggested_verdict
    verdicts = "".join(
        f'\n    <label class="pill{" suggested" if value == suggested else ""}"'
        + (f' title="suggested ({floatformat(pair.suggestion_confidence, 2)})"' if value == suggested else "")
        + f'><input type="radio" name="verdict" value="{escape(value)}" id="{escape(id_)}"'
        f'{" checked" if checked else ""} required><kbd>{escape(keys.get(value, ""))}</kbd> {escape(str(label))}'
        "</label>\n    " for value, label, id_, checked in context["verdict_radios"])
    retained = "".join(
        f'<label class="pill small"><input type="radio" name="retained" value="{escape(value)}" id="{escape(id_)}"'
        f'{" checked" if checked else ""} required><kbd>{escape(value[:1])}</kbd> {escape(value)}</label>'
        for value, _label, id_, checked in context["retained_radios"])
    skip = ('\n  <button type="submit" class="link" form="skip-form">Skip <kbd>n</kbd></button>'
            if skip_form else "")
    undo = ('\n  <button type="submit" class="link" form="undo-form">Undo my last <kbd>u</kbd></button>'
            if undo_form else "")
    return mark_safe(  # noqa: S308 - every text is escaped; the token and the JSON by Django's own functions
        f'<form class="verdict-bar" method="post" action="{escape(action)}" id="judge-form">\n'
        f"  {CsrfTokenNode().render(context)}\n"
        f'  <fieldset class="verdicts" role="radiogroup" aria-label="Verdict">{verdicts}\n  </fieldset>\n'
        '  <label class="reason">Reason <input type="text" name="reason" id="reason" maxlength="5000" '
        'autocomplete="off" placeholder="the verdict\'s preset reason, or press e and type your own"></label>\n'
        '  <fieldset class="retained" role="radiogroup" aria-label="Retained version">\n'
        f'    <span class="hint">retain</span>\n    {retained}\n  </fieldset>\n'
        '  <label class="related">Related source <input type="text" name="related_source" maxlength="200" '
        'class="short" placeholder="optional"></label>\n'
        f'  <button type="submit">{escape(submit_label)} <kbd>Enter</kbd></button>{skip}{undo}\n</form>\n'
        f'{json_script(context["presets"], "preset-reasons")}')
