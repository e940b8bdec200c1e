"""The review pages in a real browser: Playwright driving Debian's Chromium (installed by .ci/run)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from review.models import Judgement
from screening import runs
from screening.engine.near import NearConfig
from screening.models import CandidatePair, Corpus
from tests.seeds import SEED001

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SHOTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "screenshots"
HOSTILE = 'Intro <script>alert(1)</script> and "><img src=x onerror=alert(1)> and {{ 7*7 }} closing words.'

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Chromium is not installed (apt-get install chromium)"),
]


@pytest.fixture
def browser():
    # Playwright's sync API runs an event loop in this thread; the ORM calls in these tests are still sync.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"])
        yield chromium
        chromium.close()
    os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)


def login(browser, live_server, username):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", "correct horse battery")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")
    return page, dialogs


def make_run(import_records, corpus, records):
    import_records(corpus, records)
    run = runs.run_create(corpus=Corpus.objects.get(name=corpus), exact=True, near=True, near_config=NearConfig())
    return runs.run_execute(run=run)


def shot(page, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


@pytest.mark.django_db(transaction=True)
def test_an_editor_reviews_a_pair_with_the_keyboard_alone(browser, live_server, import_records, editor):
    run = make_run(import_records, "zh", SEED001)
    page, dialogs = login(browser, live_server, editor.username)
    page.goto(f"{live_server.url}/review/next/?run={run.pk}")
    first = CandidatePair.objects.get(pk=int(page.url.split("/pairs/")[1].split("/")[0]))
    shot(page, "review-pair")
    page.keyboard.press("m")  # merge-entry; focus moves to the reason
    page.keyboard.type("same guide, reformatted")
    page.keyboard.press("Enter")  # save and go to the next pair
    page.wait_for_url(lambda url: f"/pairs/{first.pk}/" not in url and "/pairs/" in url)
    judgement = Judgement.objects.get()
    assert (judgement.pair_id, judgement.verdict, judgement.reason, judgement.retained) == (
        first.pk, "merge-entry", "same guide, reformatted", "both")
    page.keyboard.press("v")
    page.keyboard.press("Escape")
    page.keyboard.press("l")  # retained: left
    page.focus("#reason")
    page.keyboard.type("每周 became 每天")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    second = Judgement.objects.order_by("-id").first()
    assert (second.verdict, second.retained) == ("valid-revision", "left")
    with page.expect_navigation():
        page.keyboard.press("u")  # undo my last decision
    assert Judgement.objects.order_by("-id").first().verdict == "withdrawn"
    shot(page, "review-after-undo")
    assert dialogs == []


@pytest.mark.django_db(transaction=True)
def test_clicking_a_matched_run_scrolls_to_its_partner(browser, live_server, import_records, editor):
    def text(word):
        return "\n".join(f"Paragraph {i}: the sensor reads voltage in volts and logs it {word}." for i in range(80))

    run = make_run(import_records, "long", [
        {"doc_id": "L1", "language": "en", "body": text("daily")},
        {"doc_id": "L2", "language": "en", "body": "A preface was added here.\n" * 40 + text("hourly")}])
    page, _ = login(browser, live_server, editor.username)
    page.goto(f"{live_server.url}/review/pairs/{run.pairs.get(pass_name='near').pk}/")
    assert page.locator("#pane-left .run").count() > 40
    left_run = page.locator("#pane-left .run").nth(30)
    number = left_run.get_attribute("data-run")
    left_run.click()
    partner = page.locator(f'#pane-right .run[data-run="{number}"]')
    partner.wait_for(state="visible")
    page.wait_for_timeout(600)
    assert partner.evaluate("el => el.classList.contains('flash')")
    box, pane = partner.bounding_box(), page.locator("#pane-right").bounding_box()
    assert pane["y"] <= box["y"] <= pane["y"] + pane["height"]


@pytest.mark.django_db(transaction=True)
def test_hostile_documents_run_no_script_and_read_as_written(browser, live_server, import_records, editor):
    run = make_run(import_records, "hostile", [
        {"doc_id": "x1", "language": "en", "title": HOSTILE, "body": "One. " + HOSTILE},
        {"doc_id": "x2", "language": "en", "title": HOSTILE, "body": "Two. " + HOSTILE}])
    page, dialogs = login(browser, live_server, editor.username)
    pair = run.pairs.get()
    for url in (f"/review/pairs/{pair.pk}/", f"/documents/{pair.left_id}/", "/corpora/hostile/",
                f"/review/?run={run.pk}"):
        page.goto(live_server.url + url)
        page.wait_for_load_state("networkidle")
        assert dialogs == [], url
        assert page.locator("img[src=x]").count() == 0, url
    page.goto(f"{live_server.url}/review/pairs/{pair.pk}/")
    assert "<script>alert(1)</script>" in page.locator("#pane-left").inner_text()
    assert "{{ 7*7 }}" in page.locator("#pane-left").inner_text()
    shot(page, "review-hostile")
