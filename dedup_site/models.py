"""The site's own records (this module also makes Django send post_migrate to this app: roles are set up
then)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from dedup_site.guards import Guard, WriterGuard


class PasswordChosenByOther(models.Model):
    """The account's password was not set by its owner through their own Password page: an admin created the
    account or set a new password, or it was set outside the pages (Django admin, the shell). Until its owner
    replaces it in a way that person cannot (see `dedup_site.accounts`), they can neither judge nor sign: a
    record confirmed with a password someone else knows would not show that the reviewer made it."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    chosen_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    chosen_at = models.DateTimeField(auto_now=True)


class OwnPassword(models.Model):
    """The hash of the last password the owner set themselves. It survives a reset by someone else, so that
    the owner (who knows it, unlike whoever reset it) can prove who they are when they replace the reset one.
    `proven_by`: the issuer of the one-time code that made a password theirs, kept while the owner changes it
    with their own (their earlier own password, or none needed), so that a later code from this account can be
    traced (dedup_site.accounts.might_act_as); null when the proof came from the server (its `password_code`
    command, or `bootstrap` for the site's first admin)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    encoded = models.CharField(max_length=256)
    set_at = models.DateTimeField(auto_now=True)
    proven_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                  related_name="+")


USERNAME_WRITER = "dedup_site.usernames"  # the one writer of UsernameKey rows (DB_GUARDS)


class UsernameKey(models.Model):
    """Each user name and its canonical form (dedup_site.names: NFKC, casefold), unique: two accounts whose names
    differ only by case, width or composition cannot both exist. Python computes the form (SQLite's lower()
    folds ASCII only); the database holds the rest: a user row is refused unless its name has a key row
    (triggers from dedup_site.guards.sync, on every path: the ORM, QuerySet.update, SQL), and only
    dedup_site.accounts writes key rows (DB_GUARDS). Keyed by name, not by user, so the key exists before the
    user row that needs it; a key whose name no account holds any longer is removed when its form is next
    asked for."""

    username = models.CharField(max_length=150, unique=True)
    canonical = models.CharField(max_length=600, unique=True)  # NFKC may lengthen a name


class PasswordCode(models.Model):
    """A one-time code that lets the owner replace a password someone else chose, issued by a person other
    than the one who chose it (another admin on the Users page, or the server's `password_code` command) and
    handed to the owner out of band. Kept as a SHA-256 digest, never in clear."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    digest = models.CharField(max_length=64, unique=True)
    issued_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    issued_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)


class LanguagePreference(models.Model):
    """The interface language a user chose (the header's switch, or their account page); used at every log-in
    in place of the browser's."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    language = models.CharField(max_length=16)


class ApiToken(models.Model):
    """A personal token for the REST API (`Authorization: Bearer <token>`), acting with its user's role. The
    token is `<key>.<secret>`: `key` finds the row, and only the SHA-256 of the whole token is kept, compared
    in constant time (dedup_site.tokens). Revoked tokens stay, so the list shows what existed and when."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=100)
    key = models.CharField(max_length=16, unique=True)
    digest = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # Who made it: its owner (their tokens page), someone else, or nobody named: the server's command line
    # (`manage.py api_token create`), and every token made before dedup_site 0007, whose maker was not kept.
    # A token its owner did not make acts as them all the same: the owner is told (until acknowledged_at) and
    # the records it makes are set apart when they sign (review.services.signature_record).
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                   related_name="+")
    acknowledged_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    @property
    def made_by_other(self) -> bool:
        return self.created_by_id is None or self.created_by_id != self.user_id


class IdempotentResponse(models.Model):
    """The first answer to a creating API call made with an `Idempotency-Key`: the same key and body again get
    it back and create nothing; the same key with another body is a conflict (dedup_site.api)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=200)
    request_sha256 = models.CharField(max_length=64)
    status = models.PositiveSmallIntegerField()
    body = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "key"], name="unique_idempotency_key_per_user")]


class TrailEntry(models.Model):
    """One administrative act (dedup_site.trail): who (`actor`, null for the server's command line, named in
    `command`), when, what (`action`, a key of trail.ACTIONS), on what (`target_type`, `target_id` and the
    target's name then), and what it changed (`before`, `after`). Recorded by the service that acts, in its
    transaction; an act on an account, a group or a permission made elsewhere, by dedup_site.trail_signals.
    Insert-only in the database itself (DB_GUARDS), as judgements are."""

    at = models.DateTimeField()
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                              related_name="+")
    actor_name = models.CharField(max_length=150, blank=True, help_text="the actor's user name at the time")
    command = models.CharField(max_length=100, blank=True, help_text="the server's command, when no one logged in")
    action = models.CharField(max_length=40)
    target_type = models.CharField(max_length=20)
    target_id = models.BigIntegerField(null=True, blank=True)
    target_label = models.CharField(max_length=300, blank=True, help_text="the target's name at the time")
    before = models.JSONField(default=dict, blank=True)
    after = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-id"]
        default_permissions = ("view",)
        indexes = [models.Index(fields=["action", "-id"]), models.Index(fields=["target_type", "target_id", "-id"]),
                   models.Index(fields=["actor", "-id"]), models.Index(fields=["at"])]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.actor_name or self.command}: {self.action} {self.target_label}"


DB_GUARDS = [WriterGuard("dedup_site_usernamekey", writer=USERNAME_WRITER), Guard("dedup_site_trailentry")]
