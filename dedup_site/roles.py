"""The three roles, as Django groups holding permissions, and the decorator that checks them."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.core.exceptions import PermissionDenied

ADMINS, EDITORS, ARBITERS = "admins", "editors", "arbiters"

UPLOAD = "screening.upload_corpus"
START_RUN = "screening.start_run"
EXPORT = "screening.export_results"
REVIEW = "review.review_pair"
ARBITRATE = "review.arbitrate_pair"
VIEW_TRAIL = "dedup_site.view_trailentry"  # the trail of administrative acts (dedup_site.trail)

ROLE_PERMISSIONS: dict[str, list[str]] = {
    ADMINS: [UPLOAD, START_RUN, EXPORT, VIEW_TRAIL, "auth.view_user", "auth.add_user", "auth.change_user"],
    EDITORS: [REVIEW],
    ARBITERS: [REVIEW, ARBITRATE],
}


def sees_all_verdicts(user) -> bool:
    """Admins and arbiters see every reviewer's verdicts; editors are blind to others' verdicts on the pairs
    they have not judged (review.selectors)."""
    return user.has_perm(ARBITRATE) or user.has_perm(START_RUN)


def ensure_roles(**_kwargs) -> None:
    """Create the groups and give them their permissions (idempotent; runs after every migrate, and in
    `bootstrap`). A role put back as this code defines it (a change made at the shell undone, or a release's
    new permission) is trailed as `ensure_roles`'s act; a role created with its permissions is the site's
    installation, not an act on the record."""
    from django.contrib.auth.models import Group, Permission

    from dedup_site.trail import command_line, own_entries

    for name, perms in ROLE_PERMISSIONS.items():
        group, created = Group.objects.get_or_create(name=name)
        wanted = []
        for perm in perms:
            app_label, codename = perm.split(".")
            wanted.append(Permission.objects.get(content_type__app_label=app_label, codename=codename))
        with own_entries() if created else command_line("ensure_roles"):
            group.permissions.set(wanted)


def permission_required(perm: str) -> Callable:
    """403 (never a redirect loop or a stack trace) for a logged-in user without `perm`."""

    def decorator(view):
        @wraps(view)
        def wrapped(request, *args, **kwargs):
            if not request.user.has_perm(perm):
                raise PermissionDenied(f"This page needs the permission {perm}.")
            return view(request, *args, **kwargs)

        return wrapped

    return decorator
