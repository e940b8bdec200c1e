"""Django's changepassword; the password it sets is trailed as this command's act (and marked as chosen by
someone else, as any password not set on its owner's own Password page)."""

from django.contrib.auth.management.commands import changepassword

from dedup_site.trail import command_line


class Command(changepassword.Command):
    def handle(self, *args, **options):
        with command_line("changepassword"):
            return super().handle(*args, **options)
