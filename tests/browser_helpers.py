"""Shared pieces of the browser tests (Playwright driving Debian's Chromium)."""

from __future__ import annotations

import shutil
from pathlib import Path

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SHOTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "screenshots"
HOSTILE = 'Intro <script>alert(1)</script> and "><img src=x onerror=alert(1)> and {{ 7*7 }} closing words.'


def login(browser, live_server, username, viewport=(1400, 1000)):
    page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", "correct horse battery")
    page.click("main button[type=submit]")  # not the header's language switch
    page.wait_for_url(f"{live_server.url}/")
    return page, dialogs


def shot(page, name, full_page=True):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=full_page)


def scrolls_sideways(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth > document.documentElement.clientWidth")
