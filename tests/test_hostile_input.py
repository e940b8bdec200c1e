"""Hostile input through the API and the pages: text that is not valid UTF-8 (a lone surrogate) refused at the
API's parser and in every form, and no stored row able to break a page; deep JSON, bodies over the size limit,
booleans as ids, malformed cursors, deep manifests and oversized records each refused by a rule it names."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test import Client
from django.urls import reverse

from review.models import Judgement, SheetExport
from review.sheets import sheet_exports
from screening.ingest import uploads
from screening.models import CandidatePair, Corpus, Upload
from tests.factories import copies_run
from tests.test_api import API, Api, token_for
from tests.test_sheets import export

LONE = "\ud800"  # a lone surrogate: a Python str and JSON's \u escapes hold one, UTF-8 cannot
LONE_RULE = "is not valid UTF-8 text (it holds a lone surrogate, U+D800)"


def _as(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


UTF7_FORM = "multipart/form-data; boundary=x; charset=utf-7"


def _utf7_form(**fields) -> bytes:
    """A multipart form declared as UTF-7 (Django decodes its fields in the declared charset), in which "+2AA-"
    is a lone surrogate: a browser never sends one, a script may. Sent with Client.generic, which sends the
    bytes as they are (post() would transcode them into the declared charset)."""
    return b"".join(f'--x\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n'.encode() + v.encode("utf-7") +
                    b"\r\n" for k, v in fields.items()) + b"--x--\r\n"


# --- text that is not valid UTF-8 --------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_the_audits_sheet_with_a_lone_surrogate_is_a_400_and_the_run_page_stays_up(run_worker, import_records,
                                                                                   admin_user, editor):
    run = copies_run(import_records, 2)
    admin = Api(token_for(admin_user))
    refused = admin.post(f"/runs/{run.pk}/sheets/", {"reviewer": LONE})
    assert refused.status_code == 400 and refused.json()["errors"] == {"reviewer": [LONE_RULE]}
    accepted = admin.post(f"/runs/{run.pk}/sheets/", {"reviewer": "erin-editor"})
    assert accepted.status_code == 202
    run_worker()
    assert list(SheetExport.objects.values_list("status", flat=True)) == [SheetExport.Status.COMPLETE]
    for user in (admin_user, editor):
        assert _as(user).get(run.get_absolute_url()).status_code == 200
    assert admin.get(f"/sheets/{accepted.json()['id']}/").status_code == 200


@pytest.mark.django_db(transaction=True)
def test_an_export_stored_with_a_lone_surrogate_is_shown_escaped_and_the_pages_answer(run_worker, import_records,
                                                                                      admin_user, editor):
    """A row written before the rule (the audit's failed export, in a database upgraded since): the run page
    and the sheet's answer show the rest and write the character as its escape, for admins and editors."""
    run = copies_run(import_records, 2)
    selection = sheet_exports.Selection(reviewer=f"kim{LONE}")
    if connection.vendor == "postgresql":  # jsonb refuses a lone surrogate's escape: no such row can exist there
        with pytest.raises(Exception, match="(?i)surrogate"):
            sheet_exports.sheet_export_create(run=run, user=admin_user, selection=selection)
        return
    export_row = sheet_exports.sheet_export_create(run=run, user=admin_user, selection=selection)
    sheet_exports.sheet_export_enqueue(export=export_row)
    run_worker()
    export_row.refresh_from_db()
    assert export_row.status == SheetExport.Status.FAILED and export_row.selection["reviewer"] == f"kim{LONE}"
    for user in (admin_user, editor):
        page = _as(user).get(run.get_absolute_url())
        assert page.status_code == 200 and "reviewer <bdi>kim\\ud800</bdi>" in page.content.decode()
    detail = Api(token_for(admin_user)).get(f"/sheets/{export_row.pk}/")
    assert detail.status_code == 200 and detail.json()["selection"]["reviewer"] == "kim\\ud800"
    assert detail.json()["status"] == "failed" and "surrogates not allowed" in detail.json()["error"]


def test_a_lone_surrogate_in_a_judgements_reason_or_related_source_is_a_400(import_records, editor):
    run = copies_run(import_records, 1)
    pair = CandidatePair.objects.get(run=run)
    ed = Api(token_for(editor))
    for body in ({"verdict": "merge-entry", "reason": f"copy {LONE}"},
                 {"verdict": "merge-entry", "reason": "copy", "related_source": LONE}):
        response = ed.post(f"/pairs/{pair.pk}/judgements/", body)
        assert response.status_code == 400 and response["Content-Type"] == "application/json"
        field = "reason" if LONE in body["reason"] else "related_source"
        assert response.json()["errors"] == {field: [LONE_RULE]}
    nested = ed.post(f"/runs/{run.pk}/next/", {"filters": {"a": [f"x{LONE}"]}})
    assert nested.status_code == 400 and nested.json()["errors"] == {"filters": [LONE_RULE]}
    key = ed.post(f"/pairs/{pair.pk}/judgements/", {f"re{LONE}ason": "x"})
    assert key.status_code == 400 and key.json()["errors"] == {"body": [LONE_RULE]}
    assert not Judgement.objects.exists()


def test_the_judgement_form_refuses_a_lone_surrogate_naming_the_field(import_records, editor_client):
    pair = CandidatePair.objects.get(run=copies_run(import_records, 1))
    url = reverse("review:judge", args=[pair.pk])
    for field in ("reason", "related_source"):
        fields = {"verdict": "merge-entry", "reason": "copy", "retained": "both", field: f"x{LONE}"}
        response = editor_client.generic("POST", url, _utf7_form(**fields), content_type=UTF7_FORM)
        assert response.status_code == 400
        assert response.content.decode() == f"Refused: the parameter '{field}' {LONE_RULE}."
    assert not Judgement.objects.exists()
    # The same form in UTF-7 without the surrogate is taken: the rule is about the text, not the charset.
    fine = editor_client.generic("POST", url, _utf7_form(verdict="merge-entry", reason="copy", retained="both"),
                                 content_type=UTF7_FORM)
    assert fine.status_code == 302 and Judgement.objects.get().reason == "copy"


@pytest.mark.django_db
def test_a_form_parameter_with_a_lone_surrogate_is_refused_in_the_pages_language(admin_client):
    response = admin_client.generic("POST", reverse("screening:corpus_list"), _utf7_form(q=f"x{LONE}"),
                                    content_type=UTF7_FORM, HTTP_ACCEPT_LANGUAGE="fa")
    text = response.content.decode()
    assert response.status_code == 400 and "'q'" in text and "U+D800" in text and "Refused" not in text


def test_a_multipart_field_with_a_lone_surrogate_is_a_json_400_under_the_api(db, admin_user):
    corpus = Corpus.objects.create(name="fields")
    admin = Api(token_for(admin_user))
    response = admin.client.generic("POST", f"{API}/corpora/{corpus.pk}/uploads/", _utf7_form(language=f"e{LONE}"),
                                    content_type=UTF7_FORM, **admin.auth)
    assert response.status_code == 400 and response.json()["errors"] == {"language": [LONE_RULE]}


def _rejected(name: str, data: bytes):
    upload = uploads.upload_create(corpus_name="limits", chunks=[data], size=len(data), original_name=name)
    upload = uploads.upload_process(upload=upload)
    assert upload.status == Upload.Status.REJECTED
    return upload.problems


def test_a_jsonl_record_with_a_lone_surrogate_is_refused_naming_its_line_and_field(db):
    Corpus.objects.create(name="limits")
    data = b'{"doc_id": "a", "language": "en", "body": "fine"}\n{"doc_id": "b", "language": "en", "body": "x\\ud800"}\n'
    assert _rejected("s.jsonl", data) == [f"s.jsonl line 2, field body: {LONE_RULE}"]


def test_a_jsonl_key_with_a_lone_surrogate_is_refused_by_name_and_its_problem_stored(db):
    Corpus.objects.create(name="limits")
    data = b'{"doc_id": "a", "language": "en", "body": "fine", "x\\ud800": 1}\n'
    (problem,) = _rejected("k.jsonl", data)  # stored: PostgreSQL's jsonb refused the raw key
    assert problem.startswith("k.jsonl line 1, field x\\ud800: unknown field")


# --- robustness ---------------------------------------------------------------------------------------------------


def test_json_nested_5000_deep_is_a_400_naming_the_rule(db, admin_user):
    api = Api(token_for(admin_user))
    for depth in (5000, 200_000):  # the second is past the json module's own limit
        body = '{"corpus": 1, "selection": ' + "[" * depth + "]" * depth + "}"
        response = api.client.post(f"{API}/runs/", body, content_type="application/json", **api.auth)
        assert response.status_code == 400 and response["Content-Type"] == "application/json"
        assert "nests deeper than 32 levels" in response.json()["detail"]
    shallow = api.client.post(f"{API}/runs/", '{"corpus": 0, "x": [[[[1]]]]}', content_type="application/json",
                              **api.auth)
    assert shallow.status_code == 400 and shallow.json()["errors"] == {"corpus": [
        "must be an id: a positive whole number (not true or false)"]}


def test_a_body_over_the_size_limit_is_the_apis_json_400(db, admin_user, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    api = Api(token_for(admin_user))
    big = json.dumps({"name": "x" * 2000})
    for content_type, body in (("application/json", big), ("application/x-www-form-urlencoded", "name=" + "x" * 2000)):
        response = api.client.post(f"{API}/corpora/", body, content_type=content_type, **api.auth)
        assert response.status_code == 400 and response["Content-Type"] == "application/json", content_type
        assert response.json()["detail"] == ("the body (without its files) is larger than the 1,000-byte limit "
                                             "(DATA_UPLOAD_MAX_MEMORY_SIZE); send a file as multipart/form-data")
    assert not Corpus.objects.exists()


def test_booleans_are_not_ids(import_records, admin_user, editor):
    run = copies_run(import_records, 1)
    if not Corpus.objects.filter(pk=1).exists():  # true would be taken as corpus 1
        Corpus.objects.create(pk=1, name="first")
    admin, ed = Api(token_for(admin_user)), Api(token_for(editor))
    started = admin.post("/runs/", {"corpus": True})
    assert started.status_code == 400 and started.json()["errors"] == {"corpus": [
        "must be an id: a positive whole number (not true or false)"]}
    assert admin.post("/runs/", {"corpus": "1", "near": False, "num_perm": True}).json()["errors"] == {"num_perm": [
        "must not be true: true and false are for yes-no fields only"]}
    assert ed.post(f"/runs/{run.pk}/next/", {"cluster": False}).json()["errors"] == {"cluster": [
        "must not be false: true and false are for yes-no fields only"]}
    assert admin.post(f"/runs/{run.pk}/sheets/", {"reviewer": True}).status_code == 400
    assert admin.post(f"/runs/{run.pk}/sheets/", {"settled_only": True}).status_code == 202  # a yes-no field


def test_a_malformed_cursor_is_a_400_naming_it(import_records, admin_user, editor):
    run = copies_run(import_records, 3)
    admin, ed = Api(token_for(admin_user)), Api(token_for(editor))
    for api, path in ((ed, f"/runs/{run.pk}/pairs/"), (admin, f"/runs/{run.pk}/decisions/")):
        for cursor in ("!!!", "MQ==", "M Q", "MQ!"):  # nothing base64; padded; with characters the decoder skips
            response = api.get(path, cursor=cursor, page_size=1)
            assert response.status_code == 400 and list(response.json()["errors"]) == ["cursor"], (path, cursor)
        following = api.client.get(api.get(path, page_size=1).json()["next"], **api.auth)
        assert following.status_code == 200 and len(following.json()["results"]) == 1
    trail = admin.get("/trail/", cursor="!!!")  # the trail of administrative acts pages the same way
    assert trail.status_code == 400 and list(trail.json()["errors"]) == ["cursor"]


@pytest.mark.django_db
def test_verify_sheet_says_invalid_for_a_deeply_nested_manifest(reviewed, tmp_path, capsys):
    csv_path, manifest_path = export(reviewed, tmp_path)
    manifest = manifest_path.read_text().rstrip().removesuffix("}")
    for depth in (5000, 200_000):
        manifest_path.write_text(manifest + ', "deep": ' + "[" * depth + "]" * depth + "}")
        with pytest.raises(CommandError, match="does not verify"):
            call_command("verify_sheet", str(csv_path), "--manifest", str(manifest_path))
        assert capsys.readouterr().err.strip() == (f"INVALID: {manifest_path.name}: the manifest nests deeper than 32 "
                                                   f"levels (a sheet's manifest nests 3): it was not written by an "
                                                   f"export")


def test_a_jsonl_or_csv_record_over_the_document_limit_is_refused_as_a_txt_file_is(db, settings):
    Corpus.objects.create(name="limits")
    limit = settings.DEDUP_LIMITS["member_bytes"]
    assert limit == 16 * 1024 * 1024
    body = "x" * (20 * 1024 * 1024)
    rule = "is larger than the 16,777,216-byte document limit"
    assert _rejected("big.txt", body.encode()) == [f"big.txt: {rule}"]
    record = json.dumps({"doc_id": "big", "language": "en", "body": body})
    assert _rejected("big.jsonl", f"{record}\n".encode()) == [f"big.jsonl line 1, field body: {rule}"]
    assert _rejected("big.csv", f"doc_id,language,body\nbig,en,{body}\n".encode()) == [
        f"big.csv line 2: has a cell that {rule}"]
    # Bytes, not characters: 6 MiB of three-byte characters is 18 MiB stored.
    wide = json.dumps({"doc_id": "wide", "language": "zh", "body": "字" * (6 * 1024 * 1024)}, ensure_ascii=False)
    assert _rejected("wide.jsonl", f"{wide}\n".encode()) == [f"wide.jsonl line 1, field body: {rule}"]
    csv_wide = f"doc_id,language,body\nwide,zh,{'字' * (6 * 1024 * 1024)}\n".encode()
    assert _rejected("wide.csv", csv_wide) == [f"wide.csv line 2, field body: {rule}"]
