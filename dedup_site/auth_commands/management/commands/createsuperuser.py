"""Django's createsuperuser; the account it makes is trailed as this command's act."""

from django.contrib.auth.management.commands import createsuperuser

from dedup_site.trail import command_line


class Command(createsuperuser.Command):
    def handle(self, *args, **options):
        with command_line("createsuperuser"):
            return super().handle(*args, **options)
