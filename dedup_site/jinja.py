"""The hot partials (a queue's rows, the verdict bar, the pair panes) through Jinja2, autoescaped: Django's
template engine costs far more a variable, which on these loops was much of a page's CPU
(bench/HISTORY.md). Django's pages include a partial by a template tag; the partial comes back as
Jinja2's own template module, whose __html__ tells Django's autoescape that Jinja2 already escaped it."""

from __future__ import annotations

from django.template import engines
from django.template.defaultfilters import floatformat
from django.utils import translation
from jinja2 import Environment, pass_context
from jinja2.environment import TemplateModule

from dedup_site.templatetags.dates import bdi, collected, digits, layout, shown_date


def environment(**options) -> Environment:
    """TEMPLATES' Jinja2 backend, with the filters the partials use; autoescape on whatever the options say."""
    options.pop("autoescape", None)
    extensions = [*options.pop("extensions", ()), "jinja2.ext.i18n"]
    env = Environment(autoescape=True, extensions=extensions, **options)
    # {% trans %} and _() through Django's catalogs (the active language); tests/test_i18n.py extracts the
    # partials' messages itself, since makemessages does not read Jinja2.
    env.install_gettext_callables(translation.gettext, translation.ngettext, newstyle=True)
    env.filters.update({name: _per_request(f) for name, f in (
        ("floatformat", floatformat), ("when", shown_date), ("digits", digits), ("layout", layout),
        ("collected", collected))})
    env.filters["bdi"] = bdi
    return env


def _per_request(function):
    """A filter whose answer depends on the request's language. Jinja2 works a filter on a constant out once,
    when it compiles the template (`"n"|layout`, `3|digits`), in whichever language that first request had; a
    filter that takes the context is never worked out ahead."""

    @pass_context
    def filtered(_context, value, *args):
        return function(value, *args)

    return filtered


def partial(name: str, **context) -> TemplateModule:
    """The Jinja2 template `name` rendered with `context`, ready for a Django template tag to return."""
    return engines["jinja2"].env.get_template(name).make_module(context)
