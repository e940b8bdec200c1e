"""The review record cannot be bent (issue 42's audit): nobody records as someone whose password they chose,
a disputed pair is settled only by an arbiter, one reviewer cannot hold every pair, two people never share a
name, and a sheet, its manifest and a label file are read without surprises."""

from __future__ import annotations

import io
import json
import re

import pytest
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import DatabaseError, transaction
from django.test import Client
from django.urls import reverse

from dedup_site import accounts
from review import decisions, selectors, services
from review.models import Lease, SheetExport
from screening.models import CandidatePair
from tests.factories import PASSWORD, copies_run, reviewer, seed_run
from tests.test_sheets import export, verify

CHOSEN = "chosen by the admin 1"


@pytest.fixture
def staff_client(admin_user):
    admin_user.is_staff = True
    admin_user.save()
    client = Client()
    client.force_login(admin_user)
    return client


def _own_change(client, old: str, new: str = "my very own phrase 4", **proof):
    return client.post(reverse("password_change"), {
        "old_password": old, "new_password1": new, "new_password2": new, **proof})


# --- passwords chosen by others ------------------------------------------------------------------


@pytest.mark.django_db
def test_an_account_made_on_djangos_add_user_page_cannot_judge_or_sign_for_its_creator(staff_client, admin_user,
                                                                                      import_records):
    response = staff_client.post(reverse("admin:auth_user_add"), {
        "username": "nina-new", "usable_password": "true", "password1": CHOSEN, "password2": CHOSEN})
    assert response.status_code == 302, response.context["adminform"].form.errors
    nina = accounts.get_user_model().objects.get(username="nina-new")
    nina.groups.add(Group.objects.get(name="editors"))
    assert accounts.chosen_by_other(nina).chosen_by == admin_user
    pair = CandidatePair.objects.get(run=copies_run(import_records, 1))
    with pytest.raises(services.ReviewRefused, match="chosen by alice-admin"):
        services.judgement_record(pair=pair, reviewer=nina, verdict="merge-entry", reason="as its creator")
    with pytest.raises(services.ReviewRefused, match="chosen by alice-admin"):
        services.signature_record(reviewer=nina, password=CHOSEN)


@pytest.mark.django_db
def test_a_password_saved_at_the_shell_is_marked_as_chosen_by_someone_else(editor):
    editor.set_password("typed at the shell 2")
    editor.save()
    chosen = accounts.chosen_by_other(editor)
    assert chosen is not None and chosen.chosen_by is None
    assert "chosen by someone else" in accounts.record_refusal(editor)


@pytest.mark.django_db
def test_a_log_in_that_rehashes_the_password_does_not_mark_it(editor):
    editor.refresh_from_db()
    assert editor.check_password(PASSWORD)
    editor.save()  # what a log-in does after a re-hash with new parameters
    assert accounts.chosen_by_other(editor) is None


@pytest.mark.django_db
def test_after_a_reset_the_resetter_cannot_set_the_owners_password_on_their_page(admin_user, editor):
    accounts.reviewer_password_set(actor=admin_user, user=editor, password=CHOSEN)
    impostor = Client()
    impostor.force_login(editor)  # the admin, logged in with the password they chose
    response = _own_change(impostor, CHOSEN)
    assert response.status_code == 200 and "chosen by alice-admin" in response.content.decode()
    response = _own_change(impostor, CHOSEN, earlier_password=CHOSEN)
    assert "not the last password you set yourself" in response.content.decode()
    assert accounts.chosen_by_other(editor) is not None


@pytest.mark.django_db
def test_judging_and_undoing_between_a_reset_and_the_owners_change_are_refused(admin_user, editor, import_records):
    pair = CandidatePair.objects.get(run=copies_run(import_records, 1))
    services.judgement_record(pair=pair, reviewer=editor, verdict="keep-both", reason="mine")
    accounts.reviewer_password_set(actor=admin_user, user=editor, password=CHOSEN)
    with pytest.raises(services.ReviewRefused, match="set your own"):
        services.judgement_record(pair=pair, reviewer=editor, verdict="merge-entry", reason="by the resetter")
    with pytest.raises(services.ReviewRefused, match="set your own"):
        services.judgement_undo(reviewer=editor)
    accounts.password_own_set(user=editor, password="my very own phrase 4", earlier_password=PASSWORD)
    services.judgement_record(pair=pair, reviewer=editor, verdict="merge-entry", reason="mine again")
    assert pair.judgements.count() == 2


@pytest.mark.django_db
def test_a_code_from_another_admin_lets_the_owner_replace_the_password_once(admin_user, editor):
    other_admin = reviewer("bob-admin", "admin")
    accounts.reviewer_password_set(actor=admin_user, user=editor, password=CHOSEN)
    with pytest.raises(accounts.AccountRefused, match="another admin"):
        accounts.password_code_issue(actor=admin_user, user=editor)
    bob = Client()
    bob.force_login(other_admin)
    page = bob.post(reverse("users:code", args=[editor.pk])).content.decode()
    code = re.search(r'<code class="code">([0-9A-F-]+)</code>', page).group(1)
    owner = Client()
    owner.force_login(editor)
    assert _own_change(owner, CHOSEN, code=code).status_code == 302
    assert accounts.chosen_by_other(editor) is None
    accounts.reviewer_password_set(actor=admin_user, user=editor, password=CHOSEN)
    owner.force_login(editor)  # the reset ended the session
    assert "not a valid code" in _own_change(owner, CHOSEN, code=code).content.decode()  # used once


@pytest.mark.django_db
def test_the_password_code_command_prints_a_code_on_its_last_line(admin_user, editor):
    accounts.reviewer_password_set(actor=admin_user, user=editor, password=CHOSEN)
    out = io.StringIO()
    call_command("password_code", editor.username.upper(), stdout=out, stderr=io.StringIO())
    code = out.getvalue().strip().splitlines()[-1]
    accounts.password_own_set(user=editor, password="my very own phrase 4", code=code.lower())
    assert accounts.chosen_by_other(editor) is None
    with pytest.raises(CommandError, match="set their own password"):
        call_command("password_code", editor.username, stdout=io.StringIO(), stderr=io.StringIO())


@pytest.mark.django_db
def test_the_users_page_shows_whose_password_someone_else_chose(admin_client, admin_user, editor, editor2):
    accounts.reviewer_password_set(actor=admin_user, user=editor, password=CHOSEN)
    page = admin_client.get(reverse("users:list")).content.decode()
    assert page.count("chosen by <bdi>alice-admin</bdi>") == 1


# --- a dispute stays for an arbiter -------------------------------------------------------------


@pytest.mark.django_db
def test_once_reviewers_disagreed_a_change_of_mind_leaves_the_pair_to_an_arbiter(import_records, editor, editor2,
                                                                                 arbiter, arbiter_client):
    pair = CandidatePair.objects.get(run=copies_run(import_records, 1, reviews_required=2))
    services.judgement_record(pair=pair, reviewer=editor, verdict="merge-entry", reason="copy")
    services.judgement_record(pair=pair, reviewer=editor2, verdict="keep-both", reason="first view")
    pair.refresh_from_db()
    assert pair.status == "needs_arbitration"
    services.judgement_record(pair=pair, reviewer=editor2, verdict="merge-entry", reason="agree after seeing")
    pair.refresh_from_db()
    assert (pair.status, pair.final_verdict) == ("needs_arbitration", "")
    services.judgement_undo(reviewer=editor2)
    pair.refresh_from_db()
    assert pair.status == "needs_arbitration" and pair.pk in {p.pk for p in selectors.arbitration_cases(arbiter)}
    with pytest.raises(services.ReviewRefused, match="has the 2 reviewer"):  # withdrawn: blind again
        services.judgement_record(pair=pair, reviewer=editor2, verdict="merge-entry", reason="agree once more")
    page = arbiter_client.get(reverse("review:arbitrate", args=[pair.pk])).content.decode()
    assert all(reason in page for reason in ("first view", "agree after seeing", "undo of judgement"))
    services.arbitration_record(pair=pair, arbiter=arbiter, verdict="merge-entry", reason="settled")
    pair.refresh_from_db()
    assert (pair.status, pair.final_verdict) == ("settled", "merge-entry")


@pytest.mark.django_db
def test_a_change_of_mind_before_the_others_judged_is_no_dispute(import_records, editor, editor2):
    pair = CandidatePair.objects.get(run=copies_run(import_records, 1, reviews_required=2))
    services.judgement_record(pair=pair, reviewer=editor, verdict="keep-both", reason="first")
    services.judgement_record(pair=pair, reviewer=editor, verdict="merge-entry", reason="second")
    services.judgement_record(pair=pair, reviewer=editor2, verdict="merge-entry", reason="agree")
    pair.refresh_from_db()
    assert (pair.status, pair.final_verdict) == ("settled", "merge-entry")


# --- leases --------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_reviewer_holds_at_most_the_cap(import_records, editor, settings):
    settings.DEDUP_MAX_LEASES = 2
    pairs = list(CandidatePair.objects.filter(run=copies_run(import_records, 3)).order_by("pk"))
    assert services.lease_take(pair_id=pairs[0].pk, reviewer=editor)
    assert services.lease_take(pair_id=pairs[1].pk, reviewer=editor)
    assert services.lease_take(pair_id=pairs[1].pk, reviewer=editor)  # renewing one held is no new lease
    with pytest.raises(services.LeaseCapReached, match="you hold 2 pairs"):
        services.lease_take(pair_id=pairs[2].pk, reviewer=editor)
    assert Lease.objects.filter(reviewer=editor).count() == 2


@pytest.mark.django_db
def test_renewing_and_opening_pages_never_take_a_lease(import_records, editor, editor_client):
    run = seed_run(import_records)
    pair = CandidatePair.objects.filter(run=run, cluster__isnull=False).first()
    response = editor_client.post(reverse("review:lease", args=[pair.pk]))
    assert response.json()["held"] is False
    assert editor_client.get(reverse("review:pair", args=[pair.pk])).status_code == 200
    assert editor_client.get(reverse("review:cluster", args=[run.pk, pair.cluster])).status_code == 200
    assert not Lease.objects.exists()
    editor_client.post(reverse("review:cluster_hold", args=[run.pk, pair.cluster]))
    held = Lease.objects.filter(reviewer=editor).count()
    assert held == CandidatePair.objects.filter(run=run, cluster=pair.cluster).count() > 0


@pytest.mark.django_db
def test_a_cluster_start_past_the_cap_holds_what_it_may_and_says_why(import_records, editor, settings):
    settings.DEDUP_MAX_LEASES = 1
    run = seed_run(import_records)
    cluster = CandidatePair.objects.filter(run=run, cluster__isnull=False).values_list("cluster", flat=True).first()
    held, wanted, refusal = decisions.cluster_hold(run=run, cluster=cluster, reviewer=editor)
    assert (held, Lease.objects.count()) == (1, 1) and wanted > 1 and "the most one reviewer may hold" in refusal


@pytest.mark.django_db
def test_an_admin_sees_and_releases_a_reviewers_leases(import_records, editor, editor2, admin_client):
    run = copies_run(import_records, 3)
    for pair in CandidatePair.objects.filter(run=run):
        services.lease_take(pair_id=pair.pk, reviewer=editor)
    assert [(h.username, h.pairs) for h in selectors.leases_of_run(run)] == [(editor.username, 3)]
    assert "Held now" in admin_client.get(reverse("review:dashboard", args=[run.pk])).content.decode()
    other = Client()
    other.force_login(editor2)
    assert other.post(reverse("review:leases_release"), {"reviewer": editor.pk, "run": run.pk}).status_code == 403
    response = admin_client.post(reverse("review:leases_release"), {"reviewer": editor.pk, "run": run.pk})
    assert response.status_code == 302 and not Lease.objects.exists()


@pytest.mark.django_db
def test_a_reviewer_releases_their_own_pairs_from_the_queue(import_records, editor, editor_client):
    pair = CandidatePair.objects.get(run=copies_run(import_records, 1))
    services.lease_take(pair_id=pair.pk, reviewer=editor)
    assert "you hold 1 pair" in editor_client.get(reverse("review:queue")).content.decode()
    editor_client.post(reverse("review:leases_release"))
    assert not Lease.objects.exists()


# --- user names ----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_renaming_in_django_admin_to_another_name_in_other_case_is_refused(staff_client, editor, editor2):
    response = staff_client.post(reverse("admin:auth_user_change", args=[editor2.pk]), {
        "username": editor.username.upper(), "is_active": "on", "date_joined_0": "2026-01-01",
        "date_joined_1": "00:00:00"})
    assert response.status_code == 200
    assert "told apart without case" in str(response.context["adminform"].form.errors["username"])


@pytest.mark.django_db
def test_the_database_refuses_two_names_that_differ_only_by_case(editor, django_user_model):
    with pytest.raises(ValidationError, match="is taken by 'erin-editor'"), transaction.atomic():
        django_user_model.objects.create(username=editor.username.upper(), password="!")
    with pytest.raises(DatabaseError, match="canonical key"), transaction.atomic():  # no save, no signal: the
        django_user_model.objects.bulk_create([django_user_model(username=editor.username.upper())])  # database


# --- sheets and label files ----------------------------------------------------------------------


@pytest.mark.django_db
def test_a_blind_editor_sees_no_sheets_row_count(reviewed, tmp_path, admin_user, editor_client):
    export(reviewed, tmp_path, settled_only=True)
    cell = f'settled pairs only</td><td class="num">{SheetExport.objects.get().row_count}</td>'
    url = reverse("screening:run_detail", args=[reviewed.pk])
    admin = Client()
    admin.force_login(admin_user)
    assert cell in admin.get(url).content.decode()
    page = editor_client.get(url).content.decode()
    assert "settled pairs only</td>" in page and cell not in page


@pytest.mark.django_db
def test_a_label_file_with_a_huge_cell_is_refused_naming_its_line(import_records, admin_client):
    import_records("zh", [{"doc_id": "A", "language": "zh", "body": "一"}, {"doc_id": "B", "language": "zh",
                                                                         "body": "二"}])
    data = b"left_id,right_id,label,reason\nA,B,1,ok\nA,B,1," + b"x" * 200_000 + b"\n"
    from django.core.files.uploadedfile import SimpleUploadedFile
    response = admin_client.post(reverse("screening:labels", args=["zh"]),
                                 {"file": SimpleUploadedFile("labels.csv", data), "name": "huge"})
    assert response.status_code == 200
    assert "labels.csv line 3: cannot be read as CSV" in response.content.decode()


@pytest.fixture
def sheet(reviewed, tmp_path):
    from review.sheets import sheet_exports, signing

    csv_path, manifest_path = export(reviewed, tmp_path)
    key = tmp_path / "site.pub.pem"
    key.write_bytes(signing.public_pem(sheet_exports.site_key()))
    manifest_path.chmod(0o644)
    return csv_path, manifest_path, key


def _invalid(sheet, manifest_text: str, capsys) -> str:
    csv_path, manifest_path, key = sheet
    manifest_path.write_text(manifest_text)
    with pytest.raises(CommandError, match="does not verify"):
        verify(csv_path, manifest_path, key)
    return capsys.readouterr().err


@pytest.mark.django_db
def test_verify_sheet_refuses_a_manifest_that_repeats_a_key(sheet, capsys):
    text = sheet[1].read_text()
    err = _invalid(sheet, '{"exported_by": "someone-else", ' + text.lstrip()[1:], capsys)
    assert "INVALID: " in err and "repeats the key 'exported_by'" in err


@pytest.mark.django_db
@pytest.mark.parametrize(("change", "said"), [
    (lambda m: [m], "the manifest is a JSON list, not an object"),
    (lambda m: {**m, "signature": 5}, "the manifest's signature is a JSON int, not base64 text"),
    (lambda m: {**m, "signature": ["a"]}, "the manifest's signature is a JSON list, not base64 text"),
])
def test_verify_sheet_says_invalid_for_a_manifest_of_the_wrong_json_type(sheet, capsys, change, said):
    err = _invalid(sheet, json.dumps(change(json.loads(sheet[1].read_text()))), capsys)
    assert "INVALID: " in err and said in err
