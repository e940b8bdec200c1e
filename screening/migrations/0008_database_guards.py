"""Source files and imported documents are never deleted or changed, in the database itself (dedup_site.guards)."""

from django.db import migrations

from dedup_site.guards import Guard, install, remove

# A copy, as it stood when this migration was written (models.DB_GUARDS may grow later).
GUARDS = [
    Guard("screening_sourcefile", rule="never deleted or changed", frozen=("sha256", "size")),
    Guard("screening_document", rule="never deleted or changed", frozen=(
        "corpus_id", "upload_id", "doc_id", "source_id", "version", "language", "title", "body", "collected_at",
        "member_path", "place")),
]


class Migration(migrations.Migration):
    dependencies = [("screening", "0007_document_content_sha256")]
    operations = [
        migrations.RunPython(lambda apps, editor: install(editor.connection, GUARDS),
                             lambda apps, editor: remove(editor.connection, GUARDS)),
    ]
