"""Reviewers' signatures are insert-only too (see review/legacy_triggers.py)."""

from django.db import migrations

from review import legacy_triggers

TABLES = ["review_reviewersignature"]


class Migration(migrations.Migration):
    dependencies = [("review", "0004_reviewersignature_sheetexport")]
    operations = [
        migrations.RunPython(lambda apps, editor: legacy_triggers.create(editor, TABLES),
                             lambda apps, editor: legacy_triggers.drop(editor, TABLES)),
    ]
