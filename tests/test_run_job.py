"""A run's job on a real worker: it drives the run, its steps cut in tasks, and publishes all or nothing."""

from __future__ import annotations

import time

import pytest
from django.core.management import call_command

from screening import runs
from screening.models import Corpus, ScreeningRun, StagedPair
from tests.factories import completed_run
from tests.families import evidence, family_records, pairs


@pytest.mark.django_db(transaction=True)
def test_a_run_job_on_a_real_worker_gives_the_pairs_of_a_run_in_this_process(import_records, worker_process, queue):
    records = family_records()
    import_records("one", records)
    import_records("job", records)
    single = completed_run("one", near=True)
    assert single.stats["near"]["stored"] > 50
    worker = worker_process(DEDUP_SIGN_CHUNK="20", DEDUP_VERIFY_CHUNK="20")
    run = runs.run_start(corpus=Corpus.objects.get(name="job"), options=runs.RunOptions(exact=True, near=True))
    deadline = time.monotonic() + 120
    while ScreeningRun.objects.get(pk=run.pk).is_active and time.monotonic() < deadline:
        time.sleep(0.3)
    run.refresh_from_db()
    assert run.status == "complete", run.error
    assert pairs(run) == pairs(single)
    assert evidence(run) == evidence(single)
    assert any(row[5] for row in evidence(run))  # revision signals
    for name in ("lsh_candidates", "below_floor", "histogram", "signed", "stored"):
        assert run.stats["near"][name] == single.stats["near"][name], name
    assert {"exact", "sign", "band", "verify", "publish"} <= set(run.stats["seconds"]), run.stats["seconds"]
    assert run.stats["near"]["verify_cpu_seconds"] > 0
    assert worker.poll() is None


@pytest.mark.django_db(transaction=True)
def test_a_run_cut_in_small_tasks_completes_with_sync(import_records, queue, settings, capsys):
    import_records("many", family_records(20, 4))
    settings.DEDUP_SIGN_CHUNK = 15
    call_command("screen", "--corpus", "many", "--sync")
    run = ScreeningRun.objects.get()
    assert run.status == "complete" and "clusters" in capsys.readouterr().out


@pytest.mark.django_db(transaction=True)
def test_a_verification_task_that_fails_fails_the_run_with_no_pairs(import_records, queue, run_worker, settings,
                                                                    admin_client, monkeypatch):
    import_records("many", family_records(30, 4))
    settings.DEDUP_VERIFY_CHUNK = 10
    from screening.runs import steps

    original = steps.verify_step

    def broken(spec, chunk, pairs, template):  # the fault: the fourth chunk fails, after three staged theirs
        if chunk == 3:
            raise RuntimeError("forced failure of a verification task")
        return original(spec, chunk, pairs, template)

    monkeypatch.setattr(steps, "verify_step", broken)  # the forked work-horse inherits it
    run = runs.run_start(corpus=Corpus.objects.get(name="many"), options=runs.RunOptions(exact=True, near=True))
    run_worker()
    run.refresh_from_db()
    assert run.status == "failed" and "forced failure of a verification task" in run.error, run.error
    assert not run.pairs.exists() and not run.clusters.exists()
    assert not StagedPair.objects.filter(run=run).exists()
    page = admin_client.get(run.get_absolute_url()).content.decode()
    assert "failed" in page and "f000-0" not in page


@pytest.mark.django_db(transaction=True)
def test_a_run_job_does_the_exact_pass_once(import_records, queue, run_worker, settings, monkeypatch,
                                                   tmp_path):
    from screening.runs import steps

    import_records("many", family_records(30, 4))
    settings.DEDUP_SIGN_CHUNK, settings.DEDUP_VERIFY_CHUNK = 30, 10
    calls, original = tmp_path / "exact-pass-calls", steps.exact_step

    def counted(spec, report=None):  # the forked work-horses inherit this, and write where the test reads
        with open(calls, "a") as out:
            out.write("x")
        return original(spec, report)

    monkeypatch.setattr(steps, "exact_step", counted)
    run = runs.run_start(corpus=Corpus.objects.get(name="many"), options=runs.RunOptions(exact=True, near=True))
    run_worker()
    run.refresh_from_db()
    assert run.status == "complete", run.error
    assert run.stats["near"]["lsh_candidates"] > 20
    assert calls.read_text() == "x"
