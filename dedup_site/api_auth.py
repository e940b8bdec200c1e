"""The API's authentication and throttling, apart from dedup_site.api: DRF imports the classes its settings name
while it loads its own views, so this module imports nothing that imports those."""

from __future__ import annotations

from django.conf import settings
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.throttling import SimpleRateThrottle

from dedup_site import tokens


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


class TokenRateThrottle(SimpleRateThrottle):
    """DEDUP_API_RATE requests per token (e.g. 50/second); 429 with Retry-After past it."""

    scope = "token"

    def get_rate(self):
        return settings.DEDUP_API_RATE or None

    def allow_request(self, request, view):
        self.rate = self.get_rate()  # read per request: the setting may change (tests do)
        if self.rate is None:
            return True
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)

    def get_cache_key(self, request, view):
        token = getattr(request.user, "api_token", None)
        return None if token is None else f"throttle:token:{token.pk}"
