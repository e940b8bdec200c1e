from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied, ValidationError

from dedup_site import accounts
from dedup_site.trail import own_entries, trail_record


class ReadOnlyAdmin(admin.ModelAdmin):
    """Evidence (sources, documents, judgements, arbitrations) can be read in the admin, never changed."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


User = get_user_model()
admin.site.unregister(User)
admin.site.unregister(Group)


def _permissions(holder) -> list[str]:
    return sorted(f"{app}.{codename}" for app, codename in holder.permissions.values_list(
        "content_type__app_label", "codename")) if isinstance(holder, Group) else sorted(
        f"{app}.{codename}" for app, codename in holder.user_permissions.values_list(
            "content_type__app_label", "codename"))


def _changed(before: dict, after: dict) -> tuple[dict, dict]:
    keys = [k for k in after if before.get(k) != after[k]]
    return {k: before[k] for k in keys if k in before}, {k: after[k] for k in keys}


class _OneRuleUsername:
    """User names follow one rule on every path (dedup_site.accounts.username_problem; the database holds their
    canonical forms unique: UsernameKey), so that the dashboard and the sheets never name two people alike."""

    def clean_username(self):
        username = self.cleaned_data.get("username")
        if self.instance.pk and username == type(self.instance).objects.filter(pk=self.instance.pk).values_list(
                "username", flat=True).first():
            return username  # the name it has (one given before this rule keeps it while other fields change)
        problem = accounts.username_problem(username, other_than=self.instance if self.instance.pk else None)
        if username and problem:
            raise ValidationError(problem, code="invalid")
        return username


class RenameForm(_OneRuleUsername, UserChangeForm):
    pass


class AddForm(_OneRuleUsername, AdminUserCreationForm):
    pass


def _password_chosen_by_other(user) -> bool:
    try:
        accounts.refuse_foreign_actor(user)
    except accounts.AccountRefused:
        return True
    return False


@admin.register(User)
class RoleSafeUserAdmin(UserAdmin):
    """Django's user admin under the rules of `dedup_site.accounts`: a non-superuser sees and changes only
    the editors and arbiters they may manage, and only their role groups; nobody edits their own groups,
    permissions or status; accounts are deactivated, never deleted (judgements point at them)."""

    form = RenameForm
    add_form = AddForm
    ALWAYS_LOCKED = ("last_login", "date_joined")
    PRIVILEGES = ("is_superuser", "is_staff", "user_permissions")
    TRAILED = ("username", "first_name", "last_name", "email", "is_active", "is_staff", "is_superuser")

    def _state(self, user) -> dict:
        """What the trail keeps of an account before and after a change here (never its password)."""
        return {**{f: getattr(user, f) for f in self.TRAILED},
                "groups": sorted(user.groups.values_list("name", flat=True)), "permissions": _permissions(user)}

    def get_queryset(self, request):
        users = super().get_queryset(request)
        if request.user.is_superuser:
            return users
        return users.filter(pk__in=accounts.manageable(users, request.user).values("pk")) | users.filter(
            pk=request.user.pk)

    def get_readonly_fields(self, request, obj=None):
        locked = list(self.ALWAYS_LOCKED)
        if obj is not None and obj.pk == request.user.pk:
            locked += [*self.PRIVILEGES, "groups", "is_active"]
        elif not request.user.is_superuser:
            locked += list(self.PRIVILEGES)
        return locked

    def has_add_permission(self, request):
        # Whoever chose this admin's password could be the one at the keyboard (accounts.refuse_foreign_actor).
        return not _password_chosen_by_other(request.user) and super().has_add_permission(request)

    def has_change_permission(self, request, obj=None):
        if obj is not None and obj.pk != request.user.pk and not accounts.may_manage(request.user, obj):
            return False
        if _password_chosen_by_other(request.user):
            return False
        return super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return False

    def save_model(self, request, obj, form, change):
        # The state before, for the trail entry save_related records once the groups are saved too.
        obj._trail_before = self._state(User.objects.get(pk=obj.pk)) if change else {}
        super().save_model(request, obj, form, change)
        if not change:  # the add page sets the password its creator typed
            accounts.password_chosen_by(user=obj, actor=request.user)

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        with own_entries():  # save_related records the change's one entry
            return super().changeform_view(request, object_id, form_url, extra_context)

    def user_change_password(self, request, id, form_url=""):
        with own_entries():  # the new password and its trail entry together
            response = super().user_change_password(request, id, form_url)
            if request.method == "POST" and response.status_code == 302 and str(request.user.pk) != str(id):
                user = self.get_object(request, id)
                accounts.password_chosen_by(user=user, actor=request.user)
                trail_record(actor=request.user, action="user.password", target=user,
                             after={"chosen_by": request.user.get_username(), "in": "Django admin"})
        return response

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        if db_field.name == "groups" and not request.user.is_superuser:
            kwargs["queryset"] = Group.objects.filter(name__in=accounts.REVIEWER_ROLES.values())
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def save_related(self, request, form, formsets, change):
        # Read-only fields are not in the form, but a forged POST may still name groups: check what is saved.
        if "groups" in form.cleaned_data and not request.user.is_superuser:
            allowed = set(accounts.REVIEWER_ROLES.values())
            if {g.name for g in form.cleaned_data["groups"]} - allowed:
                raise PermissionDenied("only a superuser may give that role")
        super().save_related(request, form, formsets, change)
        before, after = _changed(getattr(form.instance, "_trail_before", {}), self._state(form.instance))
        if after or not change:  # in the admin's own transaction (changeform_view is atomic)
            trail_record(actor=request.user, action="user.change" if change else "user.create", target=form.instance,
                         before=before, after={**after, "in": "Django admin"})


@admin.register(Group)
class TrailedGroupAdmin(GroupAdmin):
    """Django's group admin; a change of a group's permissions (a role's, when the group is one) is trailed.
    An admin whose password someone else chose changes no group (accounts.admin_refusal)."""

    def has_add_permission(self, request):
        return not _password_chosen_by_other(request.user) and super().has_add_permission(request)

    def has_change_permission(self, request, obj=None):
        return not _password_chosen_by_other(request.user) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return not _password_chosen_by_other(request.user) and super().has_delete_permission(request, obj)

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        with own_entries():  # save_related records the change's one entry
            return super().changeform_view(request, object_id, form_url, extra_context)

    def save_model(self, request, obj, form, change):
        obj._trail_before = {"name": Group.objects.get(pk=obj.pk).name, "permissions": _permissions(
            Group.objects.get(pk=obj.pk))} if change else {}
        super().save_model(request, obj, form, change)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        group = form.instance
        before, after = _changed(getattr(group, "_trail_before", {}), {"name": group.name,
                                                                       "permissions": _permissions(group)})
        if after:
            trail_record(actor=request.user, action="group.change", target=group, before=before,
                         after={**after, "in": "Django admin"})
