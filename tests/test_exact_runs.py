"""Screening runs with the exact pass: on a real worker, the groups page, export_pairs, failures."""

from __future__ import annotations

import csv
import hashlib
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from rq import Worker

from screening import runs
from screening.engine import contract
from screening.ingest import uploads
from screening.models import CandidatePair, Corpus, Document, ExactGroup, ScreeningRun
from tests.factories import completed_run
from tests.seeds import SEED000, SEED000_A_SHA256, SEED001

ROOT = Path(__file__).resolve().parent.parent


def start(admin_client, corpus="seed"):
    response = admin_client.post(reverse("screening:run_start", args=[corpus]), {"exact": "on"})
    assert response.status_code == 302
    return ScreeningRun.objects.latest("pk")


@pytest.mark.django_db(transaction=True)
def test_run_on_a_worker_shows_the_seed_groups(admin_client, import_records, run_worker):
    import_records("seed", SEED000, "seed000.jsonl")
    run = start(admin_client)
    assert run.status == "queued" and run.job_id
    run_worker()
    run.refresh_from_db()
    assert run.status == "complete", run.error
    assert set(run.stats.pop("seconds")) == {"exact", "publish"}
    assert run.stats == {"documents": 3, "exact_groups": 1, "exact_grouped_documents": 2, "exact_singletons": 1,
                         "exact_pairs": 1, "clusters": 1}
    group = ExactGroup.objects.get(run=run)
    assert (group.representative.doc_id, group.sha256, group.length, group.size) == ("A", SEED000_A_SHA256, 83, 2)
    assert [(m.document.doc_id, m.document.source_id) for m in group.members.all()] == [("A", "Ref1"), ("B", "Ref2")]
    page = admin_client.get(reverse("screening:exact_groups", args=[run.pk])).content.decode()
    assert SEED000_A_SHA256 in page and "83 content bytes" in page and "Ref2" in page
    assert "1 document stands alone" in page
    (pair,) = CandidatePair.objects.filter(run=run)
    assert (pair.left.doc_id, pair.right.doc_id, pair.pass_name, pair.jaccard, pair.minhash_estimate) == (
        "B", "A", "exact", 1.0, None)


@pytest.mark.django_db(transaction=True)
def test_run_page_records_configuration_versions_and_manifest(admin_client, admin_user, import_records, run_worker):
    upload = import_records("seed", SEED000, "seed000.jsonl")
    run = start(admin_client)
    run_worker()
    run.refresh_from_db()
    assert run.contract == "doc-content-v1" and run.started_by == admin_user
    assert set(run.versions) == {"python", "django", "datasketch", "rq"}
    assert run.manifest == [{"upload": upload.pk, "name": "seed000.jsonl", "sha256": upload.source.sha256,
                             "documents": 3}]
    page = admin_client.get(run.get_absolute_url()).content.decode()
    for text in ("doc-content-v1", run.versions["datasketch"], run.versions["rq"], run.versions["django"],
                 upload.source.sha256, "alice-admin", "see them"):
        assert text in page


@pytest.mark.django_db(transaction=True)
def test_run_page_shows_a_progress_bar_while_queued(admin_client, import_records, queue):
    import_records("seed", SEED000)
    run = start(admin_client)
    page = admin_client.get(run.get_absolute_url()).content.decode()
    assert f'data-status-url="{reverse("screening:run_status", args=[run.pk])}"' in page and "<progress" in page
    assert admin_client.get(reverse("screening:run_status", args=[run.pk])).json()["status"] == "queued"
    # No results before completion.
    assert admin_client.get(reverse("screening:exact_groups", args=[run.pk])).status_code == 302


@pytest.mark.django_db(transaction=True)
def test_a_queued_run_says_whether_a_worker_takes_jobs(admin_client, import_records, queue):
    import_records("seed", SEED000)
    run = start(admin_client)
    url = reverse("screening:run_status", args=[run.pk])
    assert "no worker is taking jobs yet" in admin_client.get(url).json()["hint"]
    worker = Worker([queue], connection=queue.connection, name="listening")
    worker.register_birth()
    try:
        assert admin_client.get(url).json()["hint"] == "waiting for the worker"
    finally:
        worker.register_death()
    assert "no worker" in admin_client.get(url).json()["hint"]  # a worker that stopped no longer counts


@pytest.mark.django_db(transaction=True)
def test_a_run_whose_job_raises_is_failed_and_shows_nothing(admin_client, import_records, run_worker, monkeypatch):
    import_records("seed", SEED000)
    from screening.runs import publish

    original = publish._publish_exact

    def publish_then_fail(*args):
        original(*args)  # rows written inside the transaction...
        raise RuntimeError("disk full while publishing")  # ...and rolled back

    monkeypatch.setattr(publish, "_publish_exact", publish_then_fail)
    run = start(admin_client)
    run_worker()
    run.refresh_from_db()
    assert run.status == "failed" and "disk full while publishing" in run.error
    assert not ExactGroup.objects.filter(run=run).exists() and not CandidatePair.objects.filter(run=run).exists()
    page = admin_client.get(run.get_absolute_url()).content.decode()
    assert "This run failed; it shows no results." in page and "Run again" in page

    monkeypatch.setattr(publish, "_publish_exact", original)
    admin_client.post(reverse("screening:run_retry", args=[run.pk]))
    run_worker()
    run.refresh_from_db()
    assert run.status == "complete" and run.attempts == 2
    assert ExactGroup.objects.filter(run=run).count() == 1


@pytest.mark.django_db
def test_only_a_failed_run_can_be_retried(admin_user, import_records):
    import_records("seed", SEED000)
    run = runs.run_create(corpus=Corpus.objects.get(name="seed"))
    with pytest.raises(runs.RunRefused, match="only a failed run"):
        runs.run_retry(run=run)


@pytest.mark.django_db
def test_a_corpus_without_documents_cannot_be_screened(admin_user):
    corpus = Corpus.objects.create(name="empty")
    with pytest.raises(runs.RunRefused, match="has no imported documents"):
        runs.run_create(corpus=corpus)


@pytest.mark.django_db
def test_a_run_refused_before_the_import_names_the_upload_still_waiting(admin_user):
    upload = uploads.upload_create(corpus_name="early", chunks=[b"some text\n"], size=10,
                                   original_name="first.txt")
    with pytest.raises(runs.RunRefused, match="upload first.txt is still waiting for a worker"):
        runs.run_create(corpus=upload.corpus)
    upload.status = "running"
    upload.save(update_fields=["status"])
    with pytest.raises(runs.RunRefused, match="upload first.txt is still importing"):
        runs.run_create(corpus=upload.corpus)


@pytest.mark.django_db
def test_two_runs_on_the_same_corpus_give_the_same_results(import_records):
    import_records("mix", SEED000 + [dict(r, doc_id=f"z{r['doc_id']}") for r in SEED000]
                   + [dict(r, doc_id=f"zh-{r['doc_id']}") for r in SEED001])
    corpus = Corpus.objects.get(name="mix")
    first, second = completed_run(corpus.name), completed_run(corpus.name)
    assert list(runs.pair_rows(first)) == list(runs.pair_rows(second))
    first.stats.pop("seconds"), second.stats.pop("seconds")
    assert first.stats == second.stats == {"documents": 11, "exact_groups": 2, "exact_grouped_documents": 6,
                                           "exact_singletons": 5, "exact_pairs": 4, "clusters": 2}


@pytest.mark.django_db
def test_groups_match_the_plain_contract_module(import_records):
    records = [dict(r, doc_id=f"d{i:03}", source_id=f"s{i % 4}", body=f"{r['body']}{i % 3}")
               for i, r in enumerate(SEED000 * 10)]
    import_records("gen", records)
    run = completed_run("gen")
    expected = [g for g in contract.group_records(records) if len(g.members) > 1]
    stored = [(g.representative.doc_id, [m.document.doc_id for m in g.members.all()]) for g in
              ExactGroup.objects.filter(run=run).order_by("representative__doc_id")]
    assert stored == sorted((g.representative, [m.doc_id for m in g.members]) for g in expected)


@pytest.mark.django_db
def test_run_covers_only_uploads_in_its_manifest(import_records):
    import_records("seed", SEED000[:2], "first.jsonl")
    run = runs.run_create(corpus=Corpus.objects.get(name="seed"))
    import_records("seed", [dict(SEED000[0], doc_id="late")], "late.jsonl")
    run = runs.run_execute(run=run)
    assert run.stats["documents"] == 2 and run.stats["exact_grouped_documents"] == 2


@pytest.mark.django_db
def test_the_exact_pass_groups_digests_from_the_index_alone(import_records):
    from django.db import connection

    from screening.runs.exact import shared_digests
    from screening.runs.lifecycle import documents_of

    if connection.vendor != "sqlite":
        pytest.skip("SQLite's plan; PostgreSQL picks an index-only scan by its statistics")
    import_records("seed", SEED000, "first.jsonl")
    run = runs.run_create(corpus=Corpus.objects.get(name="seed"))
    sql, params = shared_digests(documents_of(run)).query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN QUERY PLAN {sql}", params)
        plan = " ".join(str(row[-1]) for row in cursor.fetchall())
    assert "COVERING INDEX document_digest_idx" in plan, plan
    assert list(shared_digests(documents_of(run))) == [SEED000_A_SHA256]


@pytest.mark.django_db(transaction=True)
def test_screen_sync_and_export_pairs(import_records, queue, tmp_path, capsys):
    import_records("seed", SEED000)
    call_command("screen", "--corpus", "seed", "--exact", "--sync")
    out = capsys.readouterr().out
    run = ScreeningRun.objects.get()
    assert f"run {run.pk}\n" in out
    assert "exact pass: 1 group of 2+ covering 2 documents, 1 singleton, 1 candidate pair" in out
    target = tmp_path / "pairs.csv"
    call_command("export_pairs", str(run.pk), "--out", str(target))
    with open(target, encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0][:7] == ["left_id", "right_id", "pass", "jaccard", "minhash_estimate", "left_source_id",
                           "right_source_id"]
    assert rows[0][7] == "revision_signals"
    assert [row[:8] for row in rows[1:]] == [["B", "A", "exact", "1.0", "", "Ref2", "Ref1", ""]]


@pytest.mark.django_db(transaction=True)
def test_screen_sync_shows_progress_and_a_summary_not_worker_logs(import_records, queue, capsys, caplog):
    import_records("seed", SEED000)
    call_command("screen", "--corpus", "seed", "--exact", "--sync")
    captured = capsys.readouterr()
    run = ScreeningRun.objects.get()
    assert f"run {run.pk} 100% " in captured.err  # the progress bar's last state (one line per stage, no tty)
    assert "Listening on" not in captured.err + captured.out and not caplog.records  # no log lines
    call_command("screen", "--corpus", "seed", "--exact", "--sync", verbosity=2)
    assert any(r.getMessage() == f"run {run.pk + 1}: exact" for r in caplog.records)  # -v 2: each stage logged


@pytest.mark.django_db(transaction=True)
def test_screen_sync_does_the_work_here_even_while_a_worker_runs(import_records, worker_process, capsys):
    import_records("seed", SEED000)
    worker_process()
    call_command("screen", "--corpus", "seed", "--exact", "--sync")  # never queued: the worker cannot take it
    assert "exact pass: 1 group of 2+" in capsys.readouterr().out
    assert ScreeningRun.objects.get().status == "complete"


def test_the_progress_bar_redraws_in_place_on_a_terminal():
    import io

    from dedup_site.cli import ProgressBar

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    out = Terminal()
    bar = ProgressBar(out, "run 7")
    bar.draw(0.5, "sign")
    bar.draw(1.0, "band")
    bar.close()
    assert out.getvalue() == ("\rrun 7 [###############...............]  50% sign"
                              "\rrun 7 [##############################] 100% band\n")


@pytest.mark.django_db
def test_export_pairs_refuses_an_incomplete_run(import_records, tmp_path):
    import_records("seed", SEED000)
    run = runs.run_create(corpus=Corpus.objects.get(name="seed"))
    with pytest.raises(CommandError, match="only a complete run"):
        call_command("export_pairs", str(run.pk), "--out", str(tmp_path / "x.csv"))


@pytest.mark.django_db(transaction=True)
def test_screen_wait_blocks_until_a_worker_process_finishes(import_records, worker_process, capsys):
    import_records("seed", SEED000)
    worker_process()
    call_command("screen", "--corpus", "seed", "--exact", "--wait")
    assert "exact pass: 1 group of 2+" in capsys.readouterr().out
    assert ScreeningRun.objects.get().status == "complete"


@pytest.mark.django_db(transaction=True)
def test_screen_sync_exits_non_zero_when_the_run_fails(import_records, queue, monkeypatch):
    import_records("seed", SEED000)

    def broken(spec, report=None):
        raise ValueError("forced failure")

    from screening.runs import steps

    monkeypatch.setattr(steps, "exact_step", broken)
    with pytest.raises(CommandError, match="failed: ValueError: forced failure"):
        call_command("screen", "--corpus", "seed", "--exact", "--sync")


@pytest.mark.django_db
def test_editor_cannot_start_a_run(editor_client, import_records):
    import_records("seed", SEED000)
    response = editor_client.post(reverse("screening:run_start", args=["seed"]), {"exact": "on"})
    assert response.status_code == 403 and not ScreeningRun.objects.exists()


def test_seed_sha_is_what_hashlib_says():
    a = SEED000[0]
    assert hashlib.sha256(contract.content_bytes("fa", a["title"], a["body"])).hexdigest() == SEED000_A_SHA256


@pytest.mark.django_db
def test_import_stores_the_seed_digest_for_the_exact_pass(import_records):
    import_records("seed", SEED000)
    assert Document.objects.get(doc_id="A").content_sha256 == SEED000_A_SHA256
    assert Document.objects.get(doc_id="B").content_sha256 == SEED000_A_SHA256


@pytest.mark.django_db
def test_a_forced_digest_collision_in_the_database_still_groups_by_full_bytes(import_records):
    import_records("seed", SEED000)
    import_records("zh", SEED001)
    honest = completed_run("zh")
    Document.objects.update(content_sha256="0" * 64)  # every document now shares one digest
    forced = completed_run("zh")
    forced.stats.pop("seconds"), honest.stats.pop("seconds")
    assert forced.stats == honest.stats
    groups = [[m.document.doc_id for m in g.members.order_by("position")] for g in forced.exact_groups.all()]
    assert groups == [[m.document.doc_id for m in g.members.order_by("position")] for g in honest.exact_groups.all()]
    assert forced.stats["exact_singletons"] > 0
