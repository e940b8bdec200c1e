"""The trail of acts on accounts, groups and permissions made outside our services, whatever made them: the
shell (`user.groups.add(...)`, `user.set_password(...); user.save()`), Django's own commands (createsuperuser,
changepassword, loaddata), a script. Receivers of the models' signals record them with no actor and the
running command's name (trail.command_line; else trail.UNNAMED_COMMAND); inside a service's own transaction
(trail.own_entries) they record nothing, as the service records its act itself.

A password change is trailed when the database marked it as chosen by someone else (guards.password_marks):
not the owner's own Password page, nor a re-hash at log-in. A change of a group's or an account's members or
permissions is trailed in the act's own transaction (Django sends those signals inside it); a saved account's
changes are trailed just after the save, in the caller's transaction when there is one. QuerySet.update and
SQL send no signal: the Users page's deactivation, which uses update, trails itself."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from dedup_site import trail
from dedup_site.models import PasswordChosenByOther

WATCHED = ("password", "is_active", "is_staff", "is_superuser")
_WAS = "_trail_was"  # set on the instance by pre_save: its watched fields as stored, and its password mark's time
PRIVILEGES = {"is_staff": "staff", "is_superuser": "superuser"}


def _record(action: str, target, before: dict | None = None, after: dict | None = None) -> None:
    # In the caller's transaction when there is one (a failure undoes the act too), else in its own.
    with transaction.atomic(savepoint=False):
        trail.trail_record(actor=None, action=action, target=target, before=before, after=after)


def _password_mark(user_id) -> object:
    return PasswordChosenByOther.objects.filter(user_id=user_id).values_list("chosen_at", flat=True).first()


def user_before_save(sender, instance, update_fields=None, **kwargs) -> None:
    """pre_save of the user model: what a change will be compared with."""
    instance.__dict__.pop(_WAS, None)
    if trail.in_own_entries() or instance.pk is None:
        return
    if update_fields is not None and not set(update_fields) & set(WATCHED):
        return  # the log-in's last_login, a rename: nothing watched is written
    row = type(instance)._default_manager.filter(pk=instance.pk).values(*WATCHED).first()
    instance.__dict__[_WAS] = (row, _password_mark(instance.pk))


def user_saved(sender, instance, created, update_fields=None, **kwargs) -> None:
    """post_save of the user model: an account made, or its password, status or privileges changed."""
    was = instance.__dict__.pop(_WAS, None)
    if trail.in_own_entries():
        return
    if created:
        _record("user.create", instance, after={"active": instance.is_active, "staff": instance.is_staff,
                                                "superuser": instance.is_superuser})
        return
    row, mark = was or (None, None)
    if row is None:
        return
    written = [f for f in WATCHED if update_fields is None or f in update_fields]
    changed = {f for f in written if row[f] != getattr(instance, f)}
    if "password" in changed:
        now = _password_mark(instance.pk)
        if now is not None and now != mark:  # marked now: not its owner's own page, nor a re-hash
            _record("user.password", instance)
    if "is_active" in changed:
        _record("user.reactivate" if instance.is_active else "user.deactivate", instance,
                before={"active": row["is_active"]}, after={"active": instance.is_active})
    privileges = [f for f in PRIVILEGES if f in changed]
    if privileges:
        _record("user.privileges", instance, before={PRIVILEGES[f]: row[f] for f in privileges},
                after={PRIVILEGES[f]: getattr(instance, f) for f in privileges})


# --- members and permissions ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Holding:
    """One many-to-many relation of accounts or groups, as the trail names it."""

    through: type
    holder: str  # the through table's field of the holder (an account or a group), whose entry it is
    other: str  # its other field
    names: tuple[str, ...]  # the other side's name, from the through row (joined by ".")
    action: str
    key: str  # the entry's before/after field

    def holder_model(self):
        return self.through._meta.get_field(self.holder).related_model

    def state(self, holders) -> dict[int, list[str]]:
        """Each holder's names on the other side, as they stand."""
        out: dict[int, list[str]] = {pk: [] for pk in holders}
        rows = self.through._default_manager.filter(**{f"{self.holder}_id__in": list(holders)})
        for pk, *parts in rows.values_list(f"{self.holder}_id", *self.names):
            out[pk].append(".".join(parts))
        return {pk: sorted(names) for pk, names in out.items()}


def _holdings() -> dict[type, _Holding]:
    User = get_user_model()
    permission = ("permission__content_type__app_label", "permission__codename")
    return {h.through: h for h in (
        _Holding(User.groups.through, "user", "group", ("group__name",), "user.role", "groups"),
        _Holding(User.user_permissions.through, "user", "permission", permission, "user.permissions",
                 "permissions"),
        _Holding(Group.permissions.through, "group", "permission", permission, "group.change", "permissions"),
    )}


def senders() -> list[type]:
    return list(_holdings())


def _holders(holding: _Holding, instance, reverse: bool, pk_set) -> set[int]:
    if not reverse:
        return {instance.pk}
    if pk_set is not None:
        return set(pk_set)
    # A clear from the other side (group.user_set.clear()): whoever holds it now.
    return set(holding.through._default_manager.filter(**{f"{holding.other}_id": instance.pk}).values_list(
        f"{holding.holder}_id", flat=True))


def holdings_changed(sender, instance, action: str, reverse: bool, pk_set=None, **kwargs) -> None:
    """m2m_changed of an account's groups or permissions, or a group's permissions, from either side."""
    if trail.in_own_entries():
        return
    holding = _holdings().get(sender)
    if holding is None:
        return
    stash = f"_trail_{sender._meta.db_table}"
    if action.startswith("pre_"):
        holders = _holders(holding, instance, reverse, pk_set if action != "pre_clear" else None)
        instance.__dict__[stash] = holding.state(holders) if holders else {}
        return
    before = instance.__dict__.pop(stash, {})
    after = holding.state(before) if before else {}
    changed = [pk for pk in before if before[pk] != after[pk]]
    if not changed:
        return
    targets = {instance.pk: instance} if not reverse else holding.holder_model()._default_manager.in_bulk(changed)
    for pk in sorted(changed):
        _record(holding.action, targets[pk], before={holding.key: before[pk]}, after={holding.key: after[pk]})
