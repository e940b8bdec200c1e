from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied, ValidationError

from dedup_site import accounts


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
        super().save_model(request, obj, form, change)
        if not change:  # the add page sets the password its creator typed
            accounts.password_chosen_by(user=obj, actor=request.user)

    def user_change_password(self, request, id, form_url=""):
        response = super().user_change_password(request, id, form_url)
        if request.method == "POST" and response.status_code == 302 and str(request.user.pk) != str(id):
            accounts.password_chosen_by(user=self.get_object(request, id), actor=request.user)
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
