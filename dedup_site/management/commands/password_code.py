"""Issue a one-time code with which an account's owner replaces a password someone else chose (the server's
own channel, for a team with one admin or when the admin who chose it is the only one)."""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from dedup_site import accounts
from dedup_site.trail import command_line


class Command(BaseCommand):
    help = "Print a one-time code with which USERNAME replaces a password someone else chose (last line)."

    def add_arguments(self, parser):
        parser.add_argument("username")

    def handle(self, *args, username, **options):
        user = accounts.user_named(username)  # as user names are told apart: up to case, width, composition
        if user is None:
            raise CommandError(f"no account named {username!r}")
        try:
            with command_line("password_code"):
                code = accounts.password_code_issue(actor=None, user=user)
        except accounts.AccountRefused as error:
            raise CommandError(str(error)) from None
        self.stderr.write(f"Hand this code to {user.get_username()} yourself; it is good once, for "
                          f"{settings.DEDUP_PASSWORD_CODE_HOURS} hours:")
        self.stdout.write(code)
