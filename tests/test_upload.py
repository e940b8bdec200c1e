"""Uploading a corpus: stored source, the import job on a real worker, all-or-nothing, the command."""

from __future__ import annotations

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from screening.ingest import reading, uploads
from screening.models import Corpus, Document, Upload
from tests.seeds import SEED000, SEED001


def jsonl(records) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()


def post_upload(client, name: str, data: bytes, corpus: str = "guides", language: str = ""):
    return client.post(reverse("screening:upload_create"), {
        "corpus": corpus, "language": language, "file": SimpleUploadedFile(name, data),
    })


@pytest.mark.django_db(transaction=True)
def test_upload_page_imports_seed000_on_a_real_worker(admin_client, run_worker):
    response = post_upload(admin_client, "seed000.jsonl", jsonl(SEED000))
    assert response.status_code == 302
    upload = Upload.objects.get()
    assert upload.status == Upload.Status.QUEUED and upload.job_id
    run_worker()
    upload.refresh_from_db()
    assert upload.status == Upload.Status.COMPLETE, upload.error
    assert upload.document_count == 3
    docs = {d.doc_id: d for d in Document.objects.all()}
    assert {k: (d.source_id, d.body) for k, d in docs.items()} == {
        r["doc_id"]: (r["source_id"], r["body"]) for r in SEED000
    }
    assert docs["A"].upload == upload and docs["A"].place == "seed000.jsonl line 1"


@pytest.mark.django_db(transaction=True)
def test_corpus_page_shows_a_progress_bar_while_the_upload_waits(admin_client, queue):
    post_upload(admin_client, "seed001.jsonl", jsonl(SEED001), corpus="zh")
    page = admin_client.get(reverse("screening:corpus_detail", args=["zh"])).content.decode()
    upload = Upload.objects.get()
    assert f'data-status-url="{reverse("screening:upload_status", args=[upload.pk])}"' in page
    assert "<progress" in page
    state = admin_client.get(reverse("screening:upload_status", args=[upload.pk])).json()
    assert state == {"status": "queued", "label": "queued", "active": True, "fraction": 0.0, "stage": "", "stages": {},
                     "document_count": 0, "problem_count": 0, "language_check": "", "language_check_done": 0,
                     "hint": "no worker is taking jobs yet: a starting worker warms up for a few seconds; if this "
                             "stays, start one with “python manage.py worker” (make run starts one)"}


@pytest.mark.django_db(transaction=True)
def test_rejected_upload_lists_every_problem_and_adds_nothing(admin_client, run_worker):
    bad = jsonl([SEED000[0], dict(SEED000[1], body="  "), dict(SEED000[2], colour="red")])
    post_upload(admin_client, "bad.jsonl", bad)
    run_worker()
    upload = Upload.objects.get()
    assert upload.status == Upload.Status.REJECTED
    assert upload.problems == [
        "bad.jsonl line 2, field body: is empty or only whitespace",
        "bad.jsonl line 3, field colour: unknown field; the fields are doc_id, source_id, version, language, title, "
        "body, collected_at",
    ]
    assert Document.objects.count() == 0
    page = admin_client.get(reverse("screening:corpus_detail", args=["guides"])).content.decode()
    assert "rejected: 2 problems" in page
    assert "<bdi>bad.jsonl</bdi>, line 2, field <bdi>body</bdi>: is empty or only whitespace" in page


@pytest.mark.django_db(transaction=True)
def test_failing_job_marks_the_upload_failed_with_its_error(admin_client, run_worker, monkeypatch):
    def explode(**kwargs):
        raise RuntimeError("disk on fire")

    # A fault test: the forked work-horse inherits this patched service.
    monkeypatch.setattr(uploads, "upload_process", explode)
    post_upload(admin_client, "seed000.jsonl", jsonl(SEED000))
    run_worker()
    upload = Upload.objects.get()
    assert upload.status == Upload.Status.FAILED
    assert "RuntimeError: disk on fire" in upload.error
    assert Document.objects.count() == 0
    page = admin_client.get(reverse("screening:corpus_detail", args=["guides"])).content.decode()
    assert "disk on fire" in page


@pytest.mark.django_db
def test_duplicate_doc_id_within_an_upload_is_rejected(admin_user):
    upload = _create(jsonl([SEED000[0], dict(SEED000[1], doc_id="A")]), "dup.jsonl")
    upload = uploads.upload_process(upload=upload)
    assert upload.problems == ["dup.jsonl line 2, field doc_id: 'A' appears twice (first at dup.jsonl line 1)"]
    assert Document.objects.count() == 0


@pytest.mark.django_db
def test_doc_id_already_in_the_corpus_rejects_the_whole_second_upload(admin_user):
    uploads.upload_process(upload=_create(jsonl(SEED000[:1]), "first.jsonl"))
    second = uploads.upload_process(upload=_create(jsonl(SEED000), "second.jsonl"))
    assert second.status == Upload.Status.REJECTED
    assert second.problems == ["second.jsonl line 1, field doc_id: 'A' is already in corpus guides"]
    assert list(Document.objects.values_list("doc_id", flat=True)) == ["A"]


@pytest.mark.django_db
def test_a_second_upload_adds_documents_to_the_same_corpus(admin_user):
    uploads.upload_process(upload=_create(jsonl(SEED000[:1]), "one.jsonl"))
    uploads.upload_process(upload=_create(jsonl(SEED000[1:]), "two.jsonl"))
    corpus = Corpus.objects.get(name="guides")
    assert sorted(corpus.documents.values_list("doc_id", flat=True)) == ["A", "B", "C"]
    assert corpus.uploads.count() == 2


@pytest.mark.django_db
def test_reprocessing_a_completed_upload_adds_nothing(admin_user):
    upload = uploads.upload_process(upload=_create(jsonl(SEED000), "seed.jsonl"))
    uploads.upload_process(upload=upload)
    assert Document.objects.count() == 3


@pytest.mark.django_db
def test_large_rejected_upload_rolls_back_documents_of_earlier_batches(admin_user):
    records = [{"doc_id": f"d{i}", "language": "en", "body": f"text {i}"} for i in range(uploads.BATCH * 2 + 5)]
    records.append({"doc_id": "last", "language": "en", "body": ""})
    upload = uploads.upload_process(upload=_create(jsonl(records), "big.jsonl"))
    assert upload.status == Upload.Status.REJECTED and upload.problem_count == 1
    assert Document.objects.count() == 0


def _create(data: bytes, name: str, corpus: str = "guides") -> Upload:
    return uploads.upload_create(corpus_name=corpus, chunks=[data], size=len(data), original_name=name)


@pytest.mark.django_db
def test_import_corpus_command_imports_seed001(write, capsys):
    path = write("seed001.jsonl", jsonl(SEED001))
    call_command("import_corpus", str(path), "--corpus", "zh")
    assert "5 documents added to corpus zh" in capsys.readouterr().out
    assert Corpus.objects.get(name="zh").documents.count() == 5


@pytest.mark.django_db
def test_import_corpus_command_fails_and_prints_the_problems(write, capsys):
    path = write("bad.jsonl", jsonl([dict(SEED000[0], language="Persian")]))
    with pytest.raises(CommandError, match="bad.jsonl rejected: 1 problem"):
        call_command("import_corpus", str(path), "--corpus", "x")
    assert "bad.jsonl line 1, field language: 'Persian' is not a lowercase language tag" in capsys.readouterr().err
    assert Document.objects.count() == 0


@pytest.mark.django_db
def test_import_corpus_command_names_a_missing_path_and_a_non_file(tmp_path):
    with pytest.raises(CommandError, match="gone.jsonl: no such file"):
        call_command("import_corpus", str(tmp_path / "gone.jsonl"), "--corpus", "x")
    for path in (tmp_path, "/dev/null"):
        with pytest.raises(CommandError, match="not a regular file"):
            call_command("import_corpus", str(path), "--corpus", "x")
    assert not Corpus.objects.exists()


@pytest.mark.django_db
def test_import_corpus_command_uses_the_language_option_for_txt(write):
    path = write("seed-a.txt", SEED000[0]["body"])
    call_command("import_corpus", str(path), "--corpus", "fa", "--language", "fa")
    doc = Document.objects.get()
    assert (doc.doc_id, doc.language, doc.body) == ("seed-a", "fa", SEED000[0]["body"])


@pytest.mark.django_db
def test_bad_corpus_name_is_refused_before_anything_is_stored(admin_client):
    response = post_upload(admin_client, "seed.jsonl", jsonl(SEED000), corpus="../etc")
    assert response.status_code == 302
    assert Upload.objects.count() == 0 and Corpus.objects.count() == 0
    page = admin_client.get(response.url).content.decode()
    assert "corpus name &#x27;../etc&#x27;: use 1-64 letters" in page


@pytest.mark.django_db
def test_oversize_upload_is_refused_before_it_is_stored(admin_client, settings):
    settings.DEDUP_LIMITS = dict(settings.DEDUP_LIMITS, upload_bytes=100)
    response = post_upload(admin_client, "seed.jsonl", jsonl(SEED000 * 3))
    assert Upload.objects.count() == 0
    page = admin_client.get(response.url).content.decode()
    assert "over the upload limit of 100 bytes" in page


@pytest.mark.django_db
def test_document_page_shows_metadata_and_the_raw_body_as_escaped_text(admin_client):
    body = "first line\n  <script>alert(1)</script>\n\"><img src=x onerror=alert(1)>"
    uploads.upload_process(upload=_create(jsonl([dict(SEED000[0], body=body, version="2")]), "x.jsonl"))
    doc = Document.objects.get()
    page = admin_client.get(reverse("screening:document_detail", args=[doc.pk])).content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert(1)" not in page
    assert "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;" in page
    assert "first line\n  &lt;script&gt;" in page  # whitespace kept
    assert "Ref1" in page and doc.upload.source.sha256 in page


@pytest.mark.django_db
def test_corpus_page_searches_and_paginates_documents(admin_client):
    records = [{"doc_id": f"doc-{i:03}", "source_id": f"src-{i % 7}", "language": "en", "body": f"b{i}"}
               for i in range(120)]
    uploads.upload_process(upload=_create(jsonl(records), "many.jsonl"))
    url = reverse("screening:corpus_detail", args=["guides"])
    first = admin_client.get(url).content.decode()
    assert "Page 1 of 3 (120 documents)" in first and "doc-049" in first and "doc-050" not in first
    found = admin_client.get(url, {"q": "src-3"}).content.decode()
    assert "(17 documents)" in found


@pytest.mark.django_db(transaction=True)
def test_an_upload_cut_off_mid_request_stores_nothing(live_server, admin_client, settings):
    """The browser's connection drops half-way through the file: no source, upload or document is kept."""
    import re
    import socket
    import urllib.request
    from pathlib import Path
    from urllib.parse import urlparse

    session = admin_client.cookies["sessionid"].value
    page = urllib.request.urlopen(urllib.request.Request(  # noqa: S310 - the test's own live server
        live_server.url + reverse("screening:corpus_list"), headers={"Cookie": f"sessionid={session}"}))
    csrf_cookie = re.search(r"csrftoken=([^;]+)", page.headers["Set-Cookie"]).group(1)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.read().decode()).group(1)

    boundary = "----cut"
    data = jsonl([{"doc_id": f"d{i}", "language": "en", "body": "x" * 200} for i in range(20_000)])
    body = (
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"csrfmiddlewaretoken\"\r\n\r\n{token}\r\n"
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"corpus\"\r\n\r\ncut\r\n"
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.jsonl\"\r\n"
        f"Content-Type: application/octet-stream\r\n\r\n"
    ).encode() + data + f"\r\n--{boundary}--\r\n".encode()
    address = urlparse(live_server.url)

    def send(part: bytes) -> bytes:
        with socket.create_connection((address.hostname, address.port)) as sock:
            sock.sendall((
                f"POST {reverse('screening:upload_create')} HTTP/1.1\r\nHost: {address.netloc}\r\n"
                f"Cookie: sessionid={session}; csrftoken={csrf_cookie}\r\nReferer: {live_server.url}/\r\n"
                f"Content-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {len(body)}\r\n\r\n"
            ).encode() + part)
            sock.shutdown(socket.SHUT_WR)  # nothing more comes: for a cut request, the rest is lost
            sock.settimeout(30)
            answer = b""
            try:
                while chunk := sock.recv(65536):
                    answer += chunk
            except OSError:
                pass
            return answer

    send(body[: len(body) // 2])
    assert not Upload.objects.exists() and not Document.objects.exists() and not Corpus.objects.filter(
        name="cut").exists()
    from screening.models import SourceFile

    assert not SourceFile.objects.exists()
    assert not [p for p in Path(settings.FILE_UPLOAD_TEMP_DIR).iterdir() if p.is_file()]
    # The same request sent whole is stored: the cut one was refused for being cut, not for its form.
    assert b"302" in send(body).split(b"\r\n")[0]
    assert Upload.objects.get().original_name == "big.jsonl"


@pytest.mark.django_db
def test_a_zip_without_a_language_gives_one_line_per_rule_with_a_count(write, admin_client, capsys):
    import io
    import zipfile

    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        for i in range(300):
            archive.writestr(f"notes/n{i:03d}.txt", f"note number {i}")
        archive.writestr("notes/bad.txt", b"\xff\xfe broken")
    path = write("notes.zip", data.getvalue())
    with pytest.raises(CommandError, match="notes.zip rejected: 301 problem"):
        call_command("import_corpus", str(path), "--corpus", "guides")
    err = capsys.readouterr().err
    assert err.count("is required") == 4 and "— 300 time(s), e.g.:" in err  # not 300 copies of one line
    upload = Upload.objects.get()
    assert [g["count"] for g in upload.problem_groups] == [300, 1] and upload.problem_count == 301
    examples = upload.problem_groups[0]["examples"]
    assert len(examples) == 3 and "notes/n000.txt" in examples[0]
    page = admin_client.get(reverse("screening:corpus_detail", args=["guides"])).content.decode()
    text = re.sub(r"<[^>]+>", "", page)  # the words as read: a count is isolated from the rule beside it
    assert "301 in all, 2 rules broken" in text and "— 300 times, for example" in text
    assert page.count("<bdi>notes.zip</bdi>, member <bdi>notes/n") == 3


# --- a large upload is read in a second process while the first stores it ------------------------------


def _mixed_upload(tag: str) -> bytes:
    """Several batches, with a doubled doc_id, a bad line, and a doc_id the corpus already holds."""
    records = [{"doc_id": f"{tag}{i}", "language": "en", "body": f"text {i}"} for i in range(uploads.BATCH * 2 + 5)]
    records[uploads.BATCH + 3]["doc_id"] = f"{tag}7"
    records[10]["body"] = ""
    records.append({"doc_id": "A", "language": "en", "body": "already there"})
    return jsonl(records)


@pytest.mark.django_db
def test_a_large_upload_read_in_a_second_process_reports_what_one_process_reports(admin_user, settings):
    uploads.upload_process(upload=_create(jsonl(SEED000[:1]), "first.jsonl"))
    serial = uploads.upload_process(upload=_create(_mixed_upload("s"), "mixed.jsonl"))
    settings.DEDUP_IMPORT_PARALLEL_BYTES = 0  # every upload through the second process
    parallel = uploads.upload_process(upload=_create(_mixed_upload("s"), "mixed.jsonl"))
    assert parallel.status == serial.status == Upload.Status.REJECTED
    assert parallel.problems == serial.problems and len(serial.problems) == 3
    assert parallel.problem_groups == serial.problem_groups
    assert list(Document.objects.values_list("doc_id", flat=True)) == ["A"]  # all or nothing, both ways


@pytest.mark.django_db(transaction=True)
def test_a_worker_reads_a_large_upload_in_a_second_process(admin_client, run_worker, settings):
    settings.DEDUP_IMPORT_PARALLEL_BYTES = 0  # the work-horse forks the reader, as for a file of 16 MiB
    records = [{"doc_id": f"d{i}", "language": "en", "body": f"text {i}"} for i in range(uploads.BATCH + 7)]
    post_upload(admin_client, "many.jsonl", jsonl(records))
    run_worker()
    upload = Upload.objects.get()
    assert upload.status == Upload.Status.COMPLETE, upload.error
    assert upload.document_count == Document.objects.count() == len(records)


@pytest.mark.django_db
def test_a_large_upload_read_in_a_second_process_stores_every_document(admin_user, settings):
    settings.DEDUP_IMPORT_PARALLEL_BYTES = 0
    records = [{"doc_id": f"d{i}", "language": "fa", "title": f"t{i}", "body": f"متن {i}\n"}
               for i in range(uploads.BATCH * 3 + 1)]
    upload = uploads.upload_process(upload=_create(jsonl(records), "many.jsonl"))
    assert upload.status == Upload.Status.COMPLETE and upload.document_count == len(records)
    stored = dict(Document.objects.values_list("doc_id", "content_sha256"))
    from screening.engine import contract

    assert stored["d5000"] == contract.sha256_hex(contract.content_bytes("fa", "t5000", "متن 5000\n"))
    assert len(stored) == len(records)


@pytest.mark.django_db
def test_a_reader_that_dies_fails_the_upload_and_stores_nothing(admin_user, settings):
    import psutil

    settings.DEDUP_IMPORT_PARALLEL_BYTES = 0
    records = [{"doc_id": f"d{i}", "language": "en", "body": "x"} for i in range(uploads.BATCH * 3)]
    killed = []

    def kill_the_reader(fraction):  # a fault: the reading process is killed once the first chunk is stored
        for child in psutil.Process().children():
            if "screening.ingest.reading" in child.cmdline():
                child.kill()
                killed.append(child.pid)

    with pytest.raises(reading.ReaderDied, match="died before it finished"):
        uploads.upload_process(upload=_create(jsonl(records), "cut.jsonl"), on_progress=kill_the_reader)
    assert killed and Document.objects.count() == 0


@pytest.mark.django_db
def test_a_new_sqlite_database_stores_documents_in_16_kib_pages():
    from django.db import connection

    if connection.vendor != "sqlite":
        pytest.skip("SQLite's page size")
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA page_size")
        # A 2 KB document in 4 KiB pages took a page of its own: twice the bytes written and checkpointed.
        assert cursor.fetchone()[0] == 16384


def test_a_sqlite_database_made_with_4_kib_pages_opens_as_it_was(tmp_path):
    import sqlite3

    from django.conf import settings

    options = settings.DATABASES["default"].get("OPTIONS", {})
    if "init_command" not in options:
        pytest.skip("SQLite's page size")
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as old:  # as a database from before the change was made
        old.executescript("PRAGMA page_size=4096; PRAGMA journal_mode=WAL; CREATE TABLE t (x); "
                          "INSERT INTO t VALUES (1);")
    opened = sqlite3.connect(path)
    opened.executescript(options["init_command"])  # what every connection runs first
    assert opened.execute("PRAGMA page_size").fetchone()[0] == 4096
    assert opened.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert opened.execute("SELECT x FROM t").fetchall() == [(1,)]
    opened.close()


@pytest.mark.django_db
def test_texts_lookup_reads_the_same_rows_as_in_and_refuses_what_is_not_text(admin_user):
    uploads.upload_process(upload=_create(jsonl(SEED001), "seed.jsonl"))
    asked = ["A", "C", "nope", "x' OR '1'='1"]
    assert Document.objects.filter(doc_id__in_texts=asked).count() == 2
    for texts in (asked, set(asked), tuple(asked)):
        assert sorted(Document.objects.filter(doc_id__in_texts=texts).values_list("pk", flat=True)) == sorted(
            Document.objects.filter(doc_id__in=asked).values_list("pk", flat=True))
    assert list(Document.objects.filter(doc_id__in_texts=[])) == []
    for wrong in (1, None, b"A"):
        with pytest.raises(TypeError, match="in_texts takes str"):
            list(Document.objects.filter(doc_id__in_texts=["A", wrong]))


@pytest.mark.django_db(transaction=True)
def test_a_queued_upload_says_a_worker_is_starting_while_it_warms_up(admin_client, queue, settings):
    import threading

    from dedup_site.rq_worker import DedupWorker
    from tests import probe_jobs

    post_upload(admin_client, "seed001.jsonl", jsonl(SEED001), corpus="zh")
    url = reverse("screening:upload_status", args=[Upload.objects.get().pk])
    settings.DEDUP_WORKER_WARM = ["tests.probe_jobs.warm_until_told"]
    probe_jobs.WARMING = threading.Event()
    starting = threading.Thread(target=lambda: DedupWorker([queue], connection=queue.connection))
    starting.start()
    try:
        for _ in range(100):  # until the worker has said it is starting
            hint = admin_client.get(url).json()["hint"]
            if "starting" in hint:
                break
            threading.Event().wait(0.05)
        assert hint.startswith("a worker is starting"), hint
    finally:
        probe_jobs.WARMING.set()
        starting.join()
    assert admin_client.get(url).json()["hint"].startswith("no worker is taking jobs yet")  # warmed, not working
