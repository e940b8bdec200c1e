"""Who made each API token, and whether its owner acknowledged one made by someone else; the trail of
administrative acts, insert-only in the database (dedup_site.guards).

Tokens made before this migration keep `created_by` null: who made them was not kept (the tokens page and the
server's `api_token create` left the same row), so they count as the command line's, the reading that tells
their owners (a banner until they acknowledge or revoke them) rather than vouching for them."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from dedup_site.guards import Guard, install, remove

GUARDS = [Guard("dedup_site_trailentry")]  # a copy, as it stood when this migration was written


def forward(apps, editor):
    install(editor.connection, GUARDS)


def backward(apps, editor):
    remove(editor.connection, GUARDS)


class Migration(migrations.Migration):

    dependencies = [
        ('dedup_site', '0006_username_keys'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='apitoken',
            name='acknowledged_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='apitoken',
            name='created_by',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.CreateModel(
            name='TrailEntry',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('at', models.DateTimeField()),
                ('actor_name', models.CharField(blank=True, help_text="the actor's user name at the time", max_length=150)),
                ('command', models.CharField(blank=True, help_text="the server's command, when no one logged in", max_length=100)),
                ('action', models.CharField(max_length=40)),
                ('target_type', models.CharField(max_length=20)),
                ('target_id', models.BigIntegerField(blank=True, null=True)),
                ('target_label', models.CharField(blank=True, help_text="the target's name at the time", max_length=300)),
                ('before', models.JSONField(blank=True, default=dict)),
                ('after', models.JSONField(blank=True, default=dict)),
                ('actor', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['-id'],
                'default_permissions': ('view',),
                'indexes': [models.Index(fields=['action', '-id'], name='dedup_site__action_60d672_idx'), models.Index(fields=['target_type', 'target_id', '-id'], name='dedup_site__target__48664a_idx'), models.Index(fields=['actor', '-id'], name='dedup_site__actor_i_412f77_idx'), models.Index(fields=['at'], name='dedup_site__at_09aa5b_idx')],
            },
        ),
        migrations.RunPython(forward, backward),
    ]
