"""Review records. Judgements, arbitrations and reviewer signatures are insert-only, and a sheet export is
fixed once complete. Two layers hold this: the models and their querysets refuse update and delete, and
the database itself refuses UPDATE, DELETE and (PostgreSQL) TRUNCATE through the triggers of
`dedup_site.guards`, installed by migration review 0006 on SQLite and PostgreSQL alike (see DB_GUARDS)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_noop

from dedup_site.guards import Guard, WriterGuard
from screening.models import BackgroundWork, CandidatePair, JobStatus, ScreeningRun
from screening.vocabulary import FINAL_VERDICTS, PairState, Verdict


class ReviewPermissions(models.Model):
    """Holds the review permissions (no table)."""

    class Meta:
        managed = False
        default_permissions = ()
        permissions = [
            ("review_pair", "Can review candidate pairs"),
            ("arbitrate_pair", "Can arbitrate disagreements"),
        ]




class Retained(models.TextChoices):
    LEFT = "left"
    RIGHT = "right"
    BOTH = "both"


class InsertOnlyQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise PermissionError(f"{self.model.__name__} rows are insert-only")

    def delete(self):
        raise PermissionError(f"{self.model.__name__} rows are insert-only")

    def bulk_update(self, *args, **kwargs):
        raise PermissionError(f"{self.model.__name__} rows are insert-only")


class InsertOnly(models.Model):
    objects = InsertOnlyQuerySet.as_manager()

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        if self.pk is not None or kwargs.get("force_update"):
            raise PermissionError(f"{type(self).__name__} rows are insert-only")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise PermissionError(f"{type(self).__name__} rows are insert-only")


class MadeWith(models.Model):
    """How a record was made: the API token that made it (null: in a session; also every record made before
    review 0013, when this was not kept) and who made that token (null with a token: the server's command line),
    copied from the token so that the record itself says when it was made with a token its maker did not make."""

    api_token = models.ForeignKey("dedup_site.ApiToken", null=True, blank=True, on_delete=models.PROTECT,
                                  related_name="+")
    token_created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                         related_name="+")

    class Meta:
        abstract = True

    def by_others_token(self, maker_id: int) -> bool:
        """Made with a token that `maker_id` (the record's reviewer or arbiter) did not make themselves."""
        return self.api_token_id is not None and self.token_created_by_id != maker_id


class ReviewAction(MadeWith, InsertOnly):
    """One decision a reviewer took for many pairs at once: a cluster's (its retained version, its verdict,
    the members split off) or a filtered set's (bulk, after a preview); or the undo of such a decision. Each
    pair still gets its own judgement, pointing here. Insert-only like judgements (guard: review 0009)."""

    class Kind(models.TextChoices):
        CLUSTER = "cluster"
        BULK = "bulk"
        UNDO = "undo"

    kind = models.CharField(max_length=8, choices=Kind.choices)
    run = models.ForeignKey(ScreeningRun, on_delete=models.PROTECT, related_name="+")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    cluster = models.IntegerField(null=True, blank=True, help_text="the cluster decided (kind cluster)")
    verdict = models.CharField(max_length=24, blank=True, help_text="the verdict given to the set or the family")
    reason = models.TextField(blank=True)
    selection = models.JSONField(default=dict, blank=True, help_text="what was decided: the bulk filters, or the "
                                                                     "cluster's retained document and splits")
    judgements = models.IntegerField(default=0, help_text="how many judgements it recorded")
    undoes = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["reviewer", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.kind} action {self.pk} by {self.reviewer} on run {self.run_id}"


class Judgement(MadeWith, InsertOnly):
    """One reviewer's verdict on one pair. Never updated or deleted (guard: review 0006); a change of mind,
    or an undo, is a newer judgement. `action` names the cluster or bulk decision it was recorded by."""

    pair = models.ForeignKey(CandidatePair, on_delete=models.PROTECT, related_name="judgements")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="judgements")
    verdict = models.CharField(max_length=24)  # a Verdict, or WITHDRAWN
    reason = models.TextField()
    retained = models.CharField(max_length=8, choices=Retained.choices, blank=True)
    related_source = models.CharField(max_length=200, blank=True)
    supersedes = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    action = models.ForeignKey(ReviewAction, null=True, blank=True, on_delete=models.PROTECT,
                               related_name="judgement_rows")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["reviewer", "-created_at"]), models.Index(fields=["pair", "reviewer"])]

    def __str__(self) -> str:
        return f"{self.reviewer} on pair {self.pair_id}: {self.verdict}"


class Arbitration(MadeWith, InsertOnly):
    """An arbiter's final decision on a pair. Never updated or deleted (guard: review 0006); the judgements
    it settles stay as they were."""

    pair = models.ForeignKey(CandidatePair, on_delete=models.PROTECT, related_name="arbitrations")
    arbiter = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="arbitrations")
    verdict = models.CharField(max_length=24, choices=[(v.value, v.label) for v in FINAL_VERDICTS])
    reason = models.TextField()
    retained = models.CharField(max_length=8, choices=Retained.choices, blank=True)
    related_source = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # The arbiter had judged the pair themselves, which the corpus's review policy allowed (one-person teams).
    self_arbitrated = models.BooleanField(default=False)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.arbiter} settled pair {self.pair_id}: {self.verdict}"


class Referral(InsertOnly):
    """A pair sent to arbitration by its cluster's settled verdicts (A=B, B=C, yet A≠C): once sent, only an
    arbiter settles it, whatever its reviewers record afterwards (review.services._derive). Never updated or
    deleted (DB_GUARDS): the pair's state is derived from it as from its judgements."""

    pair = models.ForeignKey(CandidatePair, on_delete=models.PROTECT, related_name="referrals")
    reason = models.CharField(max_length=300)  # the pair's flag, as the cluster check wrote it
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["pair", "created_at"])]

    def __str__(self) -> str:
        return f"pair {self.pair_id} sent to arbitration: {self.reason}"


class ReviewPolicy(models.Model):
    """How a corpus is reviewed, set by its admins. A corpus without a row takes the defaults."""

    corpus = models.OneToOneField("screening.Corpus", on_delete=models.PROTECT, related_name="review_policy")
    allow_self_arbitration = models.BooleanField(
        default=False, help_text="an arbiter may settle a disagreement they took part in (for one-person teams); "
                                 "such an arbitration is marked self-arbitrated")
    preset_reasons = models.JSONField(
        default=dict, blank=True, help_text="{verdict: reason} recorded when a reviewer gives no reason of their own; "
                                            "a verdict missing here takes PRESET_REASONS'")
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"review policy of {self.corpus}"


# The reason a verdict records when the reviewer types none (a corpus's admins can change them): a decision
# then takes two keys, the verdict and Enter. An empty preset makes a typed reason required for that verdict.
# These defaults are offered and recorded in the reviewer's language; a corpus's own presets as they were typed.
PRESET_REASONS = {
    Verdict.MERGE_ENTRY.value: gettext_noop("the same document: a copy to merge"),
    Verdict.VALID_REVISION.value: gettext_noop("a valid revision of the same document: a detail changed"),
    Verdict.PUBLIC_QUOTE.value: gettext_noop("one quotes the other: a public quotation, both kept"),
    Verdict.KEEP_BOTH.value: gettext_noop("different documents: both kept"),
    Verdict.ARBITRATION.value: "",
}


class Lease(models.Model):
    """A pair handed to a reviewer by "next" (or opened by them) and held for a short time, so that no
    more reviewers hold a pair than it needs judgements. Released on save or skip; lapses at expires_at."""

    pair = models.ForeignKey(CandidatePair, on_delete=models.CASCADE, related_name="+")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    expires_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["pair", "reviewer"], name="one_lease_per_reviewer")]
        indexes = [models.Index(fields=["pair", "expires_at"])]


class Skip(models.Model):
    """A reviewer skipped a pair: it goes to the back of their own queue (the newest skip last)."""

    pair = models.ForeignKey(CandidatePair, on_delete=models.CASCADE, related_name="+")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    skipped_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["pair", "reviewer"], name="one_skip_per_reviewer")]


class CurrentVerdict(models.Model):
    """Derived, rebuildable: each reviewer's newest judgement per pair, for fast queues and counts. Written by
    review.services alone (the database refuses any other writer: DB_GUARDS)."""

    pair = models.ForeignKey(CandidatePair, on_delete=models.CASCADE, related_name="current_verdicts")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    judgement = models.ForeignKey(Judgement, on_delete=models.PROTECT, related_name="+")
    verdict = models.CharField(max_length=24)
    run_id = models.BigIntegerField(db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["pair", "reviewer"], name="one_current_verdict")]
        indexes = [models.Index(fields=["reviewer", "run_id"])]


class ReviewerSignature(MadeWith, InsertOnly):
    """A reviewer's signature, confirmed with their password, over every judgement and arbitration they recorded
    up to `signed_at`, except those made with an API token someone else made (or the server's command line):
    of these it covers only the ones in `accepted`, which the reviewer accepted one by one. Never updated or
    deleted (guard: review 0006)."""

    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="signatures")
    full_name = models.CharField(max_length=300)
    meaning = models.TextField()
    signed_at = models.DateTimeField(auto_now_add=True)
    records = models.IntegerField(help_text="judgements and arbitrations covered when signed")
    # Records made with a token someone else made, as {"judgements": [ids], "arbitrations": [ids]}: those the
    # reviewer accepted as theirs when signing (covered), and those listed to them that they did not (refused:
    # unsigned still, and a sheet says refused). One the page did not list (beyond its length, or made after it
    # was read) is in neither: unsigned, and listed at the next signing.
    accepted = models.JSONField(default=dict, blank=True)
    refused = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["signed_at", "id"]


class SheetExport(BackgroundWork, models.Model):
    """One export of a run's review sheet. Never deleted; once complete, its fields never change (guard:
    review 0006) and its files are read-only."""

    Status = JobStatus

    run = models.ForeignKey("screening.ScreeningRun", on_delete=models.PROTECT, related_name="sheet_exports")
    exported_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    selection = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    row_count = models.IntegerField(default=0)
    csv_sha256 = models.CharField(max_length=64, blank=True)
    manifest = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    job_id = models.CharField(max_length=64, blank=True)
    # Where a complete export's CSV and manifest are in the exports bucket (the key prefix of the attempt that
    # completed: objects are written once, so each attempt has its own); empty for the local exports folder.
    bucket_prefix = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]


DERIVED_WRITER = "review.services"  # the one writer of the derived review state (see DB_GUARDS)

DB_GUARDS = [
    Guard("review_judgement"),
    Guard("review_reviewaction"),
    Guard("review_arbitration"),
    Guard("review_referral"),
    Guard("review_reviewersignature"),
    Guard("review_sheetexport", rule="fixed once complete", frozen_when="OLD.status = 'complete'"),
    # Derived from the records above, by review.services alone (review 0010): a pair's review state (stored on
    # screening's row, so one index pages a queue) and each reviewer's current verdict.
    WriterGuard("review_currentverdict", writer=DERIVED_WRITER),
    WriterGuard("screening_candidatepair", writer=DERIVED_WRITER, columns=("status", "final_verdict", "flag"),
                insert_when=f"NEW.status <> '{PairState.PENDING}' OR NEW.final_verdict <> '' OR NEW.flag <> ''"),
]
