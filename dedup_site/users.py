"""The Users page: admins create reviewers, set their role, deactivate them and set new passwords."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model, update_session_auth_hash
from django.contrib.auth.forms import PasswordChangeForm
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from dedup_site import accounts
from dedup_site.messages import form_errors
from dedup_site.roles import permission_required

MANAGE = "auth.change_user"


class CreateForm(forms.Form):
    username = forms.CharField(max_length=150)
    full_name = forms.CharField(max_length=300, required=False, label="Full name")
    role = forms.ChoiceField(choices=[])
    password = forms.CharField(widget=forms.PasswordInput, help_text="at least 10 characters, not a common one")

    def __init__(self, *args, actor, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["role"].choices = [(r, r) for r in accounts.roles_grantable(actor)]


def _list(request, form: CreateForm, status: int = 200):
    User = get_user_model()
    users = User.objects.prefetch_related("groups", "user_permissions").order_by("-is_active", "username")
    rows = [(u, accounts.role_of(u), accounts.may_manage(request.user, u)) for u in users]
    return render(request, "users/list.html", {
        "rows": rows, "form": form, "roles": list(accounts.roles_grantable(request.user)),
    }, status=status)


@require_GET
@permission_required(MANAGE)
def user_list(request):
    return _list(request, CreateForm(actor=request.user))


@require_POST
@permission_required(MANAGE)
def user_create(request):
    # A refused form is shown again with what was typed (all but the password), not emptied.
    form = CreateForm(request.POST, actor=request.user)
    if not form.is_valid():
        form_errors(request, form, "Not created: ")
        return _list(request, form, status=400)
    try:
        user = accounts.reviewer_create(actor=request.user, **form.cleaned_data)
    except accounts.AccountRefused as error:
        messages.error(request, f"Not created: {error}")
        return _list(request, form, status=400)
    messages.success(request, f"Created {user.get_username()} as {form.cleaned_data['role']}.")
    return redirect("users:list")


def _change(request, pk, action, done: str):
    user = get_object_or_404(get_user_model(), pk=pk)
    try:
        action(user)
    except accounts.AccountRefused as error:
        messages.error(request, f"Not changed: {error}")
    else:
        messages.success(request, done.format(user=user.get_username()))
    return redirect("users:list")


@require_POST
@permission_required(MANAGE)
def user_role(request, pk):
    role = request.POST.get("role", "")
    return _change(request, pk, lambda u: accounts.reviewer_role_set(actor=request.user, user=u, role=role),
                   f"{{user}} is now {role}.")


@require_POST
@permission_required(MANAGE)
def user_active(request, pk):
    active = request.POST.get("active") == "1"
    return _change(request, pk, lambda u: accounts.reviewer_active_set(actor=request.user, user=u, active=active),
                   "{user} can log in again." if active else "{user} is deactivated; their records stay theirs.")


@require_POST
@permission_required(MANAGE)
def user_password(request, pk):
    password = request.POST.get("password", "")
    return _change(request, pk, lambda u: accounts.reviewer_password_set(actor=request.user, user=u,
                                                                         password=password),
                   "New password set for {user}.")


@require_http_methods(["GET", "POST"])
def password_change(request):
    """Anyone logged in sets their own password (and so may sign again if an admin had chosen it)."""
    form = PasswordChangeForm(request.user, request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            accounts.password_own_set(user=request.user, password=form.cleaned_data["new_password1"])
        except accounts.AccountRefused as error:
            messages.error(request, f"Not changed: {error}")
        else:
            update_session_auth_hash(request, request.user)
            messages.success(request, "Your password is changed.")
            return redirect("password_change")
    return render(request, "users/password.html", {"form": form, "chosen": accounts.chosen_by_other(request.user)})


app_name = "users"
urlpatterns = [
    path("", user_list, name="list"),
    path("new/", user_create, name="create"),
    path("<int:pk>/role/", user_role, name="role"),
    path("<int:pk>/active/", user_active, name="active"),
    path("<int:pk>/password/", user_password, name="password"),
]
