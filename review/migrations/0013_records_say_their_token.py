"""Judgements, arbitrations, cluster and bulk decisions and signatures say which API token made them and who
made that token; a signature names the records made with someone else's token that its reviewer accepted, and
those they refused.

Only nullable columns (and JSON ones defaulting to empty) are added: no row of these insert-only tables is
rewritten, and their guards stay. Existing rows keep null, which reads "in a session" but means "in a session,
or with a token: not known" (API tokens existed since dedup_site 0004, and which one made a record was not
kept before this migration). Existing signatures accept nothing made with others' tokens and refuse nothing:
none was told apart before."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('dedup_site', '0007_trail_and_token_makers'),
        ('review', '0012_referrals'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='arbitration',
            name='api_token',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='dedup_site.apitoken'),
        ),
        migrations.AddField(
            model_name='arbitration',
            name='token_created_by',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddField(
            model_name='judgement',
            name='api_token',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='dedup_site.apitoken'),
        ),
        migrations.AddField(
            model_name='judgement',
            name='token_created_by',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddField(
            model_name='reviewaction',
            name='api_token',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='dedup_site.apitoken'),
        ),
        migrations.AddField(
            model_name='reviewaction',
            name='token_created_by',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddField(
            model_name='reviewersignature',
            name='accepted',
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name='reviewersignature',
            name='api_token',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='dedup_site.apitoken'),
        ),
        migrations.AddField(
            model_name='reviewersignature',
            name='refused',
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name='reviewersignature',
            name='token_created_by',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
    ]
