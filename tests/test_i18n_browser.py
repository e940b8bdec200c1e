"""The interface in Persian and Chinese in Chromium at 1280×720, with the browser's language set (fa-IR, zh-CN)
and in English: no sideways scroll, no button's text cut, axe-core's checks with no serious or critical
violation, the panes and the retained-version choice as the editor sees them, shortcuts on a Persian layout,
keystrokes of an input method ignored. Screenshots: test-artifacts/screenshots/i18n-*."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from review.models import Judgement
from screening import evaluation
from screening.models import CandidatePair, Corpus
from tests.browser_helpers import CHROMIUM, scrolls_sideways, shot
from tests.factories import completed_run
from tests.seeds import SEED001
from tests.test_cluster_review import family_records

ROOT = Path(__file__).resolve().parent.parent
SMALL = {"width": 1280, "height": 720}
LANGUAGES = {"en": ("en-US,en;q=0.9", "en", "ltr"), "fa": ("fa-IR,fa;q=0.9", "fa", "rtl"),
             "zh": ("zh-CN,zh;q=0.9", "zh-hans", "ltr")}
LABELS = b"left_id,right_id,label,reason\nA,B,1,reformatted copy\nA,C,0,valid revision\nA,D,0,template\n"


def press(page, key: str, code: str, composing: bool = False) -> None:
    """A keystroke as a Persian layout sends it, or (composing) one a Chinese input method is composing with:
    isComposing, key "Process", keyCode 229. Playwright's own keyboard types a US layout only."""
    page.evaluate("""([key, code, composing]) => document.dispatchEvent(new KeyboardEvent("keydown",
        composing ? {key: "Process", code: code, isComposing: true, keyCode: 229, bubbles: true}
                  : {key: key, code: code, bubbles: true, cancelable: true}))""", [key, code, composing])


def open_as(browser, live_server, username: str, language: str):
    """A logged-in page in a browser whose language is `language` (its Accept-Language), at 1280×720."""
    accept = LANGUAGES[language][0]
    context = browser.new_context(viewport=SMALL, locale=accept.split(",")[0],
                                  extra_http_headers={"Accept-Language": accept})
    page = context.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    check_page(page, f"{language}-login")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", "correct horse battery")
    page.click("main button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")
    return context, page


def check_page(page, name: str, findings: list | None = None) -> None:
    """The page as a reader meets it in its language: its screenshot, then what must hold on every page (axe's
    findings gathered into `findings` when given, so that one run names every page's)."""
    language = name.split("-")[0]
    _, lang, direction = LANGUAGES[language]
    shot(page, f"i18n-{name}", full_page=False)
    assert (page.get_attribute("html", "lang"), page.get_attribute("html", "dir")) == (lang, direction), name
    assert not scrolls_sideways(page), f"{name} scrolls sideways"
    cut = page.evaluate("""Array.from(document.querySelectorAll("button, a.button, label.pill"))
        .filter(b => b.offsetParent !== null && b.scrollWidth > b.clientWidth + 1).map(b => b.outerHTML)""")
    assert cut == [], f"{name}: a button's text overflows: {cut}"
    found = [f"{name}: {finding}" for finding in axe_findings(page)]
    if findings is None:
        assert found == []
    else:
        findings.extend(found)


def axe_findings(page) -> list[str]:
    """axe-core's serious and critical violations on the page (axe-playwright-python bundles axe-core: nothing
    is fetched)."""
    from axe_playwright_python.sync_playwright import Axe

    violations = Axe().run(page).response["violations"]
    return [f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:5]}" for v in violations
            if v["impact"] in ("serious", "critical")]


def pages_of_a_run(import_records):
    """The seed 001 corpus with its labels (an evaluation to show) and a family of five near copies (a cluster)."""
    import_records("zh", SEED001 + [dict(r, language="fa") for r in family_records([5])])
    run = completed_run("zh", near=True)
    evaluation.labelset_import(corpus=Corpus.objects.get(name="zh"), data=LABELS, original_name="labels.csv")
    cluster = CandidatePair.objects.filter(run=run).exclude(cluster=None).values_list("cluster", flat=True).first()
    return run, cluster


def sides_as_seen(page) -> dict:
    """Where each of the pair's documents is drawn, and what the retained-version pill for it says."""
    return page.evaluate("""() => {
        const out = {};
        for (const doc of ["left", "right"]) {
            const box = document.getElementById("doc-" + doc).getBoundingClientRect();
            const pill = document.querySelector('input[name="retained"][value="' + doc + '"]').closest("label");
            out[doc] = {x: box.x, side: document.querySelector("#doc-" + doc + " .side").textContent.trim(),
                        key: pill.querySelector("kbd").textContent,
                        layout: pill.querySelector("kbd").dataset.layout,
                        shown: getComputedStyle(pill.querySelector("kbd"), "::before").content,
                        word: pill.textContent.replace(/^\\S+\\s*/, "").trim()};
        }
        return out;
    }""")


@pytest.mark.parametrize("language", ["en", "fa", "zh"])
@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Chromium is not installed (apt-get install chromium)")
def test_the_main_pages_read_well_in_each_language(browser, live_server, import_records, editor, language):
    run, cluster = pages_of_a_run(import_records)
    context, page = open_as(browser, live_server, editor.username, language)
    findings = []  # axe-core's serious and critical violations, every page's
    try:
        # The queue: a composing keystroke opens nothing; N on a Persian layout ("د") opens the next pair.
        page.goto(f"{live_server.url}/review/?run={run.pk}")
        check_page(page, f"{language}-queue", findings)
        assert page.evaluate('new KeyboardEvent("keydown", {keyCode: 229, isComposing: true}).keyCode') == 229
        press(page, "د", "KeyN", composing=True)
        page.wait_for_timeout(150)
        assert "/review/pairs/" not in page.url
        with page.expect_navigation():
            press(page, "د", "KeyN")
        assert "/review/pairs/" in page.url
        pair = CandidatePair.objects.get(pk=int(re.search(r"/pairs/(\d+)/", page.url).group(1)))
        check_page(page, f"{language}-pair", findings)
        rtl = language == "fa"

        # The panes mirror with the page in Persian: the pair's first ("left") document at the reading start.
        seen = sides_as_seen(page)
        assert page.evaluate("[...document.querySelectorAll('pre.pane')].map(p => p.dir)") == ["auto", "auto"]
        assert (seen["left"]["x"] > seen["right"]["x"]) is rtl, seen
        screen_left = "right" if rtl else "left"  # the document drawn on the left of the screen
        assert seen[screen_left]["key"] == "l" and seen[screen_left]["side"].lower() == seen[screen_left]["word"]
        other = "left" if rtl else "right"
        assert seen[other]["key"] == "r" and seen[other]["side"].lower() == seen[other]["word"]
        assert seen[screen_left]["word"] != seen[other]["word"]
        # Beside each key, the letter it types on a Persian keyboard (l: م, r: ق), in Persian only.
        assert (seen[screen_left]["layout"], seen[other]["layout"]) == (("م", "ق") if rtl else ("", ""))
        assert seen[screen_left]["shown"] == ('"م\u00a0"' if rtl else "none")

        # A composing keystroke picks nothing; K and M on a Persian layout pick keep-both, then merge-entry;
        # L by position picks the pane on the left of the screen, whichever document that is.
        verdict, retained = 'input[name="verdict"]:checked', 'input[name="retained"]:checked'
        for key, code in (("ن", "KeyK"), ("پ", "KeyM"), ("م", "KeyL")):
            press(page, key, code, composing=True)
        assert page.locator(verdict).count() == 0
        assert page.locator(retained).get_attribute("value") == "both"
        press(page, "ن", "KeyK")
        assert page.locator(verdict).get_attribute("value") == "keep-both"
        press(page, "پ", "KeyM")
        assert page.locator(verdict).get_attribute("value") == "merge-entry"
        if rtl:  # a keystroke that reports its Persian letter and not its place still means its key
            press(page, "ن", "")
            assert page.locator(verdict).get_attribute("value") == "keep-both"
            press(page, "پ", "")
            assert page.locator(verdict).get_attribute("value") == "merge-entry"
        press(page, "م", "KeyL")
        assert page.locator(retained).get_attribute("value") == screen_left
        with page.expect_navigation():
            press(page, "Enter", "Enter")  # the second key of the decision: saved, on to the next pair
        judgement = Judgement.objects.get(pair=pair)
        assert (judgement.verdict, judgement.retained) == ("merge-entry", screen_left)
        kept = pair.right if rtl else pair.left
        assert getattr(pair, judgement.retained) == kept  # the value names the document the editor saw there

        # The cluster page: a composing digit or letter picks nothing; by position they do.
        page.goto(f"{live_server.url}/review/runs/{run.pk}/clusters/{cluster}/")
        check_page(page, f"{language}-cluster", findings)
        keeper = 'input[name="keeper"]:checked'
        picked = """() => Array.from(document.querySelectorAll(
            'input[name="keeper"], #judge-form input[name="verdict"]')).filter(i => i.checked).map(i => i.value)"""
        before = page.evaluate(picked)  # the suggested keeper and verdict
        press(page, "۲", "Digit2", composing=True)
        press(page, "ن", "KeyK", composing=True)
        press(page, "پ", "KeyM", composing=True)
        assert page.evaluate(picked) == before
        press(page, "۲", "Digit2")
        assert page.locator(keeper).get_attribute("value") == page.locator(
            "#members tbody tr:nth-child(2) input[name=keeper]").get_attribute("value")
        press(page, "ن", "KeyK")
        assert page.locator(f"#judge-form {verdict}").get_attribute("value") == "keep-both"

        for name, path in (("run", f"/runs/{run.pk}/"), ("evaluation", f"/runs/{run.pk}/evaluation/")):
            page.goto(live_server.url + path)
            check_page(page, f"{language}-{name}", findings)
        assert findings == []
    finally:
        context.close()


def test_the_stylesheet_names_system_fonts_for_persian_and_chinese_and_fetches_none():
    css = (ROOT / "static" / "css" / "site.css").read_text(encoding="utf-8")
    persian = re.search(r"html:lang\(fa\) body \{ font-family: ([^;]+);", css).group(1)
    chinese = re.search(r"html:lang\(zh\) body \{ font-family: ([^;]+);", css).group(1)
    assert [f for f in ('"Vazirmatn"', '"Noto Naskh Arabic"', "Tahoma") if f not in persian] == []
    assert [f for f in ('"Noto Sans CJK SC"', '"PingFang SC"', '"Microsoft YaHei"') if f not in chinese] == []
    assert "@font-face" not in css and "url(" not in css and "@import" not in css


def test_l_and_r_name_the_side_of_the_screen_and_the_stored_value_the_document_drawn_there():
    from screening.sides import sides

    assert {document: s.key for document, s in sides(rtl=False).items()} == {"left": "l", "right": "r", "both": "b"}
    assert {document: s.key for document, s in sides(rtl=True).items()} == {"left": "r", "right": "l", "both": "b"}
