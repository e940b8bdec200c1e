"""The layout as a Persian or Chinese editor sees it, measured in Chromium: a count beside its noun, a cut title
showing its own beginning whatever the page's direction, a verdict word never broken inside, the queue's free
space given to the titles, a message that never covers the evidence, and every colour pair axe-core leaves "to
review" checked here."""

from __future__ import annotations

import os

import pytest
from django.urls import reverse

from screening.models import CandidatePair, Upload
from tests.browser_helpers import CHROMIUM, CONTRAST, SHOTS, TEXT_LAYOUT, axe_findings
from tests.factories import PASSWORD, copies, imported_run, reviewer
from tests.test_signal_direction_browser import EN, FA

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Chromium is not installed (apt-get install chromium)"),
]

# Titles long enough to be cut anywhere they are drawn on one line, each starting and ending with a word of its own.
LATIN_TITLE = "Beginning " + "of a very long installation guide for the field sensor, " * 4 + "ENDING"
PERSIAN_TITLE = "آغاز " + "عنوان راهنمای بسیار بلند نصب حسگر میدانی برای کارکنان بخش فنی، " * 4 + "فرجام"
FIRST, LAST = {"en": "Beginning", "fa": "آغاز"}, {"en": "ENDING", "fa": "فرجام"}
RECORDS = [
    {"doc_id": "en-v1", "source_id": "vendor", "version": "1", "language": "en", "title": LATIN_TITLE,
     "body": EN.format(v=12)},
    {"doc_id": "en-v2", "source_id": "vendor", "version": "2", "language": "en", "title": LATIN_TITLE,
     "body": EN.format(v=24)},
    {"doc_id": "fa-v1", "source_id": "office", "version": "1", "language": "fa", "title": PERSIAN_TITLE,
     "body": FA.format(month="مهر", valid="معتبر است")},
    {"doc_id": "fa-v2", "source_id": "office", "version": "2", "language": "fa", "title": PERSIAN_TITLE,
     "body": FA.format(month="آبان", valid="معتبر نیست")},
]
LOCALES = {"fa": "fa-IR", "zh-hans": "zh-CN"}


def _instance(import_records, more=()):
    run = imported_run(import_records, "layout", [*RECORDS, *more], near=True)
    pairs = {p.left.language: p for p in CandidatePair.objects.filter(run=run, left__doc_id__in=["en-v1", "fa-v1"])
             .select_related("left")}
    assert set(pairs) == {"en", "fa"}, pairs
    return run, pairs, reviewer("erin-editor")


def _page(browser, live_server, user, language, viewport=(1400, 900)):
    context = browser.new_context(locale=LOCALES[language], viewport={"width": viewport[0], "height": viewport[1]})
    page = context.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")
    return page


def shot(page, name, selector=None):
    SHOTS.mkdir(parents=True, exist_ok=True)
    target = page.locator(selector).first if selector else page
    target.screenshot(path=str(SHOTS / f"layout-{name}.png"))


# --- an upload's problems: each count beside its noun ------------------------------------------------------------

# In each group of problems, where the count (its digits) and the word it counts are drawn, read from the group's
# own line (not its examples).
COUNT_AND_NOUN = """([noun]) => {""" + TEXT_LAYOUT + """
  const found = [];
  for (const item of document.querySelectorAll("ul.problem-groups > li")) {
    const {text, rect} = textLayout(item, n => n.parentElement.closest("ul.problems"));
    const dash = text.lastIndexOf("—");
    const digits = /[0-9۰-۹]+/.exec(text.slice(dash));
    const n = text.indexOf(noun, dash);
    if (dash < 0 || !digits || n < 0) { found.push({text}); continue; }
    found.push({text: text.trim(), count: rect(dash + digits.index, digits[0].length), noun: rect(n, noun.length)});
  }
  return found;
}"""


@pytest.mark.django_db(transaction=True)
def test_an_upload_problems_count_sits_beside_its_noun_in_persian(browser, live_server, import_records):
    from screening.ingest import uploads

    _, _, editor = _instance(import_records)
    bad = b'{"doc_id": "x1", "language": "en"}\n{"doc_id": "x2", "language": "en"}\n'
    rejected = uploads.upload_process(upload=uploads.upload_create(corpus_name="layout", chunks=[bad], size=len(bad),
                                                                   original_name="broken.jsonl"))
    assert rejected.status == "rejected", rejected.status
    # A problem stored before rules had codes is shown as its English words were written.
    legacy = {"field": "language", "rule": "is not a lowercase language tag such as fa, en, zh-hant", "count": 3,
              "examples": ["old.jsonl line 4: field language: is not a lowercase language tag such as fa, en, zh-hant"]}
    Upload.objects.filter(pk=rejected.pk).update(problem_groups=[*rejected.problem_groups, legacy], problem_count=5)
    page = _page(browser, live_server, editor, "zh-hans")
    page.goto(f"{live_server.url}{reverse('screening:corpus_detail', args=['layout'])}")
    shot(page, "problems-zh-hans", "ul.problem-groups")
    page = _page(browser, live_server, editor, "fa")
    page.goto(f"{live_server.url}{reverse('screening:corpus_detail', args=['layout'])}")
    shot(page, "problems-fa", "ul.problem-groups")
    found = page.evaluate(COUNT_AND_NOUN, ["بار"])
    assert len(found) == 2, found
    for line in found:
        assert "count" in line, line
        count, noun = line["count"], line["noun"]
        # Right to left: the count first, on the noun's right, with one space between them.
        assert abs(count["top"] - noun["top"]) < 4, line
        assert 0 <= count["left"] - noun["right"] < 12, line


# --- a cut title shows its own beginning --------------------------------------------------------------------------

# For every element of `selector` holding the title's first word: is that word drawn inside the box that cuts it
# (the nearest box that hides what overflows), and is the last word cut off (so the title was cut at all)?
CUT = """([selector, first, last]) => {
  const found = [];
  const rectOf = (node, word) => {
    const range = document.createRange(), at = node.data.indexOf(word);
    range.setStart(node, at); range.setEnd(node, at + word.length);
    return range.getBoundingClientRect();
  };
  for (const box of document.querySelectorAll(selector)) {
    if (!box.checkVisibility()) continue;
    const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    let head = null, tail = null;
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (!head && n.data.includes(first)) head = n;
      if (n.data.includes(last)) tail = n;
    }
    if (!head || !tail) continue;
    let clip = head.parentElement;
    while (clip && getComputedStyle(clip).overflowX === "visible") clip = clip.parentElement;
    const c = clip.getBoundingClientRect(), h = rectOf(head, first), t = rectOf(tail, last);
    const inside = (r) => r.left >= c.left - 1 && r.right <= c.right + 1;
    found.push({box: box.outerHTML.slice(0, 160), first: inside(h), last: inside(t), clip: clip.tagName});
  }
  return found;
}"""


@pytest.mark.django_db(transaction=True)
def test_a_cut_title_shows_its_own_beginning_whatever_the_pages_direction(browser, live_server, import_records):
    run, pairs, editor = _instance(import_records)
    problems, seen = [], 0
    for language in ("fa", "zh-hans"):
        page = _page(browser, live_server, editor, language)
        places = [("queue", f"{reverse('review:queue')}?run={run.pk}", "table.queue tbody td")]
        for script, pair in pairs.items():
            places.append((f"pair-{script}", reverse("review:pair", args=[pair.pk]), ".doc-head h2"))
            places.append((f"cluster-{script}", reverse("review:cluster", args=[run.pk, pair.cluster]),
                           "#members td, .doc-head h2"))
        for name, path, selector in places:
            page.goto(live_server.url + path)
            shot(page, f"titles-{name}-{language}")
            for script in pairs:
                for m in page.evaluate(CUT, [selector, FIRST[script], LAST[script]]):
                    seen += 1
                    if not m["first"] or m["last"]:
                        problems.append(f"{language} {name}: a {script} title shows "
                                        f"{'its end' if not m['first'] else 'whole'}: {m['box']}")
    assert seen >= 16, seen
    assert not problems, "\n".join(problems)


# --- a verdict word is never broken inside; the queue's free space goes to the titles ------------------------------

# Every word (a run of non-spaces: نگه‌داشتن holds a zero-width non-joiner, not a space) of the elements' text,
# with the lines it is drawn on.
BROKEN_WORDS = """([selector]) => {
  const broken = [];
  for (const element of document.querySelectorAll(selector)) {
    if (!element.checkVisibility()) continue;
    const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      for (const word of n.data.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(n, word.index); range.setEnd(n, word.index + word[0].length);
        const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
        if (tops.size > 1) broken.push(`${word[0]} on ${tops.size} lines in ${element.outerHTML.slice(0, 120)}`);
      }
    }
  }
  return broken;
}"""


@pytest.mark.django_db(transaction=True)
def test_a_verdict_word_is_never_broken_inside(browser, live_server, import_records):
    run, pairs, editor = _instance(import_records)
    broken = []
    for language in ("fa", "zh-hans"):
        for width in (1400, 1000):
            page = _page(browser, live_server, editor, language, viewport=(width, 900))
            page.goto(f"{live_server.url}{reverse('review:cluster', args=[run.pk, pairs['en'].cluster])}")
            shot(page, f"words-cluster-{language}-{width}")
            if language == "fa":  # Chinese has no spaces between words: any character may start a line
                broken += page.evaluate(BROKEN_WORDS, ["#members th, label.pill, .verdict-bar .hint"])
            page.goto(f"{live_server.url}{reverse('review:queue')}?run={run.pk}")
            shot(page, f"words-queue-{language}-{width}")
            if language == "fa":
                broken += page.evaluate(BROKEN_WORDS, ["table.queue th, table.queue td.status-pending"])
            # Kept whole, the words still leave the page its width: nothing drawn past its edge.
            assert not page.evaluate("document.documentElement.scrollWidth > document.documentElement.clientWidth"), \
                (language, width)
    assert not broken, "\n".join(broken)


# The queue's columns: each header's width, and the width its text takes on one line.
COLUMNS = """() => [...document.querySelectorAll("table.queue thead th")].map(th => {
  const range = document.createRange(); range.selectNodeContents(th);
  const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top))).size;
  const cells = [...document.querySelectorAll(`table.queue tbody td:nth-child(${th.cellIndex + 1})`)];
  const widest = Math.max(range.getBoundingClientRect().width, ...cells.map(td => {
    const r = document.createRange(); r.selectNodeContents(td); return r.getBoundingClientRect().width; }));
  const padding = parseFloat(getComputedStyle(th).paddingLeft) + parseFloat(getComputedStyle(th).paddingRight);
  return {text: th.textContent.trim(), width: th.getBoundingClientRect().width, content: widest + padding, lines,
          table: th.closest("table").getBoundingClientRect().width};
})"""


@pytest.mark.django_db(transaction=True)
def test_the_queue_gives_its_free_space_to_the_titles(browser, live_server, import_records):
    run, _, editor = _instance(import_records)
    for language in ("fa", "zh-hans"):
        page = _page(browser, live_server, editor, language)
        page.goto(f"{live_server.url}{reverse('review:queue')}?run={run.pk}")
        shot(page, f"queue-columns-{language}")
        columns = page.evaluate(COLUMNS)
        pair, *narrow = columns
        signals = narrow.pop(3)
        assert pair["width"] >= 0.4 * pair["table"], (language, columns)  # the title's column takes the free space
        assert pair["width"] > signals["width"], (language, columns)
        for column in narrow:  # the others as wide as their widest cell, their headers on one line
            assert column["lines"] == 1 and column["width"] <= column["content"] + 2, (language, column)


# --- a message never covers the page ----------------------------------------------------------------------------

@pytest.mark.django_db(transaction=True)
def test_a_message_never_covers_the_evidence_and_can_be_dismissed(browser, live_server, import_records):
    _, pairs, editor = _instance(import_records, more=copies(2, "layout"))
    for language, script in (("fa", "en"), ("zh-hans", "fa")):
        page = _page(browser, live_server, editor, language)  # decides a pair, and lands on the next
        page.goto(f"{live_server.url}{reverse('review:pair', args=[pairs[script].pk])}")
        page.keyboard.press("k")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        message = page.locator(".messages li").first
        message.wait_for()
        shot(page, f"message-{language}")
        box = message.bounding_box()
        for covered in ("#pair-evidence", "#doc-left", "#doc-right", "#judge-form"):
            other = page.locator(covered).bounding_box()
            apart = (box["x"] + box["width"] <= other["x"] or other["x"] + other["width"] <= box["x"] or
                     box["y"] + box["height"] <= other["y"] or other["y"] + other["height"] <= box["y"])
            assert apart, (language, covered, box, other)
        assert message.inner_text() in page.locator("[role=status]").inner_text()  # announced to screen readers
        evidence = page.locator("#pair-evidence").bounding_box()["y"]
        page.locator(".messages button.dismiss").first.click()
        assert page.locator(".messages li").count() == 0
        assert page.locator("#pair-evidence").bounding_box()["y"] < evidence  # the room it took is given back


# --- colours axe-core leaves to review ---------------------------------------------------------------------------

@pytest.mark.django_db(transaction=True)
def test_every_colour_axe_leaves_to_review_reads_at_aa(browser, live_server, import_records):
    """The arrows of the signal boxes and the cluster's differences, the chart's ticks and threshold label: axe
    cannot tell their contrast (non-text characters, SVG text); worked out here, they read at 4.5:1."""
    run, pairs, editor = _instance(import_records)
    found = []
    for language in ("fa", "zh-hans"):
        page = _page(browser, live_server, editor, language)
        for path in (f"{reverse('review:queue')}?run={run.pk}",
                     reverse("review:cluster", args=[run.pk, pairs["fa"].cluster]),
                     reverse("screening:run_detail", args=[run.pk])):
            page.goto(live_server.url + path)
            found += [f"{language} {path}: {f}" for f in axe_findings(page)]
        shot(page, f"chart-{language}", "svg.chart")
    assert not found, "\n".join(found)
    # The threshold's label is drawn in the plot, where a bar as tall as the plot may stand beside the threshold:
    # it reads there too (its halo).
    from django.template.loader import render_to_string

    from screening.charts import histogram

    chart = render_to_string("screening/_histogram.html", {"title": "scores", "chart": histogram(
        [0] * 14 + [5, 5, 5, 1, 1, 1], low=0.0, high=1.0, marker=0.7)})
    page = page.context.new_page()  # a blank page (the site's pages allow no inline style), with the site's styles
    page.set_content(f'<link rel="stylesheet" href="{live_server.url}/static/css/site.css"><main>{chart}</main>')
    shot(page, "chart-threshold-over-a-bar", "svg.chart")
    assert page.evaluate(CONTRAST, ["svg.chart .marker-label", "svg.chart .tick"]) == []
    # The check finds what it is for: a pale arrow, a chart's text over one of its bars.
    page.set_content("""<p style="color:#bbb">before <span class="arrow">→</span> after</p>
      <svg viewBox="0 0 100 40" width="300"><rect x="0" y="0" width="100" height="40" fill="#1f5fa8"/>
      <text x="10" y="25" fill="#a61b1b" font-size="11">threshold 0.70</text></svg>""")
    found = page.evaluate(CONTRAST, ["p .arrow", "svg text"])
    assert [f["why"].split(" ")[0] for f in found] == ["contrast", "contrast"], found
