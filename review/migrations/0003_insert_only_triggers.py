"""The database itself refuses to change a judgement or an arbitration (see review/legacy_triggers.py)."""

from django.db import migrations

from review import legacy_triggers

TABLES = ["review_judgement", "review_arbitration"]


class Migration(migrations.Migration):
    dependencies = [("review", "0002_arbitration_judgement_currentverdict_and_more")]
    operations = [
        migrations.RunPython(lambda apps, editor: legacy_triggers.create(editor, TABLES),
                             lambda apps, editor: legacy_triggers.drop(editor, TABLES)),
    ]
