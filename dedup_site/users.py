"""The Users page: admins create reviewers, set their role, deactivate them and set new passwords."""

from __future__ import annotations

from collections import Counter

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model, update_session_auth_hash
from django.contrib.auth.forms import PasswordChangeForm, UsernameField
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from dedup_site import accounts, tokens
from dedup_site.auth import password_matches
from dedup_site.messages import form_errors
from dedup_site.numerals import isolated
from dedup_site.roles import permission_required

MANAGE = "auth.change_user"


class CreateForm(forms.Form):
    username = UsernameField(max_length=150)  # normalised (NFKC) as Django's own forms do; the rule: accounts
    full_name = forms.CharField(max_length=300, required=False, label=_("Full name"))
    role = forms.ChoiceField(choices=[])
    password = forms.CharField(widget=forms.PasswordInput, help_text=_("at least 10 characters, not a common one"))

    def __init__(self, *args, actor, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["role"].choices = [(r, accounts.role_label(r)) for r in accounts.roles_grantable(actor)]


def _list(request, form: CreateForm, status: int = 200, issued: dict | None = None):
    User = get_user_model()
    users = User.objects.prefetch_related("groups", "user_permissions").order_by("-is_active", "username")
    foreign = dict(accounts.foreign_passwords())
    others = Counter(tokens.made_by_others().values_list("user_id", flat=True))
    rows = [(u, accounts.role_of(u), accounts.may_manage(request.user, u), foreign.get(u.pk, False), others[u.pk])
            for u in users]
    return render(request, "users/list.html", {
        "rows": rows, "form": form, "issued": issued,
        "roles": [(r, accounts.role_label(r)) for r in accounts.roles_grantable(request.user)],
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
        messages.error(request, gettext("Not created: {error}").format(error=error))
        return _list(request, form, status=400)
    messages.success(request, gettext(
        "Created {user} as {role}.").format(user=isolated(user.get_username()),
                                            role=accounts.role_label(form.cleaned_data["role"])))
    return redirect("users:list")


def _change(request, pk, action, done: str):
    user = get_object_or_404(get_user_model(), pk=pk)
    try:
        action(user)
    except accounts.AccountRefused as error:
        messages.error(request, gettext("Not changed: {error}").format(error=error))
    else:
        messages.success(request, done.format(user=isolated(user.get_username())))
    return redirect("users:list")


@require_POST
@permission_required(MANAGE)
def user_role(request, pk):
    role = request.POST.get("role", "")
    return _change(request, pk, lambda u: accounts.reviewer_role_set(actor=request.user, user=u, role=role),
                   gettext("{user} is now {role}.").replace("{role}", accounts.role_label(role)))


@require_POST
@permission_required(MANAGE)
def user_active(request, pk):
    active = request.POST.get("active") == "1"
    return _change(request, pk, lambda u: accounts.reviewer_active_set(actor=request.user, user=u, active=active),
                   gettext("{user} can log in again.") if active else
                   gettext("{user} is deactivated; their records stay theirs."))


@require_POST
@permission_required(MANAGE)
def user_code(request, pk):
    """Issue a one-time code with which the account's owner replaces a password someone else chose; shown
    once, on this page, to be handed to the owner in person or another channel."""
    user = get_object_or_404(get_user_model(), pk=pk)
    try:
        code = accounts.password_code_issue(actor=request.user, user=user)
    except accounts.AccountRefused as error:
        messages.error(request, gettext("No code issued: {error}").format(error=error))
        return redirect("users:list")
    return _list(request, CreateForm(actor=request.user), issued={
        "who": user, "code": code, "hours": settings.DEDUP_PASSWORD_CODE_HOURS})


@require_POST
@permission_required(MANAGE)
def user_password(request, pk):
    password = request.POST.get("password", "")
    return _change(request, pk, lambda u: accounts.reviewer_password_set(actor=request.user, user=u,
                                                                         password=password),
                   gettext("New password set for {user}."))


class OwnPasswordForm(PasswordChangeForm):
    """Django's password change, and, when someone else chose the present password, the owner's proof that
    they are the one replacing it (one of the two: see dedup_site.accounts)."""

    earlier_password = forms.CharField(
        required=False, strip=False, label=_("Your earlier own password"),
        widget=forms.PasswordInput(attrs={"autocomplete": "off"}),
        help_text=_("the last password you set yourself, before someone else chose this one"))
    code = forms.CharField(required=False, max_length=40, label=_("Confirmation code"),
                           widget=forms.TextInput(attrs={"autocomplete": "off"}),
                           help_text=_("from an admin other than the one who chose your password, or from the server"))

    def clean_old_password(self):
        # Django's check, through the one that lets a re-hash pass unmarked (dedup_site.auth.password_matches).
        old_password = self.cleaned_data["old_password"]
        if not password_matches(self.user, old_password):
            raise forms.ValidationError(self.error_messages["password_incorrect"], code="password_incorrect")
        return old_password


@require_http_methods(["GET", "POST"])
def password_change(request):
    """Anyone logged in sets their own password (and so may judge and sign again if someone else chose it)."""
    form = OwnPasswordForm(request.user, request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            accounts.password_own_set(user=request.user, password=data["new_password1"],
                                      earlier_password=data["earlier_password"], code=data["code"])
        except accounts.ProofRefused as error:
            form.add_error(error.field, str(error))
        except accounts.AccountRefused as error:
            messages.error(request, gettext("Not changed: {error}").format(error=error))
        else:
            update_session_auth_hash(request, request.user)
            messages.success(request, gettext("Your password is changed: it is your own."))
            return redirect("password_change")
    return render(request, "users/password.html", {"form": form, "chosen": accounts.chosen_by_other(request.user)})


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text=_("what will use it, e.g. nightly-dedup"))
    days = forms.IntegerField(min_value=0, max_value=tokens.MAX_DAYS, initial=settings.DEDUP_API_TOKEN_DAYS,
                              label=_("Good for (days)"), help_text=_("0: no expiry"))


@require_http_methods(["GET", "POST"])
def api_tokens(request):
    """Anyone logged in makes personal tokens for the REST API (each shown once) and revokes them."""
    form = TokenForm(request.POST or None)
    shown = None
    if request.method == "POST" and form.is_valid():
        try:
            token, shown = tokens.token_create(user=request.user, actor=request.user, **form.cleaned_data)
        except tokens.TokenRefused as error:
            messages.error(request, gettext("Not created: {error}").format(error=error))
        else:
            messages.success(request, gettext(
                "Token {name} created. Copy it now: it is not shown again.").format(name=token.name))
            form = TokenForm()
    return render(request, "users/tokens.html", {"form": form, "shown": shown,
                                                 "tokens": tokens.tokens_of(request.user).select_related("created_by")})


@require_POST
def api_token_revoke(request, pk):
    token = get_object_or_404(tokens.tokens_of(request.user).select_related("user"), pk=pk)
    tokens.token_revoke(actor=request.user, token=token)
    messages.success(request, gettext("Token {name} revoked.").format(name=token.name))
    return redirect("api_tokens")


@require_POST
def api_token_acknowledge(request, pk):
    """The owner knows of a token someone else made for them and keeps it: the banner about it goes."""
    token = get_object_or_404(tokens.tokens_of(request.user).select_related("created_by"), pk=pk)
    tokens.token_acknowledge(actor=request.user, token=token)
    messages.success(request, gettext(
        "Token {name} acknowledged. The records it makes are still listed apart when you sign, for you to accept "
        "or refuse.").format(name=token.name))
    return redirect("api_tokens")


app_name = "users"
urlpatterns = [
    path("", user_list, name="list"),
    path("new/", user_create, name="create"),
    path("<int:pk>/role/", user_role, name="role"),
    path("<int:pk>/active/", user_active, name="active"),
    path("<int:pk>/password/", user_password, name="password"),
    path("<int:pk>/code/", user_code, name="code"),
]
