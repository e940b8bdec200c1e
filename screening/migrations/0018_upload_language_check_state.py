from django.db import migrations, models


def checked_before(apps, schema_editor):
    # Uploads checked before the check had a state: done, every document read.
    Upload = apps.get_model("screening", "Upload")
    Upload.objects.filter(language_checked_at__isnull=False).update(
        language_check="complete", language_check_done=models.F("document_count"))


class Migration(migrations.Migration):

    dependencies = [
        ('screening', '0017_language_check'),
    ]

    operations = [
        migrations.AddField(
            model_name='upload',
            name='language_check',
            field=models.CharField(blank=True, db_default='', default='', max_length=16),
        ),
        migrations.AddField(
            model_name='upload',
            name='language_check_done',
            field=models.IntegerField(db_default=0, default=0),
        ),
        migrations.RunPython(checked_before, migrations.RunPython.noop, elidable=True),
    ]
