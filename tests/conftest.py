from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import django_rq
import pytest
from django.conf import settings
from django.db import connections

from dedup_site import redis_server
from dedup_site.redis_direct import ensure_redis, get_queue
from tests import browser_helpers
from tests.factories import reviewer


@pytest.fixture(scope="session", autouse=True)
def _data_dir():
    """The test data folder (sources, embedded Redis) is removed after the session."""
    yield settings.DATA_DIR
    if not settings.REDIS_URL:
        redis_server.stop(settings.EMBEDDED_REDIS_DIR)
    if "dedup-test-" in str(settings.DATA_DIR):
        shutil.rmtree(settings.DATA_DIR, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def _flush_lifts_the_guards():
    """Tests that commit (real workers) are emptied by Django's flush, which the database guards refuse by
    design: the test runner's own flush lifts them for that statement and puts them back in the same
    transaction. Nothing else in the program can delete a guarded row."""
    from django.db import transaction
    from django.db.backends.base.operations import BaseDatabaseOperations

    from dedup_site import guards

    original = BaseDatabaseOperations.execute_sql_flush

    def flush(self, sql_list):
        with transaction.atomic(using=self.connection.alias):
            present = guards.registered()
            guards.remove(self.connection, present)
            original(self, sql_list)
            guards.sync(self.connection)

    BaseDatabaseOperations.execute_sql_flush = flush
    yield
    BaseDatabaseOperations.execute_sql_flush = original


@pytest.fixture
def queue():
    """The real queue on a real Redis server, with the whole test database emptied before the test: jobs
    left queued, deferred or failed by an earlier test (or an earlier, interrupted session on the same
    server) must not run in this one."""
    ensure_redis()
    q = get_queue()
    q.connection.flushdb()
    return q


def _requests_finished(timeout: float = 10) -> None:
    """Until no request thread of a live server is still finishing (closing its database connection after the
    response went out): a work-horse forked while SQLite holds its lock in another thread waits for ever."""
    import threading

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(
            "process_request_thread" in thread.name for thread in threading.enumerate()):
        time.sleep(0.01)


@pytest.fixture
def run_worker(queue):
    """Run a real RQ worker in burst mode: it forks a work-horse per job, as in production."""

    def run() -> None:
        connections.close_all()  # the work-horse must open its own database connection
        _requests_finished()
        worker = django_rq.get_worker("default", serializer="rq.serializers.JSONSerializer")
        worker.work(burst=True)

    return run


@pytest.fixture
def admin_user(db, django_user_model):
    return reviewer("alice-admin", "admin")


@pytest.fixture
def editor(db, django_user_model):
    return reviewer("erin-editor", "editor")


@pytest.fixture
def editor2(db, django_user_model):
    return reviewer("ed-editor", "editor")


@pytest.fixture
def arbiter(db, django_user_model):
    return reviewer("arty-arbiter", "arbiter")


@pytest.fixture
def admin_client(client, admin_user):
    client.force_login(admin_user)
    return client


@pytest.fixture
def editor_client(client, editor):
    client.force_login(editor)
    return client


@pytest.fixture
def editor2_client(editor2):
    from django.test import Client

    client = Client()
    client.force_login(editor2)
    return client


@pytest.fixture
def arbiter_client(arbiter):
    from django.test import Client

    client = Client()
    client.force_login(arbiter)
    return client


@pytest.fixture
def write(tmp_path):
    """Write a file under tmp_path from text (UTF-8) or bytes; return its path."""

    def _write(name: str, content: str | bytes) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
        return path

    return _write


@pytest.fixture(autouse=True)
def _default_language_after():
    """A request through the test client leaves its language active in this thread (LocaleMiddleware does not
    put the last one back): a test after a Chinese page would otherwise read its services' refusals in
    Chinese."""
    yield
    from django.utils import translation

    translation.deactivate()


@pytest.fixture(autouse=True)
def _own_sources_dir(settings, tmp_path):
    """Each test stores sources in its own folder, so a tampering test cannot leak into another."""
    settings.SOURCES_DIR = tmp_path / "sources"


@pytest.fixture
def import_records(db):
    """Import records (dicts) into a corpus through the upload service; return the upload."""
    import json

    from screening.ingest import uploads

    def _import(corpus: str, records: list[dict], name: str = "records.jsonl"):
        data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()
        upload = uploads.upload_create(corpus_name=corpus, chunks=[data], size=len(data), original_name=name)
        upload = uploads.upload_process(upload=upload)
        assert upload.status == "complete", upload.problems
        return upload

    return _import


def process_env(**extra_env) -> dict:
    """The environment for another process of the program on this test's database, Redis and folders."""
    from django.db import connection

    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        url = f"sqlite:///{db['NAME']}"
    else:
        url = f"postgresql://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    return dict(os.environ, DATABASE_URL=url, DJANGO_SETTINGS_MODULE="dedup_site.settings",
                DEDUP_SOURCES_DIR=str(settings.SOURCES_DIR), **extra_env)


@pytest.fixture
def worker_process(queue):
    """Start a real worker process (`manage.py worker`) on this test's database and Redis."""
    import subprocess
    import sys

    started = []

    def start(**extra_env):
        process = subprocess.Popen([sys.executable, "manage.py", "worker"], cwd=Path(__file__).resolve().parent.parent,
                                   env=process_env(**extra_env), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        started.append(process)
        return process

    yield start
    for process in started:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.fixture
def browser():
    # Playwright's sync API runs an event loop in this thread; the ORM calls in these tests are still sync.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=browser_helpers.CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"])
        yield chromium
        chromium.close()
    os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)


@pytest.fixture
def reviewed(import_records, editor, editor2, arbiter):
    """Seed 001 reviewed as in the review tests (the sheets' and the record's tests): two reviews per pair,
    A–B arbitrated, the editor's judgements signed."""
    from review import services
    from screening.models import CandidatePair
    from tests.factories import completed_run
    from tests.seeds import SEED001

    import_records("zh", SEED001)
    run = completed_run("zh", near=True, reviews_required=2)
    ab = CandidatePair.objects.get(run=run, left__doc_id="A", right__doc_id="B")
    ac = CandidatePair.objects.get(run=run, left__doc_id="A", right__doc_id="C")
    services.judgement_record(pair=ab, reviewer=editor, verdict="merge-entry", reason="same guide, reformatted",
                              related_source="demo-B")
    services.judgement_record(pair=ac, reviewer=editor, verdict="valid-revision", reason="每周 became 每天")
    services.signature_record(reviewer=editor, password="correct horse battery")
    services.judgement_record(pair=ab, reviewer=editor2, verdict="keep-both", reason="=HYPERLINK(\"x\")")
    services.arbitration_record(pair=CandidatePair.objects.get(pk=ab.pk), arbiter=arbiter, verdict="merge-entry",
                                reason="formatting only, see \"notes\",\nline two", retained="left")
    return run


@pytest.fixture(scope="session")
def moto_server():
    """A real S3 API: moto in server mode (`python -m moto.server`) on a free port, for the whole session."""
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1).close()  # noqa: S310 - loopback only
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise RuntimeError("moto_server did not start") from None
            time.sleep(0.1)
    yield endpoint
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture
def s3_env(moto_server, monkeypatch):
    """The AWS SDK's own variables pointing at the moto server (also seen by processes the test starts)."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_server)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test-key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test-secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "2")  # the standard retry mode's backoff, kept short
    return moto_server


def _new_bucket(name: str):
    import boto3

    boto3.client("s3").create_bucket(Bucket=name)


@pytest.fixture
def sources_bucket(s3_env, settings, monkeypatch):
    """Sources kept in a bucket of their own on the moto server (DEDUP_SOURCES_URL=s3://bucket/sources)."""
    import uuid

    from dedup_site import buckets

    name = f"sources-{uuid.uuid4().hex[:12]}"
    _new_bucket(name)
    url = f"s3://{name}/sources"
    settings.SOURCES_URL = url
    settings.STORAGES = {**settings.STORAGES, "sources": buckets.storage_options(url, 300)}
    monkeypatch.setenv("DEDUP_SOURCES_URL", url)  # for the program's other processes
    return buckets.Bucket(name, "sources")


@pytest.fixture
def exports_bucket(s3_env, settings, monkeypatch):
    """Sheet exports kept in a bucket on the moto server (DEDUP_EXPORTS_URL); `.create()` makes the bucket."""
    import uuid

    from dedup_site import buckets

    name = f"exports-{uuid.uuid4().hex[:12]}"
    url = f"s3://{name}/sheets"
    settings.EXPORTS_URL = url
    settings.STORAGES = {**settings.STORAGES, "exports": buckets.storage_options(url, 300)}
    bucket = buckets.Bucket(name, "sheets")
    bucket.create = lambda: _new_bucket(name)
    return bucket
