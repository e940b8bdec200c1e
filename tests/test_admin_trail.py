"""The trail of administrative acts (issue 51, item 11): every act that bears on the record (roles, accounts,
passwords set by others, codes, tokens, review settings, runs, label sets, sheet exports, Django admin's
changes) leaves an entry in the same transaction, whichever path took it (pages, API, commands); the entries are
insert-only in the database, shown to admins on a page and through the API, and a signed sheet's manifest
carries the trail's hash as it stood at the export."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import Group, Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import DatabaseError, connection, transaction
from django.test import Client
from django.urls import reverse

from dedup_site import accounts, guards, tokens, trail
from dedup_site.models import ApiToken, TrailEntry
from review.models import PRESET_REASONS
from review.sheets import sheet_exports, signing
from screening.models import ScreeningRun
from tests import factories
from tests.factories import reviewer, seed_run
from tests.test_sheets import export, verify

API = "/api/v1"
SEED_LABELS = b"left_id,right_id,label\nA,B,1\nA,C,1\n"


@pytest.fixture(autouse=True)
def _own_exports(settings, tmp_path):
    """This module's sheet exports (and signing key) in each test's own folder: export ids repeat between tests,
    and a later module expects no local export of its own ids."""
    settings.DATA_DIR = tmp_path / "data"


def entries(action: str | None = None):
    rows = TrailEntry.objects.order_by("id")
    return list(rows.filter(action=action) if action else rows)


@pytest.fixture
def staff_client(admin_user):
    admin_user.is_staff = True
    admin_user.save()
    client = Client()
    client.force_login(admin_user)
    return client


def api_get(user, path: str, **params):
    text = tokens.token_create(user=user, actor=user, name="trail reader")[1]
    return Client().get(f"{API}{path}", params, HTTP_AUTHORIZATION=f"Bearer {text}")


# --- the database keeps it ---------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_database_refuses_to_update_or_delete_a_trail_entry(admin_user, editor):
    accounts.reviewer_role_set(actor=admin_user, user=editor, role="arbiter")
    (entry,) = entries("user.role")
    for sql in ("UPDATE dedup_site_trailentry SET actor_name = 'someone else' WHERE id = %s",
                "DELETE FROM dedup_site_trailentry WHERE id = %s"):
        with pytest.raises(DatabaseError, match="refused"), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql, [entry.pk])
    with pytest.raises(DatabaseError), transaction.atomic():
        TrailEntry.objects.filter(pk=entry.pk).update(after={"role": "admin"})
    with pytest.raises(DatabaseError), transaction.atomic():
        TrailEntry.objects.filter(pk=entry.pk).delete()
    assert TrailEntry.objects.get(pk=entry.pk).after == {"role": "arbiter"}


@pytest.mark.django_db(transaction=True)
def test_an_entry_is_recorded_only_inside_the_acts_own_transaction(editor):
    with pytest.raises(transaction.TransactionManagementError):
        trail.trail_record(actor=None, action="user.create", target=editor)
    assert entries() == []


@pytest.mark.django_db(transaction=True)
def test_entries_are_numbered_in_the_order_their_transactions_commit(editor, editor2):
    """A reader never sees entry 12 while 11 is still to come (a sheet's trail hash would then go stale):
    the second act waits for the first's commit before it takes its number."""
    import threading
    import time

    from django.db import connections

    if connection.vendor != "postgresql":
        pytest.skip("SQLite has one writer at a time")
    first_in, moments = threading.Event(), {}

    def first():
        try:
            with transaction.atomic():
                trail.trail_record(actor=None, action="user.role", target=editor)
                first_in.set()
                time.sleep(1)
                moments["first commits"] = time.monotonic()  # the commit comes after this moment
        finally:
            connections.close_all()

    def second():
        try:
            first_in.wait(10)
            with transaction.atomic():
                trail.trail_record(actor=None, action="user.role", target=editor2)
                moments["second recorded"] = time.monotonic()
        finally:
            connections.close_all()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert moments["second recorded"] > moments["first commits"]  # it waited for the first's commit
    assert [e.target_label for e in entries()] == [editor.username, editor2.username]  # and came after it


@pytest.mark.django_db
def test_a_refused_act_leaves_no_entry(admin_user, editor, editor_client):
    editor_client.post(reverse("users:role", args=[admin_user.pk]), {"role": "editor"})  # 403: not an admin
    with pytest.raises(accounts.AccountRefused):
        accounts.reviewer_role_set(actor=editor, user=admin_user, role="editor")
    assert entries() == []


# --- every path leaves it ----------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_users_page_leaves_an_entry_for_each_act_and_never_the_code(admin_client, admin_user, editor):
    admin_client.post(reverse("users:create"), {"username": "kim", "role": "editor",
                                                "password": "a long enough phrase 7"})
    kim = type(editor).objects.get(username="kim")
    admin_client.post(reverse("users:role", args=[kim.pk]), {"role": "arbiter"})
    admin_client.post(reverse("users:active", args=[kim.pk]), {"active": "0"})
    admin_client.post(reverse("users:active", args=[kim.pk]), {"active": "1"})
    admin_client.post(reverse("users:password", args=[editor.pk]), {"password": "another long phrase 8"})
    other = Client()  # a code comes from an admin who did not choose the password
    other.force_login(ada := reviewer("ada-admin", "admin"))
    code = other.post(reverse("users:code", args=[kim.pk])).context["issued"]["code"]
    done = [(e.action, e.actor_id, e.target_label, e.before, e.after) for e in entries()]
    assert [d[:3] for d in done] == [("user.create", admin_user.pk, "kim"), ("user.role", admin_user.pk, "kim"),
                                     ("user.deactivate", admin_user.pk, "kim"),
                                     ("user.reactivate", admin_user.pk, "kim"),
                                     ("user.password", admin_user.pk, editor.username),
                                     ("user.code", ada.pk, "kim")]
    assert done[1][3:] == ({"role": "editor"}, {"role": "arbiter"})
    assert done[2][3:] == ({"active": True}, {"active": False})
    everything = json.dumps([d[3:] for d in done])
    assert code not in everything and code.replace("-", "") not in everything
    assert "another long phrase" not in everything


@pytest.mark.django_db
def test_the_server_commands_leave_entries_that_name_them(editor, capsys):
    call_command("api_token", "create", editor.username, "--name", "nightly")
    call_command("api_token", "revoke", str(ApiToken.objects.get(user=editor).pk))
    accounts.password_chosen_by(user=editor, actor=None)
    call_command("password_code", editor.username)
    made, revoked, code = entries()
    assert (made.actor, made.command, made.action, made.target_label) == (None, "api_token create", "token.create",
                                                                          editor.username)
    assert made.after["name"] == "nightly" and made.after["made_by_owner"] is False
    assert (revoked.command, revoked.action, revoked.after["revoked_at"] is not None) == (
        "api_token revoke", "token.revoke", True)
    assert (code.actor, code.command, code.action) == (None, "password_code", "user.code")
    assert capsys.readouterr().out.strip().splitlines()[-1] not in json.dumps(code.after)


@pytest.mark.django_db
def test_tokens_made_revoked_and_acknowledged_say_by_whom_and_for_whom(editor, editor_client, capsys):
    editor_client.post(reverse("api_tokens"), {"name": "notebook", "days": "30"})
    call_command("api_token", "create", editor.username, "--name", "for you")
    given = ApiToken.objects.get(name="for you")
    editor_client.post(reverse("api_token_acknowledge", args=[given.pk]))
    editor_client.post(reverse("api_token_revoke", args=[given.pk]))
    rows = [(e.action, e.actor_id, e.command, e.target_id) for e in entries()]
    assert rows == [("token.create", editor.pk, "", editor.pk), ("token.create", None, "api_token create", editor.pk),
                    ("token.acknowledge", editor.pk, "", editor.pk), ("token.revoke", editor.pk, "", editor.pk)]


@pytest.mark.django_db
def test_review_settings_leave_their_before_and_after(import_records, admin_client, admin_user):
    run = seed_run(import_records)
    data = {f"preset_{v}": text for v, text in PRESET_REASONS.items()}
    admin_client.post(reverse("review:policy", args=["zh"]), {**data, "allow_self_arbitration": "on"})
    data["preset_keep-both"] = "two channels, both kept"
    admin_client.post(reverse("review:policy", args=["zh"]), data)  # the box left unticked: disallowed again
    admin_client.post(reverse("review:policy", args=["zh"]), data)  # the same again: nothing changed
    acts = [(e.action, e.target_type, e.target_id, e.before, e.after) for e in entries() if e.actor_id]
    corpus = run.corpus_id
    assert acts == [
        ("review.self_arbitration_allowed", "corpus", corpus, {"allow_self_arbitration": False},
         {"allow_self_arbitration": True}),
        ("review.self_arbitration_disallowed", "corpus", corpus, {"allow_self_arbitration": True},
         {"allow_self_arbitration": False}),
        ("review.preset_reasons", "corpus", corpus, {"preset_reasons": {}},
         {"preset_reasons": {"keep-both": "two channels, both kept"}}),
    ]


@pytest.mark.django_db
def test_runs_label_sets_and_sheet_exports_started_by_admins_are_trailed(import_records, admin_client, admin_user,
                                                                        queue):
    run = seed_run(import_records)
    admin_client.post(reverse("screening:run_start", args=["zh"]), {"exact": "on", "reviews_required": "2"})
    started = ScreeningRun.objects.latest("pk")
    admin_client.post(reverse("screening:labels", args=["zh"]),
                      {"name": "gold", "file": SimpleUploadedFile("l.csv", SEED_LABELS)})
    admin_client.post(reverse("review:sheet_start", args=[run.pk]), {"settled_only": "on"})
    mine = {e.action: e for e in entries() if e.actor_id == admin_user.pk}
    assert mine["run.start"].target_id == started.pk and mine["run.start"].after["reviews_required"] == 2
    assert mine["labels.import"].target_label == "zh" and mine["labels.import"].after["size"] == 2
    assert mine["sheet.export"].target_id == run.pk and mine["sheet.export"].after["selection"]["settled_only"]
    # The run made by the test's own factory, with no one logged in, names no person.
    first = entries("run.start")[0]
    assert first.actor is None and first.command == trail.UNNAMED_COMMAND


@pytest.mark.django_db
def test_django_admin_changes_of_accounts_and_groups_are_trailed(staff_client, admin_user, editor):
    url = reverse("admin:auth_user_change", args=[editor.pk])
    form = {"username": editor.username, "first_name": "Erin", "last_name": "", "email": "", "is_active": "on",
            "groups": [Group.objects.get(name="arbiters").pk]}
    response = staff_client.post(url, form)
    assert response.status_code == 302, response.context["adminform"].form.errors
    (change,) = [e for e in entries() if e.target_id == editor.pk]  # one entry: not the receivers' too
    assert change.actor_id == admin_user.pk and change.after["groups"] == ["arbiters"]
    assert change.before["groups"] == ["editors"] and change.after["first_name"] == "Erin"
    staff_client.post(reverse("admin:auth_user_add"), {"username": "lee", "usable_password": "true",
                                                       "password1": "a long enough phrase 9",
                                                       "password2": "a long enough phrase 9"})
    assert [e.target_label for e in entries("user.create")] == ["lee"]
    staff_client.post(reverse("admin:auth_user_password_change", args=[editor.pk]), {
        "password1": "yet another long phrase 3", "password2": "yet another long phrase 3"})
    assert [e.target_label for e in entries("user.password")] == [editor.username]
    group = Group.objects.get(name="editors")
    view_user = Permission.objects.get(codename="view_user")
    superuser = Client()
    superuser.force_login(factories.superuser("sue-super"))  # its password its own: it may change groups
    superuser.post(reverse("admin:auth_group_change", args=[group.pk]), {
        "name": "editors", "permissions": [*group.permissions.values_list("pk", flat=True), view_user.pk]})
    (regroup,) = entries("group.change")
    assert "auth.view_user" in regroup.after["permissions"] and "auth.view_user" not in regroup.before["permissions"]


# --- acts made outside our services ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_createsuperuser_leaves_an_entry_naming_the_command(monkeypatch):
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "a long enough phrase 11")
    call_command("createsuperuser", "--noinput", "--username", "root", "--email", "root@example.org")
    (made,) = entries()
    assert (made.actor, made.command, made.action, made.target_label) == (None, "createsuperuser", "user.create",
                                                                          "root")
    assert made.after == {"active": True, "staff": True, "superuser": True}


@pytest.mark.django_db
def test_changepassword_leaves_an_entry_naming_the_command(editor, monkeypatch):
    # Django's command reads the new password twice from the terminal, without echo.
    monkeypatch.setattr("getpass.getpass", lambda *_args, **_kwargs: "another long phrase 12")
    call_command("changepassword", editor.username)
    (changed,) = entries()
    assert (changed.actor, changed.command, changed.action, changed.target_id) == (None, "changepassword",
                                                                                   "user.password", editor.pk)
    assert "another long phrase" not in json.dumps([changed.before, changed.after])


@pytest.mark.django_db
def test_a_password_set_at_the_shell_is_trailed_and_an_owners_own_is_not(editor, editor2):
    editor.set_password("chosen at the shell 13")
    editor.save()
    (changed,) = entries()
    assert (changed.actor, changed.command, changed.action, changed.target_id) == (
        None, trail.UNNAMED_COMMAND, "user.password", editor.pk)
    accounts.password_own_set(user=editor2, password="my very own phrase 14")  # their own Password page
    assert Client().post(reverse("login"), {"username": editor2.username, "password": "my very own phrase 14"}
                         ).status_code == 302  # a log-in writes last_login: no act either
    assert entries() == [changed]


@pytest.mark.django_db
def test_groups_permissions_and_status_changed_at_the_shell_are_trailed(editor, editor2):
    admins, arbiters = Group.objects.get(name="admins"), Group.objects.get(name="arbiters")
    view_user = Permission.objects.get(codename="view_user")
    editor.groups.add(admins)
    arbiters.user_set.add(editor2)  # from the group's side
    editor.user_permissions.add(view_user)
    Group.objects.get(name="editors").permissions.add(view_user)
    editor2.is_superuser = True
    editor2.is_active = False
    editor2.save()
    acts = [(e.action, e.actor_id, e.command, e.target_label, e.before, e.after) for e in entries()]
    shell = trail.UNNAMED_COMMAND
    assert acts == [
        ("user.role", None, shell, editor.username, {"groups": ["editors"]}, {"groups": ["admins", "editors"]}),
        ("user.role", None, shell, editor2.username, {"groups": ["editors"]}, {"groups": ["arbiters", "editors"]}),
        ("user.permissions", None, shell, editor.username, {"permissions": []}, {"permissions": ["auth.view_user"]}),
        ("group.change", None, shell, "editors", {"permissions": ["review.review_pair"]},
         {"permissions": ["auth.view_user", "review.review_pair"]}),
        ("user.deactivate", None, shell, editor2.username, {"active": True}, {"active": False}),
        ("user.privileges", None, shell, editor2.username, {"superuser": False}, {"superuser": True}),
    ]


@pytest.mark.django_db
def test_a_role_change_is_trailed_once_on_the_users_page_and_once_at_the_shell(admin_client, admin_user, editor):
    admin_client.post(reverse("users:role", args=[editor.pk]), {"role": "arbiter"})
    assert [(e.action, e.actor_id) for e in entries()] == [("user.role", admin_user.pk)]  # not the shell's too
    editor.groups.remove(Group.objects.get(name="arbiters"))
    assert [(e.action, e.actor_id, e.command) for e in entries()] == [
        ("user.role", admin_user.pk, ""), ("user.role", None, trail.UNNAMED_COMMAND)]


@pytest.mark.django_db
def test_a_role_put_back_by_migrate_is_trailed(editor):
    Group.objects.get(name="editors").permissions.clear()
    call_command("migrate", verbosity=0)  # puts the roles back as the code defines them
    cleared, restored = entries()
    assert (cleared.command, cleared.before, cleared.after) == (
        trail.UNNAMED_COMMAND, {"permissions": ["review.review_pair"]}, {"permissions": []})
    assert (restored.command, restored.action, restored.after) == (
        "ensure_roles", "group.change", {"permissions": ["review.review_pair"]})


# --- shown to admins -----------------------------------------------------------------------------------------------


@pytest.fixture
def acts(admin_user, editor, editor2):
    accounts.reviewer_role_set(actor=admin_user, user=editor, role="arbiter")
    accounts.reviewer_active_set(actor=admin_user, user=editor2, active=False)
    with trail.command_line("api_token create"):
        tokens.token_create(user=editor, actor=None, name="nightly")
    return entries()


@pytest.mark.django_db
def test_the_trail_page_is_for_admins_and_linked_in_their_header(acts, admin_client):
    page = admin_client.get(reverse("trail:list")).content.decode()
    assert f'href="{reverse("trail:list")}"' in admin_client.get(reverse("screening:corpus_list")).content.decode()
    assert "role changed" in page and "account deactivated" in page and "server: api_token create" in page
    someone = Client()
    someone.force_login(reviewer("eve-editor", "editor"))
    assert someone.get(reverse("trail:list")).status_code == 403
    assert f'href="{reverse("trail:list")}"' not in someone.get(reverse("screening:corpus_list")).content.decode()


@pytest.mark.django_db
def test_the_trail_page_filters_by_actor_act_target_and_dates(acts, admin_client, admin_user, editor, editor2):
    def shown(**query) -> list[str]:
        page = admin_client.get(reverse("trail:list"), query).content.decode()
        return [chunk.split('"')[0] for chunk in page.split('data-action="')[1:]]

    assert shown() == ["token.create", "user.deactivate", "user.role"]  # newest first
    assert shown(actor=admin_user.username.upper()) == ["user.deactivate", "user.role"]
    assert shown(actor="api_token") == ["token.create"]
    assert shown(action="user.role") == ["user.role"]
    assert shown(target_type="user", target=editor2.username) == ["user.deactivate"]
    assert shown(target=str(editor.pk)) == ["token.create", "user.role"]
    day = acts[0].at.date().isoformat()
    assert len(shown(since=day, until=day)) == 3 and shown(until="2000-01-01") == []
    assert "the first day comes after the last" in admin_client.get(reverse("trail:list"), {
        "since": day, "until": "2000-01-01"}).content.decode()


@pytest.mark.django_db
def test_the_trail_page_is_paged(admin_client, admin_user, editor):
    for i in range(53):
        accounts.reviewer_role_set(actor=admin_user, user=editor, role="arbiter" if i % 2 else "editor")
    first = admin_client.get(reverse("trail:list"), {"action": "user.role"}).content.decode()
    second = admin_client.get(reverse("trail:list"), {"action": "user.role", "page": 2}).content.decode()
    assert first.count('data-action="') == 50 and second.count('data-action="') == 3
    assert "action=user.role&amp;page=2" in first and "page 2 of 2" in second


@pytest.mark.django_db
@pytest.mark.parametrize(("language", "words", "digits"), [("fa", "تغییر نقش", "۰۱۲۳۴۵۶۷۸۹"),
                                                          ("zh-hans", "角色已更改", "0123456789")])
def test_the_trail_page_speaks_persian_and_chinese(acts, admin_user, language, words, digits):
    client = Client(headers={"accept-language": language})
    client.force_login(admin_user)
    page = client.get(reverse("trail:list")).content.decode()
    number = "".join(digits[int(d)] for d in str(acts[0].pk))  # an entry's number, in the language's digits
    assert words in page and f"#{number}" in page


# --- through the API -------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_api_lists_the_trail_a_cursor_page_at_a_time_for_admins_only(acts, admin_user, editor):
    first = api_get(admin_user, "/trail/", page_size=2)
    assert first.status_code == 200
    body = first.json()
    # The reader's own token is an act too: the newest.
    assert [e["action"] for e in body["results"]] == ["token.create", "token.create"]
    rest = Client().get(body["next"], HTTP_AUTHORIZATION=first.request["HTTP_AUTHORIZATION"]).json()
    assert [e["action"] for e in rest["results"]] == ["user.deactivate", "user.role"] and rest["next"] is None
    role = rest["results"][-1]
    assert (role["actor"], role["command"], role["target"], role["before"], role["after"]) == (
        admin_user.username, "", editor.username, {"role": "editor"}, {"role": "arbiter"})
    server = api_get(admin_user, "/trail/", actor="api_token", action="token.create").json()["results"]
    assert [(e["actor"], e["command"]) for e in server] == [(None, "api_token create")]
    assert api_get(admin_user, "/trail/", cursor="YWJj").status_code == 400  # "abc": not an entry's id
    assert api_get(admin_user, "/trail/", action="no.such").json()["errors"]["action"]
    assert api_get(editor, "/trail/").status_code == 403


@pytest.mark.django_db
def test_the_schema_documents_the_trail(admin_user):
    schema = json.loads(api_get(admin_user, "/schema/", format="json").content)
    operation = schema["paths"]["/api/v1/trail/"]["get"]
    assert {p["name"] for p in operation["parameters"]} >= {"actor", "action", "target_type", "target", "since",
                                                            "until", "cursor", "page_size"}


# --- carried in the signed sheet ------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_signed_manifest_carries_the_trails_hash_and_verify_sheet_checks_it(reviewed, admin_user, editor,
                                                                                 tmp_path, capsys):
    accounts.reviewer_role_set(actor=admin_user, user=editor, role="arbiter")
    csv_path, manifest_path = export(reviewed, tmp_path)
    manifest = json.loads(manifest_path.read_text())
    rows = entries()
    count, digest = signing.trail_sha256(trail.trail_cells(e) for e in rows if e.pk <= manifest["trail_last_entry"])
    assert (manifest["trail_rows"], manifest["trail_sha256"]) == (count, digest) and count == len(rows)
    assert manifest["trail_last_entry"] == rows[-1].pk == entries("sheet.export")[-1].pk
    capsys.readouterr()
    call_command("verify_sheet", str(csv_path), "--manifest", str(manifest_path), "--against-trail")
    out = capsys.readouterr().out
    assert out.startswith("VALID") and f"{count} entries" in out and digest in out
    # Acts after the export leave its hash as it was; an entry changed before it does not.
    accounts.reviewer_role_set(actor=admin_user, user=editor, role="editor")
    verify(csv_path, manifest_path)
    call_command("verify_sheet", str(csv_path), "--manifest", str(manifest_path), "--against-trail")
    guard = [g for g in guards.registered() if g.table == "dedup_site_trailentry"]
    guards.remove(connection, guard)  # as someone who may drop the triggers could
    TrailEntry.objects.filter(pk=rows[0].pk).update(after={"role": "admin"})
    guards.install(connection, guard)
    with pytest.raises(CommandError):
        call_command("verify_sheet", str(csv_path), "--manifest", str(manifest_path), "--against-trail")
    assert "is not what was exported" in capsys.readouterr().err


@pytest.mark.django_db
def test_an_export_from_the_command_line_is_trailed_as_the_commands(reviewed, tmp_path):
    export(reviewed, tmp_path)
    (entry,) = entries("sheet.export")
    assert (entry.actor, entry.command, entry.target_id) == (None, "export_sheet", reviewed.pk)
    assert sheet_exports.trail_state()[0] == len(entries())


@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor == "postgresql", reason="PostgreSQL's jsonb stores no lone surrogate at all")
def test_a_lone_surrogate_stored_before_the_rule_enters_the_trail_escaped_and_sheets_still_hash_it(
        import_records, admin_client):
    from review.models import ReviewPolicy
    from review.sheets import sheet_exports

    run = seed_run(import_records)
    ReviewPolicy.objects.create(corpus_id=run.corpus_id, preset_reasons={"keep-both": "old \ud800 words"})
    data = {f"preset_{v}": text for v, text in PRESET_REASONS.items()}
    data["preset_keep-both"] = "two channels, both kept"
    admin_client.post(reverse("review:policy", args=["zh"]), data)
    (entry,) = entries("review.preset_reasons")
    assert entry.before == {"preset_reasons": {"keep-both": "old \\ud800 words"}}
    rows, _, digest = sheet_exports.trail_state()  # the hash every later export carries
    assert rows >= 1 and len(digest) == 64
