"""Accounts and roles: nobody escalates their own role; admins manage editors and arbiters only; the Users
page creates, re-roles, deactivates and sets passwords."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse

from dedup_site import accounts, roles
from tests.factories import reviewer, superuser


@pytest.fixture
def staff_admin(admin_user):
    admin_user.is_staff = True  # as the README once said to do for an admin who manages users
    admin_user.save()
    return admin_user


@pytest.fixture
def staff_client(staff_admin):
    client = Client()
    client.force_login(staff_admin)
    return client


def _admin_save(client, user, **fields):
    """Save a user's change form in Django admin, with every field it may ask for; the form must be accepted
    (a refused form would prove nothing)."""
    data = {"username": user.username, "is_active": "on", "date_joined_0": "2026-01-01",
            "date_joined_1": "00:00:00", **fields}
    response = client.post(reverse("admin:auth_user_change", args=[user.pk]), data)
    assert response.status_code == 302, response.context["adminform"].form.errors


def _groups(user) -> set[str]:
    return set(user.groups.values_list("name", flat=True))


@pytest.mark.django_db
def test_a_staff_admin_cannot_make_themselves_superuser_or_reviewer_in_django_admin(staff_client, staff_admin):
    editors, arbiters = Group.objects.get(name=roles.EDITORS), Group.objects.get(name=roles.ARBITERS)
    _admin_save(staff_client, staff_admin, is_staff="on", is_superuser="on", groups=[editors.pk, arbiters.pk])
    staff_admin.refresh_from_db()
    assert not staff_admin.is_superuser
    assert _groups(staff_admin) == {roles.ADMINS}
    assert not staff_admin.has_perm(roles.REVIEW) and not staff_admin.has_perm(roles.ARBITRATE)


@pytest.mark.django_db
def test_a_staff_admin_cannot_grant_staff_or_superuser_to_an_editor(staff_client, editor):
    editors, admins = Group.objects.get(name=roles.EDITORS), Group.objects.get(name=roles.ADMINS)
    _admin_save(staff_client, editor, is_staff="on", is_superuser="on", groups=[editors.pk])
    response = staff_client.post(reverse("admin:auth_user_change", args=[editor.pk]), {
        "username": editor.username, "is_active": "on", "groups": [admins.pk]})
    assert response.status_code == 200  # refused: the admins group is not a choice for an admin
    editor.refresh_from_db()
    assert not editor.is_staff and not editor.is_superuser and _groups(editor) == {roles.EDITORS}


@pytest.mark.django_db
def test_django_admin_lists_only_the_accounts_an_admin_may_manage(staff_client, staff_admin, editor,
                                                                  django_user_model):
    django_user_model.objects.create_superuser("root-user", password="irrelevant-pass-1")
    page = staff_client.get(reverse("admin:auth_user_changelist")).content.decode()
    assert editor.username in page and "root-user" not in page
    root = django_user_model.objects.get(username="root-user")
    assert staff_client.get(reverse("admin:auth_user_change", args=[root.pk])).status_code in (302, 403, 404)


@pytest.mark.django_db
def test_nobody_changes_their_own_role(admin_user, django_user_model):
    root = superuser("root-user")
    for actor in (admin_user, root):
        with pytest.raises(accounts.AccountRefused, match="your own"):
            accounts.reviewer_role_set(actor=actor, user=actor, role="arbiter")


@pytest.mark.django_db
def test_an_admin_gives_reviewer_roles_only(admin_user, editor, django_user_model):
    with pytest.raises(accounts.AccountRefused, match="not one you may give"):
        accounts.reviewer_role_set(actor=admin_user, user=editor, role="admin")
    other_admin = reviewer("adam-admin", "admin")
    with pytest.raises(accounts.AccountRefused, match="only a superuser"):
        accounts.reviewer_role_set(actor=admin_user, user=other_admin, role="editor")
    accounts.reviewer_role_set(actor=admin_user, user=editor, role="arbiter")
    assert _groups(editor) == {roles.ARBITERS}


@pytest.mark.django_db
def test_a_superuser_may_make_an_admin(admin_user, editor, django_user_model):
    root = superuser("root-user")
    accounts.reviewer_role_set(actor=root, user=editor, role="admin")
    assert _groups(editor) == {roles.ADMINS}


@pytest.mark.django_db
def test_users_page_creates_a_reviewer_with_a_role(admin_client, django_user_model):
    response = admin_client.post(reverse("users:create"), {"username": "nina", "full_name": "Nina Noor",
                                                           "role": "arbiter", "password": "a long passphrase 7"})
    assert response.status_code == 302
    nina = django_user_model.objects.get(username="nina")
    assert _groups(nina) == {roles.ARBITERS} and nina.get_full_name() == "Nina Noor" and nina.is_active
    assert nina.check_password("a long passphrase 7")
    page = admin_client.get(reverse("users:list")).content.decode()
    assert "nina" in page and "arbiter" in page


@pytest.mark.django_db
def test_users_page_refuses_to_create_an_admin_for_an_admin(admin_client, django_user_model):
    response = admin_client.post(reverse("users:create"), {"username": "eve", "role": "admin",
                                                           "password": "a long passphrase 7"}, follow=True)
    assert not django_user_model.objects.filter(username="eve").exists()
    assert "Not created" in response.content.decode()


@pytest.mark.django_db
def test_users_page_deactivates_reactivates_and_sets_a_password(admin_client, editor):
    admin_client.post(reverse("users:active", args=[editor.pk]), {"active": "0"})
    editor.refresh_from_db()
    assert not editor.is_active
    admin_client.post(reverse("users:active", args=[editor.pk]), {"active": "1"})
    admin_client.post(reverse("users:password", args=[editor.pk]), {"password": "another passphrase 9"})
    editor.refresh_from_db()
    assert editor.is_active and editor.check_password("another passphrase 9")


@pytest.mark.django_db
def test_users_page_refuses_a_weak_password_with_the_rule(admin_client, editor):
    response = admin_client.post(reverse("users:password", args=[editor.pk]), {"password": "short"}, follow=True)
    editor.refresh_from_db()
    assert editor.check_password("correct horse battery")
    assert "too short" in response.content.decode()


@pytest.mark.django_db
def test_an_admin_cannot_deactivate_themselves(admin_client, admin_user):
    response = admin_client.post(reverse("users:active", args=[admin_user.pk]), {"active": "0"}, follow=True)
    admin_user.refresh_from_db()
    assert admin_user.is_active and "your own" in response.content.decode()


@pytest.mark.django_db
def test_a_reviewer_whose_password_an_admin_chose_must_set_their_own_before_signing(admin_user, editor, client):
    from review import services

    accounts.reviewer_password_set(actor=admin_user, user=editor, password="chosen by the admin 1")
    client.force_login(editor)  # the new password ended the old session
    assert "chosen-by-other" in client.get(reverse("review:sign")).content.decode()
    with pytest.raises(services.ReviewRefused, match="chosen by alice-admin"):
        services.signature_record(reviewer=editor, password="chosen by the admin 1")
    response = client.post(reverse("password_change"), {
        "old_password": "chosen by the admin 1", "earlier_password": "correct horse battery",
        "new_password1": "my very own phrase 4", "new_password2": "my very own phrase 4"})
    assert response.status_code == 302 and accounts.chosen_by_other(editor) is None
    assert "chosen-by-other" not in client.get(reverse("review:sign")).content.decode()  # still logged in
    editor.refresh_from_db()
    with pytest.raises(services.ReviewRefused, match="no judgement to sign"):  # the next rule, not this one
        services.signature_record(reviewer=editor, password="my very own phrase 4")


@pytest.mark.django_db
def test_an_account_created_by_an_admin_starts_with_a_password_to_replace(admin_user):
    nina = accounts.reviewer_create(actor=admin_user, username="nina", password="a long passphrase 7",
                                    role="editor")
    assert accounts.chosen_by_other(nina).chosen_by == admin_user


@pytest.mark.django_db
def test_a_password_set_in_django_admin_by_someone_else_is_marked(staff_client, editor):
    response = staff_client.post(reverse("admin:auth_user_password_change", args=[editor.pk]), {
        "password1": "set in the admin 5", "password2": "set in the admin 5", "usable_password": "true"})
    assert response.status_code == 302
    assert accounts.chosen_by_other(editor) is not None


@pytest.mark.django_db
def test_a_refused_new_reviewer_keeps_what_was_typed_but_the_password(admin_client):
    response = admin_client.post(reverse("users:create"), {"username": "nadia", "full_name": "Nadia Rahimi",
                                                           "role": "editor", "password": "short"})
    page = response.content.decode()
    assert response.status_code == 400 and "too short" in page
    assert 'value="nadia"' in page and 'value="Nadia Rahimi"' in page and 'value="short"' not in page
