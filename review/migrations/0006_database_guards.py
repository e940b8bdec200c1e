"""Judgements, arbitrations and reviewer signatures refuse UPDATE and DELETE (and TRUNCATE on PostgreSQL) in
the database itself, on SQLite too, where 0003 refused UPDATE only; a complete sheet export is fixed.
Replaces the triggers of 0003 and 0005 (dedup_site.guards)."""

from django.db import migrations

from dedup_site.guards import Guard, install, remove
from review import legacy_triggers

LEGACY = ["review_judgement", "review_arbitration", "review_reviewersignature"]
# A copy, as it stood when this migration was written (models.DB_GUARDS may grow later).
GUARDS = [
    Guard("review_judgement"),
    Guard("review_arbitration"),
    Guard("review_reviewersignature"),
    Guard("review_sheetexport", rule="fixed once complete", frozen_when="OLD.status = 'complete'"),
]


def forward(apps, editor):
    legacy_triggers.drop(editor, LEGACY)
    install(editor.connection, GUARDS)


def backward(apps, editor):
    remove(editor.connection, GUARDS)
    legacy_triggers.create(editor, LEGACY)


class Migration(migrations.Migration):
    dependencies = [("review", "0005_signature_insert_only"), ("screening", "0008_database_guards")]
    operations = [migrations.RunPython(forward, backward)]
