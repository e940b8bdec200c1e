"""Referrals: a pair its cluster sent to arbitration stays there until an arbiter settles it (issue 51, item 6).
Pairs a cluster has flagged by now get their referral, recorded at the upgrade (when they were flagged was not
kept), so a later change of mind no longer takes them out of the arbiters' queue. Pairs a change of mind had
already taken out before this release cannot be told apart from the record and stay as they are."""

import django.db.models.deletion
from django.db import migrations, models

from dedup_site.guards import Guard, install, remove

GUARDS = [Guard("review_referral")]  # a copy, as it stood when this migration was written
CLUSTER_FLAG = "contradicts cluster"


def flagged_pairs_referred(apps, editor):
    CandidatePair = apps.get_model("screening", "CandidatePair")
    Referral = apps.get_model("review", "Referral")
    flagged = CandidatePair.objects.filter(status="needs_arbitration", flag__startswith=CLUSTER_FLAG)
    Referral.objects.bulk_create([Referral(pair_id=pk, reason=flag) for pk, flag in
                                  flagged.order_by("pk").values_list("pk", "flag")])


def forward(apps, editor):
    install(editor.connection, GUARDS)


def backward(apps, editor):
    remove(editor.connection, GUARDS)


class Migration(migrations.Migration):

    dependencies = [
        ('review', '0011_sheetexport_bucket_prefix'),
        ('screening', '0018_upload_language_check_state'),
    ]

    operations = [
        migrations.CreateModel(
            name='Referral',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('reason', models.CharField(max_length=300)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('pair', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='referrals', to='screening.candidatepair')),
            ],
            options={
                'ordering': ['created_at', 'id'],
                'indexes': [models.Index(fields=['pair', 'created_at'], name='review_refe_pair_id_f6e63f_idx')],
            },
        ),
        migrations.RunPython(flagged_pairs_referred, migrations.RunPython.noop),
        migrations.RunPython(forward, backward),
    ]
