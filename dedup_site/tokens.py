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
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext

from dedup_site import accounts
from dedup_site.auth import FOREIGN_TOKENS, chosen_by_other, keep_read, names_of, not_own_tokens
from dedup_site.models import ApiToken
from dedup_site.prepared import Prepared
from dedup_site.trail import trail_record

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


def token_create(*, user, name: str, actor, days: int | None = None) -> tuple[ApiToken, str]:
    """A new token for the user, and its text, which is never stored nor shown again. `actor` made it: the user
    themselves (their tokens page), someone else, or None for the server's command line; a token its owner did
    not make is marked so (ApiToken.created_by), and its owner told. `days`: how long it is good for
    (DEDUP_API_TOKEN_DAYS when not given; 0 for no expiry)."""
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
    with transaction.atomic():
        token = ApiToken.objects.create(user=user, name=name, key=key, digest=_digest(text), created_by=actor,
                                        expires_at=timezone.now() + timedelta(days=days) if days else None)
        trail_record(actor=actor, action="token.create", target=user, after={
            "token": token.pk, "name": name, "expires_at": token.expires_at, "made_by_owner": not token.made_by_other})
    return token, text


def tokens_of(user):
    return ApiToken.objects.filter(user=user)


def token_revoke(*, actor, token: ApiToken) -> ApiToken:
    """Revoke a token: its owner's own, or anyone's for a superuser (the server's command acts as one)."""
    if actor is not None and actor.pk != token.user_id and not actor.is_superuser:
        raise TokenRefused("only its owner (or a superuser) revokes a token")
    if token.revoked_at is None:
        with transaction.atomic():
            now = timezone.now()
            if ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=now):
                trail_record(actor=actor, action="token.revoke", target=token.user, before={
                    "token": token.pk, "name": token.name, "revoked_at": None}, after={"revoked_at": now})
        token.revoked_at = now
    return token


def token_acknowledge(*, actor, token: ApiToken) -> ApiToken:
    """The owner says they know of a token someone else made for them (they asked for it): they are no longer
    told of it. Its records stay apart when they sign, for them to accept one by one."""
    if actor.pk != token.user_id:
        raise TokenRefused(gettext("only its owner acknowledges a token"))
    if token.acknowledged_at is None and token.made_by_other:
        with transaction.atomic():
            token.acknowledged_at = timezone.now()
            ApiToken.objects.filter(pk=token.pk).update(acknowledged_at=token.acknowledged_at)
            trail_record(actor=actor, action="token.acknowledge", target=actor, after={
                "token": token.pk, "name": token.name, "created_by": token.created_by.get_username()
                if token.created_by else None})
    return token


def made_by_others(users=None):
    """Tokens their owners did not make that are still good, for the Users page (of `users`, all without)."""
    rows = ApiToken.objects.filter(revoked_at__isnull=True).filter(
        Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now())).exclude(created_by=F("user"))
    return rows if users is None else rows.filter(user__in=users)


def told_of(user) -> bool:
    """Whether the user has a token someone else made that they have neither acknowledged nor revoked (the
    banner on every page): read with the user by the session (dedup_site.auth) when it could be."""
    known = getattr(user, FOREIGN_TOKENS, None)
    if known is not None:
        return known
    return ApiToken.objects.filter(not_own_tokens(user.pk)).exists()


def made_with(user) -> tuple[int | None, int | None]:
    """(token id, who made the token) for a record `user` makes now: the token this request authenticated
    with (dedup_site.api_auth), or (None, None) in a session."""
    token = getattr(user, "api_token", None)
    return (None, None) if token is None else (token.pk, token.created_by_id)


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
