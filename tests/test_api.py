"""The REST API (/api/v1/): tokens, roles, the blind rule, leases, paging, idempotency, throttling, the schema;
and the whole flow from upload to signed sheet over real HTTP with tokens alone and real RQ workers."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import urllib.error
import urllib.request
import uuid
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import get_resolver, reverse
from django.utils import timezone

from dedup_site import accounts, tokens
from dedup_site.models import ApiToken
from review.api import urls as api_urls
from review.models import Judgement, Verdict
from screening.models import CandidatePair
from tests.factories import copies_run, seed_run
from tests.seeds import SEED001

API = "/api/v1"


def token_for(user) -> str:
    return tokens.token_create(user=user, actor=user, name="test")[1]


class Api:
    """The Django test client with a bearer token: every call as a program would make it."""

    def __init__(self, token: str):
        self.client, self.auth = Client(), {"HTTP_AUTHORIZATION": f"Bearer {token}"}

    def get(self, path, **params):
        return self.client.get(f"{API}{path}", params, **self.auth)

    def post(self, path, body=None, headers=None, **extra):
        return self.client.post(f"{API}{path}", json.dumps(body or {}), content_type="application/json",
                                headers=headers, **self.auth, **extra)

    def delete(self, path):
        return self.client.delete(f"{API}{path}", **self.auth)


# --- tokens ----------------------------------------------------------------------------------------------


def test_no_token_and_a_wrong_one_are_401(db, editor):
    assert Client().get(f"{API}/corpora/").status_code == 401
    assert Client().get(f"{API}/corpora/").headers["WWW-Authenticate"] == "Bearer"
    good = token_for(editor)
    wrong = good[:-2] + ("AA" if not good.endswith("AA") else "BB")
    response = Api(wrong).get("/corpora/")
    assert response.status_code == 401 and "unknown, expired or revoked" in response.json()["detail"]
    assert Api(good).get("/corpora/").status_code == 200


def test_a_token_is_stored_hashed_and_marked_when_used(db, editor):
    token, text = tokens.token_create(user=editor, actor=editor, name="nightly")
    row = ApiToken.objects.get(pk=token.pk)
    assert text not in (row.digest, row.key) and len(row.digest) == 64 and row.last_used_at is None
    Api(text).get("/corpora/")
    assert ApiToken.objects.get(pk=token.pk).last_used_at is not None


def test_revoked_and_expired_tokens_and_deactivated_users_are_refused(db, editor, editor2):
    revoked, text = tokens.token_create(user=editor, actor=editor, name="old")
    tokens.token_revoke(actor=editor, token=revoked)
    assert Api(text).get("/corpora/").status_code == 401
    expired, text = tokens.token_create(user=editor, actor=editor, name="short")
    ApiToken.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert Api(text).get("/corpora/").status_code == 401
    text = token_for(editor2)
    type(editor2).objects.filter(pk=editor2.pk).update(is_active=False)
    assert Api(text).get("/corpora/").status_code == 401


def test_only_its_owner_revokes_a_token(db, editor, editor2):
    token, _ = tokens.token_create(user=editor, actor=editor, name="mine")
    with pytest.raises(tokens.TokenRefused):
        tokens.token_revoke(actor=editor2, token=token)


def test_the_command_prints_the_token_on_its_last_line_lists_and_revokes(db, editor, capsys):
    call_command("api_token", "create", "ERIN-editor", "--name", "nightly")
    text = capsys.readouterr().out.strip().splitlines()[-1]
    assert Api(text).get("/corpora/").status_code == 200
    call_command("api_token", "list", "erin-editor")
    listing = capsys.readouterr().out
    assert "nightly\tactive" in listing and text not in listing
    call_command("api_token", "revoke", str(ApiToken.objects.get(name="nightly").pk))
    assert Api(text).get("/corpora/").status_code == 401


def test_the_account_page_shows_a_new_token_once_and_revokes_it(editor_client, editor):
    response = editor_client.post(reverse("api_tokens"), {"name": "notebook", "days": "30"})
    text = response.context["shown"]
    assert text in response.content.decode() and Api(text).get("/corpora/").status_code == 200
    assert text not in editor_client.get(reverse("api_tokens")).content.decode()
    token = ApiToken.objects.get(user=editor, name="notebook")
    assert (token.expires_at - timezone.now()).days in (29, 30)
    editor_client.post(reverse("api_token_revoke", args=[token.pk]))
    assert Api(text).get("/corpora/").status_code == 401


# --- roles and rules -------------------------------------------------------------------------------------------


def test_an_admin_creates_a_corpus_and_an_editor_may_not(db, admin_user, editor):
    response = Api(token_for(admin_user)).post("/corpora/", {"name": "news"})
    assert response.status_code == 201 and response.json()["name"] == "news"
    assert Api(token_for(admin_user)).post("/corpora/", {"name": "bad name"}).json()["errors"]["name"]
    again = Api(token_for(admin_user)).post("/corpora/", {"name": "news"})  # a conflict naming the field
    assert again.status_code == 409 and again.json()["errors"]["name"] and again.json()["id"] == response.json()["id"]
    assert Api(token_for(editor)).post("/corpora/", {"name": "other"}).status_code == 403


def test_bodies_that_are_not_objects_nul_characters_and_unknown_addresses_are_json_4xx(db, admin_user):
    api = Api(token_for(admin_user))
    listed = api.client.post(f"{API}/runs/", "[null, null]", content_type="application/json", **api.auth)
    assert listed.status_code == 400 and listed.json()["errors"]["non_field_errors"]  # was a server error
    nul = api.post("/corpora/", {"name": "a\u0000b"})
    assert nul.status_code == 400 and nul.json()["errors"]["name"] == ["contains a NUL character"]
    query = api.get("/runs/1/decisions/", format="\x00")
    assert query.status_code == 400 and query.json()["errors"]["format"]
    for path in ("/runs/null/", "/sheets/1/x/y/", "/nowhere/"):
        missing = api.get(path)
        assert missing.status_code == 404 and missing["Content-Type"] == "application/json", path
    broken = api.client.post(f"{API}/corpora/1/uploads/", b"--x", content_type="multipart/form-data", **api.auth)
    assert broken.status_code == 400 and "multipart" in broken.json()["detail"]


def test_roles_are_the_webs(import_records, admin_user, editor, arbiter):
    run = seed_run(import_records)
    pair = CandidatePair.objects.filter(run=run).first()
    admin, ed, arb = Api(token_for(admin_user)), Api(token_for(editor)), Api(token_for(arbiter))
    assert ed.post("/runs/", {"corpus": run.corpus_id}).status_code == 403
    assert ed.get(f"/runs/{run.pk}/decisions/").status_code == 403
    assert ed.post(f"/runs/{run.pk}/sheets/").status_code == 403
    assert ed.post(f"/pairs/{pair.pk}/arbitrations/", {"verdict": "keep-both", "reason": "x"}).status_code == 403
    assert admin.post(f"/pairs/{pair.pk}/judgements/", {"verdict": "keep-both", "reason": "x"}).status_code == 403
    assert admin.get(f"/runs/{run.pk}/pairs/").status_code == 403
    assert arb.get(f"/runs/{run.pk}/pairs/").status_code == 200
    assert arb.get("/arbitrations/").status_code == 200 and ed.get("/arbitrations/").status_code == 403


def test_unknown_objects_are_404_for_those_whose_role_allows(import_records, editor):
    ed = Api(token_for(editor))
    assert ed.get("/pairs/999999/").status_code == 404
    assert ed.post("/runs/999999/next/").status_code == 404
    assert ed.post("/pairs/999999/judgements/", {"verdict": "keep-both", "reason": "x"}).status_code == 404


def test_a_judgement_is_201_insert_only_and_an_unknown_verdict_a_400(import_records, editor):
    run = seed_run(import_records)
    pair = CandidatePair.objects.filter(run=run).first()
    ed = Api(token_for(editor))
    bad = ed.post(f"/pairs/{pair.pk}/judgements/", {"verdict": "maybe", "reason": "x"})
    assert bad.status_code == 400 and "verdict" in bad.json()["errors"] and bad.json()["detail"].startswith("verdict")
    first = ed.post(f"/pairs/{pair.pk}/judgements/", {"verdict": Verdict.KEEP_BOTH, "reason": "distinct"})
    second = ed.post(f"/pairs/{pair.pk}/judgements/", {"verdict": Verdict.MERGE_ENTRY, "reason": "a copy"})
    assert first.status_code == second.status_code == 201
    assert list(Judgement.objects.filter(pair=pair).order_by("id").values_list("verdict", flat=True)) == [
        Verdict.KEEP_BOTH, Verdict.MERGE_ENTRY]


def test_no_reason_takes_the_preset_one(import_records, editor):
    run = seed_run(import_records)
    pair = CandidatePair.objects.filter(run=run).first()
    response = Api(token_for(editor)).post(f"/pairs/{pair.pk}/judgements/", {"verdict": Verdict.MERGE_ENTRY})
    assert response.status_code == 201 and response.json()["reason"]


def test_a_password_someone_else_chose_refuses_judgements(import_records, editor, admin_user):
    run = seed_run(import_records)
    pair = CandidatePair.objects.filter(run=run).first()
    token = token_for(editor)  # made while the password was their own: none is made after (tokens.token_create)
    accounts.password_chosen_by(user=editor, actor=admin_user)
    response = Api(token).post(f"/pairs/{pair.pk}/judgements/", {"verdict": "keep-both", "reason": "x"})
    assert response.status_code == 403 and not Judgement.objects.exists()


def test_a_password_chosen_after_the_tokens_last_call_refuses_the_next_judgement(import_records, editor, admin_user):
    first, second = CandidatePair.objects.filter(run=seed_run(import_records)).order_by("pk")[:2]
    ed = Api(token_for(editor))
    assert ed.post(f"/pairs/{first.pk}/judgements/", {"verdict": "keep-both", "reason": "x"}).status_code == 201
    accounts.password_chosen_by(user=editor, actor=admin_user)  # each request reads it with the token, anew
    response = ed.post(f"/pairs/{second.pk}/judgements/", {"verdict": "keep-both", "reason": "x"})
    assert response.status_code == 403 and "chosen by" in response.json()["detail"]


def test_a_judgement_reads_the_token_role_and_password_once_and_presets_only_without_a_reason(import_records,
                                                                                              editor):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from review.api import serializers as out
    from review.models import ReviewPolicy

    run = seed_run(import_records)
    first, second, third = CandidatePair.objects.filter(run=run).order_by("pk")[:3]
    ReviewPolicy.objects.create(corpus=run.corpus, preset_reasons={"merge-entry": "the corpus's own"})
    ed = Api(token_for(editor))
    with CaptureQueriesContext(connection) as typed:
        response = ed.post(f"/pairs/{first.pk}/judgements/", {"verdict": "keep-both", "reason": " distinct "})
    assert response.status_code == 201
    row = Judgement.objects.get(pair=first)
    assert response.json() == json.loads(json.dumps(out.Created({  # the serializer's own answer
        "id": row.pk, "pair": first.pk, "verdict": "keep-both", "reason": "distinct", "retained": "both",
        "created_at": row.created_at}).data))
    sql = [q["sql"] for q in typed.captured_queries]
    assert not [q for q in sql if "review_reviewpolicy" in q]  # a typed reason needs no preset
    # The role and whether the password is the editor's own come with the token's read: no read of their own.
    assert len([q for q in sql if "auth_permission" in q or "dedup_site_passwordchosenbyother" in q]) == 1
    # One transaction (here a savepoint inside the test's own): none more for writing the derived state.
    assert len([q for q in sql if q.upper().startswith("SAVEPOINT")]) == 1
    if connection.vendor == "postgresql":  # only the pair's row is locked, not its run's
        assert [q for q in sql if "FOR UPDATE" in q] and all("FOR UPDATE OF" in q for q in sql if "FOR UPDATE" in q)
    for pair, body in ((second, {"verdict": "merge-entry", "reason": "   "}), (third, {"verdict": "merge-entry"})):
        with CaptureQueriesContext(connection) as preset:
            assert ed.post(f"/pairs/{pair.pk}/judgements/", body).json()["reason"] == "the corpus's own"
        assert [q for q in preset.captured_queries if "review_reviewpolicy" in q["sql"]]


def test_the_same_idempotency_key_creates_nothing_and_another_body_is_409(import_records, editor):
    run = seed_run(import_records)
    pair = CandidatePair.objects.filter(run=run).first()
    ed, key = Api(token_for(editor)), {"Idempotency-Key": str(uuid.uuid4())}
    body = {"verdict": "keep-both", "reason": "distinct"}
    first = ed.post(f"/pairs/{pair.pk}/judgements/", body, headers=key)
    again = ed.post(f"/pairs/{pair.pk}/judgements/", body, headers=key)
    assert first.status_code == again.status_code == 201 and first.json() == again.json()
    assert again.headers["Idempotent-Replayed"] == "true" and Judgement.objects.count() == 1
    assert ed.post(f"/pairs/{pair.pk}/judgements/", {**body, "reason": "other"}, headers=key).status_code == 409
    assert Judgement.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_one_idempotency_key_sent_at_once_from_many_clients_creates_one_judgement(live_server, import_records,
                                                                                   editor):
    """The race: requests with one key at the same moment (the live server's threads, each its own database
    connection) make one judgement; the others get its answer. PostgreSQL too (DATABASE_URL, .ci/run)."""
    import threading

    run = seed_run(import_records)
    pair = CandidatePair.objects.filter(run=run).first()
    client, body = Http(live_server.url, token_for(editor)), {"verdict": "keep-both", "reason": "distinct"}
    start, answers = threading.Barrier(6), []

    def send(key):
        start.wait()
        answers.append(client.call("POST", f"/pairs/{pair.pk}/judgements/", body, {"Idempotency-Key": key}))

    for key in ("same-moment", "another-moment"):
        answers.clear()
        threads = [threading.Thread(target=send, args=(key,)) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert [status for status, _ in answers] == [201] * 6
        assert len({answer["id"] for _, answer in answers}) == 1
    assert Judgement.objects.filter(pair=pair).count() == 2  # one a key


def test_blind_review_holds_on_the_api(import_records, editor, editor2):
    run = seed_run(import_records)  # one review a pair: settled at once
    pair = CandidatePair.objects.filter(run=run).first()
    first, second = Api(token_for(editor)), Api(token_for(editor2))
    assert first.post(f"/pairs/{pair.pk}/judgements/", {"verdict": "merge-entry", "reason": "copy"}).status_code == 201
    seen = second.get(f"/pairs/{pair.pk}/").json()
    assert (seen["status"], seen["final_verdict"], seen["others"], seen["arbitrations"]) == ("reviewed", "", None, None)
    assert first.get(f"/pairs/{pair.pk}/").json()["status"] == "settled"
    refused = second.post(f"/pairs/{pair.pk}/judgements/", {"verdict": "keep-both", "reason": "no"})
    assert refused.status_code == 409 and "has the 1 reviewer(s) it needs" in refused.json()["detail"]
    assert second.get(f"/runs/{run.pk}/pairs/", status="settled").status_code == 400
    rows = {r["id"]: r for r in second.get(f"/runs/{run.pk}/pairs/").json()["results"]}
    assert (rows[pair.pk]["status"], rows[pair.pk]["final_verdict"]) == ("reviewed", "")


def test_next_leases_a_pair_with_evidence_and_its_lease_is_released(import_records, editor, settings):
    run = seed_run(import_records)
    ed = Api(token_for(editor))
    response = ed.post(f"/runs/{run.pk}/next/")
    taken = response.json()
    assert response.status_code == 200 and taken["lease_expires"] and taken["pair"]["leased"]
    assert taken["pair"]["evidence"] and taken["pair"]["suggestion"]["verdict"]
    assert taken["pair"]["left"]["doc_id"] and taken["pair"]["others"] is None
    assert ed.delete(f"/pairs/{taken['pair']['id']}/lease/").status_code == 204
    assert not ed.get(f"/pairs/{taken['pair']['id']}/").json()["leased"]
    settings.DEDUP_MAX_LEASES = 0
    assert ed.post(f"/runs/{run.pk}/next/").status_code == 409


def test_next_is_204_when_nothing_is_left(import_records, editor):
    run = copies_run(import_records, 1)
    ed = Api(token_for(editor))
    pair = ed.post(f"/runs/{run.pk}/next/").json()["pair"]
    ed.post(f"/pairs/{pair['id']}/judgements/", {"verdict": "merge-entry", "reason": "copy"})
    assert ed.post(f"/runs/{run.pk}/next/").status_code == 204


def test_more_than_100_pairs_over_cursor_pages_and_a_bad_cursor_is_400(import_records, editor):
    run = copies_run(import_records, 130)
    ed = Api(token_for(editor))
    seen, page = [], ed.get(f"/runs/{run.pk}/pairs/", page_size=50).json()
    while True:
        seen += [r["id"] for r in page["results"]]
        if not page["next"]:
            break
        page = ed.client.get(page["next"], **ed.auth).json()
    assert len(seen) == len(set(seen)) == 130
    assert ed.get(f"/runs/{run.pk}/pairs/", cursor="!!not-base64").status_code == 400
    assert ed.get(f"/runs/{run.pk}/pairs/", cursor="bm9wZQ").status_code == 400  # "nope": not a position
    assert ed.get(f"/runs/{run.pk}/pairs/", page_size=501).status_code == 400
    assert ed.get(f"/runs/{run.pk}/pairs/", min_score="high").status_code == 400


def test_decisions_page_and_csv(import_records, admin_user, editor):
    run = copies_run(import_records, 3)
    pair = CandidatePair.objects.filter(run=run).order_by("pk").first()
    Api(token_for(editor)).post(f"/pairs/{pair.pk}/judgements/", {"verdict": "merge-entry", "reason": "copy"})
    admin = Api(token_for(admin_user))
    page = admin.get(f"/runs/{run.pk}/decisions/", page_size=2).json()
    assert [r["pair"] for r in page["results"]][0] == pair.pk and page["results"][0]["final_verdict"] == "merge-entry"
    rest = admin.client.get(page["next"], **admin.auth).json()
    assert len(rest["results"]) == 1 and rest["next"] is None
    text = b"".join(admin.get(f"/runs/{run.pk}/decisions/", format="csv").streaming_content).decode()
    assert text.splitlines()[0].startswith("pair,left_doc_id") and len(text.splitlines()) == 4


def test_labels_and_evaluation(import_records, admin_user):
    run = seed_run(import_records)
    admin = Api(token_for(admin_user))
    upload = admin.client.post(f"{API}/corpora/{run.corpus_id}/labels/", {"file": io.BytesIO(
        b"left_id,right_id,label\nA,B,1\nA,C,0\n"), "name": "gold"}, **admin.auth)
    assert upload.status_code == 201, upload.json()
    bad = admin.client.post(f"{API}/corpora/{run.corpus_id}/labels/", {"file": _named(
        b"left_id,right_id,label\nA,Z,1\n", "bad.csv")}, **admin.auth)
    assert bad.status_code == 400 and "line 2" in bad.json()["detail"]
    report = admin.get(f"/runs/{run.pk}/evaluation/", labels=upload.json()["id"]).json()
    assert report["pairs"] == 2 and report["metrics"][0]["threshold"] >= 0


def _named(data: bytes, name: str):
    f = io.BytesIO(data)
    f.name = name
    return f


def test_throttling_per_token_is_429_with_retry_after(db, editor, settings):
    settings.DEDUP_API_RATE = "2/minute"  # counted in Redis (tests/test_api_throttle.py), whatever the cache
    ed = Api(token_for(editor))
    assert [ed.get("/corpora/").status_code for _ in range(3)] == [200, 200, 429]
    assert int(ed.get("/corpora/").headers["Retry-After"]) > 0
    assert Api(token_for(editor)).get("/corpora/").status_code == 200  # another token, its own count


# --- schema and docs ------------------------------------------------------------------------------------------------


def _routes() -> set[str]:
    out = set()
    for pattern in get_resolver(api_urls).url_patterns:
        route = str(pattern.pattern).replace("<int:pk>", "{id}").replace("<str:part>", "{part}")
        if route not in ("schema/", "docs/", ""):  # "": every other address, the API's JSON 404
            out.add(f"{API}/{route}")
    return out


def test_the_schema_documents_every_endpoint(db, editor):
    response = Api(token_for(editor)).get("/schema/", format="json")
    schema = json.loads(response.content)
    assert response.status_code == 200 and schema["openapi"].startswith("3.")
    assert _routes() <= set(schema["paths"]) and len(_routes()) == 20
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            assert "401" in operation["responses"], (path, method)
            assert any(code.startswith("2") for code in operation["responses"]), (path, method)
    names = " ".join(schema["paths"])
    for word in ("corpora", "uploads", "runs", "pairs", "judgements", "next", "sheets"):
        assert word in names
    assert schema["components"]["securitySchemes"]["bearerToken"]["scheme"] == "bearer"
    assert Client().get(f"{API}/schema/").status_code == 401


def test_the_docs_page_is_served_from_our_own_static_files(editor_client):
    page = editor_client.get(f"{API}/docs/")
    html = page.content.decode()
    assert page.status_code == 200 and "/static/drf_spectacular_sidecar/swagger-ui-dist/" in html
    assert "https://" not in html and "http://" not in html.replace("http://testserver", "")
    script = editor_client.get(f"{API}/docs/?script=")
    assert script.status_code == 200 and f"{API}/schema/" in script.content.decode()
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    assert Client().get(f"{API}/docs/").status_code == 302  # the docs page is for people signed in


# --- the whole flow, over HTTP ---------------------------------------------------------------------------------------


class Http:
    """A pipeline's client: urllib against the live server, a token and nothing else."""

    def __init__(self, base: str, token: str):
        self.base, self.token = base, token

    def call(self, method: str, path: str, body=None, headers=None, *, raw: bytes | None = None,
             content_type: str = "application/json"):
        url = path if path.startswith("http") else f"{self.base}{API}{path}"
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        request = urllib.request.Request(url, data=data, method=method, headers={  # noqa: S310 - the test server
            "Authorization": f"Bearer {self.token}", **({"Content-Type": content_type} if data else {}),
            **(headers or {})})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 - the live test server
                content = response.read()
                status, kind = response.status, response.headers.get("Content-Type", "")
        except urllib.error.HTTPError as error:
            content, status, kind = error.read(), error.code, error.headers.get("Content-Type", "")
        return status, (json.loads(content) if "json" in kind and content else content)

    def upload(self, path: str, name: str, data: bytes, **fields):
        boundary = uuid.uuid4().hex
        parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
                 for k, v in fields.items()]
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
                     f"Content-Type: application/octet-stream\r\n\r\n".encode() + data + b"\r\n")
        return self.call("POST", path, raw=b"".join(parts) + f"--{boundary}--\r\n".encode(),
                         content_type=f"multipart/form-data; boundary={boundary}")


@pytest.mark.django_db(transaction=True)
def test_the_whole_flow_over_http_with_tokens(live_server, run_worker, admin_user, editor, editor2, arbiter,
                                              capsys, tmp_path):
    call_command("api_token", "create", admin_user.username, "--name", "pipeline")
    admin = Http(live_server.url, capsys.readouterr().out.strip().splitlines()[-1])
    first, second, arb = (Http(live_server.url, token_for(u)) for u in (editor, editor2, arbiter))

    status, schema = admin.call("GET", "/schema/?format=json")
    assert status == 200 and f"{API}/runs/{{id}}/next/" in schema["paths"]
    assert Http(live_server.url, "dr_nope.nope").call("GET", "/corpora/")[0] == 401

    status, corpus = admin.call("POST", "/corpora/", {"name": "flow"})
    assert status == 201 and first.call("POST", "/corpora/", {"name": "other"})[0] == 403
    records = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in SEED001).encode()
    status, accepted = admin.upload(f"/corpora/{corpus['id']}/uploads/", "seed.jsonl", records)
    assert status == 202
    status, broken = admin.upload(f"/corpora/{corpus['id']}/uploads/", "broken.jsonl",
                                  b'{"doc_id": "Z1", "language": "en", "body": "fine"}\n{"doc_id": \n')
    assert status == 202
    run_worker()
    upload = admin.call("GET", accepted["url"])[1]
    assert (upload["status"], upload["document_count"]) == ("done", 5)
    assert (upload["language_check"]["status"], upload["language_check"]["checked"]) == ("done", 5)
    refused = admin.call("GET", broken["url"])[1]
    assert (refused["status"], refused["rejected"], refused["language_check"]) == ("failed", True, None)
    assert any("line 2" in p for p in refused["problems"])

    status, started = admin.call("POST", "/runs/", {"corpus": corpus["id"], "near": True, "reviews_required": 2},
                                 {"Idempotency-Key": "run-1"})
    assert status == 202
    assert admin.call("POST", "/runs/", {"corpus": corpus["id"], "near": True, "reviews_required": 2},
                      {"Idempotency-Key": "run-1"})[1] == started  # started once
    run_worker()
    run = admin.call("GET", started["url"])[1]
    assert run["status"] == "done" and run["progress"]["fraction"] == 1.0

    # Two editors disagree on the first pair "next" hands out; an arbiter settles it.
    status, taken = first.call("POST", f"/runs/{run['id']}/next/")
    assert status == 200 and taken["pair"]["evidence"] and taken["lease_expires"]
    pair = taken["pair"]["id"]
    key = {"Idempotency-Key": "j-1"}
    status, judged = first.call("POST", f"/pairs/{pair}/judgements/", {"verdict": "merge-entry", "reason": "copy"},
                                key)
    assert status == 201
    assert first.call("POST", f"/pairs/{pair}/judgements/", {"verdict": "merge-entry", "reason": "copy"},
                      key)[1] == judged
    assert first.call("POST", f"/pairs/{pair}/judgements/", {"verdict": "perhaps", "reason": "x"})[0] == 400
    assert second.call("POST", f"/runs/{run['id']}/next/")[1]["pair"]["id"] == pair
    assert second.call("POST", f"/pairs/{pair}/judgements/", {"verdict": "keep-both", "reason": "differ"})[0] == 201
    assert first.call("GET", f"/pairs/{pair}/")[1]["status"] == "needs_arbitration"
    cases = arb.call("GET", "/arbitrations/")[1]["results"]
    assert [c["id"] for c in cases] == [pair]
    assert arb.call("POST", f"/pairs/{pair}/arbitrations/", {"verdict": "merge-entry", "reason": "formatting",
                                                             "retained": "left"})[0] == 201

    decisions = admin.call("GET", f"/runs/{run['id']}/decisions/")[1]["results"]
    assert {d["pair"]: (d["status"], d["final_verdict"]) for d in decisions}[pair] == ("settled", "merge-entry")
    status, csv_text = admin.call("GET", f"/runs/{run['id']}/decisions/?format=csv")
    assert status == 200 and csv_text.decode().count("\n") == len(decisions) + 1

    assert first.call("POST", f"/runs/{run['id']}/sheets/", {})[0] == 403
    status, sheet = admin.call("POST", f"/runs/{run['id']}/sheets/", {})
    assert status == 202
    run_worker()
    sheet = admin.call("GET", sheet["url"])[1]
    assert sheet["status"] == "done" and sheet["csv"] and sheet["manifest"]
    assert first.call("GET", sheet["csv"])[0] == 403
    (tmp_path / "sheet.csv").write_bytes(admin.call("GET", sheet["csv"])[1])
    (tmp_path / "sheet.manifest.json").write_bytes(json.dumps(admin.call("GET", sheet["manifest"])[1]).encode())
    call_command("verify_sheet", str(tmp_path / "sheet.csv"), "--manifest", str(tmp_path / "sheet.manifest.json"))
    assert "VALID" in capsys.readouterr().out


@pytest.mark.django_db(transaction=True)
def test_the_readmes_python_example_runs_against_a_live_server(live_server, worker_process, admin_user, capsys,
                                                               monkeypatch):
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    readme = (root / "README.md").read_text(encoding="utf-8")
    code = readme[readme.index("**The same in Python**"):].split("```python\n", 1)[1].split("```", 1)[0]
    code = code.replace('H, T = "http://127.0.0.1:8000/api/v1", "dr_…"',
                        f'H, T = "{live_server.url}{API}", "{token_for(admin_user)}"')
    worker_process()
    monkeypatch.chdir(root)
    exec(compile(code, "README.md", "exec"), {})  # noqa: S102 - the README's own example
    lines = capsys.readouterr().out.split()
    assert lines and all(line.count(",") == 3 for line in lines)


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(not shutil.which("curl"), reason="curl is not installed")
def test_the_readmes_curl_example_runs_against_a_live_server(live_server, worker_process, admin_user, editor,
                                                             tmp_path):
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    readme = (root / "README.md").read_text(encoding="utf-8")
    script = readme[readme.index("**A pipeline, with curl**"):].split("```sh\n", 1)[1].split("```", 1)[0]
    worker_process()
    env = {**os.environ, "H": live_server.url, "T": token_for(admin_user), "E": token_for(editor)}
    (tmp_path / "samples").symlink_to(root / "samples")
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], env=env, timeout=120, capture_output=True,
                          text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = (tmp_path / "decisions.csv").read_text(encoding="utf-8").splitlines()
    judged = Judgement.objects.get()
    assert (judged.reviewer, judged.verdict, judged.reason) == (editor, "merge-entry", "same guide")
    assert len(rows) == CandidatePair.objects.filter(run=judged.pair.run).count() + 1  # a header, a row a pair
