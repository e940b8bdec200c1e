"""Rows the product never changes are refused UPDATE and DELETE by the database itself (SQLite and
PostgreSQL), whatever path the statement takes: a queryset, the base manager, raw SQL."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

from dedup_site import guards
from review import services
from review import services as review_services
from review.models import Arbitration, Judgement, ReviewerSignature, SheetExport
from review.sheets import sheet_exports
from screening import evaluation
from screening.models import CandidatePair, Document, SourceFile
from tests.factories import completed_run
from tests.seeds import SEED001


@pytest.fixture
def records(import_records, editor, arbiter):
    import_records("zh", SEED001)
    run = completed_run("zh", near=True)
    pair = CandidatePair.objects.filter(run=run).first()
    judgement = services.judgement_record(pair=pair, reviewer=editor, verdict="arbitration", reason="unsure")
    arbitration = services.arbitration_record(pair=pair, arbiter=arbiter, verdict="keep-both", reason="differ")
    signature = services.signature_record(reviewer=editor, password="correct horse battery")
    export = sheet_exports.sheet_export_build(export=sheet_exports.sheet_export_create(run=run))
    label_set = review_services.labelset_from_verdicts(run=run, user=arbiter)
    audit = evaluation.audit_execute(audit=evaluation.audit_create(run=run))
    return {"judgement": judgement, "arbitration": arbitration, "signature": signature, "export": export,
            "document": Document.objects.first(), "source": SourceFile.objects.first(), "label_set": label_set,
            "label": label_set.labels.first(), "audit": audit}


def _refused(sql: str, params: list) -> bool:
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql, params)
    except DatabaseError as error:
        assert "refused" in str(error), error
        return True
    return False


CHANGES = {
    "judgement": ("review_judgement", "verdict = 'keep-both'"),
    "arbitration": ("review_arbitration", "verdict = 'merge-entry'"),
    "signature": ("review_reviewersignature", "full_name = 'someone else'"),
    "export": ("review_sheetexport", "row_count = 0"),
    "document": ("screening_document", "body = 'rewritten'"),
    "source": ("screening_sourcefile", "sha256 = 'f00'"),
    "label_set": ("screening_labelset", "name = 'renamed'"),
    "label": ("screening_label", "label = 1 - label"),
    "audit": ("screening_runaudit", "threshold = 0.1"),
}


@pytest.mark.django_db
@pytest.mark.parametrize("kind", sorted(CHANGES))
def test_raw_sql_cannot_update_or_delete_a_guarded_row(records, kind):
    table, assignment = CHANGES[kind]
    pk = records[kind].pk
    assert _refused(f"UPDATE {table} SET {assignment} WHERE id = %s", [pk])  # noqa: S608 - fixed names
    assert _refused(f"DELETE FROM {table} WHERE id = %s", [pk])  # noqa: S608


@pytest.mark.django_db
@pytest.mark.parametrize("model", [Judgement, Arbitration, ReviewerSignature])
def test_the_base_manager_cannot_delete_a_review_record(records, model):
    row = model._base_manager.first()
    with pytest.raises(DatabaseError), transaction.atomic():
        model._base_manager.filter(pk=row.pk).delete()
    assert model._base_manager.filter(pk=row.pk).exists()


@pytest.mark.django_db
def test_a_sheet_export_changes_until_complete_then_never(records):
    queued = SheetExport.objects.create(run=records["export"].run)
    SheetExport.objects.filter(pk=queued.pk).update(status="running")  # allowed while it is being built
    with pytest.raises(DatabaseError), transaction.atomic():
        SheetExport.objects.filter(pk=records["export"].pk).update(status="failed")


@pytest.mark.django_db
def test_a_document_may_be_saved_unchanged_but_not_rewritten(records):
    document = records["document"]
    document.save()  # every column written, none changed
    document.body = "rewritten"
    with pytest.raises(DatabaseError), transaction.atomic():
        document.save()


@pytest.mark.django_db
def test_every_declared_guard_is_installed_after_migrate():
    names = guards.installed(connection)
    for guard in guards.registered():
        kinds = guards.trigger_kinds(guard, connection.vendor)
        assert "update" in kinds or "writer_update" in kinds, guard.table
        assert {f"{guard.table}_guard_{kind}" for kind in kinds} <= names, guard.table


@pytest.mark.django_db
def test_only_review_services_write_a_pairs_review_state_and_the_current_verdicts(records, editor):
    pair = records["judgement"].pair
    current = f"SELECT id FROM review_currentverdict WHERE pair_id = {pair.pk}"  # noqa: S608 - an int
    for sql in (f"UPDATE screening_candidatepair SET status = 'pending' WHERE id = {pair.pk}",  # noqa: S608
                f"UPDATE screening_candidatepair SET final_verdict = 'merge-entry' WHERE id = {pair.pk}",  # noqa: S608
                f"UPDATE review_currentverdict SET verdict = 'merge-entry' WHERE id IN ({current})",  # noqa: S608
                f"DELETE FROM review_currentverdict WHERE id IN ({current})"):  # noqa: S608
        assert _refused(sql, []), sql
    first = CandidatePair.objects.filter(run=pair.run).exclude(pk=pair.pk).first()
    assert _refused("INSERT INTO review_currentverdict (pair_id, reviewer_id, judgement_id, verdict, run_id) "
                    "VALUES (%s, %s, %s, 'merge-entry', %s)", [first.pk, editor.pk, records["judgement"].pk,
                                                               pair.run_id])
    pair.refresh_from_db()
    assert (pair.status, pair.final_verdict) == ("settled", "keep-both")
    # Columns outside the review state stay the engine's to write (the suggestion a model made again).
    CandidatePair.objects.filter(pk=pair.pk).update(suggestion_confidence=0.5)
    with services.derived_writes():  # the declared writer may, and only inside its block
        CandidatePair.objects.filter(pk=pair.pk).update(flag="checked")
    assert _refused(f"UPDATE screening_candidatepair SET flag = '' WHERE id = {pair.pk}", [])  # noqa: S608


@pytest.mark.django_db
def test_insert_or_replace_cannot_swap_a_judgement_on_sqlite(records):
    if connection.vendor != "sqlite":
        pytest.skip("INSERT OR REPLACE is SQLite's")
    j = records["judgement"]
    assert _refused(
        "INSERT OR REPLACE INTO review_judgement (id, pair_id, reviewer_id, verdict, reason, retained, "
        "related_source, created_at) VALUES (%s, %s, %s, 'keep-both', 'forged', 'both', '', %s)",
        [j.pk, j.pair_id, j.reviewer_id, j.created_at.isoformat()])
    j.refresh_from_db()
    assert (j.verdict, j.reason) == ("arbitration", "unsure")
