"""Prepared reads: compiled once, run with new values, rows equal to the queryset's."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db.models import Q
from django.utils import timezone

from dedup_site.prepared import Prepared
from review.models import Judgement
from tests.factories import seed_run


def _judgements():
    return Prepared(lambda pair_id, reviewer_id: Judgement.objects.filter(pair_id=pair_id, reviewer_id=reviewer_id)
                    .order_by("-created_at", "-id").values_list("created_at", "verdict", "reason", "pair__run_id"),
                    kinds="ii")


@pytest.mark.django_db
def test_rows_equal_the_querysets_for_each_call(import_records, editor, arbiter):
    run = seed_run(import_records)
    pairs = list(run.pairs.all()[:2])
    for pair, who, verdict in ((pairs[0], editor, "keep-both"), (pairs[0], editor, "merge-entry"),
                               (pairs[1], arbiter, "valid-revision")):
        Judgement.objects.create(pair=pair, reviewer=who, verdict=verdict, reason="r")
    prepared = _judgements()
    for pair in pairs:
        for who in (editor, arbiter):
            expected = list(Judgement.objects.filter(pair_id=pair.pk, reviewer_id=who.pk).order_by(
                "-created_at", "-id").values_list("created_at", "verdict", "reason", "pair__run_id"))
            assert prepared.rows(pair.pk, who.pk) == expected
    # Converted as the queryset converts (aware datetimes on SQLite too, where the column holds text).
    created, verdict, _, _ = prepared.first(pairs[0].pk, editor.pk)
    assert verdict == "merge-entry" and created.tzinfo is not None and created <= timezone.now()
    assert prepared.first(pairs[1].pk, editor.pk) is None


@pytest.mark.django_db
def test_a_marker_used_twice_takes_the_value_in_both_places(editor):
    from django.contrib.auth.models import Permission

    prepared = Prepared(lambda user_id: Permission.objects.filter(Q(user=user_id) | Q(group__user=user_id))
                        .values_list("codename", flat=False).order_by("codename").distinct())
    assert prepared.rows(editor.pk) == [("review_pair",)]
    assert prepared.rows(10**9) == []


@pytest.mark.django_db
def test_string_markers_and_a_wrong_number_of_values(editor):
    from django.contrib.auth import get_user_model

    prepared = Prepared(lambda name: get_user_model().objects.filter(username=name).values_list("pk"), kinds="s")
    assert prepared.rows(editor.username) == [(editor.pk,)]
    assert prepared.rows("nobody-of-that-name") == []
    with pytest.raises(TypeError, match="expected 1 values, got 2"):
        prepared.rows("a", "b")


@pytest.mark.django_db
def test_a_marker_missing_from_the_compiled_parameters_is_refused():
    # A value that does not reach the parameters would be compiled into the SQL and kept for every call.
    prepared = Prepared(lambda pk: Judgement.objects.values_list("pk"))
    with pytest.raises(ValueError, match=r"markers \[0\] are not parameters"):
        prepared.rows(1)


@pytest.mark.django_db
def test_objects_come_with_their_related_rows_and_annotations(import_records, editor, django_assert_num_queries):
    from review import selectors, services
    from screening import runs

    run = seed_run(import_records)
    pair = run.pairs.order_by("pk").first()
    assert services.lease_take(pair_id=pair.pk, reviewer=editor)
    with django_assert_num_queries(2):  # the pair with run, corpus, panes and lease; then both documents
        read = runs.with_documents(selectors.pair_for_review(pair.pk, editor))
        seen = (read.run.corpus.name, read.run.status, read.left.doc_id, read.right.upload.source_id,
                read.lease_until is not None)
    assert read == pair and seen == (run.corpus.name, "complete", pair.left.doc_id, pair.right.upload.source_id,
                                     True)
    assert selectors.pair_for_review(pair.pk, User(pk=10**6)).lease_until is None
    assert selectors.pair_for_review(10**9, editor) is None and selectors.pair_for_review(2**64, editor) is None
    run.status = "failed"
    run.save(update_fields=["status"])
    assert selectors.pair_for_review(pair.pk, editor) is None  # a pair of a run that is not complete


@pytest.mark.django_db
def test_the_pair_page_read_brings_the_readers_verdict_and_the_corpus_presets(import_records, editor, editor2):
    from review import selectors, services
    from review.models import ReviewPolicy

    run = seed_run(import_records)
    pair = run.pairs.order_by("pk").first()
    assert selectors.pair_for_review(pair.pk, editor).my_verdict is None
    assert selectors.pair_for_review(pair.pk, editor).own_presets is None  # no policy: the defaults
    services.judgement_record(pair=pair, reviewer=editor, verdict="keep-both", reason="two channels")
    ReviewPolicy.objects.create(corpus=run.corpus, preset_reasons={"keep-both": "两个渠道"})
    mine, theirs = selectors.pair_for_review(pair.pk, editor), selectors.pair_for_review(pair.pk, editor2)
    assert (mine.my_verdict, theirs.my_verdict) == ("keep-both", None)
    assert mine.own_presets == {"keep-both": "两个渠道"}
    assert selectors.pair_view(mine, editor)["presets"] == selectors.preset_reasons_of(run.corpus_id)
    assert selectors.pair_view(mine, editor)["presets"]["keep-both"] == "两个渠道"
    assert selectors.pair_view(theirs, editor2)["current"] == ""


@pytest.mark.django_db
def test_the_run_and_pair_reads_bring_the_review_stamp(import_records, editor, editor2):
    from review import selectors, services

    run = seed_run(import_records)
    pair = run.pairs.order_by("pk").first()

    def stamps():
        return (selectors.stamp_of(selectors.complete_run(run.pk)),
                selectors.stamp_of(selectors.pair_for_review(pair.pk, editor)), selectors.review_stamp())

    assert stamps() == ((0, 0),) * 3
    services.judgement_record(pair=pair, reviewer=editor, verdict="keep-both", reason="r")
    first = stamps()
    other = run.pairs.order_by("pk")[1]
    services.judgement_record(pair=other, reviewer=editor2, verdict="merge-entry", reason="r")
    second = stamps()
    assert first[0] == first[1] == first[2] and first[2][0] > 0
    assert second[0] == second[1] == second[2] and second[2][0] > first[2][0]


@pytest.mark.django_db
def test_a_list_marker_takes_each_calls_ids_in_one_array_on_postgresql(import_records, editor):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from screening.models import CandidatePair

    pks = list(seed_run(import_records).pairs.order_by("pk").values_list("pk", flat=True))
    prepared = Prepared(lambda run_id, ids: CandidatePair.objects.filter(run_id=run_id, pk__in_ids=ids)
                        .order_by("pk").values_list("pk", "jaccard"), kinds="il", list_length=3)
    run_id = CandidatePair.objects.get(pk=pks[0]).run_id
    for ids in ([pks[0], pks[1], pks[2]], [pks[-1], 0, 0], [0, 0, 0], [pks[2], pks[2], 10**9]):
        expected = list(CandidatePair.objects.filter(run_id=run_id, pk__in=ids).order_by("pk")
                        .values_list("pk", "jaccard"))
        assert prepared.rows(run_id, ids) == expected, ids
    assert prepared.rows(run_id + 1, pks[:3]) == []
    with CaptureQueriesContext(connection) as seen:
        prepared.rows(run_id, (str(pk) for pk in pks[:3]))  # integers as in_ids takes them
    # PostgreSQL: one array parameter, whatever the length (psycopg keeps its parse for up to 50).
    assert ("= ANY(" in seen[0]["sql"]) == (connection.vendor == "postgresql")
    with pytest.raises(TypeError, match="expected a list of 3 ids, got 2"):
        prepared.rows(run_id, pks[:2])
    with pytest.raises(ValueError):
        prepared.rows(run_id, ["1; DROP TABLE x", 0, 0])
    with pytest.raises(ValueError, match="list_length"):
        Prepared(lambda ids: CandidatePair.objects.filter(pk__in_ids=ids), kinds="l")


@pytest.mark.django_db
def test_a_float_marker_takes_each_calls_score(import_records):
    from screening.models import CandidatePair

    run = seed_run(import_records)
    prepared = Prepared(lambda run_id, low: CandidatePair.objects.filter(run_id=run_id, jaccard__gte=low)
                        .order_by("pk").values_list("pk"), kinds="if")
    scores = sorted(set(run.pairs.values_list("jaccard", flat=True)))
    for low in (0.0, *scores, scores[-1] + 1e-12, 2.0):
        expected = list(run.pairs.filter(jaccard__gte=low).order_by("pk").values_list("pk"))
        assert prepared.rows(run.pk, low) == expected, low


@pytest.mark.django_db
def test_a_datetime_marker_takes_each_calls_instant(import_records, editor, editor2):
    from datetime import timedelta

    from review.models import Lease

    run = seed_run(import_records)
    pair = run.pairs.order_by("pk").first()
    now = timezone.now()
    Lease.objects.create(pair=pair, reviewer=editor, expires_at=now + timedelta(seconds=10))
    Lease.objects.create(pair=pair, reviewer=editor2, expires_at=now + timedelta(seconds=100))
    prepared = Prepared(lambda pk, at: Lease.objects.filter(pair_id=pk, expires_at__gt=at).order_by(
        "reviewer_id").values_list("reviewer_id"), kinds="id")
    for seconds in (0, 9.999, 10, 50, 100, 1000, -1):
        at = now + timedelta(seconds=seconds)
        expected = list(Lease.objects.filter(pair_id=pair.pk, expires_at__gt=at).order_by("reviewer_id")
                        .values_list("reviewer_id"))
        assert prepared.rows(pair.pk, at) == expected, seconds
    assert len(prepared.rows(pair.pk, now)) == 2 and prepared.rows(pair.pk, now + timedelta(seconds=10)) == [
        (editor2.pk,)]


@pytest.mark.django_db(transaction=True)
def test_a_locked_read_is_refused_outside_a_transaction(import_records):
    from django.db import transaction

    from review import services

    pair = seed_run(import_records).pairs.first()
    with pytest.raises(transaction.TransactionManagementError):
        services._locked_pair(pair.pk)
    with transaction.atomic():
        assert services._locked_pair(pair.pk) == pair
        with pytest.raises(type(pair).DoesNotExist):
            services._locked_pair(10**9)


@pytest.mark.django_db
def test_an_upsert_inserts_then_updates_only_what_it_names(import_records, editor):
    from datetime import timedelta

    from dedup_site.prepared import upsert
    from review.models import Lease
    from screening.models import PairPanes

    pair = seed_run(import_records).pairs.order_by("pk").first()
    first, later = timezone.now(), timezone.now() + timedelta(minutes=5)
    upsert(Lease, {"pair_id": pair.pk, "reviewer_id": editor.pk, "expires_at": first}, unique=("pair", "reviewer"),
           update=("expires_at",))
    lease = Lease.objects.get(pair=pair, reviewer=editor)
    upsert(Lease, {"pair_id": pair.pk, "reviewer_id": editor.pk, "expires_at": later}, unique=("pair", "reviewer"),
           update=("expires_at",))
    assert list(Lease.objects.filter(pair=pair).values_list("pk", "expires_at")) == [(lease.pk, later)]
    html = {"left": "<span>ü 中文 ‘q’</span>", "diff": ""}
    for version, counts in (("old", {}), ("new", {"run_count": 3})):
        upsert(PairPanes, {"pair_id": pair.pk, "version": version, "html": html, "counts": counts,
                           "created_at": first}, unique=("pair",), update=("version", "counts"))
    kept = PairPanes.objects.get(pair=pair)
    assert (kept.version, kept.html, kept.counts, kept.created_at) == ("new", html, {"run_count": 3}, first)


# What dedup_site.prepared leans on in Django's ORM, each held by a test of Django's own behaviour: a release
# that changes one fails here by name, not by a wrong row on a page.


@pytest.mark.django_db
def test_django_runs_a_queryset_through_its_querys_get_compiler_and_that_compilers_as_sql(import_records):
    from django.db import connections

    from screening.models import CandidatePair

    run = seed_run(import_records)
    first, other = run.pairs.order_by("pk")[:2]
    wanted = CandidatePair.objects.filter(pk=other.pk).query.get_compiler(using="default").as_sql()
    queryset = CandidatePair.objects.filter(pk=first.pk)
    compiler = queryset.query.get_compiler(using="default")
    assert compiler.connection is connections["default"]  # how a kept compiler knows its thread's connection
    compiler.as_sql()  # compiled once for real (as Prepared does): the select and its state stay on the compiler
    compiler.as_sql = lambda *args, **kwargs: wanted
    chained = queryset._chain()
    chained.query.get_compiler = lambda *args, **kwargs: compiler
    assert [p.pk for p in chained] == [other.pk]  # the kept compiler's SQL was run, not the queryset's own


@pytest.mark.django_db
def test_a_compilers_results_iter_turns_fetched_rows_into_the_querysets_values(import_records):
    from django.db import connection

    from screening.models import CandidatePair

    run = seed_run(import_records)
    CandidatePair.objects.filter(pk=run.pairs.first().pk).update(revision_signals=[["number", "1", "2"]],
                                                                has_signals=True)
    queryset = CandidatePair.objects.filter(run=run).order_by("pk").values_list(
        "pk", "jaccard", "revision_signals", "has_signals", "run__created_at")
    compiler = queryset.query.get_compiler(using="default")
    asked = []
    work_out = compiler.get_converters
    compiler.get_converters = lambda expressions: asked.append(1) or work_out(expressions)
    sql, params = compiler.as_sql()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        fetched = cursor.fetchall()
    rows = list(compiler.results_iter(results=[fetched], tuple_expected=True))
    assert rows == list(queryset) and asked  # JSON decoded, booleans and aware instants, via get_converters
    assert rows[0][2] == [["number", "1", "2"]] and rows[0][3] is True and rows[0][4].tzinfo is not None


@pytest.mark.django_db
def test_marker_values_reach_the_compiled_parameters_as_given():
    from django.db import connection

    from dedup_site.prepared import _INT_MARKER, _STR_MARKER, _TIME_MARKER

    queryset = Judgement.objects.filter(pair_id=_INT_MARKER, reason=f"{_STR_MARKER}1", created_at__lt=_TIME_MARKER)
    _, params = queryset.query.get_compiler(using="default").as_sql()
    adapted = connection.ops.adapt_datetimefield_value(_TIME_MARKER)
    assert [p for p in params if p == _INT_MARKER] and f"{_STR_MARKER}1" in params and adapted in params


@pytest.mark.django_db
def test_kept_reads_are_prepared_once_on_postgresql_and_bind_each_calls_values(editor, arbiter):
    from django.contrib.auth import get_user_model
    from django.db import connection

    prepared = Prepared(lambda pk: get_user_model().objects.filter(pk=pk).values_list("username"))
    assert prepared.rows(editor.pk) == [(editor.username,)]
    assert prepared.rows(arbiter.pk) == [(arbiter.username,)]  # the second call's value, not the first's
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s",
                       ['SELECT "auth_user"."username"%'])
        assert cursor.fetchone() == (1,)  # parsed and planned once for both calls


@pytest.mark.django_db
def test_with_preparing_off_kept_reads_prepare_nothing(editor, arbiter, settings):
    from django.contrib.auth import get_user_model
    from django.db import connection

    settings.DEDUP_DB_PREPARE = False  # as behind a pooler in transaction mode
    prepared = Prepared(lambda pk: get_user_model().objects.filter(pk=pk).values_list("email", "username"))
    assert prepared.rows(editor.pk) == [(editor.email, editor.username)]
    assert prepared.rows(arbiter.pk) == [(arbiter.email, arbiter.username)]
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s",
                       ['SELECT "auth_user"."email"%'])
        assert cursor.fetchone() == (0,)


@pytest.mark.django_db
def test_a_judgement_releases_only_its_reviewers_lease_on_that_pair(import_records, editor, arbiter):
    from review import services
    from review.models import Lease

    run = seed_run(import_records)
    run.reviews_required = 2
    run.save()
    first, second = run.pairs.order_by("pk")[:2]
    for pair in (first, second):
        assert services.lease_take(pair_id=pair.pk, reviewer=editor)
    assert services.lease_take(pair_id=first.pk, reviewer=arbiter)
    services.judgement_record(pair=first, reviewer=editor, verdict="keep-both", reason="r")
    assert set(Lease.objects.values_list("pair_id", "reviewer_id")) == {(second.pk, editor.pk), (first.pk, arbiter.pk)}


@pytest.mark.django_db
def test_one_preparing_cursor_serves_a_connection_and_logged_queries_still_see_its_statements(
        editor, arbiter, django_assert_num_queries):
    from django.contrib.auth import get_user_model
    from django.db import connection

    from dedup_site.prepared import preparing_cursor

    prepared = Prepared(lambda pk: get_user_model().objects.filter(pk=pk).values_list("username"))
    with preparing_cursor(connection) as first, preparing_cursor(connection) as second:
        assert (first is second) == (connection.vendor == "postgresql")  # kept, never closed, on PostgreSQL
    with django_assert_num_queries(2):  # Django's debug cursor counts them: a kept cursor of its own for that
        assert prepared.rows(editor.pk) == [(editor.username,)]
        assert prepared.rows(arbiter.pk) == [(arbiter.username,)]
    assert prepared.rows(editor.pk) == [(editor.username,)]


@pytest.mark.django_db
def test_an_insert_and_an_update_write_what_the_orm_would(import_records, editor):
    from dedup_site.prepared import insert, update
    from review.models import Judgement
    from screening.models import CandidatePair

    pair = seed_run(import_records).pairs.order_by("pk").first()
    now = timezone.now()
    values = {"pair_id": pair.pk, "reviewer_id": editor.pk, "verdict": "keep-both", "reason": "ü 中文 ‘q’",
              "retained": "both", "related_source": "", "supersedes_id": None, "action_id": None, "created_at": now}
    pk = insert(Judgement, values)
    assert Judgement.objects.filter(pk=pk).values(*values).get() == values
    update(CandidatePair, pair.pk, {"suggestion_source": "model", "cluster": 7})  # not derived: no writer needed
    assert CandidatePair.objects.filter(pk=pair.pk).values_list("suggestion_source", "cluster").get() == ("model", 7)
