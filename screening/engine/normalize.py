"""Named, versioned normalisation policies (pure functions). The raw body is never replaced.

A policy turns raw text into the *normalised text* that character shingles are cut from (only
`str.isalnum()` characters survive), and into *words* for word shingles (runs of such characters).
Changing what a policy does means a new name: runs record the name, so their results stay explainable.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

# `\w` is exactly str.isalnum() plus "_" (CPython's definition), so this keeps isalnum() characters.
_NOT_ALNUM = re.compile(r"[\W_]+")
_ASCII_NOT_ALNUM = bytes(c for c in range(128) if not chr(c).isalnum())

_PERSIAN_ARABIC = str.maketrans({
    "ي": "ی",  # Arabic yeh -> Persian yeh
    "ى": "ی",  # alef maksura -> Persian yeh
    "ك": "ک",  # Arabic kaf -> Persian keheh
    "\u200c": None,  # zero-width non-joiner
    "\u0640": None,  # tatweel
    **{chr(0x0660 + d): str(d) for d in range(10)},  # Arabic-Indic digits
    **{chr(0x06F0 + d): str(d) for d in range(10)},  # Persian (extended Arabic-Indic) digits
})


def _nfkc_casefold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _persian_arabic_fold(text: str) -> str:
    # Fold before NFKC too: NFKC maps some presentation forms onto the Arabic letters folded here.
    return _nfkc_casefold(text.translate(_PERSIAN_ARABIC)).translate(_PERSIAN_ARABIC)


@dataclass(frozen=True)
class Policy:
    name: str
    description: str
    fold: Callable[[str], str]
    ascii_is_lower: bool = False  # the fold leaves ASCII text as lower() does (NFKC and casefold both do)

    def normalize(self, text: str) -> str:
        """The normalised text: folded, then only isalnum() characters kept (spaces and punctuation go)."""
        if self.ascii_is_lower and text.isascii():
            # Two C passes over bytes instead of NFKC, casefold and a regex over the text, many times faster
            # (bench/HISTORY.md; a pair page's first drawing and verification normalise).
            return text.encode("ascii").translate(None, _ASCII_NOT_ALNUM).lower().decode("ascii")
        return _NOT_ALNUM.sub("", self.fold(text))

    def words(self, text: str) -> list[str]:
        """The folded text's runs of isalnum() characters."""
        return [w for w in _NOT_ALNUM.split(self.fold(text)) if w]


def gettext_noop(text: str) -> str:
    """Marks a policy's description for the interface's catalogs (makemessages reads the name), which show it
    translated (gettext of it); the engine itself, with no Django, keeps the English."""
    return text


POLICIES: dict[str, Policy] = {
    p.name: p
    for p in (
        Policy("nfkc-casefold-alnum-v1", gettext_noop("NFKC, casefold, keep only letters and digits (seed 001)."),
               _nfkc_casefold, ascii_is_lower=True),
        Policy(
            "persian-arabic-fold-v1",
            # Each mapping in a left-to-right isolate (LRI … PDI) with a left-to-right mark before its arrow:
            # without the mark the arrow, between two Arabic letters, joins their right-to-left run and turns.
            # u"": xgettext reads \u escapes only in a string marked so (Python 2's unicode literal).
            gettext_noop(u"As nfkc-casefold-alnum-v1, and \u2066ي/ى\u200e → ی\u2069, \u2066ك\u200e → ک\u2069, "  # noqa: UP025
                         u"Arabic-Indic and Persian digits → 0-9, ZWNJ and tatweel dropped."),  # noqa: UP025
            _persian_arabic_fold,
            ascii_is_lower=True,  # its own mappings are all outside ASCII
        ),
    )
}
DEFAULT_POLICY = "nfkc-casefold-alnum-v1"


def get_policy(name: str) -> Policy:
    try:
        return POLICIES[name]
    except KeyError:
        raise ValueError(f"unknown normalisation policy {name!r}; known: {', '.join(POLICIES)}") from None
