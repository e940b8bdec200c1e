"""Document bodies compressed with lz4 on PostgreSQL (pglz, the default, was a fifth of an import's server
time). Rows already stored keep their compression; nothing else changes, and other databases are left alone."""

from django.db import DatabaseError, migrations, transaction


def _compression(apps, editor, method: str) -> None:
    if editor.connection.vendor != "postgresql":
        return
    try:
        with transaction.atomic(using=editor.connection.alias):
            editor.execute(f"ALTER TABLE screening_document ALTER COLUMN body SET COMPRESSION {method}")
    except DatabaseError:
        pass  # a server built without lz4 keeps pglz


class Migration(migrations.Migration):

    dependencies = [
        ('screening', '0013_upload_problem_groups'),
    ]

    operations = [
        migrations.RunPython(lambda apps, editor: _compression(apps, editor, "lz4"),
                             lambda apps, editor: _compression(apps, editor, "pglz")),
    ]
