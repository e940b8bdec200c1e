from datetime import date

from django import template
from django.template.backends.utils import csrf_input
from django.utils.html import format_html, format_html_join, json_script
from django.utils.translation import gettext, gettext_noop

from dedup_site.jinja import partial
from dedup_site.links import link
from dedup_site.templatetags.dates import shown_date
from review import selectors
from review.forms import SheetForm
from review.sheets import signing
from screening.sides import retained_names, sides

register = template.Library()


@register.filter
def get_item(mapping, key):
    return mapping.get(key, "")


@register.filter
def reason_shown(reason, verdict):
    """A judgement's reason as the reader reads it (review.selectors.reason_shown)."""
    return selectors.reason_shown(reason, verdict)


# The statements a signature can mean, as review.sheets.signing stores them (English, the words signed), each
# in the catalogs so that a reader sees it in their language beside the stored words.
MEANINGS = {signing.REVIEWER_MEANING: gettext_noop("I reviewed these pairs and these verdicts are mine.")}


@register.filter
def meaning_shown(meaning: str):
    """What a signature means, in the reader's language, with the stored words beside it when they differ."""
    shown = gettext(MEANINGS[meaning]) if meaning in MEANINGS else meaning
    if shown == meaning:
        return format_html("<bdi>“{}”</bdi>", meaning)
    return format_html('“{}” <bdi class="hint" lang="en" translate="no">“{}”</bdi>', shown, meaning)


@register.filter
def retained_doc(retained, pair):
    """A judgement's retained version named by its document (screening.sides.retained_names)."""
    return retained_names(pair).get(retained, retained)


@register.inclusion_tag("review/_run_sheets.html", takes_context=True)
def run_sheets(context, run):
    """The run page's review-sheet section (exports and the export form), which belongs to the review app:
    the screening app's page includes it by template, never by import."""
    return {**context.flatten(), "run": run, "exports": run.sheet_exports.select_related("exported_by"),
            "sheet_form": SheetForm()}


@register.simple_tag
def queue_rows(rows):
    """The queue's rows (a Jinja2 partial: bench/HISTORY.md)."""
    cluster_href = link("review:cluster", 1, 2).replace("/1/", "/{run}/", 1).replace("/2/", "/{n}/", 1)
    labels = {"reads": gettext("reads as {language}"),
              "mismatch": gettext("A text of this pair reads as another language than its tag")}
    return partial("review/queue_rows.html", rows=rows, cluster_href=cluster_href, labels=labels)


@register.simple_tag(takes_context=True)
def verdict_bar(context, action: str, submit_label: str, skip_form: bool = False, undo_form: bool = False):
    """The compact verdict bar (a Jinja2 partial, as the queue rows)."""
    pair = context["pair"]
    return partial("review/verdict_bar.html", action=action, submit_label=submit_label, skip_form=skip_form,
                   undo_form=undo_form, csrf_input=csrf_input(context["request"]), keys=context["keys"],
                   suggested=pair.suggested_verdict, confidence=pair.suggestion_confidence,
                   verdict_radios=context["verdict_radios"], retained_radios=context["retained_radios"],
                   sides=sides(), documents={"left": pair.left.doc_id, "right": pair.right.doc_id},
                   presets=json_script(context["presets"], "preset-reasons"))


@register.filter
def selection_shown(selection: dict) -> str:
    """What an export covers, in the interface's words ("all" when it has no bound): `since 2026-11-01 ·
    reviewer kim · settled pairs only`."""
    parts = []
    for key, label in (("since", gettext("since")), ("until", gettext("until"))):
        if selection.get(key):
            parts.append(format_html("{} {}", label, shown_date(date.fromisoformat(selection[key]), "Y-m-d")))
    if selection.get("reviewer"):
        parts.append(format_html("{} <bdi>{}</bdi>", gettext("reviewer"), selection["reviewer"]))
    if selection.get("settled_only"):
        parts.append(gettext("settled pairs only"))
    return format_html_join(" · ", "{}", ((p,) for p in parts)) if parts else gettext("all")
