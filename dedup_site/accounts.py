"""Reviewer accounts and who may change them (services for the Users page and the rules Django admin
applies too). Roles cannot be escalated from inside:

- only a superuser grants superuser or staff status, or the admin role;
- nobody changes their own roles, groups or permissions (nor deactivates themselves);
- an admin creates, deactivates and sets the role of editors and arbiters only, and sets their passwords;
  a password chosen by someone else must be replaced by its owner before they can sign their judgements.
"""

from __future__ import annotations

from contextlib import contextmanager

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction

from dedup_site.models import PasswordChosenByOther
from dedup_site.roles import ADMINS, ARBITERS, EDITORS

REVIEWER_ROLES = {"editor": EDITORS, "arbiter": ARBITERS}  # what an admin may hand out
ALL_ROLES = {**REVIEWER_ROLES, "admin": ADMINS}  # what a superuser may hand out
ROLE_GROUPS = set(ALL_ROLES.values())


class AccountRefused(Exception):
    """A change to an account that breaks a rule above; the message says which."""


def role_of(user) -> str:
    """The user's role as the Users page names it ('admin + arbiter' when several, '' when none)."""
    groups = {group.name for group in user.groups.all()}  # .all(): served from a prefetch when there is one
    return " + ".join(role for role, group in sorted(ALL_ROLES.items()) if group in groups)


def roles_grantable(actor) -> dict[str, str]:
    return dict(ALL_ROLES) if actor.is_superuser else dict(REVIEWER_ROLES)


def may_manage(actor, user) -> bool:
    """Whether `actor` may create, change the role of, deactivate or set the password of `user`."""
    if not actor.is_active or actor.pk == user.pk:
        return False
    if actor.is_superuser:
        return True
    if not actor.has_perm("auth.change_user"):
        return False
    groups = {group.name for group in user.groups.all()}  # .all(): served from a prefetch when there is one
    return not (user.is_superuser or user.is_staff or list(user.user_permissions.all())
                or groups - set(REVIEWER_ROLES.values()))


def manageable(users, actor):
    """The accounts of `users` (a queryset) that `actor` may manage, as a query (see may_manage)."""
    if actor.is_superuser:
        return users.exclude(pk=actor.pk)
    if not actor.is_active or not actor.has_perm("auth.change_user"):
        return users.none()
    return (users.filter(is_superuser=False, is_staff=False, user_permissions__isnull=True)
            .exclude(groups__in=Group.objects.exclude(name__in=REVIEWER_ROLES.values())).exclude(pk=actor.pk))


def _check(actor, user) -> None:
    if actor.pk == user.pk:
        raise AccountRefused("you cannot change your own account's role, status or permissions; ask another admin")
    if not may_manage(actor, user):
        raise AccountRefused(f"{user.get_username()} is not an editor or arbiter account you may manage; "
                             f"only a superuser may change admins, staff and superusers")


def _group(actor, role: str) -> Group:
    grantable = roles_grantable(actor)
    if role not in grantable:
        raise AccountRefused(f"role {role!r} is not one you may give: {', '.join(sorted(grantable))}")
    return Group.objects.get(name=grantable[role])


def password_chosen_by(*, user, actor) -> None:
    """Note that `actor` chose the user's password (see PasswordChosenByOther)."""
    PasswordChosenByOther.objects.update_or_create(user=user, defaults={"chosen_by": actor})


def password_own_set(*, user, password: str) -> None:
    """The user sets their own password: from now on their signature is theirs alone."""
    with _password_replaced(user, password):
        PasswordChosenByOther.objects.filter(user=user).delete()


@contextmanager
def _password_replaced(user, password: str):
    """Check the new password against the validators, then set it in a transaction that also holds what the
    caller records of who chose it."""
    try:
        validate_password(password, user)
    except ValidationError as error:
        raise AccountRefused("password: " + " ".join(error.messages)) from None
    with transaction.atomic():
        user.set_password(password)
        user.save(update_fields=["password"])
        yield


def chosen_by_other(user) -> PasswordChosenByOther | None:
    return PasswordChosenByOther.objects.select_related("chosen_by").filter(user=user).first()


def reviewer_create(*, actor, username: str, password: str, role: str, full_name: str = ""):
    """A new active account with one role."""
    if not actor.has_perm("auth.add_user"):
        raise AccountRefused("creating accounts needs the admin role")
    group = _group(actor, role)
    User = get_user_model()
    username = (username or "").strip()
    if not username:
        raise AccountRefused("a user name is required")
    if User.objects.filter(username__iexact=username).exists():
        raise AccountRefused(f"the user name {username!r} is taken")
    first, _, last = (full_name or "").strip().partition(" ")
    user = User(username=username, first_name=first, last_name=last)
    try:
        validate_password(password, user)
    except ValidationError as error:
        raise AccountRefused("password: " + " ".join(error.messages)) from None
    with transaction.atomic():
        user.set_password(password)
        user.save()
        user.groups.add(group)
        password_chosen_by(user=user, actor=actor)
    return user


def reviewer_role_set(*, actor, user, role: str) -> None:
    """Replace the user's role (their other groups, if any, are kept)."""
    _check(actor, user)
    group = _group(actor, role)
    with transaction.atomic():
        user.groups.remove(*Group.objects.filter(name__in=ROLE_GROUPS))
        user.groups.add(group)


def reviewer_active_set(*, actor, user, active: bool) -> None:
    """Deactivate (they can no longer log in; their judgements stay theirs) or reactivate an account."""
    _check(actor, user)
    type(user).objects.filter(pk=user.pk).update(is_active=active)
    user.is_active = active


def reviewer_password_set(*, actor, user, password: str) -> None:
    _check(actor, user)
    with _password_replaced(user, password):
        password_chosen_by(user=user, actor=actor)
