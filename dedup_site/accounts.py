"""Reviewer accounts and who may change them (services for the Users page and the rules Django admin
applies too). Roles cannot be escalated from inside:

- only a superuser grants superuser or staff status, or the admin role;
- nobody changes their own roles, groups or permissions (nor deactivates themselves);
- an admin creates, deactivates and sets the role of editors and arbiters only, and sets their passwords;
- a password someone else chose is marked (by the database itself: any change of the stored hash, whatever
  wrote it, but the owner's own Password page and a re-hash at log-in: dedup_site.guards.password_marks), and
  until its owner replaces it they can neither judge nor sign, nor act on the Users page (create, re-role,
  deactivate, set a password, issue a code): whoever chose it could be the one acting. The owner replaces it
  in a way its chooser cannot: with the last password they set themselves, or with a one-time code from a
  person who could not be acting for the chooser (`might_act_as`), or from the server's `password_code`
  command, handed to them out of band;
- user names are one name when their canonical forms are (dedup_site.names: NFKC, casefold), on every path:
  a UsernameKey row holds each name's form, unique, and the database refuses an account without one.
"""

from __future__ import annotations

import hashlib
import secrets
import unicodedata
from contextlib import contextmanager
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import check_password
from django.contrib.auth.models import Group
from django.contrib.auth.password_validation import validate_password
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop

from dedup_site import guards, names
from dedup_site.auth import FOREIGN_PASSWORD
from dedup_site.models import USERNAME_WRITER, OwnPassword, PasswordChosenByOther, PasswordCode, UsernameKey
from dedup_site.prepared import Prepared
from dedup_site.roles import ADMINS, ARBITERS, EDITORS
from dedup_site.trail import own_entries, trail_record

REVIEWER_ROLES = {"editor": EDITORS, "arbiter": ARBITERS}  # what an admin may hand out
ALL_ROLES = {**REVIEWER_ROLES, "admin": ADMINS}  # what a superuser may hand out
ROLE_GROUPS = set(ALL_ROLES.values())


class AccountRefused(Exception):
    """A change to an account that breaks a rule above; the message says which."""


def role_of(user) -> str:
    """The user's role as the Users page names it ('admin + arbiter' when several, '' when none)."""
    groups = {group.name for group in user.groups.all()}  # .all(): served from a prefetch when there is one
    return " + ".join(role for role, group in sorted(ALL_ROLES.items()) if group in groups)


# The roles as the pages name them (the keys stay English wherever they are stored or sent).
ROLE_NAMES = {"admin": gettext_noop("admin"), "editor": gettext_noop("editor"), "arbiter": gettext_noop("arbiter")}


def role_label(role: str) -> str:
    """A role as role_of names it (`admin + arbiter`), in the interface's language."""
    return " + ".join(gettext(ROLE_NAMES.get(part, part)) for part in role.split(" + ")) if role else ""


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


def password_saved(sender, instance, update_fields=None, **kwargs) -> None:
    """post_save of the user model: the database marked a new password (guards.password_marks) unless its
    owner set it on their own page; what this request's authentication read of the user (FOREIGN_PASSWORD) is
    no longer known, so record_refusal asks the database again."""
    if update_fields is None or "password" in update_fields:
        instance.__dict__.pop(FOREIGN_PASSWORD, None)


def password_owned(*, user) -> None:
    """The user's present password is their own (bootstrap: whoever starts the site chose the first admin's
    password and is that admin; the server's word, like its `password_code`). Every other path to an own
    password goes through password_own_set."""
    with transaction.atomic():
        PasswordChosenByOther.objects.filter(user=user).delete()
        OwnPassword.objects.update_or_create(user=user, defaults={"encoded": user.password, "proven_by": None})
    user.__dict__.pop(FOREIGN_PASSWORD, None)


def might_act_as(user) -> set[int]:
    """The ids of the accounts (other than `user`) whose holders might know the user's present password, or
    have held what made it theirs: whoever may act as them, as far as the record tells.

    - a password someone else chose: its chooser, and whoever might act as the chooser (they might have chosen
      it, logged in as the chooser); a chooser unknown (the shell, SQL) names no account;
    - an own password proven with a one-time code: the code's issuer, and whoever might act as them (they
      could have taken the code); the owner's later changes of their own keep that proof (OwnPassword.
      proven_by): knowing the present password follows from knowing the one it replaced;
    - an own password proven by the server (`password_code`, `bootstrap`): no one.

    Read from the present record, not as it stood then: it may name more accounts than could really act, never
    fewer than the record shows, so a code it refuses can always come from the server's command instead."""
    found: set[int] = set()
    todo = [user.pk]
    while todo:
        pk = todo.pop()
        chosen = list(PasswordChosenByOther.objects.filter(user_id=pk).values_list("chosen_by_id", flat=True))
        nxt = chosen[0] if chosen else OwnPassword.objects.filter(user_id=pk).values_list(
            "proven_by_id", flat=True).first()
        if nxt is not None and nxt != user.pk and nxt not in found:
            found.add(nxt)
            todo.append(nxt)
    return found


def _code_refusal(issuer, user) -> str:
    """Why a code from `issuer` (None: the server) cannot prove `user`'s new password ("" when it can). The
    issuer's own password must be their own, and no one who might act as the issuer may be someone who might
    act as the owner now (the password's chooser, or whoever might act as the chooser): else the chooser, or
    someone at their side, could take the code and use it themselves. E.g. `admin` chose the passwords of
    `admin2` and `ed1`: admin2 issues no code while the password is admin's; after admin2 set their own with
    a code from admin3, admin2's code for ed1 counts unless admin might act as admin3 too."""
    if issuer is None:
        return ""
    if issuer.pk == user.pk:
        return gettext("a confirmation code for your own account must come from another admin")
    if chosen_by_other(issuer) is not None:
        return gettext("%(issuer)s's own password was chosen by someone else, so their codes prove nothing until "
                       "they set their own") % {"issuer": issuer.get_username()}
    owner_side = might_act_as(user) | {user.pk}
    if owner_side & (might_act_as(issuer) | {issuer.pk}):
        chosen = chosen_by_other(user)
        if chosen is not None and chosen.chosen_by_id == issuer.pk:
            return gettext(
                "you chose %(user)s's password, so another admin (or the server's `manage.py password_code`) must "
                "issue their code") % {"user": user.get_username()}
        return gettext(
            "%(issuer)s cannot vouch for %(user)s: whoever chose %(user)s's password might act as %(issuer)s (who "
            "chose or proved their passwords says so); ask another admin or the server's `manage.py "
            "password_code`") % {"issuer": issuer.get_username(), "user": user.get_username()}
    return ""


def admin_refusal(actor) -> str:
    """Why `actor` may not take an admin's act now ("" when they may; None, the server's command line, may):
    whoever chose their password could be the one acting (an upload, a run, review settings, an export, a
    label set, another's leases: acts the trail would put in their name). Each service raises it as its own
    refusal."""
    if actor is None or getattr(actor, FOREIGN_PASSWORD, None) is False:
        return ""
    chosen = chosen_by_other(actor)
    if chosen is None:
        return ""
    who = chosen.chosen_by.get_username() if chosen.chosen_by else gettext("someone else")
    return gettext(
        "your password was chosen by %(who)s on %(date)s; set your own (Password, at the top of the page) before "
        "you act as an admin: whoever chose it could be the one acting") % {
        "who": who, "date": f"{chosen.chosen_at:%Y-%m-%d}"}


def refuse_foreign_actor(actor) -> None:
    """An account whose password someone else chose manages no account and issues no code: its chooser could
    be the one acting (as they could be the one judging: review.services.refuse_foreign_password)."""
    if getattr(actor, FOREIGN_PASSWORD, None) is False:
        return
    chosen = chosen_by_other(actor)
    if chosen is not None:
        who = chosen.chosen_by.get_username() if chosen.chosen_by else gettext("someone else")
        raise AccountRefused(gettext(
            "your password was chosen by %(who)s on %(date)s; set your own (Password, at the top of the page) "
            "before you manage accounts or issue codes") % {"who": who, "date": f"{chosen.chosen_at:%Y-%m-%d}"})


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
        found = PasswordCode.objects.select_related("issued_by").filter(
            user=user, digest=_code_digest(code), used_at__isnull=True, expires_at__gt=timezone.now(),
            issued_at__gte=chosen.chosen_at).first()
        if found is None:
            raise ProofRefused(gettext(
                "confirmation code: not a valid code for your account (a code is used once, lapses after "
                "%(hours)s hours, and only one issued after your password was last set by someone else counts)") % {
                "hours": settings.DEDUP_PASSWORD_CODE_HOURS}, "code")
        refusal = _code_refusal(found.issued_by, user)  # as when it was issued: the record may have changed since
        if refusal:
            raise ProofRefused(gettext("confirmation code: %(why)s") % {"why": refusal}, "code")
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
    # The one path whose new hash the database does not mark (guards.password_marks): it declares itself.
    with guards.writing(guards.OWN_PASSWORD_WRITER), _password_replaced(user, password):
        PasswordChosenByOther.objects.filter(user=user).delete()
        kept = {"encoded": user.password}
        if used is not None:  # a code's issuer is the proof from now on; otherwise the earlier one is kept
            kept["proven_by"] = used.issued_by
            PasswordCode.objects.filter(pk=used.pk).update(used_at=timezone.now())
        OwnPassword.objects.update_or_create(user=user, defaults=kept)


def password_code_issue(*, actor, user) -> str:
    """A one-time code with which `user` may replace a password someone else chose; `actor` None is the
    server's command line. Never issued by the person who chose the password, nor to oneself."""
    if actor is not None:
        refuse_foreign_actor(actor)
    chosen = chosen_by_other(user)
    if chosen is None:
        raise AccountRefused(gettext("%(user)s set their own password; they need no code") % {
            "user": user.get_username()})
    if actor is not None:
        refusal = _code_refusal(actor, user)
        if refusal:
            raise AccountRefused(refusal)
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


def _others_names(other_than):
    users = get_user_model().objects.all()
    return (users.exclude(pk=other_than.pk) if other_than is not None else users).values("username")


def username_problem(username: str, *, other_than=None) -> str:
    """Why `username` cannot be an account's name ("" when it can): one rule for the Users page, Django admin's
    add and rename, the shell (username_keyed: every save). Django's own validator and normalisation (NFKC),
    no invisible character, no mix of scripts with a look-alike letter, and no other account (`other_than`
    is the one being renamed) whose name has the same canonical form (dedup_site.names)."""
    if not username:
        return gettext("a user name is required")
    normal = unicodedata.normalize("NFKC", username)
    if normal != username:
        return gettext("the user name %(name)s is not in its normal form (NFKC): %(normal)s") % {
            "name": repr(username), "normal": repr(normal)}
    hidden = names.invisible(username)
    if hidden:
        return gettext("the user name %(name)s holds characters that cannot be seen: %(chars)s") % {
            "name": repr(username), "chars": ", ".join(hidden)}
    if names.mixes_scripts(username):
        return gettext("the user name %(name)s mixes scripts with letters that look like another's (as а in "
                       "Cyrillic and a in Latin); write it in one script") % {"name": repr(username)}
    try:
        UnicodeUsernameValidator()(username)
    except ValidationError as error:
        return " ".join(error.messages)
    twin = UsernameKey.objects.filter(canonical=names.canonical(username),
                                      username__in=_others_names(other_than)).values_list("username", flat=True)
    twin = twin.first() or get_user_model().objects.filter(username=username).exclude(
        pk=other_than.pk if other_than is not None else None).values_list("username", flat=True).first()
    if twin:
        return gettext("the user name %(name)s is taken by %(other)s (user names are told apart without case, "
                       "width or accents' composition)") % {"name": repr(username), "other": repr(twin)}
    return ""


def username_keyed(sender, instance, update_fields=None, **kwargs) -> None:
    """pre_save of the user model: a new name, or a changed one, follows username_problem's rule, and its
    canonical form is written first (UsernameKey, unique: the database refuses a user row without its key, so
    QuerySet.update and SQL cannot skip this)."""
    if update_fields is not None and "username" not in update_fields:
        return
    name = instance.get_username()
    key = names.canonical(name)
    if instance.pk is not None and UsernameKey.objects.filter(
            username=name, canonical=key, username__in=type(instance).objects.filter(pk=instance.pk).values(
                "username")).exists():
        return  # the name it has, checked when it was given
    problem = username_problem(name, other_than=instance if instance.pk else None)
    if problem:
        raise ValidationError(problem, code="invalid")
    try:
        with guards.writing(USERNAME_WRITER):
            # Keys no other account holds any longer (a rename's old name, a save that failed) give way.
            UsernameKey.objects.filter(canonical=key).exclude(username__in=_others_names(
                instance if instance.pk else None)).delete()
            UsernameKey.objects.filter(username=name).delete()
            UsernameKey.objects.create(username=name, canonical=key)
    except IntegrityError:  # a twin saved at the same moment
        raise ValidationError(gettext("the user name %(name)s is taken (user names are told apart without case, "
                                      "width or accents' composition)") % {"name": repr(name)},
                              code="unique") from None


def user_named(name: str):
    """The account whose name is `name` up to its canonical form (the commands' USERNAME), or None."""
    key = UsernameKey.objects.filter(canonical=names.canonical(name or "")).values_list("username", flat=True)
    return get_user_model().objects.filter(username__in=key).first()


def reviewer_create(*, actor, username: str, password: str, role: str, full_name: str = ""):
    """A new active account with one role."""
    if not actor.has_perm("auth.add_user"):
        raise AccountRefused(gettext("creating accounts needs the admin role"))
    refuse_foreign_actor(actor)
    group = _group(actor, role)
    User = get_user_model()
    username = User.normalize_username((username or "").strip())
    problem = username_problem(username)
    if problem:
        raise AccountRefused(problem)
    first, _, last = (full_name or "").strip().partition(" ")
    user = User(username=username, first_name=first, last_name=last)
    try:
        validate_password(password, user)
    except ValidationError as error:
        raise AccountRefused(gettext("password: %(problems)s") % {"problems": " ".join(error.messages)}) from None
    with own_entries():
        user.set_password(password)
        user.save()
        user.groups.add(group)
        password_chosen_by(user=user, actor=actor)
        trail_record(actor=actor, action="user.create", target=user, after={
            "role": role, "full_name": user.get_full_name(), "active": True})
    return user


def reviewer_role_set(*, actor, user, role: str) -> None:
    """Replace the user's role (their other groups, if any, are kept)."""
    refuse_foreign_actor(actor)
    _check(actor, user)
    group = _group(actor, role)
    before = role_of(user)
    with own_entries():
        user.groups.remove(*Group.objects.filter(name__in=ROLE_GROUPS))
        user.groups.add(group)
        trail_record(actor=actor, action="user.role", target=user, before={"role": before}, after={"role": role})


def reviewer_active_set(*, actor, user, active: bool) -> None:
    """Deactivate (they can no longer log in; their judgements stay theirs) or reactivate an account."""
    refuse_foreign_actor(actor)
    _check(actor, user)
    with own_entries():
        trail_record(actor=actor, action="user.reactivate" if active else "user.deactivate", target=user,
                     before={"active": user.is_active}, after={"active": active})
        type(user).objects.filter(pk=user.pk).update(is_active=active)
    user.is_active = active


def reviewer_password_set(*, actor, user, password: str) -> None:
    refuse_foreign_actor(actor)
    _check(actor, user)
    with own_entries(), _password_replaced(user, password):
        password_chosen_by(user=user, actor=actor)
        trail_record(actor=actor, action="user.password", target=user, after={"chosen_by": actor.get_username()})
