"""Corpus names are one name up to case, as user names (dedup_site.names.canonical): `EVALC` and `evalc` cannot
both exist. The names are in the alphabet the services always asked for (ASCII letters, digits, `.`, `_`, `-`),
now checked by the database too, so the canonical form is lower(name) and the database holds it unique on
SQLite and PostgreSQL alike. Names already out of the alphabet, or already one name up to case, stop the
upgrade, named, and nothing is changed: rename all but one of each first (`manage.py shell`)."""

import re
import unicodedata

from django.db import migrations, models
from django.db.models.functions import Lower

PATTERN = r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z"


def _canonical(name: str) -> str:  # dedup_site.names.canonical as of this migration
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())


def _refuse_twins(apps, schema_editor):
    Corpus = apps.get_model("screening", "Corpus")
    seen: dict[str, list[str]] = {}
    outside = []
    for name in Corpus.objects.values_list("name", flat=True).order_by("name"):
        seen.setdefault(_canonical(name), []).append(name)
        if not re.search(PATTERN, name):
            outside.append(repr(name))
    twins = [names for names in seen.values() if len(names) > 1]
    problems = []
    if twins:
        problems.append("corpus names that are one name up to case: " + "; ".join(" / ".join(n) for n in twins))
    if outside:
        problems.append("corpus names with characters other than ASCII letters, digits, '.', '_' and '-', or "
                        "not starting with a letter or digit: " + ", ".join(outside))
    if problems:
        raise RuntimeError(". ".join(problems) + ". Rename all but one of each (`manage.py shell`), then run "
                           "migrate again; nothing was changed.")


class Migration(migrations.Migration):

    dependencies = [
        ("screening", "0018_upload_language_check_state"),
    ]

    operations = [
        migrations.RunPython(_refuse_twins, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="corpus",
            constraint=models.CheckConstraint(condition=models.Q(name__regex=PATTERN), name="corpus_name_alphabet"),
        ),
        migrations.AddConstraint(
            model_name="corpus",
            constraint=models.UniqueConstraint(Lower("name"), name="corpus_name_canonical_unique"),
        ),
    ]
