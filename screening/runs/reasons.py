"""The suggestion's reasons and the shared text's description in the interface's language. The engine
(no Django) writes them in English and they are stored so, on the pair and in exports; the pair page shows
them through these patterns, each English form with its message in the catalogs. A text no pattern knows
is shown as written."""

from __future__ import annotations

import re

from django.utils.html import conditional_escape, format_html
from django.utils.translation import get_language, gettext, gettext_noop, ngettext

from dedup_site.numerals import local_digits

_PLACES = {"at the top": gettext_noop("at the top"), "at the bottom": gettext_noop("at the bottom"),
           "at the top and the bottom": gettext_noop("at the top and the bottom")}
_ORDERS = {"left-older": gettext_noop("left is older"), "right-older": gettext_noop("right is older")}
_SIGNALS = {"number": gettext_noop("number"), "date": gettext_noop("date"), "month": gettext_noop("month"),
            "sign": gettext_noop("sign"), "unit": gettext_noop("unit"), "negation": gettext_noop("negation")}
_FIXED = {text: text for text in (
    gettext_noop("the same content bytes"),
    gettext_noop("the same text once normalised (spacing, case, width, digits, letters)"),
    gettext_noop("the same text, parts in another order"),
    gettext_noop("different texts under a shared header or footer"),
    gettext_noop("different texts under a shared template"),
    gettext_noop("it reads as boilerplate"),
    gettext_noop("it stands in quotation marks"),
    gettext_noop("a frame at the top and bottom of both"),
    gettext_noop("another source"),
    gettext_noop("same source"),
    gettext_noop("same source, same version"),
    gettext_noop("nothing of five words or more"),
    gettext_noop("inside one text's middle"),
)}
_PATTERNS = [(re.compile(pattern), message) for pattern, message in (
    (r"(?P<share>\d+%) of the words changed", gettext_noop("{share} of the words changed")),
    (r"(?P<share>\d+%) of the words changed: different texts",
     gettext_noop("{share} of the words changed: different texts")),
    (r"(?P<share>\d+%) of the words changed, no detail a revision changes",
     gettext_noop("{share} of the words changed, no detail a revision changes")),
    (r"(?P<share>\d+%) of the shorter text is found in the longer one",
     gettext_noop("{share} of the shorter text is found in the longer one")),
    (r"(?P<share>\d+%) of what they share is template text",
     gettext_noop("{share} of what they share is template text")),
    (r"(?P<share>\d+%) of it is template text", gettext_noop("{share} of it is template text")),
    (r"Jaccard only (?P<j>[\d.]+)", gettext_noop("Jaccard only {j}")),
    (r"Jaccard (?P<j>[\d.]+), below the review threshold: different texts",
     gettext_noop("Jaccard {j}, below the review threshold: different texts")),
    (r"the same text under two language tags \((?P<a>[^,]+), (?P<b>[^)]+)\): check which tag is right",
     gettext_noop("the same text under two language tags ({a}, {b}): check which tag is right")),
)]


def _digits(number: str) -> str:
    """A number of the stored English words (`12%`, `0.37`, `1,204`) in the interface language's digits."""
    return local_digits(number, get_language() or "")


def _shared(text: str) -> str:
    """overlap.describe's words: `nearly all of both texts (2 blocks)`, `612 characters in 1 block at the top
    of both; the rest shares 3% of word pairs`."""
    if match := re.fullmatch(r"nearly all of both texts \((\d+) blocks?\)", text):
        return ngettext("nearly all of both texts ({n} block)", "nearly all of both texts ({n} blocks)",
                        int(match[1])).format(n=_digits(match[1]))
    match = re.fullmatch(r"(?P<chars>[\d,]+) characters in (?P<n>\d+) blocks? (?P<spot>.+?)"
                         r"(?:; the rest shares (?P<rest>\d+%) of word pairs)?", text)
    if not match:
        return gettext(_FIXED[text]) if text in _FIXED else text
    spot = match["spot"]
    if both := re.fullmatch(r"(.+) of both", spot):
        spot = gettext("{place} of both").format(place=gettext(_PLACES.get(both[1], both[1])))
    elif apart := re.fullmatch(r"(.+) of the left, (.+) of the right", spot):
        spot = gettext("{left} of the left, {right} of the right").format(
            left=gettext(_PLACES.get(apart[1], apart[1])), right=gettext(_PLACES.get(apart[2], apart[2])))
    else:
        spot = gettext(_FIXED[spot]) if spot in _FIXED else spot
    shown = ngettext("{chars} characters in {n} block {spot}", "{chars} characters in {n} blocks {spot}",
                     int(match["n"])).format(n=_digits(match["n"]), chars=_digits(match["chars"]), spot=spot)
    if match["rest"]:
        shown += gettext("; the rest shares {share} of word pairs").format(share=_digits(match["rest"]))
    return shown


def shown_reason(text: str) -> str:
    """One stored reason (screening.engine.suggest) as the interface says it."""
    if text in _FIXED:
        return gettext(text)
    if text.startswith("shared: "):
        return gettext("shared: {what}").format(what=_shared(text.removeprefix("shared: ")))
    if match := re.fullmatch(r"same source, versions in order \((.+)\)", text):
        return gettext("same source, versions in order ({order})").format(
            order=gettext(_ORDERS.get(match[1], match[1])))
    if match := re.fullmatch(r"the same words in another order: (\d+) blocks? moved", text):
        return ngettext("the same words in another order: {n} block moved",
                        "the same words in another order: {n} blocks moved", int(match[1])).format(n=_digits(match[1]))
    if match := re.fullmatch(r"(\w+) (.+) → (.+)", text):
        if match[1] in _SIGNALS:
            return signal_html(gettext(_SIGNALS[match[1]]), match[2], match[3])
    for pattern, message in _PATTERNS:
        if match := pattern.fullmatch(text):
            # The numbers in the language's digits; language tags (a, b) as written, isolated.
            return format_html(conditional_escape(gettext(message)), **{
                name: _digits(value) if name in ("share", "j") else format_html("<bdi>{}</bdi>", value)
                for name, value in match.groupdict().items()})
    return text


def signal_html(kind: str, before: str, after: str) -> str:
    """A signal as every box draws it: each value isolated (<bdi>: laid out in its own script's direction,
    whatever the page's and the other value's) and the arrow between them as the page reads (site.css turns
    it round right to left), so before → after follows the reading order of the page in every language."""
    return format_html('{} <bdi>{}</bdi> <span class="arrow">→</span> <bdi>{}</bdi>', kind, before, after)


def shown_shared(text: str) -> str:
    return _shared(text)
