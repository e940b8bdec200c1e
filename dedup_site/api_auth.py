"""The API's authentication and throttling, apart from dedup_site.api: DRF imports the classes its settings name
while it loads its own views, so this module imports nothing that imports those."""

from __future__ import annotations

import logging
import time

import redis
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.throttling import BaseThrottle

from dedup_site import redis_direct, tokens

logger = logging.getLogger(__name__)


class BearerTokenAuthentication(BaseAuthentication):
    """`Authorization: Bearer <token>`: a personal token (dedup_site.tokens), acting as its user."""

    keyword = "Bearer"

    def authenticate(self, request):
        header = get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("write the header as: Authorization: Bearer <token>")
        try:
            text = header[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("a token is plain ASCII") from None
        user = tokens.token_user(text)
        if user is None:
            raise exceptions.AuthenticationFailed("the token is unknown, expired or revoked")
        return user, user.api_token

    def authenticate_header(self, request):
        return self.keyword  # so a missing or bad token is a 401 with WWW-Authenticate, not a 403


RATE_PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}  # N/second, N/minute, N/hour, N/day (DRF's words)
REDIS_AWAY_SECONDS = 5.0


def parse_rate(rate: str) -> tuple[int, int]:
    """DEDUP_API_RATE ("100/second") as (requests, seconds)."""
    count, _, period = rate.partition("/")
    if not (count.strip().isdigit() and period.strip()[:1] in RATE_PERIODS):
        raise ImproperlyConfigured(f"DEDUP_API_RATE={rate!r}: write N/second, N/minute, N/hour or N/day")
    return int(count), RATE_PERIODS[period.strip()[0]]


class TokenRateThrottle(BaseThrottle):
    """DEDUP_API_RATE requests per token (e.g. 100/second) in any window of that length; past it a 429 with
    Retry-After, the seconds until the oldest counted request leaves the window. The counts live in Redis,
    which every web process (and machine) shares, not in a process's memory: N processes would otherwise
    admit N times the rate.

    When Redis does not answer, requests go through (with a warning in the log, and Redis left alone for
    REDIS_AWAY_SECONDS): the limit guards the server's capacity against a runaway client, it is no lock
    (tokens authenticate, log-in failures are counted in the database), and failing closed would turn a
    Redis restart into an outage of the whole API, judgements included, which need no Redis."""

    _away_until = 0.0  # this process's: when to ask Redis again after it failed to answer

    def allow_request(self, request, view):
        self.waited = None
        token = getattr(request.user, "api_token", None)
        rate = settings.DEDUP_API_RATE  # read per request: the setting may change (tests do)
        if not rate or token is None:
            return True
        limit, seconds = parse_rate(rate)
        if time.monotonic() < TokenRateThrottle._away_until:
            return True
        try:
            self.waited = redis_direct.rate_take(f"dedup:api-rate:{token.key}", limit=limit, seconds=seconds)
        except (redis.RedisError, OSError, RuntimeError) as error:
            TokenRateThrottle._away_until = time.monotonic() + REDIS_AWAY_SECONDS
            logger.warning("API rate not counted for %s s: Redis does not answer (%s)", REDIS_AWAY_SECONDS, error)
            return True
        return self.waited == 0

    def wait(self):
        return self.waited
