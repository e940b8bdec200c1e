"""Issue 51, items 1 and 2: a password someone else chose proves nothing, whoever wrote it and however.

1. An account whose password someone else chose issues no code and takes no privileged act (judging,
   signing, every Users-page action, tokens, Django admin's user pages); a code counts only from an issuer no
   one at the chooser's side might act as (dedup_site.accounts.might_act_as).
2. The database marks every change of a password hash (create_user, createsuperuser, QuerySet.update, an
   assignment saved with update_fields, SQL) but the owner's own Password page and a re-hash at log-in.
"""

from __future__ import annotations

import io
import re
from datetime import timedelta

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher, make_password
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from dedup_site import accounts
from dedup_site.models import OwnPassword, PasswordChosenByOther, PasswordCode
from review import services
from screening.models import CandidatePair
from tests.factories import PASSWORD, copies_run, reviewer

CHOSEN = "chosen by the admin 1"
OWN = "my very own phrase 4"


def _superuser(name: str):
    """A superuser whose password is their own, as `bootstrap` makes the first admin."""
    user = accounts.get_user_model().objects.create_superuser(name, password=PASSWORD)
    accounts.password_owned(user=user)
    return user


def _logged_in(username: str, password: str) -> Client:
    """A client logged in through the real log-in page (axes, the backend, a re-hash if one is due)."""
    client = Client()
    response = client.post(reverse("login"), {"username": username, "password": password})
    assert response.status_code == 302, response.content.decode()[:2000]
    return client


def _create(client: Client, username: str, role: str = "editor", password: str = CHOSEN):
    response = client.post(reverse("users:create"), {"username": username, "role": role, "password": password})
    assert response.status_code == 302, response.content.decode()[:2000]
    return accounts.get_user_model().objects.get(username=username)


def _code(client: Client, user) -> str:
    """Issue a code on the Users page; the code shown, or the page's refusal."""
    page = client.post(reverse("users:code", args=[user.pk]), follow=True).content.decode()
    found = re.search(r'<code class="code">([0-9A-F-]+)</code>', page)
    return found.group(1) if found else page


def _own_change(client: Client, old: str, new: str = OWN, **proof):
    return client.post(reverse("password_change"), {"old_password": old, "new_password1": new,
                                                    "new_password2": new, **proof})


def _server_code(user) -> str:
    out = io.StringIO()
    call_command("password_code", user.get_username(), stdout=out, stderr=io.StringIO())
    return out.getvalue().strip().splitlines()[-1]


def _pair(import_records) -> CandidatePair:
    return CandidatePair.objects.get(run=copies_run(import_records, 1))


def _editor(user):
    user.groups.add(Group.objects.get(name="editors"))
    return user


# --- item 1: codes and privileged acts from a password someone else chose --------------------------------


@pytest.mark.django_db
def test_an_admin_whose_password_the_superuser_chose_issues_no_code(import_records):
    """The audit's scenario: admin makes admin2 and ed1; admin2, logged in with admin's choice, issues ed1's
    code; admin would then judge and sign as ed1."""
    _superuser("admin")
    admin = _logged_in("admin", PASSWORD)
    _create(admin, "admin2", role="admin")
    ed1 = _create(admin, "ed1")
    admin2 = _logged_in("admin2", CHOSEN)
    assert "before you manage accounts or issue codes" in _code(admin2, ed1)
    assert not PasswordCode.objects.filter(user=ed1).exists()
    impostor = _logged_in("ed1", CHOSEN)
    assert "chosen by admin" in _own_change(impostor, CHOSEN, code="0000-0000-0000").content.decode()
    with pytest.raises(services.ReviewRefused, match="chosen by admin"):
        services.judgement_record(pair=_pair(import_records), reviewer=ed1, verdict="merge-entry", reason="as ed1")


@pytest.mark.django_db
def test_an_admin_reset_by_another_issues_no_code_until_they_set_their_own():
    _superuser("admin")
    admin2, ed1 = reviewer("admin2", "admin"), reviewer("ed1")
    admin = _logged_in("admin", PASSWORD)
    assert admin.post(reverse("users:password", args=[ed1.pk]), {"password": CHOSEN}).status_code == 302
    assert admin.post(reverse("users:password", args=[admin2.pk]), {"password": CHOSEN}).status_code == 302
    assert "before you manage accounts or issue codes" in _code(_logged_in("admin2", CHOSEN), ed1)
    assert not PasswordCode.objects.filter(user=ed1).exists()


@pytest.mark.django_db
def test_an_account_whose_password_someone_else_chose_takes_no_users_page_action(admin_user, editor):
    _superuser("root")
    root = _logged_in("root", PASSWORD)
    assert root.post(reverse("users:password", args=[admin_user.pk]), {"password": CHOSEN}).status_code == 302
    admin = _logged_in(admin_user.username, CHOSEN)
    refused = "before you manage accounts or issue codes"
    for name, data in (("role", {"role": "arbiter"}), ("active", {"active": "0"}),
                       ("password", {"password": "another phrase 8"})):
        page = admin.post(reverse(f"users:{name}", args=[editor.pk]), data, follow=True).content.decode()
        assert refused in page, name
    page = admin.post(reverse("users:create"), {"username": "nina", "role": "editor", "password": CHOSEN},
                      follow=True).content.decode()
    assert refused in page and not accounts.get_user_model().objects.filter(username="nina").exists()
    editor.refresh_from_db()
    assert editor.is_active and editor.check_password(PASSWORD) and editor.groups.get().name == "editors"


@pytest.mark.django_db
def test_an_admin_whose_password_someone_else_chose_changes_no_account_in_django_admin(admin_user, editor):
    admin_user.is_staff = True
    admin_user.save()
    accounts.reviewer_password_set(actor=_superuser("root"), user=admin_user, password=CHOSEN)
    staff = _logged_in(admin_user.username, CHOSEN)
    response = staff.post(reverse("admin:auth_user_password_change", args=[editor.pk]), {
        "password1": "set in the admin 5", "password2": "set in the admin 5", "usable_password": "true"})
    assert response.status_code == 403
    assert staff.get(reverse("admin:auth_user_add")).status_code == 403
    editor.refresh_from_db()
    assert editor.check_password(PASSWORD)


@pytest.mark.django_db
def test_no_api_token_is_made_while_someone_else_chose_the_password(admin_user, editor):
    accounts.reviewer_password_set(actor=admin_user, user=editor, password=CHOSEN)
    page = _logged_in(editor.username, CHOSEN).post(reverse("api_tokens"), {"name": "nightly", "days": 30},
                                                     follow=True).content.decode()
    assert "before you make a token" in page
    from dedup_site.models import ApiToken

    assert not ApiToken.objects.filter(user=editor).exists()


@pytest.mark.django_db
def test_a_code_from_an_admin_whose_proof_the_chooser_gave_does_not_count(import_records):
    """admin proved admin2's own password (a code for the account root made): admin might be acting as admin2,
    so admin2 cannot vouch for ed1, whose password admin chose."""
    root_user, admin_user = _superuser("root"), _superuser("admin")
    root, admin = _logged_in("root", PASSWORD), _logged_in("admin", PASSWORD)
    admin2 = _create(root, "admin2", role="admin")
    code = _code(admin, admin2)
    assert _own_change(_logged_in("admin2", CHOSEN), CHOSEN, code=code).status_code == 302
    assert accounts.might_act_as(admin2) == {admin_user.pk}
    ed1 = _create(admin, "ed1")
    assert "cannot vouch for ed1" in _code(_logged_in("admin2", OWN), ed1)
    assert root_user.pk not in accounts.might_act_as(ed1)
    assert re.fullmatch(r"[0-9A-F-]+", _code(root, ed1))  # root is no one admin might act as


@pytest.mark.django_db
def test_a_team_of_one_admin_lifts_guards_with_the_servers_code_and_then_its_own(import_records):
    _superuser("admin")
    admin = _logged_in("admin", PASSWORD)
    admin2, ed1 = _create(admin, "admin2", role="admin"), _create(admin, "ed1")
    assert _own_change(_logged_in("admin2", CHOSEN), CHOSEN, code=_server_code(admin2)).status_code == 302
    assert accounts.might_act_as(admin2) == set()
    code = _code(_logged_in("admin2", OWN), ed1)
    assert _own_change(_logged_in("ed1", CHOSEN), CHOSEN, code=code).status_code == 302
    services.judgement_record(pair=_pair(import_records), reviewer=ed1, verdict="merge-entry", reason="mine")


@pytest.mark.django_db
def test_a_code_issued_by_an_account_whose_password_someone_else_chose_is_refused_when_used(editor):
    """A code left from before this rule (issued by admin2 on a password admin chose) lifts nothing."""
    admin2, root = reviewer("admin2", "admin"), _superuser("root")
    accounts.reviewer_password_set(actor=root, user=admin2, password=CHOSEN)
    accounts.reviewer_password_set(actor=root, user=editor, password=CHOSEN)
    PasswordCode.objects.create(user=editor, digest=accounts._code_digest("ABCD-EF01-2345"), issued_by=admin2,
                                expires_at=timezone.now() + timedelta(hours=1))
    page = _own_change(_logged_in(editor.username, CHOSEN), CHOSEN, code="ABCD-EF01-2345").content.decode()
    assert "their codes prove nothing" in page
    assert accounts.chosen_by_other(editor) is not None


# --- item 2: every write of a hash is marked, but the owner's page and a re-hash ---------------------------


@pytest.mark.django_db
def test_an_account_made_with_create_user_cannot_judge_with_its_makers_password(import_records):
    ed = _editor(accounts.get_user_model().objects.create_user("made-at-shell", password=CHOSEN))
    with pytest.raises(services.ReviewRefused, match="chosen by someone else"):
        services.judgement_record(pair=_pair(import_records), reviewer=ed, verdict="merge-entry", reason="maker")
    with pytest.raises(services.ReviewRefused, match="chosen by someone else"):
        services.signature_record(reviewer=ed, password=CHOSEN)


@pytest.mark.django_db
def test_createsuperuser_noinput_marks_the_password_it_was_given(monkeypatch, editor):
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", CHOSEN)
    call_command("createsuperuser", "--noinput", username="boss", email="", stdout=io.StringIO())
    boss = accounts.get_user_model().objects.get(username="boss")
    assert accounts.chosen_by_other(boss) is not None
    page = _logged_in("boss", CHOSEN).post(reverse("users:active", args=[editor.pk]), {"active": "0"},
                                           follow=True).content.decode()
    assert "before you manage accounts" in page


@pytest.mark.django_db
def test_a_password_written_by_queryset_update_is_marked(editor):
    type(editor).objects.filter(pk=editor.pk).update(password=make_password(CHOSEN))
    assert accounts.chosen_by_other(editor) is not None


@pytest.mark.django_db
def test_an_assigned_password_saved_with_update_fields_is_marked(editor):
    editor.password = make_password(CHOSEN)
    editor.save(update_fields=["password"])
    assert "chosen by someone else" in accounts.record_refusal(editor)


@pytest.mark.django_db
def test_a_password_written_in_sql_is_marked_and_an_unusable_one_is_not(editor, editor2):
    with connection.cursor() as cursor:
        cursor.execute("UPDATE auth_user SET password = %s WHERE id = %s", [make_password(CHOSEN), editor.pk])
        cursor.execute("UPDATE auth_user SET password = %s WHERE id = %s", ["!unusable", editor2.pk])
    assert accounts.chosen_by_other(editor) is not None and accounts.chosen_by_other(editor2) is None
    nobody = accounts.get_user_model().objects.create_user("no-password")  # unusable: chosen by no one
    assert accounts.chosen_by_other(nobody) is None


@pytest.mark.django_db
def test_a_rehash_at_log_in_is_not_a_new_password(settings, monkeypatch, import_records):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    monkeypatch.setattr(PBKDF2PasswordHasher, "iterations", 1000)
    ed = reviewer("rehashed")
    before = ed.password
    monkeypatch.setattr(PBKDF2PasswordHasher, "iterations", 1500)  # a new release's parameters
    client = _logged_in("rehashed", PASSWORD)
    ed.refresh_from_db()
    assert ed.password != before and "$1500$" in ed.password  # hashed anew at the log-in
    assert accounts.chosen_by_other(ed) is None
    monkeypatch.setattr(PBKDF2PasswordHasher, "iterations", 1700)
    assert _own_change(client, PASSWORD).status_code == 302  # the Password page's check re-hashes too
    monkeypatch.setattr(PBKDF2PasswordHasher, "iterations", 2000)
    ed.refresh_from_db()
    services.judgement_record(pair=_pair(import_records), reviewer=ed, verdict="merge-entry", reason="mine")
    services.signature_record(reviewer=ed, password=OWN)  # its check re-hashes as well
    ed.refresh_from_db()
    assert "$2000$" in ed.password and accounts.chosen_by_other(ed) is None


@pytest.mark.django_db
def test_bootstrap_leaves_the_first_admins_password_their_own(monkeypatch):
    monkeypatch.setenv("DEDUP_ADMIN_PASSWORD", "the starter's own 3")
    call_command("bootstrap", stdout=io.StringIO())
    admin = accounts.get_user_model().objects.get(username="admin")
    assert accounts.chosen_by_other(admin) is None
    assert OwnPassword.objects.get(user=admin).proven_by is None


@pytest.mark.django_db
def test_the_owners_own_page_leaves_no_mark_and_a_reset_after_it_does(admin_user, editor):
    assert _own_change(_logged_in(editor.username, PASSWORD), PASSWORD).status_code == 302
    assert accounts.chosen_by_other(editor) is None
    accounts.reviewer_password_set(actor=admin_user, user=editor, password=CHOSEN)
    assert PasswordChosenByOther.objects.get(user=editor).chosen_by == admin_user


@pytest.mark.django_db(transaction=True)
def test_upgrading_marks_passwords_made_at_the_shell_and_those_a_suspect_code_proved():
    from django.db.migrations.executor import MigrationExecutor

    call_command("migrate", "dedup_site", "0004", verbosity=0)
    try:
        apps = MigrationExecutor(connection).loader.project_state([("dedup_site", "0004_api_tokens")]).apps
        User, Own = apps.get_model("auth", "User"), apps.get_model("dedup_site", "OwnPassword")
        Chosen, Code = apps.get_model("dedup_site", "PasswordChosenByOther"), apps.get_model("dedup_site",
                                                                                              "PasswordCode")
        made, owner, admin, admin2, ed1 = (User.objects.create(username=n, password=make_password(CHOSEN))
                                           for n in ("made", "owner", "admin", "admin2", "ed1"))
        for user in (owner, admin, ed1):
            Own.objects.create(user=user, encoded=user.password)
        Chosen.objects.create(user=admin2, chosen_by=admin)
        Code.objects.create(user=ed1, digest="d" * 64, issued_by=admin2, expires_at=timezone.now(),
                            used_at=timezone.now())
    finally:
        call_command("migrate", verbosity=0)
    marks = dict(PasswordChosenByOther.objects.values_list("user__username", "chosen_by__username"))
    assert marks == {"made": None, "admin2": "admin", "ed1": "admin"}
    assert OwnPassword.objects.get(user__username="ed1").proven_by.username == "admin2"


@pytest.mark.django_db
def test_a_rehash_on_a_path_that_does_not_declare_itself_is_marked(settings, monkeypatch):
    """Only the log-in, the Password page and signing declare their re-hash: any other is taken as a new
    password (a false mark costs the owner a code; a missed one would let a chooser record)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    monkeypatch.setattr(PBKDF2PasswordHasher, "iterations", 1000)
    ed = reviewer("rehashed")
    monkeypatch.setattr(PBKDF2PasswordHasher, "iterations", 1500)
    assert ed.check_password(PASSWORD)  # Django's own check saves the new hash, undeclared
    assert accounts.chosen_by_other(ed) is not None


@pytest.mark.django_db
def test_a_change_that_does_not_declare_itself_keeps_the_chooser_it_replaces():
    """The reviewer's audit: admin resets staff root2, root2 changes it by a path the record cannot tell apart;
    admin must not then be able to issue root2's code (the mark would otherwise name no one)."""
    admin = _superuser("admin")
    root2 = reviewer("root2", "admin", is_staff=True)
    client = _logged_in("admin", PASSWORD)
    assert client.post(reverse("users:password", args=[root2.pk]), {"password": CHOSEN}).status_code == 302
    root2.refresh_from_db()
    root2.set_password("a new phrase of root2 9")
    root2.save()  # any write the database marks (an admin page, the shell)
    assert accounts.chosen_by_other(root2).chosen_by == admin
    with pytest.raises(accounts.AccountRefused, match="another admin"):
        accounts.password_code_issue(actor=admin, user=root2)


@pytest.mark.django_db
def test_django_admins_own_password_page_sends_one_to_the_sites_password_page(admin_user):
    client = Client()
    client.force_login(admin_user)
    response = client.get("/admin/password_change/")
    assert response.status_code == 302 and response["Location"] == reverse("password_change")


@pytest.mark.django_db
def test_an_admin_whose_password_someone_else_chose_takes_no_other_admin_act(import_records, admin_user, editor):
    from review.models import Lease, ReviewPolicy
    from review.sheets import sheet_exports
    from screening import evaluation, runs
    from screening.ingest import uploads
    from screening.models import Corpus, ScreeningRun

    run = copies_run(import_records, 1)
    pair = CandidatePair.objects.get(run=run)
    services.lease_take(pair_id=pair.pk, reviewer=editor)
    chooser = reviewer("chooser", "admin")
    accounts.password_chosen_by(user=admin_user, actor=chooser)
    admin_user.refresh_from_db()
    corpus = Corpus.objects.get(pk=run.corpus_id)
    acts = {
        "run": (runs.RunRefused, lambda: runs.run_create(corpus=corpus, user=admin_user)),
        "settings": (services.ReviewRefused, lambda: services.review_policy_set(
            corpus=corpus, user=admin_user, allow_self_arbitration=True)),
        "export": (services.ReviewRefused, lambda: sheet_exports.sheet_export_create(run=run, user=admin_user)),
        "labels": (evaluation.LabelsRejected, lambda: evaluation.labelset_import(
            corpus=corpus, data=b"left_id,right_id,label\n", original_name="l.csv", user=admin_user)),
        "upload": (uploads.UploadRefused, lambda: uploads.upload_create(
            corpus_name="copies", chunks=[b"x"], size=1, original_name="a.txt", language="en", user=admin_user)),
        "leases": (services.ReviewRefused, lambda: services.leases_release(actor=admin_user, reviewer=editor)),
    }
    for name, (refused, act) in acts.items():
        with pytest.raises(refused) as caught:
            act()
        said = " ".join([str(caught.value), *getattr(caught.value, "problems", [])])
        assert "before you act as an admin" in said, (name, said)
    assert ScreeningRun.objects.count() == 1 and not ReviewPolicy.objects.exists() and Lease.objects.exists()
