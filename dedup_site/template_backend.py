"""Django's template backend, with every page it renders made encodable (TEMPLATES' first backend)."""

from __future__ import annotations

import logging

from django.template.backends.django import DjangoTemplates, Template

from dedup_site import storable

logger = logging.getLogger(__name__)


class ShownTemplate(Template):
    def render(self, context=None, request=None):
        text = super().render(context, request)
        shown = storable.shown(text)
        if shown is not text:
            # A lone surrogate kept in a row (a JSON column on SQLite) from before the forms and the API refused
            # one: the page shows it escaped, as \ud800, instead of failing for everyone who opens it.
            logger.warning("%s: a value that is not valid UTF-8 text was shown escaped",
                           getattr(request, "path", "") or self.origin.name)
        return shown


class ShownTemplates(DjangoTemplates):
    """No stored value can make a page fail to render: text that is not valid UTF-8 (which the response could
    not encode) is written escaped (storable.shown). The Jinja2 partials come out inside these pages."""

    def from_string(self, template_code):
        return ShownTemplate(super().from_string(template_code).template, self)

    def get_template(self, template_name):
        return ShownTemplate(super().get_template(template_name).template, self)
