"""Compile every catalog under locale/ (django.po → django.mo) with polib: the same result as Django's
compilemessages without needing GNU gettext's msgfmt, which a fresh machine may lack. `make` runs it."""

import sys
from pathlib import Path

import polib

ROOT = Path(__file__).resolve().parent.parent
for po_path in sorted(ROOT.glob("locale/*/LC_MESSAGES/*.po")):
    catalog = polib.pofile(str(po_path))
    catalog.save_as_mofile(str(po_path.with_suffix(".mo")))
    print(f"{po_path.relative_to(ROOT)}: {catalog.percent_translated()} % translated", file=sys.stderr)
