"""The API's docs page (/api/v1/docs/) in a real Chromium: Swagger UI from our own static files renders the
live schema's operations, and no request leaves the server."""

from __future__ import annotations

import os
from urllib.parse import urlsplit

import pytest

from tests.browser_helpers import CHROMIUM, login, shot

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Chromium is not installed (apt-get install chromium)"),
]


@pytest.mark.django_db(transaction=True)
def test_the_docs_page_renders_the_schemas_operations_from_our_own_files(browser, live_server, editor):
    page, dialogs = login(browser, live_server, editor.username)
    requested, refused = [], []
    page.on("request", lambda request: requested.append(request.url))
    page.on("console", lambda message: refused.append(message.text) if message.type == "error" else None)
    page.goto(f"{live_server.url}/api/v1/docs/")
    page.wait_for_selector(".opblock-summary-path", timeout=30_000)
    paths = page.locator(".opblock-summary-path").all_inner_texts()
    for path in ("/api/v1/corpora/", "/api/v1/corpora/{id}/uploads/", "/api/v1/runs/", "/api/v1/runs/{id}/next/",
                 "/api/v1/pairs/{id}/judgements/", "/api/v1/runs/{id}/sheets/", "/api/v1/runs/{id}/decisions/"):
        assert any(text.replace("\u200b", "") == path for text in paths), (path, paths)
    assert page.locator(".info .title").inner_text().startswith("dedup-review API")
    assert page.locator("button.authorize").count() == 1  # the bearer token scheme
    shot(page, "api-docs")
    ours = urlsplit(live_server.url).netloc
    outside = [url for url in requested if not url.startswith(("data:", "blob:")) and urlsplit(url).netloc != ours]
    assert outside == [], outside
    assert any("/static/drf_spectacular_sidecar/swagger-ui-dist/" in url for url in requested)
    assert any("/api/v1/schema/" in url for url in requested)
    assert not [text for text in refused if "Content Security Policy" in text], refused
    assert dialogs == []
