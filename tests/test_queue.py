"""The review queue: one run at a time, the pairs its review threshold sends to review (lower ones on request,
marked), a total count, paging both ways, labelled filters, `n` for the next pair."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from review import selectors, services
from review.selectors import queue as queue_selectors
from screening.models import CandidatePair
from screening.templatetags.labels import verdict_label
from tests.factories import completed_run, seed_run

RECORDS = [{"doc_id": f"d{i:03}", "language": "en", "body": f"common text body number {i // 2} here"}
           for i in range(60)]


@pytest.fixture
def spread_run(import_records):
    """A near run whose pairs spread from 1.0 down to the 0.3 storage floor, below the 0.7 threshold."""
    return seed_run(import_records, corpus="many", records=RECORDS)


def walk(flt, limit):
    seen, cursor = [], ""
    while True:
        page = selectors.queue_page(flt, after=cursor, limit=limit)
        seen += [r.pk for r in page.rows]
        cursor = page.next
        if not cursor:
            return seen


@pytest.mark.django_db
def test_a_runs_queue_holds_the_pairs_at_or_above_its_threshold(spread_run, editor_client):
    pairs = CandidatePair.objects.filter(run=spread_run)
    at_or_above = pairs.filter(jaccard__gte=0.7).count()
    assert 0 < at_or_above < pairs.count()
    assert selectors.queue_count(selectors.QueueFilter(run=spread_run.pk)) == at_or_above
    page = editor_client.get(reverse("review:queue"), {"run": spread_run.pk}).content.decode()
    assert f"<strong>{at_or_above}</strong> pairs" in page and "at or above the review threshold 0.70" in page
    assert 'class="below"' not in page


@pytest.mark.django_db
def test_pairs_below_the_threshold_show_only_on_request_and_are_marked(spread_run, editor_client):
    flt = selectors.QueueFilter(run=spread_run.pk, below=True, sort="score")
    assert len(walk(flt, 100)) == CandidatePair.objects.filter(run=spread_run).count()
    lowest = CandidatePair.objects.filter(run=spread_run).order_by("jaccard", "-id").first()
    assert walk(flt, 1000)[-1] == lowest.pk
    page = editor_client.get(reverse("review:queue"), {"run": spread_run.pk, "below": "on", "max_score": "0.69"})
    page = page.content.decode()
    assert 'class="below"' in page and "below the review threshold" in page


@pytest.mark.django_db
def test_review_next_hands_out_no_pair_below_the_threshold(spread_run, editor):
    flt = selectors.QueueFilter(run=spread_run.pk, sort="confidence")
    handed = []
    while (pair := services.next_pair(flt, editor)) is not None:
        services.judgement_record(pair=pair, reviewer=editor, verdict="keep-both", reason="test", retained="both")
        handed.append(pair.jaccard)
    assert handed and min(handed) >= 0.7
    assert len(handed) == CandidatePair.objects.filter(run=spread_run, jaccard__gte=0.7).count()


@pytest.mark.django_db
@pytest.mark.parametrize("sort", ["score", "cluster", "confidence"])
def test_the_queue_pages_both_ways(spread_run, sort):
    flt = selectors.QueueFilter(run=spread_run.pk, sort=sort, below=True)
    forward, pages, cursor = walk(flt, 7), [], ""
    while True:
        page = selectors.queue_page(flt, after=cursor, limit=7)
        pages.append(page)
        if not page.next:
            break
        cursor = page.next
    assert pages[0].prev == "" and all(p.prev for p in pages[1:])
    # From the last page, "previous" leads back through the very same pages to the first.
    back, page = [], pages[-1]
    while page.prev:
        page = selectors.queue_page(flt, before=page.prev, limit=7)
        back.insert(0, [r.pk for r in page.rows])
    assert back == [[r.pk for r in p.rows] for p in pages[:-1]]
    assert sum(back, []) + [r.pk for r in pages[-1].rows] == forward and len(set(forward)) == len(forward)


@pytest.mark.django_db
def test_a_runs_queue_by_score_reads_through_kept_queries_the_same_pages(spread_run, editor, editor2):
    from screening.models import ScreeningRun

    config = {**spread_run.config, "near": {**spread_run.config["near"], "threshold": 0.3}}
    ScreeningRun.objects.filter(pk=spread_run.pk).update(config=config)  # every stored pair: pages to walk
    run = selectors.complete_run(spread_run.pk)
    flt = selectors.QueueFilter(run=run.pk)
    assert queue_selectors._by_score(flt, run, 50) and not queue_selectors._by_score(
        selectors.QueueFilter(run=run.pk, status="pending"), run, 50)
    first = CandidatePair.objects.filter(run=run).order_by("-jaccard", "id").first()
    services.judgement_record(pair=first, reviewer=editor, verdict="keep-both", reason="r")
    pages, cursor = 0, ""
    while True:
        kept = selectors.queue_page(flt, after=cursor, reviewer=editor2, all_visible=False, run=run)
        # Without the run read beforehand, the page comes from the queryset.
        assert kept == selectors.queue_page(flt, after=cursor, reviewer=editor2, all_visible=False)
        pages += 1
        if not kept.next:
            break
        cursor = kept.next
    assert pages > 2 and kept.prev
    top = selectors.queue_page(flt, after="1.5:0", run=run)  # a cursor before every pair: the first page
    assert top == selectors.queue_page(flt, after="1.5:0") and top.rows[0].pk == first.pk and top.prev == ""
    with pytest.raises(selectors.BadCursor):
        selectors.queue_page(flt, after="0.5:x", run=run)


@pytest.mark.django_db
def test_the_queue_opens_on_the_latest_run_with_a_picker(import_records, editor_client):
    older = seed_run(import_records)
    newer = completed_run("zh", near=True)
    page = editor_client.get(reverse("review:queue")).content.decode()
    assert f"run {newer.pk} · zh" in page and f'<option value="{older.pk}">' in page
    assert f'<option value="{newer.pk}" selected>' in page
    rows = re.findall(r'href="/review/pairs/(\d+)/', page)
    assert rows and {CandidatePair.objects.get(pk=pk).run_id for pk in rows} == {newer.pk}


@pytest.mark.django_db
def test_every_queue_filter_has_a_label(spread_run, editor_client):
    page = editor_client.get(reverse("review:queue"), {"run": spread_run.pk}).content.decode()
    form = page[page.index('id="queue-filters"'):page.index("</form>", page.index('id="queue-filters"'))]
    controls = [c for c in re.findall(r"<(?:select|input)\b[^>]*>", form) if 'type="hidden"' not in c]
    inside = sum(len(re.findall(r"<(?:select|input)\b", block)) for block in re.findall(r"<label.*?</label>", form,
                                                                                         re.S))
    assert len(controls) == inside >= 9


@pytest.mark.django_db
def test_queue_pager_links_lead_to_the_next_and_previous_pages(spread_run, editor_client):
    first = editor_client.get(reverse("review:queue"), {"run": spread_run.pk, "below": "on"}).content.decode()
    assert "showing 1–50" in first and "Previous" not in first
    href = re.search(r'href="\?([^"]+)" rel="next"', first).group(1).replace("&amp;", "&")
    second = editor_client.get(f"{reverse('review:queue')}?{href}").content.decode()
    assert "showing 51–100" in second and 'rel="prev"' in second
    back = re.search(r'href="\?([^"]+)" rel="prev"', second).group(1).replace("&amp;", "&")
    again = editor_client.get(f"{reverse('review:queue')}?{back}").content.decode()
    assert re.findall(r'href="/review/pairs/(\d+)/', again) == re.findall(r'href="/review/pairs/(\d+)/', first)


@pytest.mark.django_db
def test_rows_are_read_fifty_at_a_time_in_the_order_asked_with_the_reviewers_mark(spread_run, editor):
    ids = list(CandidatePair.objects.filter(run=spread_run).order_by("-pk").values_list("pk", flat=True))
    assert len(ids) > 50  # more than one kept batch
    judged = CandidatePair.objects.get(pk=ids[-1])
    services.judgement_record(pair=judged, reviewer=editor, verdict="keep-both", reason="r", retained="both")
    for reviewer, mark in ((None, ""), (editor, "keep-both")):
        rows = queue_selectors._rows_for_listing(ids, reviewer)
        assert [r.pk for r in rows] == ids
        assert [r.mine for r in rows] == [""] * (len(ids) - 1) + [mark]
    pair = CandidatePair.objects.select_related("left", "right", "run__corpus").get(pk=ids[0])
    row = queue_selectors._rows_for_listing([pair.pk])[0]
    assert (row.left, row.right, row.corpus, row.jaccard, row.status) == (
        pair.left.doc_id, pair.right.doc_id, pair.run.corpus.name, pair.jaccard, pair.status)
    assert queue_selectors._rows_for_listing([]) == []


@pytest.mark.django_db
def test_the_kept_filter_form_follows_the_filters_and_the_role(spread_run, editor_client, arbiter_client, settings):
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                                   "LOCATION": "kept-filter-form-test"}}
    from django.core.cache import cache

    cache.clear()

    def selected_status(client, **query):
        page = client.get(reverse("review:queue"), {"run": spread_run.pk, **query}).content.decode()
        form = page[page.index('id="queue-filters"'):page.index("</form>", page.index('id="queue-filters"'))]
        status = form[form.index('name="status"'):form.index("</select>", form.index('name="status"'))]
        return re.findall(r'<option value="(\w*)" selected', status), "settled" in status

    for _ in range(2):  # drawn, then kept
        assert selected_status(editor_client, status="pending") == (["pending"], False)
        assert selected_status(editor_client, status="judged") == (["judged"], False)
        assert selected_status(editor_client) == ([""], False)
        assert selected_status(arbiter_client, status="judged") == (["judged"], True)  # arbiters filter by more
    cache.clear()


@pytest.mark.django_db
@pytest.mark.parametrize("language", ["en", "fa", "zh-hans"])
def test_the_queue_names_a_suggestion_as_the_pair_page_does_in_the_pages_language(spread_run, editor_client,
                                                                                  language):
    from django.utils import translation

    suggested = CandidatePair.objects.filter(run=spread_run, jaccard__gte=0.7).values_list(
        "suggested_verdict", flat=True)
    verdict = next(v for v in suggested if v)
    with translation.override(language):
        label = verdict_label(verdict)
    with translation.override("en"):
        english = verdict_label(verdict)
    page = editor_client.get(reverse("review:queue"), {"run": spread_run.pk},
                             HTTP_ACCEPT_LANGUAGE=language).content.decode()
    cells = re.findall(r'<td>([^<]+) <span class="hint">', page)
    assert cells and label in cells and verdict not in cells
    assert (label == english) == (language == "en")  # translated, not the English label
