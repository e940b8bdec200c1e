"""Who proved each own password, and marks on every password someone else chose, whatever wrote it.

- OwnPassword.proven_by: the issuer of the one-time code that made a password its owner's (null: the server's
  `password_code`, or `bootstrap`), so that a code from this account can be traced later
  (dedup_site.accounts.might_act_as). Carried over from the last code each owner used, which is the proof of
  their present own password (an owner's later changes keep it).
- An own password proven by a code whose issuer's own password someone else chose still proved nothing (the
  audit's issue 51 item 1): it is marked as chosen by that someone, as it may be theirs.
- An account with a usable password that neither its owner set on their Password page nor `bootstrap` gave
  (made with create_user or createsuperuser, or set with QuerySet.update) is marked as chosen by someone else.
- Triggers mark every later change of a password hash, whatever writes it, but the owner's own page and a
  re-hash at log-in (dedup_site.guards.password_marks; every migrate installs them again).
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def _carry_over(apps, schema_editor):
    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    OwnPassword = apps.get_model("dedup_site", "OwnPassword")
    PasswordCode = apps.get_model("dedup_site", "PasswordCode")
    Chosen = apps.get_model("dedup_site", "PasswordChosenByOther")
    choosers = dict(Chosen.objects.values_list("user_id", "chosen_by_id"))
    for own in OwnPassword.objects.exclude(user_id__in=choosers):
        code = PasswordCode.objects.filter(user_id=own.user_id, used_at__isnull=False).order_by("-used_at").first()
        if code is None or code.issued_by_id is None:
            continue
        OwnPassword.objects.filter(pk=own.pk).update(proven_by_id=code.issued_by_id)
        if code.issued_by_id in choosers:  # the issuer's password was someone else's: so may this one be
            Chosen.objects.create(user_id=own.user_id, chosen_by_id=choosers[code.issued_by_id])
    unmarked = (User.objects.exclude(pk__in=Chosen.objects.values("user_id"))
                .exclude(pk__in=OwnPassword.objects.values("user_id"))
                .exclude(password__startswith="!").exclude(password=""))
    Chosen.objects.bulk_create([Chosen(user_id=pk, chosen_by=None) for pk in unmarked.values_list("pk", flat=True)])


def _install(apps, schema_editor):
    from dedup_site import guards

    guards.install_account_triggers(schema_editor.connection, guards.password_marks(schema_editor.connection.vendor))


def _remove(apps, schema_editor):
    from dedup_site import guards

    guards.drop_triggers(schema_editor.connection, guards.PASSWORD_MARK_TRIGGERS)


class Migration(migrations.Migration):

    dependencies = [
        ("dedup_site", "0004_api_tokens"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="ownpassword",
            name="proven_by",
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT,
                                    related_name="+", to=settings.AUTH_USER_MODEL),
        ),
        migrations.RunPython(_carry_over, migrations.RunPython.noop),
        migrations.RunPython(_install, _remove),
    ]
