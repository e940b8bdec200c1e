"""The database itself refuses to change a judgement or an arbitration (see review/triggers.py)."""

from django.db import migrations

from review import triggers

TABLES = ["review_judgement", "review_arbitration"]


class Migration(migrations.Migration):
    dependencies = [("review", "0002_arbitration_judgement_currentverdict_and_more")]
    operations = [
        migrations.RunPython(lambda apps, editor: triggers.create(editor, TABLES),
                             lambda apps, editor: triggers.drop(editor, TABLES)),
    ]
