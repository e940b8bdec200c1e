"""What every endpoint of the REST API shares (the endpoints live with the services they call, review.api):
bearer tokens, throttling per token, JSON errors that name the field and the rule, Idempotency-Key, and the
web forms as the API's request schema (one set of rules for both)."""

from __future__ import annotations

import hashlib
import json
import time
from datetime import timedelta
from functools import wraps

from django import forms
from django.db import IntegrityError, transaction
from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from rest_framework import exceptions, fields, permissions, serializers, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from dedup_site.api_auth import BearerTokenAuthentication
from dedup_site.api_renderers import JSONRenderer
from dedup_site.http import MAX_ID, request_limit_rule
from dedup_site.models import IdempotentResponse

# --- the token scheme in the schema, permissions ----------------------------------------------------------


class BearerScheme(OpenApiAuthenticationExtension):
    target_class = BearerTokenAuthentication
    name = "bearerToken"

    def get_security_definition(self, _auto_schema):
        return {"type": "http", "scheme": "bearer",
                "description": "A personal API token: your account page's API tokens, or "
                               "`manage.py api_token create USERNAME`."}


class Schema(AutoSchema):
    """Operations named after their view functions (and the method, where a path has several)."""

    def get_operation_id(self):
        name = type(self.view).__name__
        methods = [m for m in getattr(self.view, "http_method_names", []) if m not in ("options", "head")]
        return f"{name}_{self.method.lower()}" if len(methods) > 1 else name


def role(perm: str) -> type[permissions.BasePermission]:
    """A permission class for one of dedup_site.roles' permissions: 403 naming it for a user without it."""

    class HasRole(permissions.BasePermission):
        message = f"this needs the permission {perm} (see the README's Roles)"

        def has_permission(self, request, view):
            return bool(request.user and request.user.is_authenticated and request.user.has_perm(perm))

    HasRole.__name__ = f"HasRole_{perm.replace('.', '_')}"
    return HasRole


# --- errors ----------------------------------------------------------------------------------------------


class Conflict(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "the request conflicts with the record"
    default_code = "conflict"


class Unavailable(exceptions.APIException):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_detail = "the job queue is not reachable; try again when it is back"
    default_code = "unavailable"


def exception_handler(exc, context):
    """Every error as {"detail": "...", "errors": {field: [rule, ...]}} (errors only for a 400 that names
    fields), so a pipeline reads one shape. A body Django refuses to read (too large, too many fields) is a 400
    naming the limit, as any other rule (Django's own answer would be an HTML page)."""
    if rule := request_limit_rule(exc):
        exc = exceptions.ValidationError({"non_field_errors": [rule]})
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    request = context.get("request")
    if request is not None and getattr(request, "accepted_renderer", None) is not None and not isinstance(
            request.accepted_renderer, JSONRenderer):
        request.accepted_renderer, request.accepted_media_type = JSONRenderer(), JSONRenderer.media_type  # errors: JSON
    data = response.data
    if isinstance(exc, exceptions.ValidationError):
        if isinstance(data, dict):
            errors = {name: [str(m) for m in (msgs if isinstance(msgs, list) else [msgs])] for name, msgs in
                      data.items()}
            first = next(iter(errors.items()), ("", [""]))
            response.data = {"detail": f"{first[0]}: {first[1][0]}" if first[0] != "non_field_errors"
                             else first[1][0], "errors": errors}
        else:
            response.data = {"detail": " ".join(str(m) for m in data), "errors": {}}
    elif not (isinstance(data, dict) and set(data) == {"detail"}):
        response.data = {"detail": str(data)}
    return response


def id_in(data, name: str) -> int:
    """A positive whole-number id from a body (a JSON number or its digits as text), else a 400 naming the
    field. true and false are not ids, although Python counts them as 1 and 0."""
    value = data.get(name) if hasattr(data, "get") else None
    if isinstance(value, str) and value.isascii() and value.isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_ID:
        raise exceptions.ValidationError({name: ["must be an id: a positive whole number (not true or false)"]})
    return value


def form_input(form_class: type[forms.Form], data, **form_kwargs) -> forms.Form:
    """The form bound to an API body: a field the body leaves out takes the form's initial value where it has
    one (a JSON body that omits `exact` means the default, where an unticked box means False)."""
    given = {k: data.getlist(k) if hasattr(data, "getlist") and len(data.getlist(k)) > 1 else data[k]
             for k in data.keys()}
    fields_ = form_class.base_fields
    for name, field in fields_.items():
        if name not in given and field.initial is not None and not isinstance(field, forms.FileField):
            given[name] = field.initial
    return form_class(given, **form_kwargs)


def checked(form: forms.Form) -> dict:
    """The form's cleaned data, or a 400 naming each field and the rule it broke (the web's own form). A JSON
    true or false is taken by a yes-no field only: Python counts them as 1 and 0, and as text they are
    "True" and "False"."""
    booleans = {name: [f"must not be {str(value).lower()}: true and false are for yes-no fields only"]
                for name, value in form.data.items() if isinstance(value, bool) and name in form.fields and
                not isinstance(form.fields[name], forms.BooleanField)}
    if booleans:
        raise exceptions.ValidationError(booleans)
    if not form.is_valid():
        raise exceptions.ValidationError({("non_field_errors" if name == "__all__" else name): list(errors)
                                          for name, errors in form.errors.items()})
    return form.cleaned_data


# --- the web forms as request schemas -----------------------------------------------------------------------

_FIELDS = [(forms.BooleanField, fields.BooleanField), (forms.IntegerField, fields.IntegerField),
           (forms.FloatField, fields.FloatField), (forms.DateField, fields.DateField),
           (forms.FileField, fields.FileField), (forms.ChoiceField, fields.ChoiceField),
           (forms.CharField, fields.CharField)]


def form_serializer(form_class: type[forms.Form], name: str, *, exclude=(), **form_kwargs) -> type:
    """A serializer that documents the form's fields (the form still does the checking): the API's request
    shapes come from the forms the pages use, so they cannot drift apart."""
    form = form_class(**form_kwargs)
    declared = {}
    for field_name, field in form.fields.items():
        if field_name in exclude:
            continue
        kind = next(drf for django_kind, drf in _FIELDS if isinstance(field, django_kind))
        options = {"required": field.required, "help_text": str(field.help_text or field.label or "") or None}
        if kind is fields.ChoiceField:
            options["choices"] = [value for value, _ in field.choices if value != ""]
            options["allow_blank"] = not field.required
        elif kind in (fields.IntegerField, fields.FloatField):
            options.update({k: getattr(field, k) for k in ("min_value", "max_value")
                            if getattr(field, k, None) is not None})
        elif kind is fields.CharField:
            options.update(allow_blank=not field.required, max_length=field.max_length)
        if field.initial is not None and not field.required and kind is not fields.FileField:
            options["default"] = field.initial
        declared[field_name] = kind(**options)
    return type(name, (serializers.Serializer,), declared)


# --- Idempotency-Key ---------------------------------------------------------------------------------------

IDEMPOTENCY_HEADER = "Idempotency-Key"


def _fingerprint(request) -> str:
    """What the request asks for: method, path and body (an uploaded file by its bytes' digest)."""
    digest = hashlib.sha256(f"{request.method} {request.path}\n".encode())
    items = []
    for name in sorted(request.data.keys()) if hasattr(request.data, "keys") else []:
        values = request.data.getlist(name) if hasattr(request.data, "getlist") else [request.data[name]]
        for value in values:
            if hasattr(value, "chunks"):
                file_digest = hashlib.sha256()
                for chunk in value.chunks():
                    file_digest.update(chunk)
                value.seek(0)
                value = f"file:{value.name}:{file_digest.hexdigest()}"
            items.append([name, value])
    digest.update(json.dumps(items, sort_keys=True, default=str).encode())
    return digest.hexdigest()


PENDING = 0  # a claimed key whose first request is still running
WAIT_SECONDS = 30  # how long a request with a claimed key waits for the first one's answer
ABANDONED_SECONDS = 600  # a claim older than this with no answer is a crashed request's: taken over


def _claim(user, key: str, fingerprint: str) -> IdempotentResponse | None:
    """Claim the key for this request (None), or the earlier request's row. The claim is committed at once,
    so a second request with the key (in another process, at the same moment) sees it: the key's unique
    constraint lets only one claim exist."""
    try:
        with transaction.atomic():
            IdempotentResponse.objects.create(user=user, key=key, request_sha256=fingerprint, status=PENDING,
                                              body={})
        return None
    except IntegrityError:
        return IdempotentResponse.objects.filter(user=user, key=key).first()


def _answer_of(user, key: str, fingerprint: str) -> IdempotentResponse | None:
    """Claim the key (None), or wait for the first request with it to answer and return its row."""
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        earlier = _claim(user, key, fingerprint)
        if earlier is None:
            return None
        if earlier.request_sha256 != fingerprint or earlier.status != PENDING:
            return earlier
        if earlier.created_at < timezone.now() - timedelta(seconds=ABANDONED_SECONDS):
            IdempotentResponse.objects.filter(pk=earlier.pk, status=PENDING).delete()
            continue
        if time.monotonic() > deadline:
            raise Conflict(f"a request with {IDEMPOTENCY_HEADER} {key!r} is still running; try again later")
        time.sleep(0.05)


def idempotent(method):
    """A creating endpoint honours `Idempotency-Key`: the same key and body return the first (successful)
    response and create nothing; the same key with another body is a 409. Two requests with one key at the
    same moment: the first claims the key (a row under a unique constraint), the second waits for its answer
    (or, if the first was refused, runs itself)."""

    @wraps(method)
    def wrapped(request, *args, **kwargs):
        key = request.headers.get(IDEMPOTENCY_HEADER, "")
        if not key:
            return method(request, *args, **kwargs)
        if len(key) > 200:
            raise exceptions.ValidationError({IDEMPOTENCY_HEADER: ["at most 200 characters"]})
        fingerprint = _fingerprint(request)
        earlier = _answer_of(request.user, key, fingerprint)
        if earlier is None:
            claim = IdempotentResponse.objects.filter(user=request.user, key=key, status=PENDING)
            try:
                response = method(request, *args, **kwargs)
            except BaseException:
                claim.delete()  # a refusal is not kept: the same key may try again
                raise
            if not 200 <= response.status_code < 300:
                claim.delete()
                return response
            claim.update(status=response.status_code, body=response.data)
            return response
        if earlier.request_sha256 != fingerprint:
            raise Conflict(f"{IDEMPOTENCY_HEADER} {key!r} was used for another request; use a new key")
        replay = Response(earlier.body, status=earlier.status)
        replay["Idempotent-Replayed"] = "true"
        return replay

    return wrapped
