"""Upgrading a database filled by the previous release (review 0005, screening 0007) loses nothing, and
leaves the review record guarded in the database."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

from dedup_site import guards

PREVIOUS = [("screening", "0007_document_content_sha256"), ("review", "0005_signature_insert_only")]


def _fill_previous_release() -> dict:
    """Rows as the previous release wrote them, through its own models."""
    state = MigrationExecutor(connection).loader.project_state(PREVIOUS)
    models = state.apps
    User = models.get_model("auth", "User")
    user = User.objects.create(username="old-editor", password="!")
    corpus = models.get_model("screening", "Corpus").objects.create(name="old")
    source = models.get_model("screening", "SourceFile").objects.create(sha256="a" * 64, size=10)
    upload = models.get_model("screening", "Upload").objects.create(corpus=corpus, source=source, original_name="x",
                                                                    status="complete")
    Document = models.get_model("screening", "Document")
    left = Document.objects.create(corpus=corpus, upload=upload, doc_id="A", source_id="A", language="en", body="a")
    right = Document.objects.create(corpus=corpus, upload=upload, doc_id="B", source_id="B", language="en", body="a")
    run = models.get_model("screening", "ScreeningRun").objects.create(corpus=corpus, status="complete",
                                                                      contract="doc-content-v1", program_version="0")
    pair = models.get_model("screening", "CandidatePair").objects.create(
        run=run, left=left, right=right, pass_name="exact", jaccard=1.0, status="settled",
        final_verdict="merge-entry")
    judgement = models.get_model("review", "Judgement").objects.create(pair=pair, reviewer=user,
                                                                      verdict="arbitration", reason="unsure")
    arbitration = models.get_model("review", "Arbitration").objects.create(pair=pair, arbiter=user,
                                                                          verdict="merge-entry", reason="copy")
    return {"judgement": judgement.pk, "arbitration": arbitration.pk, "documents": [left.pk, right.pk]}


@pytest.mark.django_db(transaction=True)
def test_upgrading_from_the_previous_release_keeps_every_row_and_guards_it():
    call_command("migrate", "review", "0005", verbosity=0)
    call_command("migrate", "screening", "0007", verbosity=0)
    call_command("migrate", "dedup_site", "0004", verbosity=0)  # that release kept no user name keys
    try:
        # Going back removed the guards of the migrations undone (migrate does not put them back then).
        assert not {n for n in guards.installed(connection) if n.startswith("review_judgement_guard")}
        old = _fill_previous_release()
    finally:
        call_command("migrate", verbosity=0)
    from review.models import Arbitration, Judgement
    from screening.models import Document

    judgement, arbitration = Judgement.objects.get(pk=old["judgement"]), Arbitration.objects.get(
        pk=old["arbitration"])
    assert (judgement.verdict, judgement.reason) == ("arbitration", "unsure")
    assert (arbitration.verdict, arbitration.self_arbitrated) == ("merge-entry", False)
    assert sorted(Document.objects.values_list("doc_id", flat=True)) == ["A", "B"]
    for guard in guards.registered():
        kinds = guards.trigger_kinds(guard, connection.vendor)
        assert {f"{guard.table}_guard_{kind}" for kind in kinds} <= guards.installed(connection), guard.table
    for table, pk in (("review_judgement", old["judgement"]), ("review_arbitration", old["arbitration"])):
        with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM {table} WHERE id = %s", [pk])  # noqa: S608 - fixed names


BEFORE_THE_EDITOR_LOOP = [("screening", "0012_suggestion_model"), ("review", "0007_review_policy_leases_skips")]


@pytest.mark.django_db(transaction=True)
def test_upgrading_groups_the_problems_of_rejected_uploads_and_keeps_review_settings():
    call_command("migrate", "review", "0007", verbosity=0)
    call_command("migrate", "screening", "0012", verbosity=0)
    try:
        models = MigrationExecutor(connection).loader.project_state(BEFORE_THE_EDITOR_LOOP).apps
        corpus = models.get_model("screening", "Corpus").objects.create(name="old")
        source = models.get_model("screening", "SourceFile").objects.create(sha256="b" * 64, size=10)
        problems = [f"notes.zip member n{i}.txt, field language: a language is required" for i in range(40)]
        problems.append("notes.zip member bad.txt: not UTF-8 text (byte 0xff at 3)")
        upload = models.get_model("screening", "Upload").objects.create(
            corpus=corpus, source=source, original_name="notes.zip", status="rejected", problems=problems,
            problem_count=2984)
        models.get_model("review", "ReviewPolicy").objects.create(corpus=corpus, allow_self_arbitration=True)
    finally:
        call_command("migrate", verbosity=0)
    from review import selectors
    from review.models import PRESET_REASONS
    from screening.models import Upload

    upgraded = Upload.objects.get(pk=upload.pk)
    assert upgraded.problems == problems and upgraded.problem_count == 2984
    assert [(g["field"], g["rule"], g["count"]) for g in upgraded.problem_groups] == [
        ("language", "a language is required", 40), ("", "not UTF-8 text (byte 0xff at 3)", 1)]
    assert upgraded.problem_groups[0]["examples"][0] == problems[0]
    assert selectors.review_policy_of(upgraded.corpus).allow_self_arbitration
    assert selectors.preset_reasons_of(upgraded.corpus_id) == PRESET_REASONS


BEFORE_THE_AUDIT = [("dedup_site", "0001_password_chosen_by_other"), ("review", "0009_review_actions")]


@pytest.mark.django_db(transaction=True)
def test_upgrading_sends_a_dispute_settled_by_a_change_of_mind_back_to_an_arbiter():
    call_command("migrate", "review", "0009", verbosity=0)
    call_command("migrate", "dedup_site", "0004", verbosity=0)  # that release kept no user name keys
    try:
        models = MigrationExecutor(connection).loader.project_state(BEFORE_THE_AUDIT).apps
        User = models.get_model("auth", "User")
        one, two = User.objects.create(username="ed-one", password="!"), User.objects.create(username="ed-two",
                                                                                            password="!")
        corpus = models.get_model("screening", "Corpus").objects.create(name="old")
        source = models.get_model("screening", "SourceFile").objects.create(sha256="c" * 64, size=10)
        upload = models.get_model("screening", "Upload").objects.create(corpus=corpus, source=source,
                                                                        original_name="x", status="complete")
        Document = models.get_model("screening", "Document")
        docs = [Document.objects.create(corpus=corpus, upload=upload, doc_id=d, source_id=d, language="en", body="a")
                for d in "ABC"]
        run = models.get_model("screening", "ScreeningRun").objects.create(
            corpus=corpus, status="complete", contract="doc-content-v1", program_version="0", reviews_required=2)
        Pair, Judgement = models.get_model("screening", "CandidatePair"), models.get_model("review", "Judgement")
        bent = Pair.objects.create(run=run, left=docs[0], right=docs[1], pass_name="exact", jaccard=1.0,
                                   status="settled", final_verdict="merge-entry")
        agreed = Pair.objects.create(run=run, left=docs[0], right=docs[2], pass_name="exact", jaccard=1.0,
                                     status="settled", final_verdict="merge-entry")
        for reviewer, verdict in ((one, "merge-entry"), (two, "keep-both"), (two, "merge-entry")):
            Judgement.objects.create(pair=bent, reviewer=reviewer, verdict=verdict, reason="")
        for reviewer in (one, two):
            Judgement.objects.create(pair=agreed, reviewer=reviewer, verdict="merge-entry", reason="")
    finally:
        call_command("migrate", verbosity=0)
    from screening.models import CandidatePair

    assert CandidatePair.objects.filter(pk=bent.pk).values_list("status", "final_verdict", "flag").get() == (
        "needs_arbitration", "", "the reviewers disagree")
    assert CandidatePair.objects.get(pk=agreed.pk).status == "settled"
    assert Judgement.objects.count() == 5  # every judgement kept


@pytest.mark.django_db(transaction=True)
def test_upgrading_refuses_user_names_that_differ_only_by_case_until_one_is_renamed(django_user_model):
    call_command("migrate", "dedup_site", "0001", verbosity=0)
    try:
        with connection.cursor() as cursor:
            for name in ("Kim", "kim"):
                cursor.execute("INSERT INTO auth_user (username, password, is_superuser, is_staff, is_active, "
                               "first_name, last_name, email, date_joined) VALUES (%s, '!', false, false, true, "
                               "'', '', '', '2026-01-01')", [name])
        with pytest.raises(RuntimeError, match="differ only by case: Kim / kim"):
            call_command("migrate", verbosity=0)
        with connection.cursor() as cursor:
            cursor.execute("UPDATE auth_user SET username = 'kim-2' WHERE username = 'kim'")
    finally:
        call_command("migrate", verbosity=0)
    assert sorted(django_user_model.objects.values_list("username", flat=True)) == ["Kim", "kim-2"]


BEFORE_THE_LANGUAGE_CHECK = [("screening", "0016_document_digest_index")]


@pytest.mark.django_db(transaction=True)
def test_upgrading_to_the_language_check_keeps_every_document_unchecked_until_detect_languages():
    english = "Mount the sensor on a dry wall at least thirty centimetres above the floor, then check the supply."
    call_command("migrate", "screening", "0016", verbosity=0)
    try:
        models = MigrationExecutor(connection).loader.project_state(BEFORE_THE_LANGUAGE_CHECK).apps
        corpus = models.get_model("screening", "Corpus").objects.create(name="old")
        source = models.get_model("screening", "SourceFile").objects.create(sha256="d" * 64, size=10)
        upload = models.get_model("screening", "Upload").objects.create(
            corpus=corpus, source=source, original_name="old.jsonl", status="complete", document_count=2)
        Document = models.get_model("screening", "Document")
        for doc_id, tag in (("right-tag", "en"), ("wrong-tag", "fa")):
            Document.objects.create(corpus=corpus, upload=upload, doc_id=doc_id, source_id=doc_id, language=tag,
                                    body=english, place=f"old.jsonl line {len(doc_id)}")
    finally:
        call_command("migrate", verbosity=0)
    from screening.models import Document, Upload

    kept = Document.objects.filter(corpus__name="old").order_by("doc_id")
    assert [(d.doc_id, d.language, d.body, d.detected_language, d.language_confidence) for d in kept] == [
        ("right-tag", "en", english, "", None), ("wrong-tag", "fa", english, "", None)]
    assert Upload.objects.get(pk=upload.pk).language_checked_at is None
    call_command("detect_languages", stdout=io.StringIO())
    assert list(kept.values_list("doc_id", "language", "detected_language")) == [
        ("right-tag", "en", "en"), ("wrong-tag", "fa", "en")]  # the tags as they were
    assert [m["doc_id"] for m in Upload.objects.get(pk=upload.pk).language_mismatches] == ["wrong-tag"]
