"""The hot partials (a queue's rows, the verdict bar, the pair panes) through Jinja2, autoescaped: Django's
template engine costs far more a variable, which on these loops was much of a page's CPU
(bench/HISTORY.md). Django's pages include a partial by a template tag; the partial comes back as
Jinja2's own template module, whose __html__ tells Django's autoescape that Jinja2 already escaped it."""

from __future__ import annotations

from django.template import engines
from django.template.defaultfilters import floatformat
from django.utils import dateformat, timezone
from jinja2 import Environment
from jinja2.environment import TemplateModule


def environment(**options) -> Environment:
    """TEMPLATES' Jinja2 backend, with the filters the partials use; autoescape on whatever the options say."""
    options.pop("autoescape", None)
    env = Environment(autoescape=True, **options)
    env.filters.update(floatformat=floatformat, when=when)
    return env


def when(instant, fmt: str = "Y-m-d H:i") -> str:
    """As Django's |date filter writes an instant: in the current time zone."""
    return dateformat.format(timezone.localtime(instant) if timezone.is_aware(instant) else instant, fmt)


def partial(name: str, **context) -> TemplateModule:
    """The Jinja2 template `name` rendered with `context`, ready for a Django template tag to return."""
    return engines["jinja2"].env.get_template(name).make_module(context)
