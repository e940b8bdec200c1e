"""The interface's names for the keys pages show (a pass, a stage, an evaluation's error kind, a split, a
verdict): `{{ key|term }}` and `{{ key|verdict_label }}` in the interface's language, the key itself when it
is not one of them. The keys stay as they are wherever they are stored or exported."""

from __future__ import annotations

from django import template
from django.utils.translation import gettext, gettext_noop, pgettext

from screening.engine import metrics
from screening.vocabulary import Verdict

register = template.Library()

TERMS = {
    "exact": gettext_noop("exact"), "near": gettext_noop("near"),  # passes
    "sign": gettext_noop("sign"), "band": gettext_noop("band"), "verify": gettext_noop("verify"),  # stages
    "publish": gettext_noop("publish"),
    metrics.MISSED_BY_LSH: gettext_noop("missed by LSH"), metrics.BELOW_THRESHOLD: gettext_noop("below threshold"),
    metrics.FALSE_POSITIVE: gettext_noop("false positive"),
    "tuning": gettext_noop("tuning"), "acceptance": gettext_noop("acceptance"),  # splits
    "rules": gettext_noop("rules"), "model": gettext_noop("model"),  # where a suggestion comes from
    "no suggestion": gettext_noop("no suggestion"),  # screening.engine.metrics: a row of the suggestions table
}


@register.filter
def term(key) -> str:
    return gettext(TERMS[key]) if key in TERMS else key


@register.filter
def verdict_label(key) -> str:
    return gettext(Verdict(key).label) if key in Verdict._value2member_map_ else term(key)


@register.filter
def terms(keys) -> str:
    """A list of keys (a run's passes) named and joined as the language joins a list (، in Persian, 、 in Chinese)."""
    return pgettext("between the items of a short list", ", ").join(term(key) for key in keys)
