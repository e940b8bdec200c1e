"""Faults on real processes: a killed work-horse, Redis down when a run is started."""

from __future__ import annotations

import json
import random
import signal
import time

import psutil
import pytest
from django.conf import settings
from django.urls import reverse

from screening import runs
from screening.ingest import uploads
from screening.models import CandidatePair, Corpus, Document, ScreeningRun, Upload

TIMEOUT = 90  # seconds within which a fault must end in a final state


def wait_for(predicate, what: str, timeout: float = TIMEOUT, every: float = 0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what}")


def started(function: str):
    """Whether a job of this function is being worked on now (RQ's registry of started jobs)."""
    from rq.job import Job
    from rq.registry import StartedJobRegistry

    from dedup_site.redis_direct import get_queue

    def check() -> bool:
        queue = get_queue()
        for job_id in StartedJobRegistry(queue=queue).get_job_ids():
            job = Job.fetch(job_id, connection=queue.connection, serializer=queue.serializer)
            if job.func_name == function:
                return True
        return False

    return check


def kill_work_horse(worker) -> int:
    """SIGKILL the worker's work-horse (the forked child doing the job)."""
    wait_for(lambda: psutil.Process(worker.pid).children(), "a work-horse to start")
    horses = psutil.Process(worker.pid).children()
    for horse in horses:
        horse.send_signal(signal.SIGKILL)
    return len(horses)


def big_jsonl(n: int) -> bytes:
    words = "sensor voltage motor signal relay archive guide manual revision backup source".split()
    return "".join(json.dumps({"doc_id": f"d{i:07}", "language": "en",
                               "body": " ".join(words[(i + j) % len(words)] for j in range(60)) + f" {i}"}) + "\n"
                   for i in range(n)).encode()


@pytest.mark.django_db(transaction=True)
def test_a_killed_upload_job_ends_failed_with_nothing_stored(worker_process):
    data = big_jsonl(250_000)
    upload = uploads.upload_create(corpus_name="big", chunks=[data], size=len(data), original_name="big.jsonl")
    uploads.upload_enqueue(upload=upload)
    worker = worker_process()
    wait_for(lambda: Upload.objects.get(pk=upload.pk).status == "running", "the upload to start")
    time.sleep(1.0)
    assert kill_work_horse(worker) == 1
    wait_for(lambda: Upload.objects.get(pk=upload.pk).status == "failed", "the upload to be marked failed")
    upload.refresh_from_db()
    assert "the worker process doing this job died" in upload.error
    assert Document.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_a_killed_run_ends_failed_with_no_results_and_runs_again(worker_process, import_records, run_worker,
                                                                settings):
    import_records("big", random_records(15_000))
    settings.DEDUP_SIGN_CHUNK = 1_000_000  # one job does it all: killing it kills the run
    run = runs.run_start(corpus=Corpus.objects.get(name="big"), options=runs.RunOptions(exact=True, near=True))
    worker = worker_process(DEDUP_SIGN_CHUNK="1000000")
    wait_for(lambda: ScreeningRun.objects.get(pk=run.pk).status == "running", "the run to start")
    time.sleep(1.0)
    assert kill_work_horse(worker) == 1
    wait_for(lambda: ScreeningRun.objects.get(pk=run.pk).status == "failed", "the run to be marked failed")
    assert not CandidatePair.objects.filter(run=run).exists()
    worker.terminate()
    worker.wait(timeout=30)
    runs.run_retry(run=ScreeningRun.objects.get(pk=run.pk))
    run_worker()
    assert ScreeningRun.objects.get(pk=run.pk).status == "complete"


@pytest.mark.django_db(transaction=True)
def test_redis_down_when_a_run_is_started_gives_a_clear_error_and_keeps_the_run(admin_client, import_records,
                                                                               monkeypatch):
    import django_rq.settings as rq_settings

    import_records("zh", [{"doc_id": "a", "language": "en", "body": "some text here"}])
    # Point the site at a Redis that is not there (a real refused connection, nothing faked in our code).
    dead = "redis://127.0.0.1:1/0"
    monkeypatch.setattr(settings, "REDIS_URL", dead)
    monkeypatch.setitem(rq_settings.QUEUES, "default", dict(rq_settings.QUEUES["default"], URL=dead))
    response = admin_client.post(reverse("screening:run_start", args=["zh"]), {"exact": "on"}, follow=True)
    page = response.content.decode()
    assert "The run could not be queued: the job queue (Redis) is not reachable" in page
    run = ScreeningRun.objects.get()
    assert run.status == "failed" and "not reachable" in run.error
    assert "Run again" in page


def random_records(n: int) -> list[dict]:
    """Random documents; every tenth is an edited copy of the one before, so the near pass finds pairs."""
    rng = random.Random(5)
    records = []
    for i in range(n):
        if i % 10 == 9:
            words = records[-1]["body"].split()
            words[rng.randrange(len(words))] = "edited"
            body = " ".join(words)
        else:
            body = " ".join(f"w{rng.randrange(50_000)}" for _ in range(300))
        records.append({"doc_id": f"d{i:06}", "language": "en", "body": body})
    return records


def test_database_down_gives_an_error_page_without_a_stack_trace(tmp_path):
    """The site served by gunicorn with its database unreachable: a plain 500 page, no traceback."""
    import os
    import subprocess
    import sys
    import urllib.error
    import urllib.request
    from pathlib import Path

    port = 8767
    env = dict(os.environ, DATABASE_URL="postgresql://nobody@127.0.0.1:1/gone", DEDUP_DATA_DIR=str(tmp_path),
               DJANGO_SETTINGS_MODULE="dedup_site.settings", DJANGO_DEBUG="0")
    server = subprocess.Popen([sys.executable, "-m", "gunicorn", "dedup_site.wsgi:application", "--bind",
                               f"127.0.0.1:{port}", "--workers", "1", "--no-control-socket"],
                              cwd=Path(__file__).resolve().parent.parent, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        request = urllib.request.Request(f"http://127.0.0.1:{port}/", headers={"Cookie": "sessionid=" + "a1" * 16})
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(request, timeout=10)  # noqa: S310 - loopback
                raise AssertionError("the page answered although the database is down")
            except urllib.error.HTTPError as error:
                status, body = error.code, error.read().decode()
                break
            except urllib.error.URLError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.3)
        assert status == 500
        assert "Something went wrong" in body and "database" in body
        assert "Traceback" not in body and "OperationalError" not in body
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.mark.django_db(transaction=True)
def test_redis_restarted_during_a_run_does_not_leave_it_running(worker_process, import_records, settings):
    from dedup_site import redis_server

    if settings.REDIS_URL:
        pytest.skip("restarts the embedded Redis server; this run uses an external one")
    import_records("big", random_records(15_000))
    settings.DEDUP_SIGN_CHUNK = 1_000_000
    run = runs.run_start(corpus=Corpus.objects.get(name="big"), options=runs.RunOptions(exact=True, near=True))
    worker_process(DEDUP_SIGN_CHUNK="1000000")
    wait_for(lambda: ScreeningRun.objects.get(pk=run.pk).status == "running", "the run to start")
    time.sleep(1.0)
    redis_server.stop(settings.EMBEDDED_REDIS_DIR)
    time.sleep(1.0)
    redis_server.ensure_running(settings.EMBEDDED_REDIS_DIR)
    wait_for(lambda: not ScreeningRun.objects.get(pk=run.pk).is_active, "the run to end")
    run.refresh_from_db()
    if run.status == "failed":  # the outage met a step that needs Redis: failed, saying so, and it runs again
        assert "Connection" in run.error or "redis" in run.error.lower(), run.error
        runs.run_retry(run=run)
        wait_for(lambda: not ScreeningRun.objects.get(pk=run.pk).is_active, "the run to end again")
        run.refresh_from_db()
    assert run.status == "complete", run.error
    assert run.stats["near"]["signed"] == 15_000


@pytest.mark.django_db(transaction=True)
def test_a_job_ending_while_redis_restarts_is_recorded_and_the_worker_goes_on(worker_process, import_records,
                                                                              settings):
    """RQ's worker quits on a Redis error outside its dequeue loop, and a work-horse that cannot report its
    job's end dies with it. Our workers retry through the outage instead: the job ends finished and the next
    one (a run) is taken."""
    from rq.job import Job

    if settings.REDIS_URL:
        pytest.skip("restarts the embedded Redis server; this run uses an external one")
    from dedup_site.redis_direct import get_queue

    queue = get_queue()
    import_records("small", random_records(200))
    # Down for longer than redis-py's own three retries wait (at most 7 s with its default backoff).
    fault = queue.enqueue("tests.fault_jobs.stop_redis_for", str(settings.EMBEDDED_REDIS_DIR), 8.0)
    worker = worker_process()
    wait_for(lambda: not redis_server_answers(settings), "the job to stop Redis", timeout=60, every=0.05)
    wait_for(lambda: redis_server_answers(settings), "Redis to be started again", timeout=60)
    run = runs.run_start(corpus=Corpus.objects.get(name="small"), options=runs.RunOptions(exact=True, near=True))
    wait_for(lambda: not ScreeningRun.objects.get(pk=run.pk).is_active, "the run to end")
    run.refresh_from_db()
    assert run.status == "complete", run.error
    assert Job.fetch(fault.id, connection=queue.connection, serializer=queue.serializer).get_status() == "finished"
    assert worker.poll() is None, "the worker quit"


def redis_server_answers(settings) -> bool:
    from dedup_site import redis_server

    return redis_server.is_running(settings.EMBEDDED_REDIS_DIR)
