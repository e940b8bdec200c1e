"""A token someone else made acts as its owner, but never unseen (issue 51, item 8): every judgement,
arbitration and decision says which token made it and who made that token; the owner is told at log-in until
they acknowledge or revoke it, the tokens and Users pages mark it, and its records are listed apart when the
owner signs, signed only if accepted one by one (refused ones stay unsigned, and the sheet says so)."""

from __future__ import annotations

import hashlib
import json

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from dedup_site import tokens
from dedup_site.models import ApiToken
from review import decisions, services
from review import views as review_views
from review.models import Arbitration, Judgement, ReviewAction, ReviewerSignature
from review.sheets import signing
from screening.models import CandidatePair
from tests.factories import PASSWORD, copies_run, seed_run
from tests.test_sheets import export, rows_of, verify

API = "/api/v1"


@pytest.fixture(autouse=True)
def _own_exports(settings, tmp_path):
    """This module's sheet exports (and signing key) in each test's own folder: export ids repeat between tests,
    and a later module expects no local export of its own ids."""
    settings.DATA_DIR = tmp_path / "data"


def command_token(username: str, capsys, name: str = "pipeline") -> str:
    """A token made for `username` on the server's command line (its text, from the last line)."""
    capsys.readouterr()
    call_command("api_token", "create", username, "--name", name)
    return capsys.readouterr().out.strip().splitlines()[-1]


def api_post(text: str, path: str, body: dict):
    return Client().post(f"{API}{path}", json.dumps(body), content_type="application/json",
                         HTTP_AUTHORIZATION=f"Bearer {text}")


def logged_in(user) -> Client:
    """A client that logged in through the log-in page, as a person does."""
    client = Client()
    assert client.post(reverse("login"), {"username": user.username, "password": PASSWORD}).status_code == 302
    return client


def listed_on(page: str) -> str:
    """The keys the signing page says it listed (its hidden `listed` field; none when it has none)."""
    return page.partition('name="listed" value="')[2].split('"')[0]


# --- what a token made by someone else records ---------------------------------------------------------------


@pytest.mark.django_db
def test_a_command_line_token_is_marked_as_made_by_no_one_but_the_server(editor, capsys):
    command_token(editor.username, capsys)
    token = ApiToken.objects.get(user=editor)
    assert token.created_by is None and token.made_by_other
    call_command("api_token", "list", editor.username)
    assert "by command line" in capsys.readouterr().out


@pytest.mark.django_db
def test_a_judgement_says_which_token_made_it_and_who_made_the_token(import_records, editor, editor_client,
                                                                     capsys):
    run = copies_run(import_records, 3)
    by_command, by_owner, by_session = CandidatePair.objects.filter(run=run).order_by("pk")
    text = command_token(editor.username, capsys)
    assert api_post(text, f"/pairs/{by_command.pk}/judgements/", {"verdict": "merge-entry", "reason": "x"}
                    ).status_code == 201
    own = editor_client.post(reverse("api_tokens"), {"name": "notebook", "days": "30"}).context["shown"]
    assert api_post(own, f"/pairs/{by_owner.pk}/judgements/", {"verdict": "keep-both", "reason": "y"}
                    ).status_code == 201
    assert editor_client.post(reverse("review:judge", args=[by_session.pk]), {
        "verdict": "keep-both", "reason": "z", "retained": "both"}).status_code == 302
    made = {j.pair_id: j for j in Judgement.objects.filter(reviewer=editor)}
    command, notebook = ApiToken.objects.get(name="pipeline"), ApiToken.objects.get(name="notebook")
    assert (made[by_command.pk].api_token_id, made[by_command.pk].token_created_by_id) == (command.pk, None)
    assert (made[by_owner.pk].api_token_id, made[by_owner.pk].token_created_by_id) == (notebook.pk, editor.pk)
    assert (made[by_session.pk].api_token_id, made[by_session.pk].token_created_by_id) == (None, None)
    assert made[by_command.pk].by_others_token(editor.pk) and not made[by_owner.pk].by_others_token(editor.pk)


@pytest.mark.django_db
def test_an_arbitration_through_a_command_line_token_says_so(import_records, editor, editor2, arbiter, capsys):
    run = seed_run(import_records, reviews_required=2)
    pair = CandidatePair.objects.filter(run=run).order_by("pk").first()
    services.judgement_record(pair=pair, reviewer=editor, verdict="merge-entry", reason="copy")
    services.judgement_record(pair=pair, reviewer=editor2, verdict="keep-both", reason="differ")
    text = command_token(arbiter.username, capsys)
    assert api_post(text, f"/pairs/{pair.pk}/arbitrations/", {"verdict": "merge-entry", "reason": "a copy"}
                    ).status_code == 201
    arbitration = Arbitration.objects.get(pair=pair)
    assert arbitration.api_token_id == ApiToken.objects.get(user=arbiter).pk and arbitration.token_created_by is None


@pytest.mark.django_db
def test_a_cluster_decision_by_token_marks_the_decision_and_each_of_its_judgements(import_records, editor, capsys):
    run = seed_run(import_records)
    cluster = CandidatePair.objects.filter(run=run, cluster__isnull=False).values_list("cluster", flat=True).first()
    pairs = list(decisions.cluster_pairs(run, cluster))
    acting = tokens.token_user(command_token(editor.username, capsys))  # as the API's authentication reads it
    action = decisions.cluster_decide(run=run, cluster=cluster, reviewer=acting, keeper=pairs[0].left_id,
                                      verdict="merge-entry", reason="one family")
    token = ApiToken.objects.get(user=editor)
    assert (action.api_token_id, action.token_created_by_id) == (token.pk, None)
    rows = Judgement.objects.filter(action=action)
    assert rows.count() == action.judgements and {j.api_token_id for j in rows} == {token.pk}
    undo = decisions.undo_last(acting)
    assert isinstance(undo, ReviewAction) and undo.api_token_id == token.pk


# --- the owner is told ------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_owner_is_told_at_log_in_until_they_acknowledge_the_token(editor, capsys):
    command_token(editor.username, capsys)
    client = logged_in(editor)
    page = client.get(reverse("screening:corpus_list")).content.decode()
    assert 'id="tokens-made-by-others"' in page
    tokens_page = client.get(reverse("api_tokens")).content.decode()
    assert "not you: the server's command line" in tokens_page and 'id="tokens-to-acknowledge"' in tokens_page
    token = ApiToken.objects.get(user=editor)
    assert client.post(reverse("api_token_acknowledge", args=[token.pk])).status_code == 302
    assert ApiToken.objects.get(pk=token.pk).acknowledged_at is not None
    assert 'id="tokens-made-by-others"' not in logged_in(editor).get(reverse("screening:corpus_list")).content.decode()


@pytest.mark.django_db
def test_revoking_the_token_ends_the_banner_too(editor, capsys):
    command_token(editor.username, capsys)
    client = logged_in(editor)
    assert 'id="tokens-made-by-others"' in client.get(reverse("screening:corpus_list")).content.decode()
    client.post(reverse("api_token_revoke", args=[ApiToken.objects.get(user=editor).pk]))
    assert 'id="tokens-made-by-others"' not in client.get(reverse("screening:corpus_list")).content.decode()


@pytest.mark.django_db
def test_a_token_made_on_ones_own_page_is_ones_own(editor_client, editor):
    editor_client.post(reverse("api_tokens"), {"name": "notebook", "days": "30"})
    token = ApiToken.objects.get(user=editor)
    assert token.created_by_id == editor.pk and not token.made_by_other
    assert 'id="tokens-made-by-others"' not in editor_client.get(reverse("api_tokens")).content.decode()


@pytest.mark.django_db
def test_only_the_owner_acknowledges_a_token(editor, editor2, capsys):
    command_token(editor.username, capsys)
    client = Client()
    client.force_login(editor2)
    assert client.post(reverse("api_token_acknowledge", args=[ApiToken.objects.get(user=editor).pk])).status_code == 404
    assert ApiToken.objects.get(user=editor).acknowledged_at is None


@pytest.mark.django_db
def test_the_users_page_marks_an_account_with_a_token_made_by_someone_else(admin_client, editor, editor2, capsys):
    command_token(editor.username, capsys)
    tokens.token_create(user=editor2, actor=editor2, name="own")
    page = admin_client.get(reverse("users:list")).content.decode()
    row_of = {name: page[page.index(f"<td><bdi>{name}</bdi>"):].split("</tr>")[0] for name in (editor.username,
                                                                                     editor2.username)}
    assert "1 API token made by someone else" in row_of[editor.username]
    assert "made by someone else" not in row_of[editor2.username]


# --- signing -----------------------------------------------------------------------------------------------------


@pytest.fixture
def mixed(import_records, editor, editor_client, capsys):
    """The editor's judgements: one in a session, two through a token made on the command line."""
    run = copies_run(import_records, 3)
    own, first, second = CandidatePair.objects.filter(run=run).order_by("pk")
    editor_client.post(reverse("review:judge", args=[own.pk]), {"verdict": "keep-both", "reason": "mine",
                                                                 "retained": "both"})
    text = command_token(editor.username, capsys)
    for pair in (first, second):
        assert api_post(text, f"/pairs/{pair.pk}/judgements/", {"verdict": "merge-entry", "reason": "not me"}
                        ).status_code == 201
    return run, {p: Judgement.objects.get(pair=p) for p in (own, first, second)}


@pytest.mark.django_db
def test_the_signing_page_lists_records_made_with_others_tokens_apart(mixed, editor_client):
    _, made = mixed
    page = editor_client.get(reverse("review:sign")).content.decode()
    apart = page[page.index('id="others-token-records"'):].split("</table>")[0]
    mine = page[page.index('id="unsigned-records"'):].split("</table>")[0]
    foreign = [j for j in made.values() if j.api_token_id]
    assert all(f'value="judgement:{j.pk}"' in apart for j in foreign) and "the server's command line" in apart
    assert "mine" in mine and "not me" not in mine


@pytest.mark.django_db
def test_signing_covers_only_the_records_accepted_and_the_sheet_says_refused(mixed, editor, editor_client,
                                                                            tmp_path):
    run, made = mixed
    own, first, second = made.values()
    listed = listed_on(editor_client.get(reverse("review:sign")).content.decode())
    response = editor_client.post(reverse("review:sign"), {"password": PASSWORD, "accept": [f"judgement:{second.pk}"],
                                                           "listed": listed})
    assert response.status_code == 302
    signature = ReviewerSignature.objects.get(reviewer=editor)
    assert signature.accepted == {"judgements": [second.pk]} and signature.refused == {"judgements": [first.pk]}
    assert signature.records == 2
    csv_path, manifest_path = export(run, tmp_path)
    rows = {r["pair_id"]: r for r in rows_of(csv_path)}
    token = ApiToken.objects.get(name="pipeline")
    assert rows[str(own.pair_id)]["signed_at"].endswith("Z") and rows[str(own.pair_id)]["api_token"] == ""
    assert rows[str(second.pair_id)]["signed_at"].endswith("Z")
    assert rows[str(first.pair_id)]["signed_at"] == "refused"
    assert (rows[str(first.pair_id)]["api_token"], rows[str(first.pair_id)]["token_created_by"],
            rows[str(first.pair_id)]["by_others_token"]) == (str(token.pk), "command line", "yes")
    assert json.loads(manifest_path.read_text())["format"] == "dedup-review-sheet-v4"
    verify(csv_path, manifest_path)
    # The refused record is still waiting on the signing page, and a later signature may accept it.
    page = editor_client.get(reverse("review:sign")).content.decode()
    assert f'value="judgement:{first.pk}"' in page and f'value="judgement:{second.pk}"' not in page
    services.signature_record(reviewer=editor, password=PASSWORD, accepted={f"judgement:{first.pk}"})
    again, _ = export(run, tmp_path, name="again.csv")
    assert {r["pair_id"]: r for r in rows_of(again)}[str(first.pair_id)]["signed_at"].endswith("Z")


@pytest.mark.django_db
def test_a_signature_that_accepts_nothing_refuses_every_record_it_listed(mixed, editor, tmp_path):
    run, made = mixed
    listed = {f"judgement:{j.pk}" for j in made.values() if j.api_token_id}
    services.signature_record(reviewer=editor, password=PASSWORD, listed=listed)
    csv_path, _ = export(run, tmp_path)
    signed = {r["pair_id"]: r["signed_at"] for r in rows_of(csv_path)}
    own, first, second = made.values()
    assert signed[str(first.pair_id)] == signed[str(second.pair_id)] == "refused"
    assert signed[str(own.pair_id)].endswith("Z")


@pytest.mark.django_db
def test_only_what_the_page_listed_is_refused_the_rest_waits_for_the_next_signing(
        import_records, editor, editor_client, capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(review_views, "MAX_LISTED_APART", 2)
    run = copies_run(import_records, 5)
    pairs = list(CandidatePair.objects.filter(run=run).order_by("pk"))
    text = command_token(editor.username, capsys)
    for pair in pairs[:4]:
        assert api_post(text, f"/pairs/{pair.pk}/judgements/", {"verdict": "merge-entry", "reason": "x"}
                        ).status_code == 201
    made = [Judgement.objects.get(pair=p) for p in pairs[:4]]
    page = editor_client.get(reverse("review:sign")).content.decode()
    # One more is made after the page was read: it was never before the reviewer's eyes either.
    assert api_post(text, f"/pairs/{pairs[4].pk}/judgements/", {"verdict": "merge-entry", "reason": "x"}
                    ).status_code == 201
    late = Judgement.objects.get(pair=pairs[4])
    response = editor_client.post(reverse("review:sign"), {
        "password": PASSWORD, "accept": [f"judgement:{made[0].pk}"], "listed": listed_on(page)}, follow=True)
    signature = ReviewerSignature.objects.get(reviewer=editor)
    assert signature.accepted == {"judgements": [made[0].pk]} and signature.refused == {"judgements": [made[1].pk]}
    assert signature.records == 1
    assert listed_on(page).split() == [f"judgement:{made[0].pk}", f"judgement:{made[1].pk}"]
    assert f'value="judgement:{made[2].pk}"' not in page and "The first 2 are listed" in page
    assert "3 records made with API tokens someone else made were not on the page you signed" in (
        response.content.decode())
    signed = {r["pair_id"]: r["signed_at"] for r in rows_of(export(run, tmp_path)[0])}
    assert signed[str(made[0].pair_id)].endswith("Z") and signed[str(made[1].pair_id)] == "refused"
    assert [signed[str(j.pair_id)] for j in (made[2], made[3], late)] == ["unsigned"] * 3
    # The next signing lists them, to accept or refuse.
    monkeypatch.setattr(review_views, "MAX_LISTED_APART", 10)
    page = editor_client.get(reverse("review:sign")).content.decode()
    assert listed_on(page).split() == [f"judgement:{j.pk}" for j in (made[1], made[2], made[3], late)]


@pytest.mark.django_db
def test_a_record_made_with_ones_own_token_is_signed_as_before(import_records, editor, editor_client, tmp_path):
    run = copies_run(import_records, 1)
    pair = CandidatePair.objects.get(run=run)
    own = editor_client.post(reverse("api_tokens"), {"name": "notebook", "days": "30"}).context["shown"]
    api_post(own, f"/pairs/{pair.pk}/judgements/", {"verdict": "keep-both", "reason": "mine"})
    assert 'id="others-token-records"' not in editor_client.get(reverse("review:sign")).content.decode()
    services.signature_record(reviewer=editor, password=PASSWORD)
    (row,) = rows_of(export(run, tmp_path)[0])
    assert row["signed_at"].endswith("Z") and (row["token_created_by"], row["by_others_token"]) == (
        editor.username, "no")


@pytest.mark.django_db
def test_a_sheet_of_the_previous_format_still_verifies_and_tells_an_edited_row():
    from review.sheets import sheet_exports

    key = sheet_exports.site_key()
    cells = ["7", "1", *("x" for _ in signing.COLUMNS_V3[2:-1])]

    def line(values) -> bytes:
        return ",".join(f'"{v}"' for v in values).encode() + b"\r\n"

    body = line(signing.COLUMNS_V3) + line([*cells, signing._chain(signing.GENESIS, cells)])
    manifest = signing.sign({"format": "dedup-review-sheet-v3", "export_id": 7,
                             "csv_sha256": hashlib.sha256(body).hexdigest()}, key)
    assert signing.verify(body, manifest, key.public_key()).valid
    edited = signing.verify(body.replace(b'"x"', b'"y"', 1), manifest, key.public_key())
    assert not edited.valid and "row 1 (line 2) was edited" in " ".join(edited.problems)
