"""A revision signal reads before → after in the reading order of the page, in every box that shows it (the
suggestion's reasons, the signals card, the differences, the queue's badges, the cluster page's pairs), whatever
the script of its values and of the interface: measured in Chromium from where the two values are drawn and
which way the arrow between them points."""

from __future__ import annotations

import os

import pytest
from django.urls import reverse

from screening.models import CandidatePair
from tests.browser_helpers import CHROMIUM, SHOTS, TEXT_LAYOUT
from tests.factories import PASSWORD, imported_run, reviewer

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Chromium is not installed (apt-get install chromium)"),
]

EN = ("Installation guide for the field sensor. Mount the sensor on a dry wall at least 30 cm above the floor. "
      "Connect the red wire to the positive terminal and the black wire to ground. The supply voltage is {v} V; "
      "keep the cable short. After power-up the green light blinks twice and the sensor reports on schedule. "
      "Clean the housing with a dry cloth every season. Do not open the housing while it is powered.")
FA = ("راهنمای نصب حسگر میدانی برای کارکنان بخش فنی. حسگر را روی دیوار خشک و دور از رطوبت نصب کنید. "
      "سیم قرمز را به پایانه مثبت و سیم سیاه را به زمین وصل کنید. این گواهی تا پایان {month} {valid}. "
      "پس از روشن شدن چراغ سبز دو بار چشمک می‌زند و حسگر گزارش خود را می‌فرستد. بدنه را با پارچه خشک "
      "تمیز کنید و هنگام کار دستگاه در آن را باز نکنید.")
RECORDS = [
    {"doc_id": "en-v1", "source_id": "vendor", "version": "1", "language": "en", "body": EN.format(v=12)},
    {"doc_id": "en-v2", "source_id": "vendor", "version": "2", "language": "en", "body": EN.format(v=24)},
    {"doc_id": "fa-v1", "source_id": "office", "version": "1", "language": "fa",
     "body": FA.format(month="مهر", valid="معتبر است")},
    {"doc_id": "fa-v2", "source_id": "office", "version": "2", "language": "fa",
     "body": FA.format(month="آبان", valid="معتبر نیست")},
]

# Where each box draws each signal's two values, and which way the arrow between them points: for every
# element of `selector` whose text holds both values, the rectangles of the two values' text (a Range over
# the text nodes, so it measures the glyphs whatever the markup), and the arrow's glyph and transform.
MEASURE = """([selector, before, after]) => {""" + TEXT_LAYOUT + """
  const found = [];
  for (const box of document.querySelectorAll(selector)) {
    if (!box.checkVisibility()) continue;
    const {text, at, rect} = textLayout(box);
    const b = text.indexOf(before), a = text.indexOf(after, b + before.length);
    if (b < 0 || a < 0) continue;
    const between = text.slice(b + before.length, a);
    const glyph = between.includes("→") ? "→" : between.includes("←") ? "←" : "";
    if (!glyph) { found.push({box: box.outerHTML.slice(0, 200), glyph}); continue; }
    const g = b + before.length + between.indexOf(glyph);
    const [node] = at(g);
    const flipped = getComputedStyle(node.parentElement).transform.startsWith("matrix(-1");
    found.push({box: box.outerHTML.slice(0, 200), glyph, flipped, before: rect(b, before.length),
                after: rect(a, after.length)});
  }
  return found;
}"""


def _pointing_right(measured) -> bool:
    return (measured["glyph"] == "→") != measured["flipped"]


def _check(page, where: str, selector: str, signal, rtl: bool) -> list[str]:
    _, before, after = signal
    wrong = []
    found = page.evaluate(MEASURE, [selector, before, after])
    if not found:
        return [f"{where}: no {selector} shows {before} → {after}"]
    for m in found:
        if not m["glyph"]:
            wrong.append(f"{where}: no arrow between {before} and {after}: {m['box']}")
            continue
        before_first = m["before"]["right"] <= m["after"]["left"] + 1
        before_right = m["before"]["left"] >= m["after"]["right"] - 1
        reads = before_right if rtl else before_first
        if not reads or _pointing_right(m) != before_first:
            wrong.append(f"{where}: {before} → {after} drawn {'before' if before_first else 'after'} first from the "
                         f"left, arrow pointing {'right' if _pointing_right(m) else 'left'}: {m['box']}")
    return wrong


@pytest.mark.django_db(transaction=True)
def test_every_box_reads_a_signal_before_to_after_in_the_pages_direction(browser, live_server, import_records):
    run = imported_run(import_records, "signals", RECORDS, near=True)
    editor = reviewer("erin-editor")
    pairs = {p.left.language: p for p in CandidatePair.objects.filter(run=run).select_related("left")}
    assert set(pairs) == {"en", "fa"}, pairs
    signals = {lang: p.revision_signals for lang, p in pairs.items()}
    kinds = {lang: {kind for kind, _, _ in s} for lang, s in signals.items()}
    assert "number" in kinds["en"] and {"negation", "month"} <= kinds["fa"], signals
    problems = []
    for locale in ("fa-IR", "en-US", "zh-CN"):
        rtl = locale.startswith("fa")
        context = browser.new_context(locale=locale, viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("input[name=username]", editor.username)
        page.fill("input[name=password]", PASSWORD)
        page.click("main button[type=submit]")
        page.wait_for_url(f"{live_server.url}/")
        page.goto(f"{live_server.url}{reverse('review:queue')}?run={run.pk}")
        for lang, shown in signals.items():
            for signal in shown:
                problems += _check(page, f"{locale} queue", "td .signal", signal, rtl)
        for lang, pair in pairs.items():
            page.goto(f"{live_server.url}{reverse('review:pair', args=[pair.pk])}")
            shot(page, f"signals-pair-{lang}-{locale}")
            for signal in signals[lang]:
                problems += _check(page, f"{locale} pair {lang} suggestion", "#suggestion li", signal, rtl)
                problems += _check(page, f"{locale} pair {lang} signals card", "#signals .signal-line", signal, rtl)
                problems += _check(page, f"{locale} pair {lang} differences", "#differences .signal", signal, rtl)
            if pair.cluster is not None:
                page.goto(f"{live_server.url}{reverse('review:cluster', args=[run.pk, pair.cluster])}")
                for signal in signals[lang]:
                    problems += _check(page, f"{locale} cluster {lang}", ".signal", signal, rtl)
        context.close()
    assert not problems, "\n".join(problems)


def shot(page, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=False)
