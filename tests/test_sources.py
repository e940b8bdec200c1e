"""Stored source files: byte for byte, read-only, named by SHA-256, and verified."""

from __future__ import annotations

import hashlib
import stat

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError

from screening.ingest import storage, uploads


def _store(data: bytes, name="seed.jsonl"):
    return uploads.upload_create(corpus_name="c", chunks=[data], size=len(data), original_name=name)


@pytest.mark.django_db
def test_stored_source_equals_the_upload_and_is_read_only():
    data = '{"doc_id":"A","language":"fa","body":"ولتاژ"}\n'.encode()
    upload = _store(data)
    path = storage.path_for(settings.SOURCES_DIR, upload.source.sha256)
    assert upload.source.sha256 == hashlib.sha256(data).hexdigest() and path.name == upload.source.sha256
    assert path.read_bytes() == data
    assert stat.S_IMODE(path.stat().st_mode) == 0o444
    assert not str(path).startswith(str(settings.STATIC_ROOT))


@pytest.mark.django_db
def test_the_same_file_uploaded_twice_is_stored_once():
    first, second = _store(b"x\n", "a.txt"), _store(b"x\n", "b.txt")
    assert first.source_id == second.source_id
    assert (first.original_name, second.original_name) == ("a.txt", "b.txt")


@pytest.mark.django_db
def test_verify_sources_passes_when_nothing_changed(capsys):
    _store(b"some text\n", "a.txt")
    call_command("verify_sources")
    assert "all 1 stored source files verified" in capsys.readouterr().out


@pytest.mark.django_db
def test_verify_sources_catches_a_changed_byte(capsys):
    upload = _store(b"some text\n", "a.txt")
    path = storage.path_for(settings.SOURCES_DIR, upload.source.sha256)
    path.chmod(0o644)  # simulate tampering outside the product
    path.write_bytes(b"some test\n")
    path.chmod(0o444)
    with pytest.raises(CommandError, match="1 of 1 stored source files failed verification"):
        call_command("verify_sources")
    assert f"{upload.source.sha256} (a.txt): changed" in capsys.readouterr().err


@pytest.mark.django_db
def test_verify_sources_catches_a_vanished_file(capsys):
    upload = _store(b"gone\n", "g.txt")
    storage.path_for(settings.SOURCES_DIR, upload.source.sha256).unlink()
    with pytest.raises(CommandError):
        call_command("verify_sources")
    assert "(g.txt): missing" in capsys.readouterr().err


@pytest.mark.django_db
def test_an_admin_downloads_a_stored_source_from_the_folder(admin_client):
    from django.urls import reverse

    data = "سلام\n".encode()
    upload = _store(data, "سلام.txt")
    response = admin_client.get(reverse("screening:upload_source", args=[upload.pk]))
    assert response.status_code == 200 and b"".join(response.streaming_content) == data
    assert "filename*=utf-8''" in response["Content-Disposition"]
