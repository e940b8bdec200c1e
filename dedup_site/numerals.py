"""Numbers and dates as the interface's language writes them: Persian digits (and the Persian decimal
separator) in the fa interface, and optionally the Jalali calendar there. Only for what the interface itself
shows (counts, scores, dates); never applied to document text, exports or anything stored, whose bytes stay
the same whatever the language."""

from __future__ import annotations

import datetime as dt
import re

import jdatetime

PERSIAN_DIGITS = str.maketrans("0123456789%", "۰۱۲۳۴۵۶۷۸۹٪")  # and the Persian per cent sign
_DECIMAL_POINT = re.compile(r"(?<=\d)\.(?=\d)")
_NEGATIVE = re.compile(r"-\d")
# The few Django date-format letters the interface uses, as strftime directives for jdatetime.
_STRFTIME = {"Y": "%Y", "m": "%m", "d": "%d", "H": "%H", "i": "%M", "s": "%S"}


def local_digits(text: str, language: str) -> str:
    """`text` with its ASCII digits (and a decimal point between digits, a per cent sign) in the script of
    `language`. A negative number is isolated left to right: in a right-to-left line its minus would otherwise
    be drawn after the digits (`۰٫۲۵۰-`)."""
    if not language.startswith("fa"):
        return text
    shown = _DECIMAL_POINT.sub("٫", text).translate(PERSIAN_DIGITS)
    return f"\u2066{shown}\u2069" if _NEGATIVE.match(text) else shown


def isolated(text) -> str:
    """A value from the data (a doc_id, a name) in a plain-text sentence, such as a message after an action:
    set apart (FSI … PDI) so that it is laid out in its own script's direction whatever the sentence's."""
    return f"\u2068{text}\u2069"


class LocalCount(int):
    """A count that writes itself in the interface language's digits wherever it becomes text (str, format, %s)
    and stays a number everywhere else: `blocktranslate count` and ngettext choose the plural form from the
    number, and the sentence shows it as the language writes it, leaving the sentence's other words (names,
    identifiers, addresses) as they are."""

    def __str__(self) -> str:
        from django.utils import translation

        return local_digits(int.__repr__(self), translation.get_language() or "")

    def __format__(self, spec: str) -> str:
        from django.utils import translation

        return local_digits(int.__format__(self, spec), translation.get_language() or "")


def jalali(instant: dt.datetime | dt.date, fmt: str) -> str:
    """`instant` (already in the time zone to show) in the Jalali calendar, `fmt` in Django's date letters
    (Y m d H i s and punctuation only)."""
    directive = "".join(_STRFTIME.get(char, char.replace("%", "%%")) for char in fmt)
    if isinstance(instant, dt.datetime):
        return jdatetime.datetime.fromgregorian(datetime=instant).strftime(directive)
    return jdatetime.date.fromgregorian(date=instant).strftime(directive)


# The letter each key of the standard Persian layout (ISIRI 9147) types, by its place on a QWERTY keyboard:
# the shortcuts are read by a key's place (event.code), so a Persian page names the key by both letters.
PERSIAN_LAYOUT = dict(zip("qwertyuiop[]asdfghjkl;'zxcvbnm,", "ضصثقفغعهخحجچشسیبلاتنمکگظطزرذدپو", strict=True))


def keycap(key: str, language: str) -> str:
    """The letter a shortcut's key types on the interface language's keyboard, when it is another than the key's
    own: `ن` for k in Persian, "" elsewhere (pages show it beside the key)."""
    return PERSIAN_LAYOUT.get(key, "") if language.startswith("fa") else ""
