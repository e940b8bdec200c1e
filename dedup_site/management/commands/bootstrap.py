"""Create the roles and, on first start, an admin account; print how to log in."""

import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand

from dedup_site.accounts import password_owned
from dedup_site.private_files import create_private
from dedup_site.roles import ADMINS, ensure_roles
from dedup_site.settings import env
from dedup_site.trail import command_line, own_entries, trail_record


class Command(BaseCommand):
    help = "Create roles and the first admin account (password from DEDUP_ADMIN_PASSWORD or generated)."

    def handle(self, *args, **options):
        ensure_roles()
        User = get_user_model()
        username = env("DEDUP_ADMIN_USERNAME", "admin")
        password_file = settings.DATA_DIR / "admin-password.txt"
        if not User.objects.filter(is_superuser=True).exists():
            password = env("DEDUP_ADMIN_PASSWORD") or secrets.token_urlsafe(12)
            with own_entries(), command_line("bootstrap"):
                user = User.objects.create_superuser(username=username, email="", password=password)
                user.groups.add(Group.objects.get(name=ADMINS))
                password_owned(user=user)  # whoever starts the site is its first admin: the password is theirs
                trail_record(actor=None, action="user.create", target=user, after={
                    "role": "admin", "superuser": True, "active": True})
            if not env("DEDUP_ADMIN_PASSWORD"):
                password_file.unlink(missing_ok=True)  # left from an earlier database
                create_private(password_file, (password + "\n").encode())
            self.stdout.write(f"Created the admin account: user {username!r}, password {password}")
        elif password_file.exists():
            self.stdout.write(f"Log in as {username!r} with the password in {password_file}")
        else:
            self.stdout.write("Log in with your admin account.")
