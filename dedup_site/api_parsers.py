"""The REST API's JSON parser (in its own module: DRF's settings import it while dedup_site.api is loading)."""

from __future__ import annotations

from rest_framework import exceptions
from rest_framework.parsers import JSONParser

from dedup_site import storable

# No request of this API nests more than three levels; 32 leaves room and keeps every walk of a body short.
MAX_DEPTH = 32
DEPTH_RULE = f"nests deeper than {MAX_DEPTH} levels (objects and arrays inside one another)"


def refusal(value) -> tuple[str, str] | None:
    """The first place in a parsed JSON body (a dotted path; "body" for the body's own keys) whose text cannot
    be stored (a NUL character, a lone surrogate) or that nests too deep, and the rule; None if all is well.
    A walk with a stack, not recursion: the body's depth is what is being checked."""
    stack = [(value, "", 0)]
    while stack:
        item, where, depth = stack.pop()
        if isinstance(item, str):
            if rule := storable.problem(item):
                return where or "body", rule
            continue
        if not isinstance(item, (dict, list)):
            continue
        if depth >= MAX_DEPTH:
            return where or "body", DEPTH_RULE
        children = list(item.items() if isinstance(item, dict) else enumerate(item))
        for name, _child in children:
            if isinstance(name, str) and (rule := storable.problem(name)):  # a key: named by where it is
                return where or "body", rule
        # Reversed onto the stack, so the first field in the body is the first one named.
        stack.extend((child, f"{where}.{name}" if where else str(name), depth + 1)
                     for name, child in reversed(children))
    return None


class ObjectJSONParser(JSONParser):
    """A JSON body must be an object (its keys are the fields): anything else, text that cannot be stored (a
    NUL character, a lone surrogate) or nesting deeper than MAX_DEPTH is a 400 naming the field and the rule,
    never a server error."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:  # the json module's own limit, far below a body that is too large
            raise exceptions.ValidationError({"non_field_errors": [f"the body {DEPTH_RULE}"]}) from None
        if not isinstance(data, dict):
            raise exceptions.ValidationError({"non_field_errors": ["the body must be a JSON object of fields"]})
        if found := refusal(data):
            where, rule = found
            raise exceptions.ValidationError({where.split(".")[0]: [rule]})
        return data
