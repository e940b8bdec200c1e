"""Personal API tokens: created (shown once), listed, revoked, and checked for each API request.

A token is `<key>.<secret>` with 128 bits of randomness in the secret: the key finds its row, and the SHA-256
of the whole token (enough for a random secret; a slow hash would guard nothing here) is compared with
hmac.compare_digest, so the time taken says nothing about how much of a guess was right."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext

from dedup_site import accounts
from dedup_site.auth import chosen_by_other, keep_read, names_of
from dedup_site.models import ApiToken
from dedup_site.prepared import Prepared

PREFIX = "dr"
MAX_DAYS = 3650
LAST_USED_EVERY = timedelta(minutes=1)  # a request writes last_used_at at most this often: not a write a call


# The read every API request makes, compiled once (dedup_site.prepared): a key finds one row or none, with its
# user, what they may do and whether their password is their own (as the session's read of a user has them,
# dedup_site.auth: no second query for a role, none for a judgement's check).
_TOKEN = Prepared(lambda key, now: ApiToken.objects.filter(key=key, revoked_at__isnull=True, user__is_active=True)
                  .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now)).select_related("user")
                  .annotate(own=names_of("user", "user"), grouped=names_of("group__user", "user"),
                            foreign=chosen_by_other("user")).order_by("pk")[:1],
                  kinds="sd")


class TokenRefused(Exception):
    """A token that cannot be made or revoked as asked; the message says why."""


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def token_create(*, user, name: str, days: int | None = None) -> tuple[ApiToken, str]:
    """A new token for the user, and its text, which is never stored nor shown again. `days`: how long it is
    good for (DEDUP_API_TOKEN_DAYS when not given; 0 for no expiry)."""
    name = (name or "").strip()
    if not name:
        raise TokenRefused("a token needs a name (what uses it, e.g. nightly-dedup)")
    if len(name) > 100:
        raise TokenRefused(f"a token's name is at most 100 characters ({len(name)} given)")
    days = settings.DEDUP_API_TOKEN_DAYS if days is None else days
    if not 0 <= days <= MAX_DAYS:
        raise TokenRefused(f"a token is good for 0 (no expiry) to {MAX_DAYS} days, not {days}")
    if not user.is_active:
        raise TokenRefused(f"{user.get_username()} is deactivated")
    if accounts.chosen_by_other(user) is not None:  # a token made now could be its chooser's, and would
        # outlive the owner's own new password
        raise TokenRefused(gettext("your password was chosen by someone else: set your own (Password, at the top "
                                   "of the page) before you make a token, so that only you hold one"))
    key = secrets.token_hex(8)
    text = f"{PREFIX}_{key}.{secrets.token_urlsafe(24)}"
    token = ApiToken.objects.create(user=user, name=name, key=key, digest=_digest(text),
                                    expires_at=timezone.now() + timedelta(days=days) if days else None)
    return token, text


def tokens_of(user):
    return ApiToken.objects.filter(user=user)


def token_revoke(*, actor, token: ApiToken) -> ApiToken:
    """Revoke a token: its owner's own, or anyone's for a superuser (the server's command acts as one)."""
    if actor is not None and actor.pk != token.user_id and not actor.is_superuser:
        raise TokenRefused("only its owner (or a superuser) revokes a token")
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=token.revoked_at)
    return token


def token_user(text: str):
    """The active user whose valid token this is (None otherwise), marking when it was last used."""
    key = text.removeprefix(f"{PREFIX}_").partition(".")[0] if text.startswith(f"{PREFIX}_") else ""
    if not key or len(key) > 16:
        return None
    now = timezone.now()
    token = _TOKEN.one(key, now)
    if token is None or not hmac.compare_digest(token.digest, _digest(text)):
        return None
    if token.last_used_at is None or token.last_used_at < now - LAST_USED_EVERY:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    keep_read(token.user, token.own, token.grouped, token.foreign)
    token.user.api_token = token
    return token.user


def is_current(token: ApiToken) -> bool:
    """Neither revoked nor expired."""
    return token.revoked_at is None and (token.expires_at is None or token.expires_at > timezone.now())
