"""Sources and sheet exports in an S3-compatible bucket (DEDUP_SOURCES_URL, DEDUP_EXPORTS_URL), against a real
S3 API: moto_server on a free port (tests/conftest.py). Written once by SHA-256, checked on every read."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import urllib.error
import urllib.request
import zipfile

import boto3
import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

from dedup_site import buckets
from screening.ingest import uploads
from screening.models import Document, ScreeningRun, SourceFile, Upload

RECORDS = [{"doc_id": f"D{i}", "language": "en", "body": f"the voltage is {i % 3} volts across the sensor"}
           for i in range(6)]


def _jsonl(records=RECORDS) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def _key(bucket, sha: str) -> str:
    return bucket.key(f"{sha[:2]}/{sha}")


def _object(bucket, key: str) -> bytes:
    return boto3.client("s3").get_object(Bucket=bucket.name, Key=key)["Body"].read()


def _replace(bucket, key: str, data: bytes) -> None:
    """Change an object behind the application's back."""
    boto3.client("s3").put_object(Bucket=bucket.name, Key=key, Body=data)


def _local_files() -> list:
    return [p for p in settings.SOURCES_DIR.rglob("*") if p.is_file()] if settings.SOURCES_DIR.exists() else []


@pytest.mark.django_db
def test_import_corpus_stores_the_upload_in_the_bucket_and_no_source_file_on_disk(sources_bucket, write, capsys):
    data = _jsonl()
    call_command("import_corpus", str(write("docs.jsonl", data)), "--corpus", "c")
    sha = hashlib.sha256(data).hexdigest()
    assert _object(sources_bucket, _key(sources_bucket, sha)) == data
    assert _local_files() == []
    assert Document.objects.filter(corpus__name="c").count() == 6
    assert f"source SHA-256 {sha}" in capsys.readouterr().out


@pytest.mark.django_db
def test_a_run_completes_with_the_local_sources_folder_removed(sources_bucket, write):
    call_command("import_corpus", str(write("docs.jsonl", _jsonl())), "--corpus", "c")
    shutil.rmtree(settings.SOURCES_DIR, ignore_errors=True)
    call_command("screen", "--corpus", "c", "--sync")
    assert ScreeningRun.objects.get().status == "complete"
    assert not settings.SOURCES_DIR.exists()


@pytest.mark.django_db
def test_verify_sources_passes_on_intact_objects_and_names_a_changed_or_missing_one(sources_bucket, capsys):
    kept = uploads.upload_create(corpus_name="c", chunks=[b"kept\n"], size=5, original_name="kept.txt")
    changed = uploads.upload_create(corpus_name="c", chunks=[b"text\n"], size=5, original_name="a.txt")
    gone = uploads.upload_create(corpus_name="c", chunks=[b"gone\n"], size=5, original_name="g.txt")
    call_command("verify_sources")
    assert "all 3 stored source files verified" in capsys.readouterr().out
    _replace(sources_bucket, _key(sources_bucket, changed.source.sha256), b"test\n")
    boto3.client("s3").delete_object(Bucket=sources_bucket.name, Key=_key(sources_bucket, gone.source.sha256))
    with pytest.raises(CommandError, match="2 of 3 stored source files failed verification"):
        call_command("verify_sources")
    err = capsys.readouterr().err
    assert f"{changed.source.sha256} (a.txt): changed" in err
    assert sources_bucket.where(_key(sources_bucket, changed.source.sha256)) in err
    assert f"{gone.source.sha256} (g.txt): missing (s3://{sources_bucket.name}/" in err
    assert kept.source.sha256 not in err


@pytest.mark.django_db
def test_an_object_is_written_once_and_never_replaced(sources_bucket):
    key = sources_bucket.key("once")
    assert sources_bucket.put_once(key, [b"first"])[2] is True
    assert sources_bucket.put_once(key, [b"second"])[2] is False  # If-None-Match: * refused the overwrite
    assert _object(sources_bucket, key) == b"first"


@pytest.mark.django_db
def test_the_same_file_twice_is_stored_once(sources_bucket):
    first = uploads.upload_create(corpus_name="c", chunks=[b"x\n"], size=2, original_name="a.txt")
    second = uploads.upload_create(corpus_name="c", chunks=[b"x\n"], size=2, original_name="b.txt")
    assert first.source_id == second.source_id
    listed = boto3.client("s3").list_objects_v2(Bucket=sources_bucket.name)["Contents"]
    assert [o["Key"] for o in listed] == [_key(sources_bucket, first.source.sha256)]


@pytest.mark.django_db
def test_an_import_refuses_a_source_changed_in_the_bucket_naming_upload_and_key(sources_bucket):
    upload = uploads.upload_create(corpus_name="c", chunks=[_jsonl()], size=len(_jsonl()), original_name="d.jsonl")
    key = _key(sources_bucket, upload.source.sha256)
    _replace(sources_bucket, key, _jsonl(RECORDS[:2]))
    upload = uploads.upload_process(upload=upload)
    assert upload.status == Upload.Status.FAILED
    assert f"upload {upload.pk} (d.jsonl)" in upload.error and sources_bucket.where(key) in upload.error
    assert "changed" in upload.error and Document.objects.count() == 0


@pytest.mark.django_db
def test_an_object_changed_after_its_check_fails_the_ranged_read(sources_bucket, monkeypatch):
    monkeypatch.setattr(buckets, "BLOCK", 4)
    key = sources_bucket.key("pinned")
    sources_bucket.put_once(key, [b"0123456789"])
    source = sources_bucket.open_checked(key, hashlib.sha256(b"0123456789").hexdigest(), 10)
    with source.open() as stream:
        assert stream.read(4) == b"0123"
        _replace(sources_bucket, key, b"abcdefghij")
        with pytest.raises(buckets.ObjectChanged, match="changed after its SHA-256 was checked"):
            stream.read()


@pytest.mark.django_db
def test_a_large_upload_goes_up_in_parts_and_a_zip_is_read_by_ranges(sources_bucket, monkeypatch, settings):
    monkeypatch.setattr(buckets, "BLOCK", 64 << 10)  # many ranged reads for one archive
    members = {f"notes/n{i}.txt": (f"note {i} " * 40_000).encode() for i in range(30)}  # 9 MiB in all
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, body in members.items():
            zf.writestr(name, body)
    data = raw.getvalue()
    assert len(data) > buckets.PART
    upload = uploads.upload_create(corpus_name="c", chunks=[data[i : i + (1 << 20)] for i in range(0, len(data),
                                                                                                  1 << 20)],
                                   size=len(data), original_name="notes.zip", language="en")
    head = sources_bucket.head(_key(sources_bucket, upload.source.sha256))
    assert head["ETag"].endswith('-2"') and head["ContentLength"] == len(data)  # two multipart parts
    upload = uploads.upload_process(upload=upload)
    assert upload.status == Upload.Status.COMPLETE, (upload.problems, upload.error)
    assert Document.objects.count() == 30 and _local_files() == []


@pytest.mark.django_db
def test_the_second_interpreter_reads_a_bucket_source_on_its_own_client(sources_bucket, settings):
    settings.DEDUP_IMPORT_PARALLEL_BYTES = 0  # always read by `python -m screening.ingest.reading`
    upload = uploads.upload_create(corpus_name="c", chunks=[_jsonl()], size=len(_jsonl()), original_name="d.jsonl")
    upload = uploads.upload_process(upload=upload)
    assert upload.status == Upload.Status.COMPLETE, (upload.problems, upload.error)
    assert Document.objects.count() == 6


@pytest.mark.django_db
def test_an_unreachable_bucket_refuses_the_upload_clearly_and_records_nothing(sources_bucket, monkeypatch, write):
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    from django.core.files.storage import storages

    storages._storages.pop("sources", None)  # a storage made now, with the endpoint as it is now
    with pytest.raises(CommandError, match=r"docs\.jsonl could not be stored, so nothing was imported: .*could not "
                                           r"be reached"):
        call_command("import_corpus", str(write("docs.jsonl", _jsonl())), "--corpus", "c")
    assert Upload.objects.count() == 0 and SourceFile.objects.count() == 0 and _local_files() == []


@pytest.mark.django_db
def test_a_web_upload_is_stored_in_the_bucket(sources_bucket, admin_client):
    from django.core.files.uploadedfile import SimpleUploadedFile

    data = _jsonl()
    admin_client.post(reverse("screening:upload_create"),
                      {"corpus": "web", "file": SimpleUploadedFile("w.jsonl", data)})
    upload = Upload.objects.get()
    assert _object(sources_bucket, _key(sources_bucket, upload.source.sha256)) == data and _local_files() == []


def _judged_run(import_records, editor):
    from review import services
    from tests.factories import seed_run

    run = seed_run(import_records)
    pair = run.pairs.order_by("pk").first()
    services.judgement_record(pair=pair, reviewer=editor, verdict="merge-entry", reason="copy")
    return run


@pytest.mark.django_db
def test_a_sheet_export_goes_to_the_bucket_and_downloads_through_a_short_lived_link(
        import_records, editor, exports_bucket, admin_client, tmp_path):
    from review.sheets import sheet_exports

    exports_bucket.create()
    run = _judged_run(import_records, editor)
    out = tmp_path / "sheet.csv"
    call_command("export_sheet", str(run.pk), "--out", str(out))
    export = run.sheet_exports.get()
    assert export.bucket_prefix.startswith(f"sheets/{export.pk}/")
    assert not sheet_exports.export_dir(export).exists()
    csv_key = f"{export.bucket_prefix}/run-{run.pk}-sheet-{export.pk}.csv"
    assert hashlib.sha256(_object(exports_bucket, csv_key)).hexdigest() == export.csv_sha256
    assert hashlib.sha256(out.read_bytes()).hexdigest() == export.csv_sha256
    call_command("verify_sheet", str(out))  # the manifest copied beside it checks
    response = admin_client.get(reverse("review:sheet_download", args=[export.pk, "csv"]))
    assert response.status_code == 302 and "X-Amz-Expires=300" in response.url and "X-Amz-Signature" in response.url
    with urllib.request.urlopen(response.url) as answer:  # noqa: S310 - the moto server on loopback
        assert answer.read() == out.read_bytes()
        assert f"run-{run.pk}-sheet-{export.pk}.csv" in answer.headers["Content-Disposition"]
    assert Client().get(reverse("review:sheet_download", args=[export.pk, "csv"])).status_code == 302  # to log in
    with pytest.raises(urllib.error.HTTPError, match="403"):  # the object itself is not public
        urllib.request.urlopen(f"{os.environ['AWS_ENDPOINT_URL']}/{exports_bucket.name}/{csv_key}")  # noqa: S310
    from dedup_site import tokens  # the API reads the files through the app: a pipeline holds one token only

    alice = get_user_model().objects.get(username="alice-admin")
    token = tokens.token_create(user=alice, actor=alice, name="pipeline")[1]
    for part, made in (("csv", out), ("manifest", out.with_name(out.stem + ".manifest.json"))):
        answer = Client().get(f"/api/v1/sheets/{export.pk}/{part}/", HTTP_AUTHORIZATION=f"Bearer {token}")
        assert answer.status_code == 200 and b"".join(answer.streaming_content) == made.read_bytes(), part


@pytest.mark.django_db
def test_a_sheet_export_whose_write_fails_is_failed_and_can_be_run_again(import_records, editor, exports_bucket,
                                                                           tmp_path):
    from review.sheets import sheet_exports

    run = _judged_run(import_records, editor)  # the bucket does not exist yet: every write fails
    with pytest.raises(CommandError, match=r"failed \(it can be run again\): .*NoSuchBucket"):
        call_command("export_sheet", str(run.pk), "--out", str(tmp_path / "sheet.csv"))
    export = run.sheet_exports.get()
    assert export.status == "failed" and "NoSuchBucket" in export.error
    exports_bucket.create()
    export = sheet_exports.sheet_export_build(export=export)
    assert export.status == "complete" and export.row_count == 1
    assert b"".join(sheet_exports.export_chunks(export, "csv")).count(b"\n") == 2


class _Flaky:
    """A fault in front of the moto server: answers the first `failures` requests 503 SlowDown (as S3 does
    when throttling), then forwards every request as it came."""

    def __init__(self, upstream: str, failures: int):
        import http.client
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        from urllib.parse import urlsplit

        flaky, target = self, urlsplit(upstream)
        self.failures, self.answered_503 = failures, 0

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _any(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if flaky.answered_503 < flaky.failures:
                    flaky.answered_503 += 1
                    error = b"<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>"
                    self.send_response(503)
                    self.send_header("Content-Length", str(len(error)))
                    self.end_headers()
                    self.wfile.write(error)
                    return
                upstream = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
                upstream.request(self.command, self.path, body=body, headers=dict(self.headers))
                answer = upstream.getresponse()
                data = answer.read()
                self.send_response(answer.status)
                for name, value in answer.getheaders():
                    if name.lower() not in ("content-length", "transfer-encoding", "connection", "server", "date"):
                        self.send_header(name, value)
                # A HEAD answer's length is the object's, not that of its (empty) body.
                self.send_header("Content-Length", answer.getheader("Content-Length") if self.command == "HEAD"
                                 else str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _any

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.django_db
def test_transient_errors_are_retried_with_backoff(sources_bucket, monkeypatch, s3_env):
    from django.core.files.storage import storages

    flaky = _Flaky(s3_env, failures=2)
    try:
        monkeypatch.setenv("AWS_ENDPOINT_URL", flaky.url)
        monkeypatch.setenv("AWS_MAX_ATTEMPTS", "3")
        storages._storages.pop("sources", None)
        upload = uploads.upload_create(corpus_name="c", chunks=[_jsonl()], size=len(_jsonl()),
                                       original_name="d.jsonl")
    finally:
        flaky.close()
        monkeypatch.setenv("AWS_ENDPOINT_URL", s3_env)
    assert flaky.answered_503 == 2
    assert _object(sources_bucket, _key(sources_bucket, upload.source.sha256)) == _jsonl()


@pytest.mark.django_db
def test_a_source_downloads_through_the_app_checked_and_only_for_admins(sources_bucket, admin_client, editor):
    data = _jsonl()
    upload = uploads.upload_create(corpus_name="c", chunks=[data], size=len(data), original_name="d.jsonl")
    address = reverse("screening:upload_source", args=[upload.pk])
    response = admin_client.get(address)
    assert response.status_code == 200 and b"".join(response.streaming_content) == data
    assert 'filename="d.jsonl"' in response["Content-Disposition"]
    editor_client = Client()
    editor_client.force_login(editor)
    assert editor_client.get(address).status_code == 403
    _replace(sources_bucket, _key(sources_bucket, upload.source.sha256), b"other\n")
    refused = admin_client.get(address)
    assert refused.status_code == 409 and b"changed" in refused.content
