"""Handing pairs out: "next" leases a pair to one reviewer at a time (k at a time for k reviews), skip sends
a pair to the back of my own queue, and "next" stays in the pair's run."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest
from django.urls import reverse
from django.utils import timezone

from review import selectors, services
from review.models import Lease
from screening.models import CandidatePair
from tests.conftest import process_env
from tests.factories import copies_run, reviewers

ROOT = Path(__file__).resolve().parent.parent


def nexts_at_once(users, run) -> dict[str, str]:
    """Every user presses "next" at the same moment, each in a process of their own."""
    processes = [subprocess.Popen([sys.executable, "-m", "tests.next_client", u.username, str(run.pk)], cwd=ROOT,
                                  env=process_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
                 for u in users]
    for p in processes:
        assert p.stdout.readline().strip() == "ready"
    for p in processes:
        p.stdin.write("go\n")
        p.stdin.flush()
    answers = {}
    for user, p in zip(users, processes, strict=True):
        out, _ = p.communicate(timeout=120)
        assert p.returncode == 0
        answers[user.username] = out.strip()
    return answers


@pytest.mark.django_db(transaction=True)
def test_ten_editors_pressing_next_at_once_get_ten_different_pairs(import_records, django_user_model):
    run = copies_run(import_records, 12)
    answers = nexts_at_once(reviewers(10), run)
    assert "none" not in answers.values()
    assert len(set(answers.values())) == 10, answers


@pytest.mark.django_db(transaction=True)
def test_with_two_reviews_each_pair_goes_to_exactly_two_editors(import_records, django_user_model):
    run = copies_run(import_records, 5, reviews_required=2)
    answers = nexts_at_once(reviewers(10), run)
    assert "none" not in answers.values()
    assert sorted(Counter(answers.values()).values()) == [2] * 5, answers


@pytest.mark.django_db
def test_a_pair_held_by_its_reviewers_is_not_handed_to_a_third(import_records, django_user_model):
    run = copies_run(import_records, 1, reviews_required=2)
    a, b, c = reviewers(3)
    flt = selectors.QueueFilter(run=run.pk)
    first, second = services.next_pair(flt, a), services.next_pair(flt, b)
    assert first == second
    assert services.next_pair(flt, c) is None
    with pytest.raises(services.ReviewRefused, match=r"has the 2 reviewer\(s\) it needs"):
        services.judgement_record(pair=first, reviewer=c, verdict="keep-both", reason="late")


@pytest.mark.django_db
def test_a_lapsed_lease_frees_the_pair(import_records, django_user_model):
    run = copies_run(import_records, 1)
    a, b = reviewers(2)
    flt = selectors.QueueFilter(run=run.pk)
    held = services.next_pair(flt, a)
    assert services.next_pair(flt, b) is None
    Lease.objects.filter(pair=held, reviewer=a).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert services.next_pair(flt, b) == held


@pytest.mark.django_db
def test_a_lapsed_lease_is_taken_again_in_place(import_records, django_user_model):
    run = copies_run(import_records, 1)
    a, _ = reviewers(2)
    held = services.next_pair(selectors.QueueFilter(run=run.pk), a)
    Lease.objects.filter(pair=held, reviewer=a).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert services.lease_take(pair_id=held.pk, reviewer=a)
    lease = Lease.objects.get(pair=held, reviewer=a)
    assert lease.expires_at > timezone.now() + timedelta(seconds=60)


@pytest.mark.django_db
def test_a_fresh_lease_does_not_hold_a_pair_settled_since(import_records, django_user_model):
    run = copies_run(import_records, 1)
    a, _ = reviewers(2)
    held = services.next_pair(selectors.QueueFilter(run=run.pk), a)
    assert services.lease_take(pair_id=held.pk, reviewer=a)  # still fresh: held without renewal
    with services.derived_writes():  # the state an arbitration leaves (only review.services may write it)
        CandidatePair.objects.filter(pk=held.pk).update(status="settled")
    assert not services.lease_take(pair_id=held.pk, reviewer=a)
    assert not services.lease_renew(pair_id=held.pk, reviewer=a)


@pytest.mark.django_db
def test_saving_releases_the_lease(import_records, django_user_model):
    run = copies_run(import_records, 1, reviews_required=2)
    a, _ = reviewers(2)
    held = services.next_pair(selectors.QueueFilter(run=run.pk), a)
    services.judgement_record(pair=held, reviewer=a, verdict="merge-entry", reason="copy")
    assert not Lease.objects.filter(pair=held).exists()


@pytest.mark.django_db
def test_the_page_renews_the_lease_and_lets_go_when_left(import_records, editor, editor_client):
    run = copies_run(import_records, 1)
    held = services.next_pair(selectors.QueueFilter(run=run.pk), editor)
    lease = Lease.objects.get(pair=held, reviewer=editor)
    Lease.objects.filter(pk=lease.pk).update(expires_at=timezone.now() + timedelta(seconds=5))
    response = editor_client.post(reverse("review:lease", args=[held.pk]))
    assert response.json()["held"] is True
    assert Lease.objects.get(pk=lease.pk).expires_at > timezone.now() + timedelta(seconds=60)
    assert editor_client.post(reverse("review:lease", args=[held.pk]), {"release": "1"}).status_code == 204
    assert not Lease.objects.filter(pair=held).exists()


@pytest.mark.django_db
def test_the_pair_page_after_next_keeps_its_lease_without_taking_or_renewing_one(import_records, editor,
                                                                                editor_client):
    run = copies_run(import_records, 1)
    held = services.next_pair(selectors.QueueFilter(run=run.pk), editor)
    Lease.objects.filter(pair=held, reviewer=editor).update(expires_at=timezone.now() + timedelta(seconds=5))
    page = editor_client.get(reverse("review:pair", args=[held.pk])).content.decode()
    assert 'id="lease-form"' in page and 'id="not-held"' not in page  # the page renews it while open
    assert Lease.objects.get(pair=held, reviewer=editor).expires_at < timezone.now() + timedelta(seconds=6)
    with services.derived_writes():
        CandidatePair.objects.filter(pk=held.pk).update(status="settled")
    page = editor_client.get(reverse("review:pair", args=[held.pk])).content.decode()
    assert 'id="lease-form"' not in page and 'id="not-held"' in page


@pytest.mark.django_db
def test_skip_sends_the_pair_to_the_back_of_my_queue(import_records, editor, editor_client):
    run = copies_run(import_records, 3)
    first = services.next_pair(selectors.QueueFilter(run=run.pk), editor)
    response = editor_client.post(f"{reverse('review:skip', args=[first.pk])}?run={run.pk}")
    following = editor_client.get(response.url)
    assert following.status_code == 302 and f"/review/pairs/{first.pk}/" not in following.url
    assert not Lease.objects.filter(pair=first, reviewer=editor).exists()
    # Once the rest is judged, the skipped pair comes back.
    for p in run.pairs.exclude(pk=first.pk):
        services.judgement_record(pair=p, reviewer=editor, verdict="merge-entry", reason="copy")
    assert services.next_pair(selectors.QueueFilter(run=run.pk), editor) == first


@pytest.mark.django_db
def test_skipped_pairs_come_back_in_the_order_they_were_skipped(import_records, editor):
    run = copies_run(import_records, 3)
    flt = selectors.QueueFilter(run=run.pk)
    order = []
    for _ in range(3):
        p = services.next_pair(flt, editor)
        services.pair_skip(pair=p, reviewer=editor)
        order.append(p)
    again = []
    for _ in range(3):
        p = services.next_pair(flt, editor)
        services.pair_skip(pair=p, reviewer=editor)
        again.append(p)
    assert again == order


@pytest.mark.django_db
def test_save_and_next_stays_in_the_pairs_run(import_records, editor, editor_client):
    first_run = copies_run(import_records, 2, corpus="one")
    second_run = copies_run(import_records, 2, corpus="two")
    pair = second_run.pairs.order_by("pk").first()
    response = editor_client.post(reverse("review:judge", args=[pair.pk]),
                                  {"verdict": "merge-entry", "reason": "copy", "retained": "both"})
    assert f"run={second_run.pk}" in response.url
    following = editor_client.get(response.url)
    assert CandidatePair.objects.get(pk=int(following.url.split("/pairs/")[1].split("/")[0])).run == second_run
    assert first_run.pk != second_run.pk


@pytest.mark.django_db
def test_opening_a_full_pair_says_it_cannot_be_judged(import_records, django_user_model, editor_client):
    run = copies_run(import_records, 1)
    (other,) = reviewers(1)
    held = services.next_pair(selectors.QueueFilter(run=run.pk), other)
    page = editor_client.get(reverse("review:pair", args=[held.pk])).content.decode()
    assert 'id="not-held"' in page


@pytest.mark.django_db
def test_a_settled_pair_opens_without_a_lease_or_a_lock_held_only_by_its_judge(import_records, editor,
                                                                              editor_client):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    run = copies_run(import_records, 2)
    (other,) = reviewers(1)
    mine, theirs = run.pairs.order_by("pk")[:2]
    services.judgement_record(pair=mine, reviewer=editor, verdict="merge-entry", reason="the same guide")
    services.judgement_record(pair=theirs, reviewer=other, verdict="merge-entry", reason="the same guide")
    assert set(CandidatePair.objects.filter(pk__in=[mine.pk, theirs.pk]).values_list("status", flat=True)) == {
        "settled"}
    with CaptureQueriesContext(connection) as queries:
        theirs_page = editor_client.get(reverse("review:pair", args=[theirs.pk])).content.decode()
    read = [q["sql"] for q in queries.captured_queries]  # now: the next request empties the log
    mine_page = editor_client.get(reverse("review:pair", args=[mine.pk])).content.decode()
    assert 'id="not-held"' in theirs_page and 'id="not-held"' not in mine_page
    assert 'id="undo-form"' in mine_page and not Lease.objects.exists()
    assert any("review_currentverdict" in sql for sql in read)
    if connection.features.has_select_for_update:  # PostgreSQL: the pair's row is not locked to read it
        assert not any("FOR UPDATE" in sql for sql in read)


@pytest.mark.django_db
def test_next_locks_only_the_pair_row_and_the_reviewers_to_take_its_lease(import_records, editor):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    run = copies_run(import_records, 2)
    with CaptureQueriesContext(connection) as queries:
        pair = services.next_pair(selectors.QueueFilter(run=run.pk), editor)
    assert Lease.objects.filter(pair=pair, reviewer=editor).exists()
    if connection.features.has_select_for_update:  # PostgreSQL: the pair's row alone, not its run's
        locked = [q["sql"] for q in queries.captured_queries if "FOR UPDATE" in q["sql"]]
        # (a prepared statement is logged as QUERY = '…' - PARAMS = …, so the clause ends the SQL or its quote)
        assert len(locked) == 2 and re.search(r'FOR UPDATE OF "screening_candidatepair"(\'|$)', locked[0])
        assert '"auth_user"' in locked[1]  # the reviewer's row: their leases are counted one request at a time


@pytest.mark.django_db
def test_save_and_next_follows_the_pair_whatever_run_the_filters_named(import_records, editor, editor_client):
    first_run = copies_run(import_records, 2, corpus="one")
    second_run = copies_run(import_records, 2, corpus="two")
    pair = second_run.pairs.order_by("pk").first()
    url = f"{reverse('review:judge', args=[pair.pk])}?run={first_run.pk}&cluster=1"
    response = editor_client.post(url, {"verdict": "merge-entry", "reason": "copy", "retained": "both"})
    assert f"run={second_run.pk}" in response.url and "cluster" not in response.url


@pytest.mark.django_db
@pytest.mark.parametrize("sort", ["score", "confidence", "cluster"])
def test_next_walks_past_chunks_of_pairs_held_by_others_in_queue_order(import_records, django_user_model, sort):
    run = copies_run(import_records, 12)
    *others, last = reviewers(10)
    flt = selectors.QueueFilter(run=run.pk, sort=sort)
    held = [services.next_pair(flt, user, chunk=2) for user in others]  # each takes the next, two rows a chunk
    in_order = [p.pk for p in flt.apply(CandidatePair.objects.all()).order_by(*flt.ordering())]
    assert [p.pk for p in held] == in_order[:9]
    assert services.next_pair(flt, last, chunk=2).pk == in_order[9]
