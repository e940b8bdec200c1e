from django.apps import AppConfig
from django.db.models.signals import post_migrate


class DedupSiteConfig(AppConfig):
    name = "dedup_site"

    def ready(self):
        from dedup_site.roles import ensure_roles

        post_migrate.connect(ensure_roles, sender=self, dispatch_uid="dedup_site.ensure_roles")
