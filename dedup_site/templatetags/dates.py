"""Template filters for numbers and dates the interface shows (dedup_site.numerals): `digits` writes a count
in the interface language's digits (`counted` for `blocktranslate count`), `shown_date` an instant in the
current time zone, in the Jalali calendar for fa when settings.JALALI_DATES is on, and in the language's
digits; `layout` what a shortcut's key types on the language's keyboard; `bdi` a name, id or value from the
data (a doc_id, a user or corpus name, a language tag) isolated from the sentence around it: laid out in its own
script's direction whatever the page's, and marked as data, not interface words, for the pages' sweep. Exports
and stored values never go through them."""

from __future__ import annotations

import datetime as dt

from django import template
from django.conf import settings
from django.utils import dateformat, timezone, translation
from django.utils.html import format_html, json_script
from django.utils.translation import gettext_noop

from dedup_site.numerals import PERSIAN_LAYOUT, LocalCount, jalali, keycap, local_digits

register = template.Library()


@register.filter
def digits(value) -> str:
    return local_digits(str(value), translation.get_language() or "")


@register.filter
def bdi(value) -> str:
    return format_html("<bdi>{}</bdi>", value)


# Sizes in the interface's words: Django's filesizeformat leaves "KB" in English in Persian.
_SIZES = (gettext_noop("%(size)s bytes"), gettext_noop("%(size)s KB"), gettext_noop("%(size)s MB"),
          gettext_noop("%(size)s GB"))


@register.filter
def size(value) -> str:
    """A file's size in bytes as the interface writes it: `9.3 KB`, `۹٫۳ کیلوبایت`."""
    number, step = float(value or 0), 0
    while number >= 1024 and step < len(_SIZES) - 1:
        number, step = number / 1024, step + 1
    text = translation.gettext(_SIZES[step]) % {"size": f"{number:.0f}" if step == 0 else f"{number:.1f}"}
    return local_digits(text, translation.get_language() or "")


@register.filter
def layout(letter) -> str:
    """What a shortcut's key types on the interface language's keyboard, if another letter (numerals.keycap):
    `<kbd data-layout="{{ k|layout }}">k</kbd>`, which the stylesheet shows before the key."""
    return keycap(str(letter), translation.get_language() or "")


@register.simple_tag
def keyboard_layout():
    """The page language's keyboard as JSON, letter → the QWERTY key at its place ({} but in Persian), for
    keys.js: a keystroke that reports its letter and not its place still means its key."""
    language = translation.get_language() or ""
    table = {letter: key for key, letter in PERSIAN_LAYOUT.items()} if language.startswith("fa") else {}
    return json_script(table, "keyboard-layout")


@register.filter
def counted(value) -> LocalCount:
    """A count for `blocktranslate count`: the plural form chosen from the number, shown in the language's
    digits."""
    return LocalCount(value)


@register.filter
def shown_date(instant, fmt: str = "Y-m-d H:i") -> str:
    if instant in (None, ""):
        return ""
    if isinstance(instant, dt.datetime) and timezone.is_aware(instant):
        instant = timezone.localtime(instant)
    language = translation.get_language() or ""
    if language.startswith("fa") and settings.JALALI_DATES:
        text = jalali(instant, fmt)
    else:
        text = dateformat.format(instant, fmt)
    return local_digits(text, language)


@register.filter
def collected(text) -> str:
    """A document's collected_at, kept as given (ISO 8601), shown as the interface shows dates: `2023-08-14` or
    `2023-08-14 20:21` (UTC), in the language's digits; as given, isolated, when it does not read as a date."""
    if not text:
        return "—"
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        return bdi(text)
    return shown_date(moment.date(), "Y-m-d") if len(text) <= 10 else shown_date(moment)


@register.filter(name="role_label")
def role_label_filter(role) -> str:
    """A role as the Users page names it, in the interface's language (dedup_site.accounts.role_label)."""
    from dedup_site.accounts import role_label

    return role_label(str(role or ""))
