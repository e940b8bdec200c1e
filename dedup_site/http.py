"""Reading what a user can edit in a request: a `next` address that never leaves the site, query
parameters that are used when valid and otherwise ignored with a message (never a server error), and text
that no column could store refused before any view sees it."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.contrib import messages
from django.shortcuts import resolve_url
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext

from dedup_site import storable

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


def request_limit_rule(error: Exception) -> str | None:
    """The rule a request broke when Django refused to read its body (too large, too many fields or files);
    None for any other error."""
    from django.conf import settings
    from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent

    if isinstance(error, RequestDataTooBig):
        return (f"the body (without its files) is larger than the {settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,}-byte "
                f"limit (DATA_UPLOAD_MAX_MEMORY_SIZE); send a file as multipart/form-data")
    if isinstance(error, TooManyFieldsSent):
        return (f"the body has more than {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS:,} fields "
                f"(DATA_UPLOAD_MAX_NUMBER_FIELDS)")
    if isinstance(error, TooManyFilesSent):
        return f"the body has more than {settings.DATA_UPLOAD_MAX_NUMBER_FILES:,} files (DATA_UPLOAD_MAX_NUMBER_FILES)"
    return None


def _page_rule(text: str) -> str:
    """storable.problem's rule, in the interface's language (for a page's 400)."""
    if "\x00" in text:
        return gettext("contains a NUL character")
    code = f"U+{ord(storable.SURROGATE.search(text).group()):04X}"
    return gettext("is not valid UTF-8 text (it holds a lone surrogate, {code})").format(code=code)


def refuse_unstorable_text(get_response):
    """Middleware: text no column can store (dedup_site.storable: a NUL character, or a lone surrogate, which a
    multipart form declared as UTF-7 decodes to) in the address or a query or form parameter is answered 400,
    naming the parameter and the rule (Django drops both from an uploaded file's name). No form needs either,
    and a row holding one could not be saved, or, kept in a JSON column, shown. Under /api/ the answer is the
    API's JSON error, as it is for a body Django refuses to read (too large, too many fields)."""
    from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
    from django.http import HttpResponseBadRequest, JsonResponse
    from django.http.multipartparser import MultiPartParserError

    def refuse(request, name: str, text: str):
        name = storable.shown(name.replace("\x00", ""))
        if request.path.startswith(API_PREFIX):  # the API's errors are JSON naming the field
            rule = storable.problem(text)
            return JsonResponse({"detail": f"{name}: {rule}", "errors": {name: [rule]}}, status=400)
        rule = _page_rule(text)
        if name == "path":
            message = gettext("Refused: the address {rule}.").format(rule=rule)
        else:
            message = gettext("Refused: the parameter {name} {rule}.").format(name=repr(name), rule=rule)
        return HttpResponseBadRequest(message, content_type="text/plain; charset=utf-8")

    def middleware(request):
        if storable.problem(request.path):
            return refuse(request, "path", request.path)
        try:
            sources = (request.GET, request.POST) if request.method == "POST" else (request.GET,)
        except MultiPartParserError as error:  # a multipart body that is not one (no boundary...)
            if request.path.startswith(API_PREFIX):
                return JsonResponse({"detail": f"the body is not multipart/form-data: {error}", "errors": {}},
                                    status=400)
            raise
        except (RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent) as error:
            if not request.path.startswith(API_PREFIX):
                raise  # a page: Django's own 400
            rule = request_limit_rule(error)
            return JsonResponse({"detail": rule, "errors": {"non_field_errors": [rule]}}, status=400)
        for source in sources:
            for name, values in source.lists():
                for text in (name, *values):
                    if storable.problem(text):
                        return refuse(request, name, text)
        return get_response(request)

    return middleware
