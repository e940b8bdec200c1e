from dedup_site import roles as role_perms


def roles(request):
    """Which actions the current user may take, for showing only the buttons that will work."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {
        "can_upload": user.has_perm(role_perms.UPLOAD),
        "can_start_run": user.has_perm(role_perms.START_RUN),
        "can_review": user.has_perm(role_perms.REVIEW),
        "can_arbitrate": user.has_perm(role_perms.ARBITRATE),
        "can_export": user.has_perm(role_perms.EXPORT),
        "can_manage_users": user.has_perm("auth.change_user"),
    }
