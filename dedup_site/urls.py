from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.urls import include, path
from django.views.generic import RedirectView

from dedup_site import languages, users

urlpatterns = [
    # The log-in page offers the switch too.
    path("i18n/setlang/", login_not_required(languages.language_switch), name="set_language"),
    path("accounts/login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/password/", users.password_change, name="password_change"),
    path("accounts/tokens/", users.api_tokens, name="api_tokens"),
    path("accounts/tokens/<int:pk>/revoke/", users.api_token_revoke, name="api_token_revoke"),
    path("accounts/tokens/<int:pk>/acknowledge/", users.api_token_acknowledge, name="api_token_acknowledge"),
    path("trail/", include("dedup_site.trail_page")),
    # Django admin's own password page would change a password by a path the record cannot tell from someone
    # else's: one's own password is changed on the site's Password page only.
    path("admin/password_change/", RedirectView.as_view(pattern_name="password_change")),
    path("admin/", admin.site.urls),
    path("users/", include("dedup_site.users")),
    path("review/", include("review.urls")),
    path("api/v1/", include("review.api.urls")),
    path("", include("screening.urls")),
]
