"""Label sets and labels are never deleted or changed; a complete audit is fixed (dedup_site.guards)."""

from django.db import migrations

from dedup_site.guards import Guard, install, remove

# A copy, as it stood when this migration was written (models.DB_GUARDS may grow later).
GUARDS = [
    Guard("screening_labelset", rule="never deleted or changed"),
    Guard("screening_label", rule="never deleted or changed"),
    Guard("screening_runaudit", rule="fixed once complete", frozen_when="OLD.status = 'complete'"),
]


class Migration(migrations.Migration):
    dependencies = [("screening", "0009_run_audit")]
    operations = [
        migrations.RunPython(lambda apps, editor: install(editor.connection, GUARDS),
                             lambda apps, editor: remove(editor.connection, GUARDS)),
    ]
