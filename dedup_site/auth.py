"""Authentication backend: Django's ModelBackend, with the reads every page makes kept compiled."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.hashers import check_password
from django.contrib.auth.models import Permission
from django.db.models import Exists, OuterRef, Q, StringAgg, Subquery, Value
from django.db.models.functions import Concat

from dedup_site import guards
from dedup_site.models import ApiToken, PasswordChosenByOther
from dedup_site.prepared import Prepared

# Roles are groups, so user and group permissions are read together: one query instead of ModelBackend's
# two, and compiled once (building the three-table join cost more than running it).
_PERMISSIONS = Prepared(lambda user_id: Permission.objects.filter(Q(user=user_id) | Q(group__user=user_id))
                        .values_list("content_type__app_label", "codename").order_by())
_ALL_PERMISSIONS = Prepared(lambda: Permission.objects.values_list("content_type__app_label", "codename")
                            .order_by(), kinds="")


def _user_fields() -> list[str]:
    return [f.attname for f in get_user_model()._meta.concrete_fields]


def names_of(holder: str, user: str = "pk") -> Subquery:
    """The user's permissions given directly (`holder` "user") or through their groups ("group__user"), as
    "app_label.codename" joined by commas (neither holds one), None without any; `user` names the outer
    query's user id (its "pk" for a user query, "user" for a row that names one)."""
    return Subquery(Permission.objects.filter(**{holder: OuterRef(user)}).order_by().values(holder).annotate(
        names=StringAgg(Concat("content_type__app_label", Value("."), "codename"), Value(","), distinct=True))
        .values("names"))


def chosen_by_other(user: str = "pk") -> Exists:
    """Whether someone else chose the user's password (dedup_site.accounts), `user` as in names_of."""
    return Exists(PasswordChosenByOther.objects.filter(user=OuterRef(user)))


def not_own_tokens(user) -> Q:
    """The user's API tokens (`user` an id, or an OuterRef) that someone else made, or the server's command
    line, and that they have neither acknowledged nor revoked: they are told of them on every page."""
    return Q(user=user, revoked_at__isnull=True, acknowledged_at__isnull=True) & ~Q(created_by=user)


# Every request reads its user by the session's id, and nearly every page asks what the user may do: the
# user, their permissions, whether their password is their own (which every judgement asks) and whether a
# token someone else made acts as them (the banner of every page) in one query, kept compiled.
_USER = Prepared(lambda user_id: get_user_model()._default_manager.filter(pk=user_id).annotate(
    own=names_of("user"), grouped=names_of("group__user"), foreign=chosen_by_other(),
    tokens=Exists(ApiToken.objects.filter(not_own_tokens(OuterRef("pk"))))).values_list(
    *_user_fields(), "own", "grouped", "foreign", "tokens"))


# Set on a user read with chosen_by_other's answer: False when no one else chose their password, so that
# dedup_site.accounts.record_refusal reads nothing more (True: it reads who did, and when).
FOREIGN_PASSWORD = "_password_chosen_by_other"  # noqa: S105 - an attribute name, not a password
FOREIGN_TOKENS = "_tokens_made_by_others"  # set likewise: whether the user is to be told of tokens (tokens.told_of)


def keep_read(user, own: str | None, grouped: str | None, foreign: bool) -> None:
    """Give the user what was read with them (names_of's two columns, chosen_by_other's answer), so that asking
    what they may do, or whether they may record, reads nothing more in this request."""
    setattr(user, FOREIGN_PASSWORD, bool(foreign))
    if not user.is_superuser:  # a superuser has every permission: get_all_permissions reads them all
        user._perm_cache = {name for names in (own, grouped) if names for name in names.split(",")}


def password_matches(user, raw_password: str) -> bool:
    """user.check_password, whose re-hash (the hasher's parameters changed since the password was set) declares
    itself to the database: the same password hashed anew is not a new one, so it is not marked as chosen by
    someone else (guards.password_marks). Declared only here, after the password was verified: any other write
    of a hash is marked. A page or service that checks a password goes through this."""

    def rehash(raw: str) -> None:
        with guards.writing(guards.REHASH_WRITER):
            user.set_password(raw)
            user._password = None  # as Django's own setter: not a change of password
            user.save(update_fields=["password"])

    return check_password(raw_password, user.password, rehash)


class RoleBackend(ModelBackend):
    """Superusers and inactive users are treated exactly as ModelBackend treats them."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        """ModelBackend.authenticate, with the password checked by password_matches."""
        User = get_user_model()
        username = kwargs.get(User.USERNAME_FIELD) if username is None else username
        if username is None or password is None:
            return None
        try:
            user = User._default_manager.get_by_natural_key(username)
        except User.DoesNotExist:
            User().set_password(password)  # as ModelBackend: a hash's time whether or not the name exists
            return None
        return user if password_matches(user, password) and self.user_can_authenticate(user) else None

    def get_user(self, user_id):
        try:
            row = _USER.first(int(user_id))
        except (TypeError, ValueError):
            return None
        if row is None:
            return None
        *fields, own, grouped, foreign, tokens = row
        user = get_user_model().from_db(_USER.using, _user_fields(), fields)
        if not self.user_can_authenticate(user):
            return None
        keep_read(user, own, grouped, foreign)
        setattr(user, FOREIGN_TOKENS, bool(tokens))
        return user

    def get_all_permissions(self, user_obj, obj=None):
        if not user_obj.is_active or user_obj.is_anonymous or obj is not None:
            return set()
        if not hasattr(user_obj, "_perm_cache"):
            rows = _ALL_PERMISSIONS.rows() if user_obj.is_superuser else _PERMISSIONS.rows(user_obj.pk)
            user_obj._perm_cache = {f"{app}.{codename}" for app, codename in rows}
        return user_obj._perm_cache
