"""The pair panes (both documents, the evidence beside them, the shared shingles and excerpts below) as a
Jinja2 partial: through Django's engine their hundred or so variables and the loops over a text's coloured
runs cost the pair page dearly (bench/HISTORY.md). Jinja2 escapes every text (autoescape on)."""

from __future__ import annotations

from django import template
from django.utils.translation import gettext

from dedup_site.jinja import partial
from screening.engine.panes import PALETTE
from screening.runs.reasons import shown_reason
from screening.sides import retained_names, sides
from screening.templatetags.labels import verdict_label

register = template.Library()


@register.simple_tag(takes_context=True)
def pair_panes(context):
    pair = context["pair"]
    return partial("screening/pair_panes.html", pair=pair, drawn=context["panes"],
                   counts=context["counts"], judgements=context.get("judgements"),
                   arbitrations=context.get("arbitrations"), evidence=context.get("evidence"),
                   queue=context["nav"]["review"], palette=PALETTE, sides=sides(),
                   retained_name=retained_names(pair),
                   suggested=verdict_label(pair.suggested_verdict or ""), verdict_label=verdict_label,
                   reasons=[shown_reason(reason) for reason in pair.suggestion_reasons or ()],
                   reads=context.get("reads") or {},
                   # The review app's reading of a judgement's reason (a preset in the reader's language), when
                   # the page that includes the panes gives one: screening knows nothing of presets.
                   reason_shown=context.get("reason_shown") or (lambda reason, verdict: reason),
                   labels={"reads": gettext("reads as {language}"),
                           "mismatch": gettext("The language check reads this text as another language than its "
                                               "tag (the tag stays as imported)")})
