"""Signed review sheets: contents, signatures of reviewers, tamper detection, neutralised cells."""

from __future__ import annotations

import csv
import io
import json
import stat

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from review.models import ReviewerSignature, SheetExport
from review.sheets import sheet_exports, signing


def export(run, tmp_path, name="signing.csv", **selection):
    out = tmp_path / name
    call_command("export_sheet", str(run.pk), "--out", str(out), *[
        f"--{k.replace('_', '-')}={v}" if v is not True else f"--{k.replace('_', '-')}" for k, v in selection.items()])
    return out, out.with_name(out.stem + ".manifest.json")


def rows_of(path):
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def verify(csv_path, manifest_path, key_file=None):
    args = [str(csv_path), "--manifest", str(manifest_path)]
    if key_file:
        args += ["--public-key", str(key_file)]
    call_command("verify_sheet", *args)


@pytest.mark.django_db
def test_the_seed_sheet_holds_every_judgement_and_the_arbitration(reviewed, tmp_path):
    csv_path, _ = export(reviewed, tmp_path)
    rows = rows_of(csv_path)
    assert [(r["record"], r["left_doc_id"], r["right_doc_id"], r["reviewer"], r["verdict"]) for r in rows] == [
        ("judgement", "A", "B", "erin-editor", "merge-entry"),
        ("judgement", "A", "B", "ed-editor", "keep-both"),
        ("arbitration", "A", "B", "", "merge-entry"),
        ("judgement", "A", "C", "erin-editor", "valid-revision"),
    ]
    first = rows[0]
    assert (first["left_source_id"], first["right_source_id"], first["left_version"], first["jaccard"]) == (
        "demo-A", "demo-B", "v1", "1.0")
    assert first["related_source"] == "demo-B" and first["reason"] == "same guide, reformatted"
    assert (first["arbitration_status"], first["final_verdict"], first["arbiter"]) == (
        "settled", "merge-entry", "arty-arbiter")
    assert first["signed_at"].endswith("Z") and rows[1]["signed_at"] == "unsigned"  # ed-editor never signed
    assert first["reviewed_at"].endswith("Z") and first["arbitrated_at"] == rows[2]["reviewed_at"]
    assert rows[3]["revision_signals"] == "每周归档 → 每天归档"
    assert rows[2]["retained_version"] == "left" and rows[2]["reason"] == 'formatting only, see "notes",\nline two'
    assert len(first["left_source_sha256"]) == 64


@pytest.mark.django_db
def test_the_csv_is_utf8_without_bom_rfc4180_and_fully_quoted(reviewed, tmp_path):
    csv_path, manifest_path = export(reviewed, tmp_path)
    data = csv_path.read_bytes()
    assert not data.startswith(b"\xef\xbb\xbf")
    header = data.split(b"\r\n", 1)[0].decode()
    assert header == ",".join(f'"{c}"' for c in signing.COLUMNS)
    manifest = json.loads(manifest_path.read_text())
    assert manifest["row_count"] == 4 and manifest["meaning"] == signing.MEANING
    assert manifest["exported_by"] == "command line" and manifest["previous_manifest_sha256"] is None


@pytest.mark.django_db
def test_formula_cells_are_neutralised(reviewed, tmp_path):
    csv_path, _ = export(reviewed, tmp_path)
    assert rows_of(csv_path)[1]["reason"] == "'=HYPERLINK(\"x\")"


@pytest.mark.parametrize("first", ["=", "+", "-", "@", "\t", "\r", "\n"])
def test_each_dangerous_first_character_gets_a_prefix(first):
    assert signing.neutralise(f"{first}SUM(A1)") == f"'{first}SUM(A1)"
    assert signing.neutralise(f"x{first}") == f"x{first}"


def test_quotes_commas_and_newlines_round_trip_through_the_csv_reader():
    value = 'He said "copy", then left,\r\nnew line'
    data = b"".join(signing.csv_lines(1, [{"reason": value, "verdict": "-1"}]))
    rows = list(csv.DictReader(io.StringIO(data.decode(), newline="")))
    assert rows[0]["reason"] == value and rows[0]["verdict"] == "'-1"


# --- tampering -----------------------------------------------------------------------------------


@pytest.fixture
def exported(reviewed, tmp_path):
    csv_path, manifest_path = export(reviewed, tmp_path)
    key_file = tmp_path / "site.pub.pem"
    key_file.write_bytes(signing.public_pem(sheet_exports.site_key()))
    return csv_path, manifest_path, key_file


def problems(csv_path, manifest_path, key_file, capsys):
    with pytest.raises(CommandError, match="does not verify"):
        verify(csv_path, manifest_path, key_file)
    return capsys.readouterr().err


@pytest.mark.django_db
def test_the_untouched_sheet_verifies_with_only_the_public_key(exported, capsys):
    verify(*exported)
    assert "VALID: signing.csv" in capsys.readouterr().out


@pytest.mark.django_db
def test_a_key_file_that_is_not_a_public_key_is_named_not_a_traceback(exported, tmp_path):
    csv_path, manifest_path, _ = exported
    bad = tmp_path / "key.pem"
    bad.write_text("not a key\n")
    with pytest.raises(CommandError, match="key.pem: not an Ed25519 public key in PEM form"):
        verify(csv_path, manifest_path, bad)


@pytest.mark.django_db
def test_changing_one_byte_is_caught_and_located(exported, capsys):
    csv_path, manifest_path, key = exported
    data = csv_path.read_bytes().replace("每周 became".encode(), "每月 became".encode())
    csv_path.chmod(0o644)
    csv_path.write_bytes(data)
    err = problems(csv_path, manifest_path, key, capsys)
    assert "row 4 (line 5) was edited" in err and "the CSV's SHA-256 is" in err


@pytest.mark.django_db
def test_dropping_a_row_is_caught(exported, capsys):
    csv_path, manifest_path, key = exported
    lines = csv_path.read_bytes().split(b"\r\n")
    csv_path.chmod(0o644)
    csv_path.write_bytes(b"\r\n".join(lines[:2] + lines[3:]))
    assert "row 2 is missing (dropped)" in problems(csv_path, manifest_path, key, capsys)
    assert "this CSV belongs to" not in problems(csv_path, manifest_path, key, capsys)


@pytest.mark.django_db
def test_swapping_two_rows_is_caught(exported, capsys):
    csv_path, manifest_path, key = exported
    lines = csv_path.read_bytes().split(b"\r\n")
    lines[1], lines[2] = lines[2], lines[1]
    csv_path.chmod(0o644)
    csv_path.write_bytes(b"\r\n".join(lines))
    err = problems(csv_path, manifest_path, key, capsys)
    assert "rows were reordered: line 2 holds row 2, where row 1 belongs" in err


@pytest.mark.django_db
def test_editing_the_manifest_breaks_its_signature(exported, capsys):
    csv_path, manifest_path, key = exported
    manifest = json.loads(manifest_path.read_text())
    manifest["exported_by"] = "someone-else"
    manifest_path.chmod(0o644)
    manifest_path.write_text(json.dumps(manifest))
    assert "the manifest's signature is not valid" in problems(csv_path, manifest_path, key, capsys)


@pytest.mark.django_db
def test_a_manifest_paired_with_another_exports_csv_is_caught(exported, reviewed, tmp_path, capsys):
    csv_path, manifest_path, key = exported
    other_csv, other_manifest = export(reviewed, tmp_path, name="other.csv", settled_only=True)
    err = problems(other_csv, manifest_path, key, capsys)
    first, second = SheetExport.objects.order_by("pk")
    assert f"this CSV belongs to export {second.pk}, the manifest to export {first.pk}" in err
    assert json.loads(other_manifest.read_text())["previous_manifest_sha256"] == signing.manifest_sha256(
        json.loads(manifest_path.read_text()))


@pytest.mark.django_db
def test_another_key_does_not_verify(exported, tmp_path, capsys):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    csv_path, manifest_path, _ = exported
    stranger = tmp_path / "stranger.pem"
    stranger.write_bytes(signing.public_pem(Ed25519PrivateKey.generate()))
    assert "signed by another key" in problems(csv_path, manifest_path, stranger, capsys)


# --- signing and exporting -----------------------------------------------------------------------


@pytest.mark.django_db
def test_signing_needs_the_reviewers_own_password(reviewed, editor2, editor2_client):
    response = editor2_client.post(reverse("review:sign"), {"password": "not my password"}, follow=True)
    assert "the password does not match your account" in response.content.decode()
    assert not ReviewerSignature.objects.filter(reviewer=editor2).exists()
    editor2_client.post(reverse("review:sign"), {"password": "correct horse battery"})
    signature = ReviewerSignature.objects.get(reviewer=editor2)
    assert (signature.full_name, signature.records, signature.meaning) == (
        "ed-editor", 1, "I reviewed these pairs and these verdicts are mine.")


@pytest.mark.django_db
def test_a_selection_by_reviewer_and_settled_only(reviewed, tmp_path):
    csv_path, _ = export(reviewed, tmp_path, name="mine.csv", reviewer="erin-editor")
    assert {r["reviewer"] for r in rows_of(csv_path)} == {"erin-editor"}
    csv_path, _ = export(reviewed, tmp_path, name="settled.csv", settled_only=True)
    assert {(r["left_doc_id"], r["right_doc_id"]) for r in rows_of(csv_path)} == {("A", "B")}


@pytest.mark.django_db(transaction=True)
def test_export_from_the_run_page_runs_on_a_worker_and_is_never_modified(reviewed, admin_client, run_worker):
    response = admin_client.post(reverse("review:sheet_start", args=[reviewed.pk]), {"settled_only": "on"})
    assert response.status_code == 302
    run_worker()
    export_row = SheetExport.objects.get()
    assert export_row.status == "complete" and export_row.row_count == 3
    page = admin_client.get(reviewed.get_absolute_url()).content.decode()
    assert reverse("review:sheet_download", args=[export_row.pk, "csv"]) in page
    download = admin_client.get(reverse("review:sheet_download", args=[export_row.pk, "csv"]))
    data = b"".join(download.streaming_content)
    assert data.startswith(b'"export_id"') and signing.hashlib.sha256(data).hexdigest() == export_row.csv_sha256
    csv_path, manifest_path = sheet_exports.export_paths(export_row)
    assert stat.S_IMODE(csv_path.stat().st_mode) == 0o444
    sheet_exports.sheet_export_build(export=export_row)  # a second build changes nothing
    assert csv_path.read_bytes() == data


@pytest.mark.django_db
def test_editors_cannot_export_or_download(reviewed, editor_client):
    assert editor_client.post(reverse("review:sheet_start", args=[reviewed.pk])).status_code == 403
    assert editor_client.get(reverse("review:sheet_download", args=[1, "csv"])).status_code == 403


@pytest.mark.django_db
def test_the_public_key_is_shown_and_exportable(reviewed, editor_client):
    page = editor_client.get(reverse("review:signing_key")).content.decode()
    assert "BEGIN PUBLIC KEY" in page and signing.fingerprint(sheet_exports.site_key()) in page
    pem = editor_client.get(reverse("review:signing_key"), {"download": "1"}).content
    assert signing.load_public_key(pem)
