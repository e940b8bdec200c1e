"""The site's own records (this module also makes Django send post_migrate to this app: roles are set up
then)."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class PasswordChosenByOther(models.Model):
    """The account's password was chosen by someone else (an admin creating the account or setting a new
    password). Until its owner sets their own, they cannot sign: a signature confirmed with a password an
    admin knows would not show that the reviewer signed."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    chosen_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    chosen_at = models.DateTimeField(auto_now=True)
