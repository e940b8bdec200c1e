from django.apps import AppConfig
from django.conf import settings
from django.db import connections
from django.db.backends.signals import connection_created
from django.db.models.signals import m2m_changed, post_migrate, post_save, pre_save


def _guards_after_migrate(using="default", plan=None, **_kwargs) -> None:
    from dedup_site import guards

    if plan and any(backwards for _, backwards in plan):
        return  # unapplying migrations: their own reverse steps decide which triggers stay
    guards.sync(connections[using])


class DedupSiteConfig(AppConfig):
    name = "dedup_site"

    def ready(self):
        from dedup_site import accounts, guards, lookups
        from dedup_site.roles import ensure_roles

        lookups.register()
        from django.contrib.auth.signals import user_logged_in

        from dedup_site import languages

        user_logged_in.connect(languages.logged_in, dispatch_uid="dedup_language_at_log_in")
        # The database marks any new password saved outside its owner's own Password page as chosen by someone
        # else; what a request read of the user's password is asked again after a save.
        post_save.connect(accounts.password_saved, sender=settings.AUTH_USER_MODEL,
                          dispatch_uid="dedup_site.password_saved")
        # Every new or changed user name follows one rule, and its canonical form goes first (the database
        # refuses a user row without it).
        pre_save.connect(accounts.username_keyed, sender=settings.AUTH_USER_MODEL,
                         dispatch_uid="dedup_site.username_keyed")

        # Acts on accounts, groups and permissions made outside our services (the shell, Django's own commands)
        # are trailed too; our services trail their own (trail.own_entries).
        from dedup_site import trail_signals

        pre_save.connect(trail_signals.user_before_save, sender=settings.AUTH_USER_MODEL,
                         dispatch_uid="dedup_site.trail_user_before_save")
        post_save.connect(trail_signals.user_saved, sender=settings.AUTH_USER_MODEL,
                          dispatch_uid="dedup_site.trail_user_saved")
        for through in trail_signals.senders():
            m2m_changed.connect(trail_signals.holdings_changed, sender=through,
                                dispatch_uid=f"dedup_site.trail_{through._meta.db_table}")

        connection_created.connect(guards.register_writer_function, dispatch_uid="dedup_site.writer_function")
        post_migrate.connect(ensure_roles, sender=self, dispatch_uid="dedup_site.ensure_roles")
        # A table SQLite rebuilt to alter it lost its triggers: every migrate puts the guards back.
        post_migrate.connect(_guards_after_migrate, sender=self, dispatch_uid="dedup_site.guards")
