"""The last password each owner set themselves, one-time codes for replacing a password someone else chose,
and user names unique without case (a unique index on lower(username), on SQLite and PostgreSQL)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

INDEX = "dedup_username_lower_unique"


def _refuse_case_twins(apps, schema_editor):
    """An index cannot be made over names that already collide: say which, rather than rename anyone (their
    names are on judgements and signed sheets)."""
    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    seen: dict[str, list[str]] = {}
    for name in User.objects.values_list("username", flat=True).order_by("username"):
        seen.setdefault(name.lower(), []).append(name)
    twins = [names for names in seen.values() if len(names) > 1]
    if twins:
        listed = "; ".join(" / ".join(names) for names in twins)
        raise RuntimeError(f"user names that differ only by case: {listed}. Rename all but one of each (Django "
                           f"admin or `manage.py shell`), then run migrate again; nothing was changed.")


def _add_index(apps, schema_editor):
    table = apps.get_model(*settings.AUTH_USER_MODEL.split("."))._meta.db_table
    schema_editor.execute(f'CREATE UNIQUE INDEX IF NOT EXISTS {INDEX} ON "{table}" (lower(username))')


def _drop_index(apps, schema_editor):
    schema_editor.execute(f"DROP INDEX IF EXISTS {INDEX}")


class Migration(migrations.Migration):

    dependencies = [
        ("dedup_site", "0001_password_chosen_by_other"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="OwnPassword",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("encoded", models.CharField(max_length=256)),
                ("set_at", models.DateTimeField(auto_now=True)),
                ("user", models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name="+",
                                              to=settings.AUTH_USER_MODEL)),
            ],
        ),
        migrations.CreateModel(
            name="PasswordCode",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("digest", models.CharField(max_length=64, unique=True)),
                ("issued_at", models.DateTimeField(auto_now_add=True)),
                ("expires_at", models.DateTimeField()),
                ("used_at", models.DateTimeField(blank=True, null=True)),
                ("issued_by", models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL,
                                                related_name="+", to=settings.AUTH_USER_MODEL)),
                ("user", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+",
                                           to=settings.AUTH_USER_MODEL)),
            ],
        ),
        migrations.RunPython(_refuse_case_twins, migrations.RunPython.noop),
        migrations.RunPython(_add_index, _drop_index),
    ]
