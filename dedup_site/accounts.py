"""Reviewer accounts and who may change them (services for the Users page and the rules Django admin
applies too). Roles cannot be escalated from inside:

- only a superuser grants superuser or staff status, or the admin role;
- nobody changes their own roles, groups or permissions (nor deactivates themselves);
- an admin creates, deactivates and sets the role of editors and arbiters only, and sets their passwords;
- a password someone else chose (on the Users page, in Django admin, at the shell: any save of a new password
  outside the owner's own Password page) is marked, and until its owner replaces it they can neither judge
  nor sign. The owner replaces it in a way its chooser cannot: with the last password they set themselves, or
  with a one-time code issued by a person other than the chooser (another admin, or the server's
  `password_code` command) and handed to them out of band.
"""

from __future__ import annotations

import hashlib
import secrets
from contextlib import contextmanager
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import check_password
from django.contrib.auth.models import Group
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from dedup_site.auth import FOREIGN_PASSWORD
from dedup_site.models import OwnPassword, PasswordChosenByOther, PasswordCode
from dedup_site.prepared import Prepared
from dedup_site.roles import ADMINS, ARBITERS, EDITORS
from dedup_site.trail import trail_record

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
        raise AccountRefused(gettext(
            "you cannot change your own account's role, status or permissions; ask another admin"))
    if not may_manage(actor, user):
        raise AccountRefused(gettext(
            "%(user)s is not an editor or arbiter account you may manage; only a superuser may change admins, "
            "staff and superusers") % {"user": user.get_username()})


def _group(actor, role: str) -> Group:
    grantable = roles_grantable(actor)
    if role not in grantable:
        raise AccountRefused(gettext("role %(role)s is not one you may give: %(roles)s") % {
            "role": repr(role), "roles": ", ".join(sorted(grantable))})
    return Group.objects.get(name=grantable[role])


def password_chosen_by(*, user, actor) -> None:
    """Note that `actor` chose the user's password (see PasswordChosenByOther)."""
    PasswordChosenByOther.objects.update_or_create(user=user, defaults={"chosen_by": actor})
    setattr(user, FOREIGN_PASSWORD, True)  # this instance, if read by a request's authentication, knows at once


def password_saved(sender, instance, **kwargs) -> None:
    """post_save of the user model: a new password saved by any path but the owner's own (set_password, then
    save) is someone else's choice until its owner replaces it. Callers that know who chose it say so after
    (password_chosen_by). A re-hash at log-in (a new hasher's parameters) saves with `_password` cleared, so
    it is not a new password."""
    if getattr(instance, "_password", None) is not None and not getattr(instance, "_own_password", False):
        PasswordChosenByOther.objects.update_or_create(user=instance, defaults={"chosen_by": None})
        setattr(instance, FOREIGN_PASSWORD, True)


def password_owned(*, user) -> None:
    """The user's present password is their own (bootstrap: whoever starts the site chose the first admin's
    password and is that admin). Every other path to an own password goes through password_own_set."""
    with transaction.atomic():
        PasswordChosenByOther.objects.filter(user=user).delete()
        OwnPassword.objects.update_or_create(user=user, defaults={"encoded": user.password})


class ProofRefused(AccountRefused):
    """The owner's proof that they, not the password's chooser, are replacing it did not hold; `field` names
    the form field at fault."""

    def __init__(self, message: str, field: str):
        super().__init__(message)
        self.field = field


def _code_digest(code: str) -> str:
    return hashlib.sha256("".join((code or "").split()).replace("-", "").upper().encode()).hexdigest()


def _proven(user, chosen: PasswordChosenByOther, earlier_password: str, code: str) -> PasswordCode | None:
    """Check the owner's proof; the code to mark used (None when the earlier own password was the proof)."""
    who = chosen.chosen_by.get_username() if chosen.chosen_by else gettext("someone else")
    if earlier_password:
        own = OwnPassword.objects.filter(user=user).first()
        if own is None or not check_password(earlier_password, own.encoded):
            raise ProofRefused(gettext("earlier own password: it is not the last password you set yourself"),
                               "earlier_password")
        return None
    if code:
        found = PasswordCode.objects.filter(
            user=user, digest=_code_digest(code), used_at__isnull=True, expires_at__gt=timezone.now(),
            issued_at__gte=chosen.chosen_at).first()
        if found is None:
            raise ProofRefused(gettext(
                "confirmation code: not a valid code for your account (a code is used once, lapses after "
                "%(hours)s hours, and only one issued after your password was last set by someone else counts)") % {
                "hours": settings.DEDUP_PASSWORD_CODE_HOURS}, "code")
        return found
    raise ProofRefused(gettext(
        "your password was chosen by %(who)s: to replace it, give the last password you set yourself, or a "
        "confirmation code from an admin other than %(who)s (or from the server's `manage.py password_code "
        "%(user)s`)") % {"who": who, "user": user.get_username()}, "code")


def password_own_set(*, user, password: str, earlier_password: str = "", code: str = "") -> None:
    """The user sets their own password: from now on their judgements and signature are theirs alone. When
    someone else chose the present one, the owner proves who they are first (see the module's docstring)."""
    chosen = chosen_by_other(user)
    used = _proven(user, chosen, earlier_password, code) if chosen is not None else None
    user._own_password = True
    try:
        with _password_replaced(user, password):
            PasswordChosenByOther.objects.filter(user=user).delete()
            OwnPassword.objects.update_or_create(user=user, defaults={"encoded": user.password})
            if used is not None:
                PasswordCode.objects.filter(pk=used.pk).update(used_at=timezone.now())
    finally:
        user._own_password = False


def password_code_issue(*, actor, user) -> str:
    """A one-time code with which `user` may replace a password someone else chose; `actor` None is the
    server's command line. Never issued by the person who chose the password, nor to oneself."""
    chosen = chosen_by_other(user)
    if chosen is None:
        raise AccountRefused(gettext("%(user)s set their own password; they need no code") % {
            "user": user.get_username()})
    if actor is not None:
        if actor.pk == user.pk:
            raise AccountRefused(gettext("a confirmation code for your own account must come from another admin"))
        if chosen.chosen_by_id == actor.pk:
            raise AccountRefused(gettext(
                "you chose %(user)s's password, so another admin (or the server's `manage.py password_code`) must "
                "issue their code") % {"user": user.get_username()})
        if not may_manage(actor, user):
            raise AccountRefused(gettext("%(user)s is not an account you may manage") % {"user": user.get_username()})
    code = secrets.token_hex(6).upper()
    with transaction.atomic():
        issued = PasswordCode.objects.create(user=user, digest=_code_digest(code), issued_by=actor, expires_at=
                                             timezone.now() + timedelta(hours=settings.DEDUP_PASSWORD_CODE_HOURS))
        trail_record(actor=actor, action="user.code", target=user, after={"expires_at": issued.expires_at})
    return "-".join(code[i:i + 4] for i in range(0, len(code), 4))


@contextmanager
def _password_replaced(user, password: str):
    """Check the new password against the validators, then set it in a transaction that also holds what the
    caller records of who chose it."""
    try:
        validate_password(password, user)
    except ValidationError as error:
        raise AccountRefused(gettext("password: %(problems)s") % {"problems": " ".join(error.messages)}) from None
    with transaction.atomic():
        user.set_password(password)
        user.save(update_fields=["password"])
        yield


def foreign_passwords() -> list[tuple[int, str]]:
    """(user id, who chose it) for every account whose password someone else chose."""
    return [(pk, name or "someone else") for pk, name in
            PasswordChosenByOther.objects.values_list("user_id", "chosen_by__username")]


# Asked by every judgement, arbitration and signature (record_refusal): kept compiled (dedup_site.prepared).
_CHOSEN_BY_OTHER = Prepared(lambda user_id: PasswordChosenByOther.objects.select_related("chosen_by")
                            .filter(user_id=user_id).order_by("pk")[:1])


def chosen_by_other(user) -> PasswordChosenByOther | None:
    return _CHOSEN_BY_OTHER.one(user.pk)


def record_refusal(user) -> str:
    """Why the user may not judge, arbitrate or sign now ("" when they may): their password is someone else's
    choice. A user as this request's authentication read them knows already when no one else chose it
    (dedup_site.auth.FOREIGN_PASSWORD, as of the request's start): then nothing is read."""
    if getattr(user, FOREIGN_PASSWORD, None) is False:
        return ""
    chosen = chosen_by_other(user)
    if chosen is None:
        return ""
    who = chosen.chosen_by.get_username() if chosen.chosen_by else gettext("someone else")
    return gettext(
        "your password was chosen by %(who)s on %(date)s; set your own (Password, at the top of the page) before "
        "you judge or sign, so that only you can record as you") % {"who": who, "date": f"{chosen.chosen_at:%Y-%m-%d}"}


def username_taken(username: str, *, other_than=None) -> bool:
    """Whether another account has this user name in any case (a database index on lower(username) holds the
    same rule for every path: dedup_site 0002)."""
    users = get_user_model().objects.filter(username__iexact=(username or "").strip())
    return (users.exclude(pk=other_than.pk) if other_than is not None else users).exists()


def reviewer_create(*, actor, username: str, password: str, role: str, full_name: str = ""):
    """A new active account with one role."""
    if not actor.has_perm("auth.add_user"):
        raise AccountRefused(gettext("creating accounts needs the admin role"))
    group = _group(actor, role)
    User = get_user_model()
    username = (username or "").strip()
    if not username:
        raise AccountRefused(gettext("a user name is required"))
    if username_taken(username):
        raise AccountRefused(gettext("the user name %(name)s is taken (user names are told apart without case)") % {
            "name": repr(username)})
    first, _, last = (full_name or "").strip().partition(" ")
    user = User(username=username, first_name=first, last_name=last)
    try:
        validate_password(password, user)
    except ValidationError as error:
        raise AccountRefused(gettext("password: %(problems)s") % {"problems": " ".join(error.messages)}) from None
    with transaction.atomic():
        user.set_password(password)
        user.save()
        user.groups.add(group)
        password_chosen_by(user=user, actor=actor)
        trail_record(actor=actor, action="user.create", target=user, after={
            "role": role, "full_name": user.get_full_name(), "active": True})
    return user


def reviewer_role_set(*, actor, user, role: str) -> None:
    """Replace the user's role (their other groups, if any, are kept)."""
    _check(actor, user)
    group = _group(actor, role)
    before = role_of(user)
    with transaction.atomic():
        user.groups.remove(*Group.objects.filter(name__in=ROLE_GROUPS))
        user.groups.add(group)
        trail_record(actor=actor, action="user.role", target=user, before={"role": before}, after={"role": role})


def reviewer_active_set(*, actor, user, active: bool) -> None:
    """Deactivate (they can no longer log in; their judgements stay theirs) or reactivate an account."""
    _check(actor, user)
    with transaction.atomic():
        trail_record(actor=actor, action="user.reactivate" if active else "user.deactivate", target=user,
                     before={"active": user.is_active}, after={"active": active})
        type(user).objects.filter(pk=user.pk).update(is_active=active)
    user.is_active = active


def reviewer_password_set(*, actor, user, password: str) -> None:
    _check(actor, user)
    with _password_replaced(user, password):
        password_chosen_by(user=user, actor=actor)
        trail_record(actor=actor, action="user.password", target=user, after={"chosen_by": actor.get_username()})
