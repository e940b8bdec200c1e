"""Personal API tokens from the server's shell: create (the token on the last line), list, revoke. A token made
here is the command line's, not its owner's: its owner is told at their next log-in, and the records it makes
are set apart when they sign (dedup_site.tokens)."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from dedup_site import tokens
from dedup_site.models import ApiToken
from dedup_site.trail import command_line


def _user(username: str):
    user = get_user_model().objects.filter(username__iexact=username).first()
    if user is None:
        raise CommandError(f"no account named {username!r}")
    return user


class Command(BaseCommand):
    help = ("API tokens: create USERNAME [--name N] [--days D] (prints the token on its last line), "
            "list [USERNAME], revoke ID.")

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="a new token for USERNAME, printed once")
        create.add_argument("username")
        create.add_argument("--name", default="command line")
        create.add_argument("--days", type=int, default=None, help="good for this many days (0: no expiry)")
        listing = sub.add_parser("list", help="every token (of USERNAME), never its text")
        listing.add_argument("username", nargs="?")
        revoke = sub.add_parser("revoke", help="revoke the token with this id")
        revoke.add_argument("id", type=int)

    def handle(self, *args, action, **options):
        with command_line(f"api_token {action}"):
            self._handle(action, options)

    def _handle(self, action, options):
        if action == "create":
            user = _user(options["username"])
            try:
                token, text = tokens.token_create(user=user, name=options["name"], actor=None, days=options["days"])
            except tokens.TokenRefused as error:
                raise CommandError(str(error)) from None
            until = f"until {token.expires_at:%Y-%m-%d %H:%M} UTC" if token.expires_at else "without expiry"
            self.stderr.write(f"Token {token.pk} ({token.name}) for {user.get_username()}, good {until}; it is "
                              f"shown only now. It is marked as made on the server's command line: "
                              f"{user.get_username()} is told of it at their next log-in, and the records it makes "
                              f"are set apart when they sign.")
            self.stdout.write(text)
        elif action == "list":
            rows = ApiToken.objects.select_related("user", "created_by").order_by("user__username", "-created_at")
            if options["username"]:
                rows = rows.filter(user=_user(options["username"]))
            for t in rows:
                state = "revoked" if t.revoked_at else "active" if tokens.is_current(t) else "expired"
                maker = t.created_by.get_username() if t.created_by else "command line"
                self.stdout.write("\t".join([str(t.pk), t.user.get_username(), t.name, state,
                                             f"created {t.created_at:%Y-%m-%d} by {maker}",
                                             f"expires {t.expires_at:%Y-%m-%d}" if t.expires_at else "no expiry",
                                             f"last used {t.last_used_at:%Y-%m-%d %H:%M}" if t.last_used_at
                                             else "never used"]))
        else:
            token = ApiToken.objects.filter(pk=options["id"]).first()
            if token is None:
                raise CommandError(f"no token {options['id']}")
            tokens.token_revoke(actor=None, token=token)
            self.stdout.write(f"Revoked token {token.pk} ({token.name}).")
