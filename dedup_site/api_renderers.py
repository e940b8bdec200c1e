"""The REST API's JSON renderer (in its own module, as the parser: DRF's settings import it)."""

from __future__ import annotations

from rest_framework import renderers

from dedup_site import storable


class JSONRenderer(renderers.JSONRenderer):
    """DRF's, except that text which is not valid UTF-8 (a lone surrogate kept in a row from before the API
    refused it) is sent escaped (storable.shown) rather than failing the answer: the rest of the answer is
    still read. Looked at only when encoding fails, so an ordinary answer costs nothing more."""

    def render(self, data, accepted_media_type=None, renderer_context=None):
        try:
            return super().render(data, accepted_media_type, renderer_context)
        except UnicodeEncodeError:
            return super().render(storable.shown_data(data), accepted_media_type, renderer_context)
