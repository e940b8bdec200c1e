"""The editor's loop in Chromium at 1280×720 (screenshots in test-artifacts/screenshots/loop-*.png): the
queue, the pair page with both texts on screen and a sticky verdict bar, a decision in two keys, skip, and
the arbiter's next case."""

from __future__ import annotations

import os

import pytest
from playwright.sync_api import expect

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


@pytest.mark.django_db(transaction=True)
def test_loop_run_page_badge_follows_the_job_and_pairs_are_paged(browser, live_server, import_records, editor,
                                                                 admin_user, queue):
    from dedup_site import progress
    from screening import runs
    from screening.models import Corpus, ScreeningRun

    done = imported_run(import_records, "long", long_records(40), near=True)
    waiting = runs.run_create(corpus=Corpus.objects.get(name="long"))
    admin, _ = login(browser, live_server, admin_user.username, SMALL)
    admin.goto(f"{live_server.url}/runs/{waiting.pk}/")
    assert admin.locator("[data-status-badge]").inner_text() == "Queued"
    # The run starts while the page is open: the badge follows the bar.
    ScreeningRun.objects.filter(pk=waiting.pk).update(status="running")
    progress.report("run", waiting.pk, 0.68, "band")
    expect(admin.locator("[data-status-badge]")).to_have_text("Running")
    expect(admin.locator(".progress .label")).to_contain_text("68%")
    shot(admin, "loop-run-running", full_page=False)
    # A complete run: pairs paged with their titles, and the histogram's bars open the queue at their range.
    page, _ = login(browser, live_server, editor.username, SMALL)
    page.goto(f"{live_server.url}/runs/{done.pk}/")
    assert not scrolls_sideways(page)
    assert page.locator("#pairs-pager").inner_text().startswith("page 1 of")
    assert "A very long title" in page.locator("table.queue tbody tr").first.inner_text()
    page.click("#pairs-pager a[rel=next]")
    assert "page 2 of" in page.locator("#pairs-pager").inner_text()
    bar = page.locator("svg.chart a.bar-link").last
    count = int(bar.locator("title").text_content().split(":")[1].split("—")[0])
    shot(page, "loop-run-histogram", full_page=True)
    with page.expect_navigation():
        bar.click()
    assert "/review/" in page.url and "min_score=" in page.url
    assert page.locator("#queue-count strong").inner_text() == str(count)
    page.goto(f"{live_server.url}/runs/{done.pk}/")
    assert page.evaluate("""() => [...document.querySelectorAll('svg.chart text')].every(t => {
        const box = t.getBBox(), svg = t.ownerSVGElement.viewBox.baseVal;
        return box.x >= 0 && box.x + box.width <= svg.width; })""")  # no label cut off by the chart's edge


@pytest.mark.django_db(transaction=True)
def test_loop_evaluation_page_shows_the_summary_first_and_pages_the_labelled_pairs(browser, live_server,
                                                                                    import_records, admin_user):
    from screening import evaluation

    records = long_records(40)
    run = imported_run(import_records, "long", records, near=True)
    rows = ["left_id,right_id,label"] + [f"{records[i]['doc_id']},{records[i + 1]['doc_id']},{i % 4 == 0:d}"
                                          for i in range(0, 80, 2)]
    rows += [f"{records[i]['doc_id']},{records[i + 2]['doc_id']},0" for i in range(0, 76, 2)]
    label_set = evaluation.labelset_import(corpus=run.corpus, data="\n".join(rows).encode(), original_name="l.csv")
    page, _ = login(browser, live_server, admin_user.username, SMALL)
    page.goto(f"{live_server.url}/runs/{run.pk}/evaluation/?labels={label_set.pk}")
    shot(page, "loop-evaluation", full_page=False)
    assert page.locator("table").first.bounding_box()["y"] < SMALL[1]  # the summary comes first
    assert page.locator("svg.chart").first.bounding_box()["y"] < 2 * SMALL[1]
    assert page.locator("#labelled table tbody tr, #labelled ~ table tbody tr").count() <= 50
    assert "page 1 of 2" in page.locator("#labelled-pager").inner_text()
    page.select_option("select[name=error]", "fp")
    with page.expect_navigation():
        page.click("#labelled-filters button[type=submit]")
    cells = page.locator("#labelled ~ table.queue tbody tr").all_inner_texts()
    assert cells and all("false positive" in c for c in cells)
    with page.expect_navigation():
        page.locator("#labelled ~ table.queue tbody tr a").first.click()
    assert "/pairs/" in page.url


@pytest.mark.django_db(transaction=True)
def test_loop_upload_errors_are_grouped_by_rule(browser, live_server, admin_user, write):
    import io
    import zipfile

    from django.core.management import call_command
    from django.core.management.base import CommandError

    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        for i in range(500):
            archive.writestr(f"n{i:03d}.txt", f"note {i}")
    with pytest.raises(CommandError):
        call_command("import_corpus", str(write("notes.zip", data.getvalue())), "--corpus", "notes")
    page, _ = login(browser, live_server, admin_user.username, SMALL)
    page.goto(f"{live_server.url}/corpora/notes/")
    shot(page, "loop-upload-errors", full_page=False)
    groups = page.locator("ul.problem-groups > li")
    assert groups.count() == 1 and "500 times" in groups.first.inner_text()
    assert page.locator("ul.problem-groups ul.problems li").count() == 3


@pytest.mark.django_db(transaction=True)
def test_loop_sign_page_lists_what_is_signed(browser, live_server, import_records, editor):
    run = imported_run(import_records, "long", long_records(40), near=True)
    pairs = list(run.pairs.order_by("pk")[:60])
    for p in pairs:
        services.judgement_record(pair=p, reviewer=editor, verdict="keep-both", reason=f"checked {p.pk}")
    page, _ = login(browser, live_server, editor.username, SMALL)
    page.goto(f"{live_server.url}/review/sign/")
    shot(page, "loop-sign", full_page=False)
    assert f"run {run.pk} · long: 60" in page.inner_text("#signing + p")
    rows = page.locator("#unsigned-records tbody tr")
    assert rows.count() == 50 and f"checked {pairs[0].pk}" in rows.first.inner_text()
    with page.expect_navigation():
        page.click("a[rel=next]")
    assert page.locator("#unsigned-records tbody tr").count() == 10
