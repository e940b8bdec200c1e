"""An upload's problems in the reader's language: each was stored with its rule's code and values (its English
words too, which the command line and the API show), and is said again here through the catalogs. A problem
stored before codes were kept is shown as written."""

from __future__ import annotations

import re

from django import template
from django.utils.html import conditional_escape, format_html
from django.utils.translation import get_language, gettext

from dedup_site.numerals import local_digits
from screening.ingest.formats import RULES

register = template.Library()

_PLACE = re.compile(r"(?P<file>.+?)(?: member (?P<member>.+?))?(?: line (?P<line>\d+))?")
_NUMBER = re.compile(r"[\d,]+")


def _value(value: str) -> str:
    """A rule's value: a number in the language's digits, anything else (a name, a tag, a type) isolated."""
    if _NUMBER.fullmatch(value):
        return format_html("{}", local_digits(value, get_language() or ""))
    return format_html("<bdi>{}</bdi>", value)


def _said(code: str, values: dict) -> str:
    message = conditional_escape(gettext(RULES[code]))
    return format_html(message, **{k: _value(str(v)) for k, v in values.items()}) if values else message


@register.filter
def rule_shown(group: dict):
    """A group's rule (formats.group_problems) in the reader's language."""
    if group.get("code") not in RULES:  # stored before codes were kept: its English words, isolated as written
        return format_html("<bdi>{}</bdi>", group.get("rule", ""))
    return _said(group["code"], group.get("values") or {})


def place_shown(place: str) -> str:
    """`guides.zip member a.txt line 3` as the reader's language says where."""
    match = _PLACE.fullmatch(place)
    shown = format_html("<bdi>{}</bdi>", match["file"])
    if match["member"]:
        shown = format_html(conditional_escape(gettext("{file}, member {member}")), file=shown,
                            member=format_html("<bdi>{}</bdi>", match["member"]))
    if match["line"]:
        shown = format_html(conditional_escape(gettext("{place}, line {line}")), place=shown,
                            line=local_digits(match["line"], get_language() or ""))
    return shown


@register.filter
def problem_shown(parts: dict):
    """One problem (formats.Problem.parts) in the reader's language: where, which field, which rule."""
    if parts.get("code") not in RULES:
        return ""
    where = place_shown(parts["place"])
    rule = _said(parts["code"], parts.get("values") or {})
    if parts.get("field"):
        return format_html(conditional_escape(gettext("{place}, field {field}: {rule}")), place=where,
                           field=format_html("<bdi>{}</bdi>", parts["field"]), rule=rule)
    return format_html(conditional_escape(gettext("{place}: {rule}")), place=where, rule=rule)
