"""When two names are one: the rule that user names and corpus names are told apart by (plain Python, no
Django: dedup_site.accounts and screening's services apply it, and the database holds its result).

- `canonical`: NFKC, then full case folding (then NFKC again: folding can leave a letter decomposed), so that
  `ａｄｍｉｎ` (full width) is `admin`, `ZOË` and a decomposed `Zoë` are `zoë`, `JÜRGEN` is `jürgen` whatever
  the database's own `lower()` folds.
- `invisible`: characters that show nothing — format controls (zero-width space, the joiners ZWJ and ZWNJ,
  bidi controls, soft hyphen, BOM), other controls, separators, and the letters and marks Unicode calls
  default-ignorable (Hangul fillers, variation selectors). A user name is typed at every log-in and read on
  every sheet: two names that differ by what cannot be seen are one name. ZWNJ, which Persian words need to
  keep two letters apart, is refused too: Django's own username validator refuses it already, and a
  Persian user name is written without it (`علیرضا`, `علی.رضا`); a full name, shown beside it, may carry it.
- `mixes_scripts`: a name that mixes scripts with a character that has a look-alike in another script
  (`аdmin` with a Cyrillic а), as Unicode's confusables data (confusable_homoglyphs, what django-registration
  checks user names with) says. A name written in one script (Cyrillic, Persian, Chinese) is not refused for
  it.
"""

from __future__ import annotations

import unicodedata

from confusable_homoglyphs import confusables

# Default_Ignorable_Code_Point letters and marks (Unicode's DerivedCoreProperties) that are neither controls
# nor format characters, which `invisible` finds by their general category.
_IGNORABLE = frozenset(
    [0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0, *range(0x180B, 0x1810), *range(0xFE00, 0xFE10),
     *range(0xE0100, 0xE01F0)])
_INVISIBLE_CATEGORIES = frozenset(["Cf", "Cc", "Co", "Cs", "Cn", "Zs", "Zl", "Zp"])


def canonical(name: str) -> str:
    """The form two names share when they are one name (NFKC, casefold, NFKC)."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())


def invisible(name: str) -> list[str]:
    """The invisible characters in the name, as `U+200B ZERO WIDTH SPACE`."""
    return [f"U+{ord(c):04X} {unicodedata.name(c, '')}".rstrip() for c in name
            if unicodedata.category(c) in _INVISIBLE_CATEGORIES or ord(c) in _IGNORABLE]


def mixes_scripts(name: str) -> bool:
    """Whether the name mixes scripts with a character that looks like one of another script."""
    return bool(confusables.is_dangerous(unicodedata.normalize("NFKC", name)))
