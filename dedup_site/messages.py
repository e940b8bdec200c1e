"""Small helpers for user-facing messages."""

from __future__ import annotations

from django.contrib import messages


def form_errors(request, form, prefix: str = "") -> None:
    """Every error of an invalid form as a message naming its field."""
    for name, errors in form.errors.items():
        field = "" if name == "__all__" else f"{name}: "
        messages.error(request, f"{prefix}{field}{' '.join(errors)}")
