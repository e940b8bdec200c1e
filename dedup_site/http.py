"""Reading what a user can edit in a request: a `next` address that never leaves the site, and query
parameters that are used when valid and otherwise ignored with a message (never a server error)."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.contrib import messages
from django.shortcuts import resolve_url
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext

MAX_ID = 2**63 - 1  # the largest primary key a database holds; larger numbers are not ids


def safe_next(request, default: str, *args) -> str:
    """The `next` address from POST or GET when it is a path on this site, else `default` (a URL name).
    Only absolute paths are followed: anything else could be read as a URL name or a scheme."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target.startswith("/") and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                                  require_https=request.is_secure()):
        return target
    return resolve_url(default, *args)


def came_from(request) -> str | None:
    """Where a form was sent from, to go back to: its `next` field, else the Referer, when either is a page of
    this site (the path and query alone); None otherwise."""
    for target in (request.POST.get("next") or request.GET.get("next") or "", request.META.get("HTTP_REFERER", "")):
        if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                                      require_https=request.is_secure()):
            parts = urlsplit(target)
            if parts.path.startswith("/") and parts.path != request.path:
                return parts.path + (f"?{parts.query}" if parts.query else "")
    return None


def id_param(request, name: str) -> int | None:
    """A positive id from the query string; anything else is ignored, with a message naming it."""
    text = request.GET.get(name, "").strip()
    if not text:
        return None
    if text.isascii() and text.isdigit() and 0 < int(text) <= MAX_ID:
        return int(text)
    messages.warning(request, gettext("Ignored {name}={value}: it must be a positive whole number.").format(
        name=name, value=repr(text[:40])))
    return None


API_PREFIX = "/api/"


def refuse_nul_parameters(get_response):
    """Middleware: a NUL character in the address or in a query or form parameter is answered 400 (naming the
    parameter).
    No text the product stores or searches may hold one (PostgreSQL refuses it), and no form needs it."""
    from django.http import HttpResponseBadRequest, JsonResponse
    from django.http.multipartparser import MultiPartParserError

    def refuse(request, text: str, name: str):
        if request.path.startswith(API_PREFIX):  # the API's errors are JSON naming the field
            return JsonResponse({"detail": text, "errors": {name: ["contains a NUL character"]}}, status=400)
        return HttpResponseBadRequest(text, content_type="text/plain; charset=utf-8")

    def middleware(request):
        if "\x00" in request.path:
            return refuse(request, "Refused: the address contains a NUL character.", "path")
        try:
            sources = (request.GET, request.POST) if request.method == "POST" else (request.GET,)
        except MultiPartParserError as error:  # a multipart body that is not one (no boundary...)
            if request.path.startswith(API_PREFIX):
                return JsonResponse({"detail": f"the body is not multipart/form-data: {error}", "errors": {}},
                                    status=400)
            raise
        for source in sources:
            for name, values in source.lists():
                if "\x00" in name or any("\x00" in value for value in values):
                    clean = name.replace(chr(0), "")
                    return refuse(request, f"Refused: the parameter {clean!r} contains a NUL character.", clean)
        return get_response(request)

    return middleware
