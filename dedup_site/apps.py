from django.apps import AppConfig
from django.db import connections
from django.db.models.signals import post_migrate


def _guards_after_migrate(using="default", plan=None, **_kwargs) -> None:
    from dedup_site import guards

    if plan and any(backwards for _, backwards in plan):
        return  # unapplying migrations: their own reverse steps decide which triggers stay
    guards.sync(connections[using])


class DedupSiteConfig(AppConfig):
    name = "dedup_site"

    def ready(self):
        from dedup_site import lookups
        from dedup_site.roles import ensure_roles

        lookups.register()

        post_migrate.connect(ensure_roles, sender=self, dispatch_uid="dedup_site.ensure_roles")
        # A table SQLite rebuilt to alter it lost its triggers: every migrate puts the guards back.
        post_migrate.connect(_guards_after_migrate, sender=self, dispatch_uid="dedup_site.guards")
