"""The REST API's JSON parser (in its own module: DRF's settings import it while dedup_site.api is loading)."""

from __future__ import annotations

from rest_framework import exceptions
from rest_framework.parsers import JSONParser


def _nul_at(value, where: str = "") -> str | None:
    """Where a NUL character is in a parsed JSON body (None if nowhere): PostgreSQL stores none."""
    if isinstance(value, str):
        return (where or "body") if "\x00" in value else None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for name, item in items:
        if isinstance(name, str) and "\x00" in name:
            return (where or "body").replace("\x00", "")
        if found := _nul_at(item, f"{where}.{name}" if where else str(name)):
            return found
    return None


class ObjectJSONParser(JSONParser):
    """A JSON body must be an object (its keys are the fields): anything else, or text holding a NUL
    character, is a 400 naming what is wrong, never a server error."""

    def parse(self, stream, media_type=None, parser_context=None):
        data = super().parse(stream, media_type, parser_context)
        if not isinstance(data, dict):
            raise exceptions.ValidationError({"non_field_errors": ["the body must be a JSON object of fields"]})
        if where := _nul_at(data):
            raise exceptions.ValidationError({where.split(".")[0]: ["contains a NUL character"]})
        return data
