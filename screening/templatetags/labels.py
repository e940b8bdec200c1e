"""The interface's names for the keys pages show (a pass, a stage, an evaluation's error kind, a split, a
verdict): `{{ key|term }}` and `{{ key|verdict_label }}` in the interface's language, the key itself when it
is not one of them. The keys stay as they are wherever they are stored or exported."""

from __future__ import annotations

import re

from django import template
from django.utils.translation import get_language, gettext, gettext_noop, pgettext

from dedup_site.numerals import local_digits
from screening.engine import metrics
from screening.vocabulary import ArbitrationReason, Verdict

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


# The cluster check's stored flags (review.services.cluster_check), each in the catalogs.
_CLUSTER_FLAGS = {
    "judged different, yet linked by pairs judged copies":
        gettext_noop("contradicts cluster {cluster}: judged different, yet linked by pairs judged copies"),
    "judged a copy, yet it links two documents an arbiter settled as different":
        gettext_noop("contradicts cluster {cluster}: judged a copy, yet it links two documents an arbiter settled "
                     "as different"),
}


@register.filter
def flag_label(flag: str) -> str:
    """Why a pair waits for an arbiter (its stored flag, in English) in the interface's language."""
    for reason in ArbitrationReason:
        if flag == reason.value:
            return gettext(reason.label)
    if (match := re.fullmatch(r"contradicts cluster (\d+): (.+)", flag or "")) and match[2] in _CLUSTER_FLAGS:
        return gettext(_CLUSTER_FLAGS[match[2]]).format(cluster=local_digits(match[1], get_language() or ""))
    return flag
