"""Text the product can store and send (no Django imports): no NUL character (PostgreSQL stores none) and no
lone surrogate (a code point U+D800–U+DFFF on its own: a Python str and JSON's \\u escapes can hold one, UTF-8
cannot, so no database driver, page or JSON answer can encode it). Input holding either is refused where it
comes in (dedup_site.http for the pages' parameters, dedup_site.api_parsers for the API's bodies); `shown`
and `shown_data` write what got into a row before that rule so that a page still renders."""

from __future__ import annotations

import re

SURROGATE = re.compile("[\ud800-\udfff]")
NUL_RULE = "contains a NUL character"


def problem(text: str) -> str | None:
    """The rule the text breaks, None if it can be stored."""
    if "\x00" in text:
        return NUL_RULE
    if found := SURROGATE.search(text):
        return f"is not valid UTF-8 text (it holds a lone surrogate, U+{ord(found.group()):04X})"
    return None


def shown(text: str) -> str:
    """The text, with each lone surrogate written as its escape (`\\ud800`): valid UTF-8 that still shows every
    other character as stored and names the one that could not be shown.

    backslashreplace rather than surrogateescape: surrogateescape turns U+DC80–U+DCFF back into the raw bytes
    they stood for (others it cannot encode at all), which would send bytes that are not UTF-8 to a browser
    or a JSON reader; U+FFFD alone would hide which character it was."""
    if text.isascii():  # most pages: no need to look further
        return text
    try:
        text.encode("utf-16-le")  # refuses lone surrogates, like UTF-8, at about half the cost for a page
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def shown_data(value):
    """JSON-like data (dicts, lists, text) with every text and key `shown`."""
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, dict):
        return {shown(k) if isinstance(k, str) else k: shown_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [shown_data(v) for v in value]
    return value
