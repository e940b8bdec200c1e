"""Reviewers' signatures are insert-only too (see review/triggers.py)."""

from django.db import migrations

from review import triggers

TABLES = ["review_reviewersignature"]


class Migration(migrations.Migration):
    dependencies = [("review", "0004_reviewersignature_sheetexport")]
    operations = [
        migrations.RunPython(lambda apps, editor: triggers.create(editor, TABLES),
                             lambda apps, editor: triggers.drop(editor, TABLES)),
    ]
