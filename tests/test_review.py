"""The review app: verdicts, insert-only judgements, blindness, arbitration, queue, undo, dashboard."""

from __future__ import annotations

import csv
import threading

import pytest
from django.contrib.auth.models import Group
from django.db import connection, connections, transaction
from django.test import Client
from django.urls import reverse

from dedup_site import roles
from review import selectors, services
from review.kappa import cohen_kappa
from review.models import Arbitration, Judgement
from screening.models import CandidatePair
from tests.factories import reviewer, seed_run
from tests.seeds import SEED000


def pair(run, left, right) -> CandidatePair:
    return CandidatePair.objects.get(run=run, left__doc_id=left, right__doc_id=right)


def judge(client, p, verdict, reason="because", retained="both", **extra):
    return client.post(reverse("review:judge", args=[p.pk]),
                       {"verdict": verdict, "reason": reason, "retained": retained, **extra})


@pytest.mark.django_db
def test_seed001_flow_with_two_reviews_and_an_arbitration(import_records, editor, editor2, arbiter, editor_client,
                                                          editor2_client, arbiter_client):
    run = seed_run(import_records, reviews_required=2)
    ab, ac = pair(run, "A", "B"), pair(run, "A", "C")
    judge(editor_client, ab, "merge-entry", "same guide, reformatted", related_source="demo-B")
    judge(editor_client, ac, "valid-revision", "每周 became 每天", retained="both")
    ab.refresh_from_db()
    assert ab.status == "judged"  # one of two reviews
    judge(editor2_client, ab, "keep-both", "different channels")
    ab.refresh_from_db()
    assert ab.status == "needs_arbitration" and ab.flag == "the reviewers disagree"
    queue = editor_client.get(reverse("review:queue"), {"run": run.pk}).content.decode()
    assert '<td class="status-needs_arbitration">needs arbitration</td>' in queue
    assert f'href="{reverse("review:pair", args=[ab.pk])}?run={run.pk}"' in queue
    response = arbiter_client.post(reverse("review:arbitrate", args=[ab.pk]),
                                   {"verdict": "merge-entry", "reason": "formatting only", "retained": "left"})
    assert response.status_code == 302
    ab.refresh_from_db()
    assert (ab.status, ab.final_verdict) == ("settled", "merge-entry")
    rows = list(Judgement.objects.filter(pair__run=run).order_by("id").values_list(
        "pair_id", "reviewer__username", "verdict", "reason", "retained", "related_source"))
    assert rows == [
        (ab.pk, "erin-editor", "merge-entry", "same guide, reformatted", "both", "demo-B"),
        (ac.pk, "erin-editor", "valid-revision", "每周 became 每天", "both", ""),
        (ab.pk, "ed-editor", "keep-both", "different channels", "both", ""),
    ]
    assert list(Arbitration.objects.values_list("pair_id", "arbiter__username", "verdict", "reason", "retained")) == [
        (ab.pk, "arty-arbiter", "merge-entry", "formatting only", "left")]


@pytest.mark.django_db
def test_unanimous_reviews_settle_on_their_own(import_records, editor, editor2):
    run = seed_run(import_records, reviews_required=2)
    ab = pair(run, "A", "B")
    services.judgement_record(pair=ab, reviewer=editor, verdict="merge-entry", reason="copy")
    services.judgement_record(pair=ab, reviewer=editor2, verdict="merge-entry", reason="copy too")
    ab.refresh_from_db()
    assert (ab.status, ab.final_verdict) == ("settled", "merge-entry")


@pytest.mark.django_db
def test_an_arbitration_verdict_sends_the_pair_to_arbitration(import_records, editor):
    run = seed_run(import_records)
    ab = pair(run, "A", "B")
    services.judgement_record(pair=ab, reviewer=editor, verdict="arbitration", reason="not sure")
    ab.refresh_from_db()
    assert ab.status == "needs_arbitration" and ab.flag == "a reviewer asked for arbitration"


@pytest.mark.django_db
def test_a_reason_is_required(import_records, editor, editor_client):
    run = seed_run(import_records)
    ab = pair(run, "A", "B")
    with pytest.raises(services.ReviewRefused, match="a reason is required"):
        services.judgement_record(pair=ab, reviewer=editor, verdict="merge-entry", reason="   ")
    # The page records the verdict's preset reason when none is typed; a verdict without a preset needs one.
    services.review_policy_set(corpus=run.corpus, user=None, allow_self_arbitration=False,
                               preset_reasons={"merge-entry": ""})
    judge(editor_client, ab, "merge-entry", reason="")
    assert not Judgement.objects.exists()


@pytest.mark.django_db
def test_an_unknown_verdict_is_refused(import_records, editor):
    run = seed_run(import_records)
    with pytest.raises(services.ReviewRefused, match="verdict 'delete' is not one of"):
        services.judgement_record(pair=pair(run, "A", "B"), reviewer=editor, verdict="delete", reason="x")


# --- insert-only ---------------------------------------------------------------------------------


@pytest.fixture
def one_judgement(import_records, editor):
    run = seed_run(import_records)
    return services.judgement_record(pair=pair(run, "A", "B"), reviewer=editor, verdict="merge-entry", reason="copy")


@pytest.mark.django_db
def test_a_judgement_cannot_be_saved_again(one_judgement):
    one_judgement.reason = "changed my mind"
    with pytest.raises(PermissionError, match="insert-only"):
        one_judgement.save()


@pytest.mark.django_db
def test_judgements_cannot_be_updated_or_deleted_through_the_orm(one_judgement):
    with pytest.raises(PermissionError):
        Judgement.objects.filter(pk=one_judgement.pk).update(verdict="keep-both")
    with pytest.raises(PermissionError):
        Judgement.objects.all().delete()
    with pytest.raises(PermissionError):
        one_judgement.delete()
    assert Judgement.objects.get().verdict == "merge-entry"


@pytest.mark.django_db
def test_the_database_refuses_an_update(one_judgement):
    with pytest.raises(Exception, match="insert-only"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE review_judgement SET verdict = 'keep-both'")
    assert Judgement.objects.get().verdict == "merge-entry"


@pytest.mark.django_db
def test_the_database_refuses_a_delete_on_postgresql(one_judgement):
    if connection.vendor != "postgresql":
        pytest.skip("row deletes are refused by the database on PostgreSQL only")
    with pytest.raises(Exception, match="insert-only"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM review_judgement")
    assert Judgement.objects.count() == 1


@pytest.mark.django_db
def test_the_admin_cannot_change_or_delete_a_judgement(one_judgement, client, django_user_model):
    boss = django_user_model.objects.create_superuser("boss", password="x" * 12)
    client.force_login(boss)
    change = reverse("admin:review_judgement_change", args=[one_judgement.pk])
    delete = reverse("admin:review_judgement_delete", args=[one_judgement.pk])
    client.post(change, {"verdict": "keep-both", "reason": "edited"})
    assert client.post(delete, {"post": "yes"}).status_code == 403
    assert Judgement.objects.get().reason == "copy"


@pytest.mark.django_db
def test_no_view_updates_a_judgement(one_judgement, editor_client):
    # Judging again adds a row: the first one stays as it was.
    judge(editor_client, one_judgement.pair, "keep-both", "second thoughts")
    assert list(Judgement.objects.order_by("id").values_list("verdict", "reason")) == [
        ("merge-entry", "copy"), ("keep-both", "second thoughts")]


@pytest.mark.django_db(transaction=True)
def test_two_editors_saving_at_the_same_moment_both_keep_their_rows(import_records, editor, editor2):
    run = seed_run(import_records, reviews_required=2)
    ab = pair(run, "A", "B")
    barrier, errors = threading.Barrier(2), []

    def save(user, verdict):
        try:
            barrier.wait()
            services.judgement_record(pair=ab, reviewer=user, verdict=verdict, reason=f"{user.username} says so")
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=save, args=(editor, "merge-entry")),
               threading.Thread(target=save, args=(editor2, "keep-both"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(Judgement.objects.values_list("reviewer__username", "verdict")) == [
        ("ed-editor", "keep-both"), ("erin-editor", "merge-entry")]
    ab.refresh_from_db()
    assert ab.status == "needs_arbitration"


# --- blindness, permissions ----------------------------------------------------------------------


@pytest.mark.django_db
def test_other_verdicts_are_hidden_until_i_give_mine(import_records, editor, editor2_client):
    run = seed_run(import_records, reviews_required=2)
    ab = pair(run, "A", "B")
    services.judgement_record(pair=ab, reviewer=editor, verdict="merge-entry", reason="SECRET-REASON-123")
    before = editor2_client.get(reverse("review:pair", args=[ab.pk])).content.decode()
    assert "SECRET-REASON-123" not in before and "erin-editor" not in before
    assert "hidden until you give yours" in before
    judge(editor2_client, ab, "keep-both", "mine")
    after = editor2_client.get(reverse("review:pair", args=[ab.pk])).content.decode()
    assert "SECRET-REASON-123" in after and "erin-editor" in after


@pytest.mark.django_db
def test_editors_cannot_arbitrate(import_records, editor_client):
    run = seed_run(import_records)
    ab = pair(run, "A", "B")
    assert editor_client.get(reverse("review:arbitration_queue")).status_code == 403
    response = editor_client.post(reverse("review:arbitrate", args=[ab.pk]), {"verdict": "keep-both", "reason": "x"})
    assert response.status_code == 403 and not Arbitration.objects.exists()


@pytest.mark.django_db
def test_admins_without_the_review_role_cannot_judge(import_records, admin_client):
    run = seed_run(import_records)
    assert judge(admin_client, pair(run, "A", "B"), "keep-both").status_code == 403


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["review:queue", "review:arbitration_queue", "review:next"])
def test_anonymous_users_are_sent_to_login(client, name):
    response = client.get(reverse(name))
    assert response.status_code == 302 and "/login/" in response.url


@pytest.mark.django_db
def test_csrf_is_enforced_on_judging_and_undo(import_records, editor):
    run = seed_run(import_records)
    client = Client(enforce_csrf_checks=True)
    client.force_login(editor)
    assert judge(client, pair(run, "A", "B"), "keep-both").status_code == 403
    assert client.post(reverse("review:undo")).status_code == 403
    assert not Judgement.objects.exists()


@pytest.mark.django_db
def test_arbitration_of_a_pair_that_does_not_need_it_is_refused(import_records, arbiter):
    run = seed_run(import_records)
    with pytest.raises(services.ReviewRefused, match="not waiting for arbitration"):
        services.arbitration_record(pair=pair(run, "A", "B"), arbiter=arbiter, verdict="keep-both", reason="x")


# --- queue, next, undo ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_saving_moves_to_the_next_pair_i_have_not_judged(import_records, editor, editor_client):
    run = seed_run(import_records)
    first = services.next_pair(selectors.QueueFilter(run=run.pk), editor)
    response = judge(editor_client, first, "merge-entry", "copy")
    assert response.url.startswith(reverse("review:next"))
    following = editor_client.get(response.url)
    assert following.status_code == 302 and f"/review/pairs/{first.pk}/" not in following.url


@pytest.mark.django_db
def test_review_next_says_when_nothing_is_left(import_records, editor, editor_client):
    run = seed_run(import_records)
    for p in run.pairs.all():
        services.judgement_record(pair=p, reviewer=editor, verdict="keep-both", reason="done")
    response = editor_client.get(reverse("review:next"), follow=True)
    assert "Nothing left for you to review" in response.content.decode()


@pytest.mark.django_db
def test_undo_records_a_newer_judgement_and_returns_the_pair_to_my_queue(import_records, editor, editor_client):
    run = seed_run(import_records)
    ab = pair(run, "A", "B")
    judge(editor_client, ab, "merge-entry", "copy")
    ab.refresh_from_db()
    assert ab.status == "settled"
    response = editor_client.post(reverse("review:undo"))
    assert response.url.startswith(reverse("review:pair", args=[ab.pk]))
    assert list(Judgement.objects.order_by("id").values_list("verdict", "supersedes_id")) == [
        ("merge-entry", None), ("withdrawn", Judgement.objects.order_by("id").first().pk)]
    ab.refresh_from_db()
    assert ab.status == "pending"
    flt = selectors.QueueFilter(run=run.pk)
    assert ab.pk in [p.pk for p in flt.apply(CandidatePair.objects.all()).filter(status="pending")]
    assert services.next_pair(selectors.QueueFilter(run=run.pk, min_score=0.99), editor).pk == ab.pk


@pytest.mark.django_db
def test_queue_filters_by_revision_signal_and_shows_the_badge(import_records, editor_client):
    run = seed_run(import_records)
    page = editor_client.get(reverse("review:queue"), {"run": run.pk, "signals": "yes"}).content.decode()
    signal = '<span dir="auto">每周归档</span> <span class="arrow">→</span> <span dir="auto">每天归档</span>'
    assert signal in page and "A · C" in page and "B · C" in page and "A · B" not in page
    page = editor_client.get(reverse("review:queue"), {"run": run.pk, "signals": "no"}).content.decode()
    assert "A · B" in page and "A · C" not in page


@pytest.mark.django_db
def test_queue_pages_with_a_keyset_cursor(import_records):
    records = [{"doc_id": f"d{i:03}", "language": "en", "body": f"common text body number {i // 2} here"}
               for i in range(60)]
    run = seed_run(import_records, corpus="many", records=records)
    flt = selectors.QueueFilter(run=run.pk)
    seen, cursor = [], ""
    while True:
        page = selectors.queue_page(flt, after=cursor, limit=7)
        rows, cursor = page.rows, page.next
        seen.extend(p.pk for p in rows)
        if not cursor:
            break
    ordered = list(CandidatePair.objects.filter(run=run, jaccard__gte=0.7).order_by("-jaccard", "id")
                   .values_list("pk", flat=True))
    assert seen == ordered and len(seen) > 14
    by_cluster = selectors.QueueFilter(run=run.pk, sort="cluster")
    seen, cursor = [], ""
    while True:
        page = selectors.queue_page(by_cluster, after=cursor, limit=5)
        rows, cursor = page.rows, page.next
        seen.extend(p.pk for p in rows)
        if not cursor:
            break
    assert sorted(seen) == sorted(ordered) and len(set(seen)) == len(seen)


@pytest.mark.django_db
def test_export_pairs_has_the_revision_signals_column(import_records, tmp_path):
    from django.core.management import call_command

    run = seed_run(import_records, corpus="fa", records=SEED000)
    call_command("export_pairs", str(run.pk), "--out", str(tmp_path / "p.csv"))
    with open(tmp_path / "p.csv", encoding="utf-8", newline="") as f:
        rows = {(r["left_id"], r["right_id"]): r for r in csv.DictReader(f)}
    assert rows[("A", "C")]["revision_signals"] == "برحسب V است → برحسب mV است"
    assert rows[("B", "A")]["revision_signals"] == ""


# --- pair page -----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_pair_page_shows_both_texts_metadata_scores_diff_and_keys(import_records, editor_client):
    run = seed_run(import_records)
    ac = pair(run, "A", "C")
    page = editor_client.get(reverse("review:pair", args=[ac.pk])).content.decode()
    for text in ("demo-A", "demo-C", "Exact Jaccard", "MinHash estimate", "Template share", "Jaccard without template",
                 'unit: <span dir="auto">每周归档</span> <span class="arrow">→</span> <span dir="auto">每天归档</span>',
                 '<span class="run c0" data-run="0"', '<kbd data-layout="">m</kbd>', '<kbd data-layout="">k</kbd>',
                 "Shared shingles", "Raw excerpts", ac.left.upload.source.sha256):
        assert text in page, text


@pytest.mark.django_db
def test_pair_page_escapes_hostile_documents(import_records, editor_client):
    hostile = 'Intro <script>alert(1)</script> and "><img src=x onerror=alert(1)> closing words of the page.'
    run = seed_run(import_records, corpus="h", records=[
        {"doc_id": 'h1"><b>', "language": "en", "body": "One. " + hostile, "title": "<i>title</i>",
         "source_id": "<u>src</u>", "version": "<s>2</s>", "collected_at": "2024-01-02"},
        {"doc_id": "h2", "language": "en", "body": "Two. " + hostile}])
    page = editor_client.get(reverse("review:pair", args=[run.pairs.get().pk])).content.decode()
    for raw in ("<script>alert(1)", "<img src=x", "<b>", "<i>title", "<u>src", "<s>2"):
        assert raw not in page, raw
    for escaped in ("&lt;script&gt;alert(1)&lt;/script&gt;", 'h1&quot;&gt;&lt;b&gt;', "&lt;i&gt;title&lt;/i&gt;",
                    "&lt;u&gt;src&lt;/u&gt;", "version <bdi>&lt;s&gt;2&lt;/s&gt;</bdi>", "collected 2024-01-02"):
        assert escaped in page, escaped


# --- clusters and agreement ----------------------------------------------------------------------


@pytest.mark.django_db
def test_a_contradicting_cluster_is_flagged_for_arbitration(import_records, editor):
    run = seed_run(import_records)
    services.judgement_record(pair=pair(run, "A", "B"), reviewer=editor, verdict="merge-entry", reason="copy")
    services.judgement_record(pair=pair(run, "B", "C"), reviewer=editor, verdict="merge-entry", reason="copy")
    services.judgement_record(pair=pair(run, "A", "C"), reviewer=editor, verdict="keep-both", reason="different")
    ac = pair(run, "A", "C")
    assert ac.status == "needs_arbitration" and ac.flag.startswith("contradicts cluster 1")


@pytest.mark.django_db
def test_dashboard_shows_progress_verdicts_and_kappa(import_records, editor, editor2, admin_client):
    run = seed_run(import_records, reviews_required=2)
    verdicts = {("A", "B"): ("merge-entry", "merge-entry"), ("A", "C"): ("valid-revision", "valid-revision"),
                ("B", "C"): ("valid-revision", "keep-both")}
    for (left, right), (first, second) in verdicts.items():
        services.judgement_record(pair=pair(run, left, right), reviewer=editor, verdict=first, reason="r")
        services.judgement_record(pair=pair(run, left, right), reviewer=editor2, verdict=second, reason="r")
    # By hand: observed 2/3; editor {merge 1, valid 2}, editor2 {merge 1, valid 1, keep 1}:
    # expected (1·1 + 2·1) / 9 = 1/3; kappa = (2/3 - 1/3) / (1 - 1/3) = 0.5.
    board = selectors.dashboard(run)
    assert board.agreement == [("ed-editor", "erin-editor", pytest.approx(0.5), 3)]
    assert board.backlog == 1 and board.final_verdicts == {"merge-entry": 1, "valid-revision": 1}
    page = admin_client.get(reverse("review:dashboard", args=[run.pk])).content.decode()
    assert "0.500" in page and "arbitration backlog 1" in page


def test_kappa_edge_cases():
    assert cohen_kappa({}, {"x": "a"}) == (None, 0)
    assert cohen_kappa({1: "a", 2: "a"}, {1: "a", 2: "a"}) == (1.0, 2)
    assert cohen_kappa({1: "a", 2: "b"}, {1: "b", 2: "a"}) == (-1.0, 2)


@pytest.mark.django_db
def test_every_role_group_holds_exactly_the_permissions_of_the_role_table():
    for name, perms in roles.ROLE_PERMISSIONS.items():
        group = Group.objects.get(name=name)
        held = {f"{p.content_type.app_label}.{p.codename}" for p in group.permissions.select_related("content_type")}
        assert held == set(perms), name


@pytest.mark.django_db
def test_queue_marks_the_pairs_i_have_judged_and_no_others(import_records, editor, editor2, editor_client,
                                                           editor2_client):
    import re

    run = seed_run(import_records, reviews_required=2)
    ab = pair(run, "A", "B")
    judge(editor_client, ab, "merge-entry", "same guide")

    def marked(client) -> set[str]:
        page = client.get(reverse("review:queue"), {"run": run.pk}).content.decode()
        rows = re.findall(r'<tr>\s*<td class="cut"[^>]*><div class="cut-line"><a href="[^"]+"[^>]*>([^<]+)</a>.*?'
                          r'<td>(✓?)</td>\s*</tr>', page,
                          re.S)
        assert len(rows) == CandidatePair.objects.filter(run=run).count()
        return {name for name, mark in rows if mark}

    assert marked(editor_client) == {"A · B"}
    assert marked(editor2_client) == set()
    editor_client.post(reverse("review:undo"))  # withdrawn: no longer a current verdict
    assert marked(editor_client) == set()


# --- arbitration rules -----------------------------------------------------------------------------


def _disagree(run, editor, arbiter):
    ab = pair(run, "A", "B")
    services.judgement_record(pair=ab, reviewer=editor, verdict="merge-entry", reason="copy")
    services.judgement_record(pair=ab, reviewer=arbiter, verdict="keep-both", reason="different channels")
    ab.refresh_from_db()
    assert ab.status == "needs_arbitration"
    return ab


@pytest.mark.django_db
def test_an_arbiter_cannot_settle_a_disagreement_they_took_part_in(import_records, editor, arbiter,
                                                                   arbiter_client):
    run = seed_run(import_records, reviews_required=2)
    ab = _disagree(run, editor, arbiter)
    with pytest.raises(services.ReviewRefused, match="another arbiter must settle it"):
        services.arbitration_record(pair=ab, arbiter=arbiter, verdict="merge-entry", reason="mine")
    queue = arbiter_client.get(reverse("review:arbitration_queue")).content.decode()
    assert "you took part: another arbiter must settle it" in queue
    page = arbiter_client.get(reverse("review:arbitrate", args=[ab.pk])).content.decode()
    assert "another arbiter must settle it" in page and 'id="judge-form"' not in page
    response = arbiter_client.post(reverse("review:arbitrate", args=[ab.pk]),
                                   {"verdict": "merge-entry", "reason": "mine", "retained": "both"}, follow=True)
    assert "another arbiter must settle it" in response.content.decode()
    assert not Arbitration.objects.filter(pair=ab).exists()


@pytest.mark.django_db
def test_a_corpus_may_allow_self_arbitration_which_is_marked(import_records, editor, arbiter, admin_client):
    run = seed_run(import_records, reviews_required=2)
    ab = _disagree(run, editor, arbiter)
    admin_client.post(reverse("review:policy", args=["zh"]), {"allow_self_arbitration": "on"})
    arbitration = services.arbitration_record(pair=ab, arbiter=arbiter, verdict="merge-entry", reason="mine")
    assert arbitration.self_arbitrated
    from review.sheets import sheet_exports

    export = sheet_exports.sheet_export_build(export=sheet_exports.sheet_export_create(run=run))
    path, _ = sheet_exports.export_paths(export)
    records = [row["record"] for row in csv.DictReader(path.read_text(encoding="utf-8").splitlines())]
    assert records == ["judgement", "judgement", "self-arbitration"]


@pytest.mark.django_db
def test_another_arbiter_settles_a_disagreement(import_records, editor, arbiter, django_user_model):
    run = seed_run(import_records, reviews_required=2)
    ab = _disagree(run, editor, arbiter)
    other = reviewer("ora-arbiter", "arbiter")
    assert not services.arbitration_record(pair=ab, arbiter=other, verdict="merge-entry", reason="x").self_arbitrated


@pytest.mark.django_db
def test_a_judgement_after_arbitration_is_refused_in_every_path(import_records, editor, editor2, arbiter,
                                                                editor_client):
    run = seed_run(import_records, reviews_required=2)
    ab = _disagree(run, editor, editor2)
    services.arbitration_record(pair=ab, arbiter=arbiter, verdict="merge-entry", reason="settled")
    with pytest.raises(services.ReviewRefused, match="settled by arbitration"):
        services.judgement_record(pair=ab, reviewer=editor2, verdict="merge-entry", reason="changed my mind")
    response = judge(editor_client, ab, "keep-both", "again")
    assert response.status_code == 302 and f"/review/pairs/{ab.pk}/" in response.url
    with pytest.raises(services.ReviewRefused, match="settled by arbitration"):
        services.judgement_undo(reviewer=editor)
    page = editor_client.post(reverse("review:undo"), follow=True).content.decode()
    assert "Not undone" in page
    assert Judgement.objects.filter(pair=ab).count() == 2
    ab.refresh_from_db()
    assert (ab.status, ab.final_verdict) == ("settled", "merge-entry")


@pytest.mark.django_db
def test_sheet_rows_follow_the_order_in_which_things_happened(import_records, editor, editor2, arbiter):
    from review.sheets import sheet_exports

    run = seed_run(import_records, reviews_required=2)
    ab = _disagree(run, editor, editor2)
    services.arbitration_record(pair=ab, arbiter=arbiter, verdict="merge-entry", reason="settled")
    # A judgement recorded after the arbitration (as an earlier release allowed) is listed after it.
    Judgement.objects.create(pair=ab, reviewer=editor2, verdict="merge-entry", reason="late", retained="both")
    export = sheet_exports.sheet_export_build(export=sheet_exports.sheet_export_create(run=run))
    path, _ = sheet_exports.export_paths(export)
    rows = list(csv.DictReader(path.read_text(encoding="utf-8").splitlines()))
    assert [(r["record"], r["reason"]) for r in rows] == [
        ("judgement", "copy"), ("judgement", "different channels"), ("arbitration", "settled"),
        ("judgement", "late")]


@pytest.mark.django_db
def test_the_verdict_bar_offers_every_verdict_with_both_retained(import_records, editor_client):
    run = seed_run(import_records)
    page = editor_client.get(reverse("review:pair", args=[pair(run, "A", "B").pk])).content.decode()
    for i, verdict in enumerate(["keep-both", "merge-entry", "public-quote", "valid-revision", "arbitration"]):
        assert f'name="verdict" value="{verdict}" id="id_verdict_{i}" required>' in page
    assert 'name="retained" value="both" id="id_retained_2" data-key="b" checked required>' in page
    assert page.count(" checked") == 1


@pytest.mark.django_db
def test_a_refused_arbitration_comes_back_with_its_choices_still_picked(import_records, editor, editor2,
                                                                      arbiter_client):
    run = seed_run(import_records, reviews_required=2)
    ab = pair(run, "A", "B")
    services.judgement_record(pair=ab, reviewer=editor, verdict="merge-entry", reason="copy")
    services.judgement_record(pair=ab, reviewer=editor2, verdict="keep-both", reason="two channels")
    # A retained version that does not exist: refused, nothing recorded, the verdict still picked.
    page = arbiter_client.post(reverse("review:arbitrate", args=[ab.pk]), {
        "verdict": "public-quote", "reason": "quoted", "retained": "middle"}, follow=True).content.decode()
    assert not Arbitration.objects.exists()
    assert 'value="public-quote" id="id_verdict_2" checked required>' in page and page.count(" checked") == 1
    assert "Select a valid choice. middle is not one of the available choices." in page
