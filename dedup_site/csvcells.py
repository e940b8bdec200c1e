"""CSV cells a spreadsheet shows but never runs (no Django imports): every CSV the product writes uses it."""

from __future__ import annotations

DANGEROUS = ("=", "+", "-", "@", "\t", "\r", "\n")


def neutralise(value: object) -> str:
    """A cell starting with = + - @ tab CR or LF gets a leading ' (a formula would run in a spreadsheet)."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(DANGEROUS) else text
