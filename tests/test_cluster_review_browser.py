"""Review by cluster and in bulk in Chromium at 1280×720 (screenshots: test-artifacts/screenshots/cluster-*)."""

from __future__ import annotations

import os

import pytest

from review.models import PRESET_REASONS, Judgement, ReviewAction
from screening.models import CandidatePair
from tests.browser_helpers import CHROMIUM, login, scrolls_sideways, shot
from tests.factories import imported_run
from tests.test_cluster_review import cluster_of, family_records

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Chromium is not installed (apt-get install chromium)"),
]
SMALL = (1280, 720)


@pytest.mark.django_db(transaction=True)
def test_cluster_of_ten_members_is_settled_in_at_most_five_keys(browser, live_server, import_records, editor):
    run = imported_run(import_records, "fam", family_records([10, 3]), near=True)
    number = cluster_of(run, "f0-m0")
    page, dialogs = login(browser, live_server, editor.username, SMALL)
    page.goto(f"{live_server.url}/review/runs/{run.pk}/clusters/{number}/")
    shot(page, "cluster-ten", full_page=False)
    assert not scrolls_sideways(page)
    assert page.locator("#members tbody tr").count() == 10
    members = page.locator("#members tbody tr td:nth-child(3) a").all_inner_texts()
    keys = ["2", "s", "3", "m", "Enter"]  # keep the second member, split the third off, the rest are copies
    for key in keys[:-1]:
        page.keyboard.press(key)
    assert page.input_value("#reason") == PRESET_REASONS["merge-entry"]  # the verdict key's preset, filled in
    with page.expect_navigation():
        page.keyboard.press(keys[-1])
    assert len(keys) <= 5
    action = ReviewAction.objects.get()
    assert action.judgements == CandidatePair.objects.filter(run=run, cluster=number).count(), action.judgements
    assert action.selection["keeper_doc_id"] == members[1]
    assert action.selection["splits"] == {members[2]: "valid-revision"}
    verdicts = set(Judgement.objects.filter(action=action).values_list("verdict", flat=True))
    assert verdicts == {"merge-entry", "valid-revision"}
    assert set(CandidatePair.objects.filter(run=run, cluster=number).values_list("status", flat=True)) == {"settled"}
    assert f"/clusters/{cluster_of(run, 'f1-m0')}/" in page.url  # on to the next cluster
    shot(page, "cluster-next", full_page=False)
    assert dialogs == []
