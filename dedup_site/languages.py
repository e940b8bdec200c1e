"""The interface language: the browser's (LocaleMiddleware) until a user picks one; the pick is kept on the
user and brought back at every log-in, through the session so that no page pays a query for it."""

from __future__ import annotations

from django.conf import settings
from django.utils import translation
from django.views.i18n import set_language

from dedup_site.models import LanguagePreference

SESSION_KEY = "dedup_language"


def preference_set(*, user, language: str) -> None:
    if language not in dict(settings.LANGUAGES):
        raise ValueError(f"language: {language!r} is not one of {', '.join(dict(settings.LANGUAGES))}")
    LanguagePreference.objects.update_or_create(user=user, defaults={"language": language})


def preference_of(user) -> str:
    return LanguagePreference.objects.filter(user=user).values_list("language", flat=True).first() or ""


def logged_in(sender, request, user, **kwargs) -> None:
    """user_logged_in: the user's own choice, if any, for this session."""
    language = preference_of(user)
    if language:
        request.session[SESSION_KEY] = language


def user_language(get_response):
    """Middleware after authentication: a logged-in user's chosen language wins over the browser's."""

    def middleware(request):
        language = request.session.get(SESSION_KEY, "") if hasattr(request, "session") else ""
        if language and language in dict(settings.LANGUAGES):
            translation.activate(language)
            request.LANGUAGE_CODE = language
        return get_response(request)

    return middleware


def language_switch(request):
    """Django's set_language (the cookie, the safe redirect), and for a logged-in user their preference too."""
    language = request.POST.get("language", "")
    if request.method == "POST" and request.user.is_authenticated and language in dict(settings.LANGUAGES):
        preference_set(user=request.user, language=language)
        request.session[SESSION_KEY] = language
    return set_language(request)
