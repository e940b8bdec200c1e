"""The editor's loop in Chromium at 1280×720 (screenshots in test-artifacts/screenshots/loop-*.png): the
queue, the pair page with both texts on screen and a sticky verdict bar, a decision in two keys, skip, and
the arbiter's next case."""

from __future__ import annotations

import os

import pytest

from review import services
from review.models import PRESET_REASONS, Arbitration, Judgement
from screening.models import CandidatePair
from tests.browser_helpers import CHROMIUM, login, scrolls_sideways, shot
from tests.factories import imported_run, seed_run

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Chromium is not installed (apt-get install chromium)"),
]
SMALL = (1280, 720)


def long_records(n: int = 30) -> list[dict]:
    """Pairs of long documents with long titles and long revision signals: what made pages too wide."""
    words = "archive sensor voltage guide review quotation template channel revision manual".split()
    records = []
    for i in range(n):
        body = "\n\n".join(f"Paragraph {j} of guide {i}: " + " ".join(words[(i + j + k) % len(words)]
                                                                     for k in range(40)) for j in range(12))
        title = f"A very long title of the installation guide number {i} " * 3
        records += [{"doc_id": f"guide-{i:03d}-original-with-a-long-name", "source_id": f"s{i}", "language": "en",
                     "title": title, "body": body + f"\n\nRated at {i + 10} V."},
                    {"doc_id": f"guide-{i:03d}-mirror-with-a-long-name", "source_id": f"m{i}", "language": "en",
                     "title": title, "body": body + f"\n\nRated at {i + 10} mV."}]
    return records


def pair_id(page) -> int:
    return int(page.url.split("/pairs/")[1].split("/")[0])


@pytest.mark.django_db(transaction=True)
def test_loop_queue_fits_1280_with_a_count_and_n_opens_the_next_pair(browser, live_server, import_records, editor):
    run = imported_run(import_records, "long", long_records(), near=True)
    page, _ = login(browser, live_server, editor.username, SMALL)
    page.goto(f"{live_server.url}/review/")
    shot(page, "loop-queue", full_page=False)
    assert not scrolls_sideways(page)
    total = run.pairs.filter(jaccard__gte=0.7).count()
    assert page.locator("#queue-count strong").inner_text() == str(total)
    for control in page.locator("#queue-filters select, #queue-filters input:not([type=hidden])").all():
        assert control.evaluate("el => !!el.closest('label')")
    page.locator("body").click(position={"x": 5, "y": 700})
    with page.expect_navigation():
        page.keyboard.press("n")
    assert "/review/pairs/" in page.url


@pytest.mark.django_db(transaction=True)
def test_loop_pair_page_shows_both_texts_and_decides_in_two_keys(browser, live_server, import_records, editor):
    run = imported_run(import_records, "long", long_records(), near=True)
    page, dialogs = login(browser, live_server, editor.username, SMALL)
    page.goto(f"{live_server.url}/review/next/?run={run.pk}")
    shot(page, "loop-pair", full_page=False)
    assert not scrolls_sideways(page)
    for side in ("left", "right"):
        pane = page.locator(f"#pane-{side}").bounding_box()
        assert pane["y"] + 60 < SMALL[1]  # the first lines of both texts are on screen
        head = page.locator(f"#doc-{side} .doc-meta").inner_text()
        assert "en" in head and "source" in head and "version" in head
        assert "A very long title" in page.locator(f"#doc-{side} h2").inner_text()
    assert page.locator("#pair-evidence").bounding_box()["y"] < SMALL[1]  # evidence beside the texts
    first = pair_id(page)
    page.mouse.wheel(0, 2000)
    page.wait_for_timeout(200)
    assert page.locator("#judge-form").bounding_box()["y"] >= 0  # the verdict bar stays in reach
    page.keyboard.press("m")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    judgement = Judgement.objects.get()
    assert (judgement.pair_id, judgement.verdict, judgement.reason) == (first, "merge-entry",
                                                                       PRESET_REASONS["merge-entry"])
    assert "/review/pairs/" in page.url and pair_id(page) != first
    # l / r / b work wherever the focus is (here on a link), except while typing.
    second = pair_id(page)
    page.focus("#doc-left .doc-meta a")
    page.keyboard.press("v")
    page.keyboard.press("l")
    page.keyboard.press("e")
    page.keyboard.type("a rated voltage: r stays typed")
    assert page.locator("input[name=retained][value=left]").is_checked()
    with page.expect_navigation():
        page.keyboard.press("Enter")
    typed = Judgement.objects.get(pair_id=second)
    assert (typed.verdict, typed.retained, typed.reason) == ("valid-revision", "left",
                                                             "a rated voltage: r stays typed")
    # Skip: n leaves the pair for later and opens another.
    third = pair_id(page)
    with page.expect_navigation():
        page.keyboard.press("n")
    assert pair_id(page) not in (first, second, third)
    assert Judgement.objects.count() == 2 and dialogs == []


@pytest.mark.django_db(transaction=True)
def test_loop_arbiter_settles_a_case_and_goes_on_by_key(browser, live_server, import_records, editor, editor2,
                                                       arbiter):
    run = seed_run(import_records, reviews_required=2)
    for p in run.pairs.all():
        services.judgement_record(pair=p, reviewer=editor, verdict="merge-entry", reason="copy")
        services.judgement_record(pair=p, reviewer=editor2, verdict="keep-both", reason="different")
    page, _ = login(browser, live_server, arbiter.username, SMALL)
    page.goto(f"{live_server.url}/review/arbitration/")
    assert page.locator("#arbitration-count strong").inner_text() == "3"
    shot(page, "loop-arbitration-queue", full_page=False)
    with page.expect_navigation():
        page.keyboard.press("n")
    shot(page, "loop-arbitrate", full_page=False)
    first = int(page.url.split("/arbitration/")[1].split("/")[0])
    assert page.locator("#pane-left").bounding_box()["y"] + 60 < SMALL[1]
    page.keyboard.press("k")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert Arbitration.objects.get().pair_id == first
    second = int(page.url.split("/arbitration/")[1].split("/")[0])
    assert second != first and CandidatePair.objects.get(pk=second).status == "needs_arbitration"
    with page.expect_navigation():
        page.keyboard.press("n")  # pass this case by
    assert int(page.url.split("/arbitration/")[1].split("/")[0]) not in (first, second)
