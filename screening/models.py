from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models.functions import Lower
from django.urls import reverse

from dedup_site.guards import Guard
from dedup_site.links import link
from screening.vocabulary import PairState, RunState

CORPUS_NAME_PATTERN = r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z"  # Python's and PostgreSQL's regular expressions alike


class Corpus(models.Model):
    """A corpus's name is one name up to case (dedup_site.names.canonical, as user names): `EVALC` and `evalc`
    cannot both exist. Its letters are ASCII (the alphabet below, which the database checks too), so that the
    canonical form is lower(name), which both databases compute alike and hold unique."""

    name = models.CharField(max_length=64, unique=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "corpora"
        constraints = [
            models.CheckConstraint(condition=models.Q(name__regex=CORPUS_NAME_PATTERN), name="corpus_name_alphabet"),
            models.UniqueConstraint(Lower("name"), name="corpus_name_canonical_unique"),
        ]
        permissions = [
            ("upload_corpus", "Can upload corpora and labels"),
            ("start_run", "Can start screening runs"),
            ("export_results", "Can export pairs and review sheets"),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("screening:corpus_detail", args=[self.name])


class SourceFile(models.Model):
    """An uploaded file kept byte for byte, read-only, stored once under its SHA-256. The row is never
    deleted and its hash and size never change (guard: screening 0008)."""

    sha256 = models.CharField(max_length=64, unique=True)
    size = models.BigIntegerField()
    stored_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.sha256

    @property
    def relative_path(self) -> str:
        return f"{self.sha256[:2]}/{self.sha256}"


class JobStatus(models.TextChoices):
    """Where a background job's object stands (runs, sheet exports): screening.vocabulary's run states."""

    QUEUED = RunState.QUEUED
    RUNNING = RunState.RUNNING
    COMPLETE = RunState.COMPLETE
    FAILED = RunState.FAILED


class RunQuerySet(models.QuerySet):
    def complete(self):
        """The runs whose results are published (their pairs may be reviewed)."""
        return self.filter(status=RunState.COMPLETE)


class PairQuerySet(models.QuerySet):
    def of_complete_runs(self):
        return self.filter(run__status=RunState.COMPLETE)


class BackgroundWork:
    """Mixin for models done by an RQ job: `status` uses the class's Status choices."""

    @property
    def is_active(self) -> bool:
        return self.status in (self.Status.QUEUED, self.Status.RUNNING)

    @property
    def is_queued(self) -> bool:
        return self.status == self.Status.QUEUED

    # For templates, which compare no state literals (screening.vocabulary spells them).
    @property
    def is_complete(self) -> bool:
        return self.status == RunState.COMPLETE

    @property
    def is_failed(self) -> bool:
        return self.status == RunState.FAILED

    @property
    def is_rejected(self) -> bool:
        return self.status == RunState.REJECTED


class Upload(BackgroundWork, models.Model):
    """One file uploaded into one corpus, and what became of it (all of it, or nothing)."""

    class Status(models.TextChoices):
        QUEUED = RunState.QUEUED
        RUNNING = RunState.RUNNING
        COMPLETE = RunState.COMPLETE
        REJECTED = RunState.REJECTED  # the file broke a rule; problems lists each one
        FAILED = RunState.FAILED  # the program failed; error says how

    corpus = models.ForeignKey(Corpus, on_delete=models.PROTECT, related_name="uploads")
    source = models.ForeignKey(SourceFile, on_delete=models.PROTECT, related_name="uploads")
    original_name = models.CharField(max_length=255)
    language = models.CharField(max_length=32, blank=True)
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    uploaded_at = models.DateTimeField(auto_now_add=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    finished_at = models.DateTimeField(null=True, blank=True)
    document_count = models.IntegerField(default=0)
    problems = models.JSONField(default=list, blank=True)
    problem_count = models.IntegerField(default=0)
    problem_groups = models.JSONField(default=list, blank=True, help_text="[{field, rule, count, examples}]: one "
                                                                          "per rule broken (formats.group_problems)")
    notices = models.JSONField(default=list, blank=True)
    error = models.TextField(blank=True)
    job_id = models.CharField(max_length=64, blank=True)
    # The language check, after the import commits (screening.ingest.detection): when it ran, and the documents
    # whose tag disagrees with a confident detection ([{doc_id, place, tag, detected, confidence}], capped).
    language_checked_at = models.DateTimeField(null=True, blank=True)
    # Defaults in the database too: rows written by older code (and its migrations' models) leave them out.
    language_mismatches = models.JSONField(default=list, blank=True, db_default=[])
    language_mismatch_count = models.IntegerField(default=0, db_default=0)
    # Where the check stands (a RunState: queued from the import's commit, running, complete or failed; "" for
    # an upload it was never planned for) and how many documents it has read, for the pages' progress bars.
    language_check = models.CharField(max_length=16, blank=True, default="", db_default="")
    language_check_done = models.IntegerField(default=0, db_default=0)

    class Meta:
        ordering = ["-uploaded_at", "-id"]

    def __str__(self) -> str:
        return f"{self.original_name} → {self.corpus}"

    @property
    def is_checking_languages(self) -> bool:
        """The import is complete and the language check is yet to run or running."""
        return self.status == RunState.COMPLETE and self.language_check in (RunState.QUEUED, RunState.RUNNING)

    @property
    def languages_checked(self) -> bool:
        return self.language_check == RunState.COMPLETE

    @property
    def language_check_failed(self) -> bool:
        return self.language_check == RunState.FAILED


class Document(models.Model):
    """One document as imported. Never deleted, and what was imported (corpus, upload, ids, language,
    title, body, dates, place) never changes (guard: screening 0008); the digest taken at import is
    derived from these and may be computed again."""

    corpus = models.ForeignKey(Corpus, on_delete=models.PROTECT, related_name="documents")
    upload = models.ForeignKey(Upload, on_delete=models.PROTECT, related_name="documents")
    doc_id = models.CharField(max_length=200)
    source_id = models.CharField(max_length=200)
    version = models.CharField(max_length=100, blank=True)
    language = models.CharField(max_length=32)
    title = models.TextField(blank=True)
    body = models.TextField()
    collected_at = models.CharField(max_length=40, blank=True, help_text="ISO 8601 date or date-time, as given")
    member_path = models.CharField(max_length=1024, blank=True)
    place = models.CharField(max_length=1024, blank=True, help_text="file and line or member it came from")
    # SHA-256 of the doc-content-v1 bytes, taken at import: the exact pass groups by it without reading bodies.
    # It only buckets candidates; a run still compares the full bytes of documents that share it.
    content_sha256 = models.CharField(max_length=64, default="")
    # What the text reads as (screening.engine.langcheck, ISO 639-1) and how sure the identifier is, beside
    # the tag, which stays as imported. "" and None: not checked yet (documents from before the check).
    detected_language = models.CharField(max_length=8, blank=True, default="", db_default="")  # raw inserts too
    language_confidence = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["doc_id"]
        constraints = [models.UniqueConstraint(fields=["corpus", "doc_id"], name="unique_doc_id_per_corpus")]
        # The exact pass groups a run's documents (corpus, its uploads) by digest: with the upload in the index
        # that is a scan of the index alone, not a lookup of every row.
        indexes = [models.Index(fields=["corpus", "source_id"]),
                   models.Index(fields=["corpus", "content_sha256", "upload"], name="document_digest_idx")]

    def __str__(self) -> str:
        return self.doc_id

    def get_absolute_url(self) -> str:
        return link("screening:document_detail", self.pk)


class ScreeningRun(BackgroundWork, models.Model):
    """One execution of the exact and/or near pass over one corpus, with everything needed to repeat it."""

    Status = JobStatus
    objects = RunQuerySet.as_manager()

    corpus = models.ForeignKey(Corpus, on_delete=models.PROTECT, related_name="runs")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    exact = models.BooleanField(default=True)
    near = models.BooleanField(default=False)
    config = models.JSONField(default=dict)
    contract = models.CharField(max_length=32)
    program_version = models.CharField(max_length=32)
    versions = models.JSONField(default=dict)
    manifest = models.JSONField(default=list)  # [{upload, name, sha256, documents}]
    stats = models.JSONField(default=dict, blank=True)
    started_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)
    job_id = models.CharField(max_length=64, blank=True)
    attempts = models.IntegerField(default=0)
    reviews_required = models.PositiveSmallIntegerField(default=1, help_text="independent judgements per pair")

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"run {self.pk} on {self.corpus}"

    def get_absolute_url(self) -> str:
        return link("screening:run_detail", self.pk)

    @property
    def passes(self) -> list[str]:
        return [name for name, on in (("exact", self.exact), ("near", self.near)) if on]

    @property
    def upload_ids(self) -> list[int]:
        return [entry["upload"] for entry in self.manifest]


class ExactGroup(models.Model):
    """Documents whose doc-content-v1 bytes are equal (only groups of two or more are stored)."""

    run = models.ForeignKey(ScreeningRun, on_delete=models.PROTECT, related_name="exact_groups")
    representative = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="+")
    sha256 = models.CharField(max_length=64)
    length = models.IntegerField(help_text="content bytes")
    size = models.IntegerField()

    class Meta:
        ordering = ["-size", "representative__doc_id"]
        indexes = [models.Index(fields=["run", "-size"])]


class ExactGroupMember(models.Model):
    group = models.ForeignKey(ExactGroup, on_delete=models.PROTECT, related_name="members")
    document = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="+")
    position = models.IntegerField()

    class Meta:
        ordering = ["position"]
        constraints = [models.UniqueConstraint(fields=["group", "document"], name="unique_group_member")]


class CandidatePair(models.Model):
    """Two documents a pass found alike: the unit of review. Shared by the exact and near passes."""

    class Pass(models.TextChoices):
        EXACT = "exact"
        NEAR = "near"

    objects = PairQuerySet.as_manager()

    run = models.ForeignKey(ScreeningRun, on_delete=models.PROTECT, related_name="pairs")
    left = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="+")
    right = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="+")
    pass_name = models.CharField(max_length=8, choices=Pass.choices)
    jaccard = models.FloatField()
    minhash_estimate = models.FloatField(null=True, blank=True)
    template_share = models.FloatField(null=True, blank=True)
    jaccard_without_template = models.FloatField(null=True, blank=True)
    cluster = models.IntegerField(null=True, blank=True, help_text="cluster number in the run, by size")
    revision_signals = models.JSONField(default=list, blank=True, help_text="[[kind, left, right], ...]")
    has_signals = models.BooleanField(default=False)
    suggestion = models.CharField(max_length=40, default="review_both_keep_originals")  # seed 001's contract
    # The evidence beside the scores (screening.engine.evidence) and the verdict it suggests, with a confidence
    # and its reasons (screening.engine.suggest, or a model learned from the corpus's labels). Never a judgement.
    evidence = models.JSONField(default=dict, blank=True)
    suggested_verdict = models.CharField(max_length=24, blank=True)
    suggestion_confidence = models.FloatField(null=True, blank=True)
    suggestion_reasons = models.JSONField(default=list, blank=True)
    suggestion_source = models.CharField(max_length=16, blank=True, help_text="rules, or model")
    # Review state, derived from the insert-only judgements and arbitrations (review.services keeps it).
    status = models.CharField(max_length=24, default=PairState.PENDING.value)
    final_verdict = models.CharField(max_length=24, blank=True)
    flag = models.CharField(max_length=200, blank=True, help_text="why the pair was sent to arbitration")

    @property
    def needs_arbitration(self) -> bool:
        return self.status == PairState.NEEDS_ARBITRATION

    class Meta:
        ordering = ["-jaccard", "pk"]
        constraints = [models.UniqueConstraint(fields=["run", "left", "right"], name="unique_pair_per_run")]
        indexes = [
            models.Index(fields=["run", "-jaccard", "id"]),
            models.Index(fields=["run", "cluster", "id"]),
            models.Index(fields=["run", "status", "-jaccard", "id"]),
            models.Index(fields=["run", "has_signals"]),
            models.Index(fields=["run", "suggested_verdict", "-suggestion_confidence", "id"]),
            models.Index(fields=["run", "-suggestion_confidence", "id"]),
        ]

    @property
    def signals_text(self) -> str:
        return "; ".join(f"{left} → {right}" for _, left, right in self.revision_signals)

    def get_absolute_url(self) -> str:
        return link("screening:pair_detail", self.pk)


class StagedPair(models.Model):
    """A near pair verified by one task of a running run, written in the task's own transaction and kept here
    until the run publishes: the publishing transaction moves every staged pair of the run into its pairs in
    their fixed order, each with its cluster, so a run shows all of its pairs or none, and a process driving a
    run holds none of them. A task run again (a node lost) replaces its chunk's rows."""

    run = models.ForeignKey(ScreeningRun, on_delete=models.CASCADE, related_name="+")
    chunk = models.IntegerField()
    # Plain columns, no constraint: written once by a task, read once by the publishing transaction.
    left = models.ForeignKey(Document, on_delete=models.DO_NOTHING, db_constraint=False, db_index=False,
                             related_name="+")
    right = models.ForeignKey(Document, on_delete=models.DO_NOTHING, db_constraint=False, db_index=False,
                              related_name="+")
    jaccard = models.FloatField()
    minhash_estimate = models.FloatField(null=True)
    template_share = models.FloatField(null=True)
    jaccard_without_template = models.FloatField(null=True)
    revision_signals = models.JSONField(default=list)
    has_signals = models.BooleanField(default=False)
    evidence = models.JSONField(default=dict)
    suggested_verdict = models.CharField(max_length=24, blank=True)
    suggestion_confidence = models.FloatField(null=True)
    suggestion_reasons = models.JSONField(default=list)
    suggestion_source = models.CharField(max_length=16, blank=True)

    class Meta:
        indexes = [models.Index(fields=["run", "chunk"])]


class Cluster(models.Model):
    """A connected component of a run's pairs at or above its review threshold."""

    run = models.ForeignKey(ScreeningRun, on_delete=models.PROTECT, related_name="clusters")
    number = models.IntegerField()
    size = models.IntegerField()
    members = models.JSONField(help_text="[[document pk, doc_id], ...] in doc_id order")

    class Meta:
        ordering = ["number"]
        constraints = [models.UniqueConstraint(fields=["run", "number"], name="unique_cluster_number")]


class PairPanes(models.Model):
    """What a pair page shows of the two texts, rendered once when the pair is first opened and kept: the
    coloured common runs of both panes, the differences, the shared shingles and raw excerpts. They follow
    from the two documents and the run, which never change; `version` names the templates that drew them."""

    pair = models.OneToOneField("CandidatePair", on_delete=models.CASCADE, related_name="panes")
    version = models.CharField(max_length=32)
    html = models.JSONField(help_text="{part: rendered HTML}")
    counts = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)


class DocumentSignature(models.Model):
    """A document's MinHash signature under one configuration (datasketch LeanMinHash bytes), kept for later
    runs, evaluation and explanation. Empty `values` means the document has no shingle."""

    document = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="signatures")
    key = models.CharField(max_length=200, help_text="policy|shingle|num_perm|seed|scheme")
    seed = models.BigIntegerField()
    scheme = models.CharField(max_length=16)
    shingle_count = models.IntegerField()
    values = models.BinaryField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["document", "key"], name="unique_signature_per_key")]


class LshIndex(models.Model):
    """A corpus's persistent LSH index for one configuration (datasketch MinHashLSH in Redis under `basename`),
    used by incremental runs. The index holds the signed representatives of the uploads listed in `uploads`."""

    corpus = models.ForeignKey(Corpus, on_delete=models.PROTECT, related_name="lsh_indexes")
    signature_key = models.CharField(max_length=200, help_text="policy|shingle|num_perm|seed|scheme")
    bands = models.IntegerField()
    rows = models.IntegerField()
    basename = models.CharField(max_length=100, unique=True, help_text="Redis key prefix")
    uploads = models.JSONField(default=list, help_text="ids of the uploads whose documents are indexed")
    size = models.IntegerField(default=0, help_text="documents in the index")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["corpus", "signature_key", "bands", "rows"],
                                               name="unique_index_per_configuration")]

    def __str__(self) -> str:
        return f"{self.corpus} {self.signature_key} {self.bands}×{self.rows}"


class IndexCandidate(models.Model):
    """An LSH candidate pair found among indexed documents (left pk < right pk). Kept so that an incremental
    run queries only its new documents and still has every older candidate to verify."""

    index = models.ForeignKey(LshIndex, on_delete=models.CASCADE, related_name="candidates")
    left = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="+")
    right = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="+")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["index", "left", "right"], name="unique_index_candidate")]


class RunAudit(BackgroundWork, models.Model):
    """An all-pairs audit of a run (exact Jaccard over every pair of its representatives, or a stated
    sample): started by an admin, done by a worker, its result kept with the run's evaluation. Never
    deleted, and fixed once complete (guard: screening 0010)."""

    Status = JobStatus

    run = models.ForeignKey(ScreeningRun, on_delete=models.PROTECT, related_name="audits")
    threshold = models.FloatField()
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT,
                                     related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    result = models.JSONField(default=dict, blank=True)  # evaluation.Audit as a dict
    error = models.TextField(blank=True)
    job_id = models.CharField(max_length=64, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]


class LabelSet(models.Model):
    """Labelled pairs of a corpus (1 = a copy that should go to merge review, 0 = not), from an uploaded
    CSV or from the settled verdicts of a run. Label sets and their labels are never deleted or changed
    (guard: screening 0010): an evaluation can always be repeated."""

    corpus = models.ForeignKey(Corpus, on_delete=models.PROTECT, related_name="label_sets")
    name = models.CharField(max_length=100)
    source = models.ForeignKey(SourceFile, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    from_run = models.ForeignKey(ScreeningRun, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    original_name = models.CharField(max_length=255, blank=True)
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    uploaded_at = models.DateTimeField(auto_now_add=True)
    notices = models.JSONField(default=list, blank=True)
    size = models.IntegerField(default=0)
    positives = models.IntegerField(default=0)

    class Meta:
        ordering = ["-uploaded_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["corpus", "name"], name="unique_label_set_name")]

    def __str__(self) -> str:
        return self.name


class SuggestionModel(models.Model):
    """A suggestion model learned from one of a corpus's label sets, over the evidence of one of its runs
    (screening.engine.learned): its parameters as plain numbers, and how it scored against the rules in
    family-held-out folds. The newest model that scored at least as well as the rules is in use."""

    corpus = models.ForeignKey(Corpus, on_delete=models.PROTECT, related_name="suggestion_models")
    label_set = models.ForeignKey("LabelSet", on_delete=models.PROTECT, related_name="+")
    run = models.ForeignKey(ScreeningRun, on_delete=models.PROTECT, related_name="+")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    params = models.JSONField()
    scores = models.JSONField()
    in_use = models.BooleanField(default=False)

    class Meta:
        ordering = ["-created_at", "-id"]


class Label(models.Model):
    label_set = models.ForeignKey(LabelSet, on_delete=models.PROTECT, related_name="labels")
    left = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="+")
    right = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="+")
    label = models.PositiveSmallIntegerField()
    reason = models.TextField(blank=True)
    split = models.CharField(max_length=16, blank=True)
    line = models.IntegerField(null=True, blank=True)

    class Meta:
        ordering = ["pk"]


DB_GUARDS = [
    Guard("screening_sourcefile", rule="never deleted or changed", frozen=("sha256", "size")),
    Guard("screening_labelset", rule="never deleted or changed"),
    Guard("screening_label", rule="never deleted or changed"),
    Guard("screening_runaudit", rule="fixed once complete", frozen_when="OLD.status = 'complete'"),
    Guard("screening_document", rule="never deleted or changed", frozen=(
        "corpus_id", "upload_id", "doc_id", "source_id", "version", "language", "title", "body", "collected_at",
        "member_path", "place")),
]
