from functools import cache

from django.conf import settings
from django.urls import get_script_prefix, get_urlconf
from django.utils.functional import SimpleLazyObject

from dedup_site import accounts, tokens
from dedup_site import roles as role_perms
from dedup_site.links import link

# The top bar's links and the review pages' own: reversed once per script prefix and URLconf, not a dozen
# reverse() calls on every page.
NAV = {"corpora": "screening:corpus_list", "review": "review:queue", "arbitration": "review:arbitration_queue",
       "sign": "review:sign", "users": "users:list", "admin": "admin:index", "logout": "logout",
       "password": "password_change", "tokens": "api_tokens", "review_next": "review:next",
       "review_undo": "review:undo", "trail": "trail:list"}


@cache
def _nav(prefix: str, urlconf: str) -> dict[str, str]:
    return {key: link(name) for key, name in NAV.items()}


def roles(request):
    """Which actions the current user may take, for showing only the buttons that will work, and the links
    of the top bar."""
    nav = {"nav": _nav(get_script_prefix(), get_urlconf() or settings.ROOT_URLCONF)}
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return nav
    return {
        **nav,
        "can_upload": user.has_perm(role_perms.UPLOAD),
        "can_start_run": user.has_perm(role_perms.START_RUN),
        "can_review": user.has_perm(role_perms.REVIEW),
        "can_arbitrate": user.has_perm(role_perms.ARBITRATE),
        "can_export": user.has_perm(role_perms.EXPORT),
        "can_manage_users": user.has_perm("auth.change_user"),
        "can_view_trail": user.has_perm(role_perms.VIEW_TRAIL),
        # A token someone else made acts as this user: told on every page until they acknowledge or revoke it.
        "tokens_made_by_others": SimpleLazyObject(lambda: tokens.told_of(user)),
        # Read only by the pages that show it (the review pages' banner): why this user may not record now.
        "record_refusal": SimpleLazyObject(lambda: accounts.record_refusal(user)),
    }
