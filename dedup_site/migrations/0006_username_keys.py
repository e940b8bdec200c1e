"""User names unique by their canonical form (NFKC, then casefold: dedup_site.names), on SQLite and PostgreSQL:
a UsernameKey row for every account, and triggers that refuse an account without one (dedup_site.guards.
username_keys; every migrate installs them again). Names that are already one name in canonical form stop the
upgrade, named, and nothing is changed (as dedup_site 0002 did for case): rename all but one of each first."""

import unicodedata

from django.conf import settings
from django.db import migrations, models


def _canonical(name: str) -> str:  # dedup_site.names.canonical as of this migration
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())


def _keys(apps, schema_editor):
    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    UsernameKey = apps.get_model("dedup_site", "UsernameKey")
    seen: dict[str, list[str]] = {}
    for name in User.objects.values_list("username", flat=True).order_by("username"):
        seen.setdefault(_canonical(name), []).append(name)
    twins = [names for names in seen.values() if len(names) > 1]
    if twins:
        listed = "; ".join(" / ".join(names) for names in twins)
        raise RuntimeError(f"user names that are one name up to case, width or composition (NFKC, casefold): "
                           f"{listed}. Rename all but one of each (Django admin or `manage.py shell`), then run "
                           f"migrate again; nothing was changed.")
    UsernameKey.objects.bulk_create([UsernameKey(username=names[0], canonical=key) for key, names in seen.items()])


def _install(apps, schema_editor):
    from dedup_site import guards

    guards.install_account_triggers(schema_editor.connection, guards.username_keys(schema_editor.connection.vendor))


def _remove(apps, schema_editor):
    from dedup_site import guards

    guards.drop_triggers(schema_editor.connection, guards.USERNAME_KEY_TRIGGERS)
    guards.remove(schema_editor.connection, [guards.WriterGuard("dedup_site_usernamekey", writer="")])


class Migration(migrations.Migration):

    dependencies = [
        ("dedup_site", "0005_password_provenance"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="UsernameKey",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("username", models.CharField(max_length=150, unique=True)),
                ("canonical", models.CharField(max_length=600, unique=True)),
            ],
        ),
        migrations.RunPython(_keys, migrations.RunPython.noop),
        migrations.RunPython(_install, _remove),
    ]
