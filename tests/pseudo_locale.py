"""A pseudo-locale for the tests: every message of the catalogs wrapped in ⟦ ⟧ and its letters accented, its
placeholders and markup kept. A page drawn in it shows any interface text that is not marked for translation
at all: text outside the brackets that is not data (a document's words, a name, an id)."""

from __future__ import annotations

import re
from pathlib import Path

import polib

CODE = "en-xa"  # a pseudo-locale's tag (Android's): valid BCP 47, and no real language's
FOLDER = "en_XA"
OPEN, CLOSE = "⟦", "⟧"
ROOT = Path(__file__).resolve().parent.parent
_KEEP = re.compile(r"%\(\w+\)[sdif]|%[sdif]|\{[^{}]*\}|<[^>]*>|&\w+;|&#\d+;")
_ACCENTS = str.maketrans("aceinosuyACEINOSUY", "áçéíñóšúýÁÇÉÍÑÓŠÚÝ")


def pseudo(text: str) -> str:
    """`Saved {verdict} for %(pair)s.` → `⟦Šávéd {verdict} fór %(pair)s.⟧`."""
    if not text:
        return text
    out, at = [], 0
    for match in _KEEP.finditer(text):
        out += [text[at:match.start()].translate(_ACCENTS), match.group()]
        at = match.end()
    out.append(text[at:].translate(_ACCENTS))
    return OPEN + "".join(out) + CLOSE


def _sources() -> list[Path]:
    """The catalogs whose messages a page can show: the site's own, and Django's (its forms' and validators'
    words), read from their Persian catalogs, which hold every message."""
    import django

    django_root = Path(django.__file__).parent
    return [ROOT / "locale" / "fa" / "LC_MESSAGES" / "django.po",
            *sorted(django_root.glob("**/locale/fa/LC_MESSAGES/django.po"))]


def build(folder: Path) -> Path:
    """Compile the pseudo catalog from the messages of every catalog into `folder` (a LOCALE_PATHS entry)."""
    catalog = polib.POFile()
    catalog.metadata = {"Content-Type": "text/plain; charset=UTF-8", "Language": CODE,
                        "Plural-Forms": "nplurals=2; plural=(n != 1);"}
    seen = set()
    for entry in (e for path in _sources() for e in polib.pofile(str(path))):
        if entry.obsolete or (entry.msgctxt, entry.msgid) in seen:
            continue
        seen.add((entry.msgctxt, entry.msgid))
        if entry.msgid_plural:
            catalog.append(polib.POEntry(msgid=entry.msgid, msgid_plural=entry.msgid_plural, msgctxt=entry.msgctxt,
                                         msgstr_plural={0: pseudo(entry.msgid), 1: pseudo(entry.msgid_plural)}))
        else:
            catalog.append(polib.POEntry(msgid=entry.msgid, msgctxt=entry.msgctxt, msgstr=pseudo(entry.msgid)))
    target = folder / FOLDER / "LC_MESSAGES"
    target.mkdir(parents=True, exist_ok=True)
    catalog.save_as_mofile(str(target / "django.mo"))
    return folder
