"""A run's life: recorded with its configuration, versions and input manifest, queued, retried, failed."""

from __future__ import annotations

import platform
from dataclasses import dataclass, field
from importlib import metadata

import django
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext

import dedup_site
from dedup_site import accounts, background
from dedup_site.trail import trail_record
from screening.engine import contract
from screening.engine.minhash import NearConfig
from screening.models import Corpus, Document, ScreeningRun, StagedPair, Upload
from screening.runs.near import verify_key
from screening.runs.spec import RunSpec, Sizes
from screening.vocabulary import RunState

STAGES = {"exact": 0.15, "sign": 0.5, "band": 0.1, "verify": 0.2, "publish": 0.05}  # share of a run's time


class RunRefused(Exception):
    """A run cannot be started as asked (no documents, no pass chosen...)."""


@dataclass(frozen=True)
class RunOptions:
    """What a run is asked to do. The form, the command and the service take their defaults from here and
    from NearConfig, and check them with `checked`."""

    exact: bool = True
    near: bool = False
    incremental: bool = False
    reviews_required: int = 1
    near_config: NearConfig = field(default_factory=NearConfig)

    def checked(self) -> RunOptions:
        """These options, validated, with b × r chosen for the threshold; RunRefused says what is wrong."""
        if not (self.exact or self.near):
            raise RunRefused(gettext("choose at least one pass (exact or near)"))
        if self.incremental and not self.near:
            raise RunRefused(gettext("an incremental run needs the near pass"))
        if not 1 <= self.reviews_required <= 10:
            raise RunRefused(gettext("reviews required per pair must be 1-10"))
        if not self.near:
            return self
        try:
            return RunOptions(self.exact, self.near, self.incremental, self.reviews_required,
                              self.near_config.resolved())
        except ValueError as error:
            raise RunRefused(str(error)) from error


def library_versions() -> dict[str, str]:
    return {
        "python": platform.python_version(),
        "django": django.get_version(),
        "datasketch": metadata.version("datasketch"),
        "rq": metadata.version("rq"),
    }


def run_create(*, corpus: Corpus, exact: bool = True, near: bool = False, near_config: NearConfig | None = None,
               incremental: bool = False, reviews_required: int = 1, user=None,
               options: RunOptions | None = None) -> ScreeningRun:
    """Record a queued run with its configuration, versions and input manifest (not yet enqueued): the
    options as given here, or as `options` (what the form and the command build).

    An incremental run keeps the corpus's LSH index for its configuration and signs and looks up only the
    documents of uploads the index has not seen; its pairs are those a full run would give."""
    if refusal := accounts.admin_refusal(user):
        raise RunRefused(refusal)
    if options is None:
        options = RunOptions(exact, near, incremental, reviews_required, near_config or NearConfig())
    options = options.checked()
    exact, near, incremental = options.exact, options.near, options.incremental
    config: dict = {"passes": ["exact"] * exact + ["near"] * near, "incremental": incremental}
    if near:
        config["near"] = options.near_config.as_dict()
        config["verification_key"] = verify_key().fingerprint
    uploads = (
        Upload.objects.filter(corpus=corpus, status=Upload.Status.COMPLETE)
        .select_related("source").order_by("pk")
    )
    manifest = [
        {"upload": u.pk, "name": u.original_name, "sha256": u.source.sha256, "documents": u.document_count}
        for u in uploads
    ]
    if not any(entry["documents"] for entry in manifest):
        raise RunRefused(_nothing_imported(corpus))
    with transaction.atomic():
        run = ScreeningRun.objects.create(
            corpus=corpus, exact=exact, near=near, config=config,
            contract=contract.CONTRACT, program_version=dedup_site.__version__, versions=library_versions(),
            manifest=manifest, started_by=user, reviews_required=options.reviews_required,
        )
        # A run decides what is reviewed and by how many (its threshold, reviews_required): an administrative act.
        trail_record(actor=user, action="run.start", target=run, after={
            "run": run.pk, "config": config, "reviews_required": run.reviews_required,
            "uploads": [entry["upload"] for entry in manifest]})
    return run


def _nothing_imported(corpus: Corpus) -> str:
    """Why a run cannot start yet: an upload still importing is named, so the user knows to wait for it."""
    pending = (Upload.objects.filter(corpus=corpus, status__in=[Upload.Status.QUEUED, Upload.Status.RUNNING])
               .order_by("pk").first())
    if pending is None:
        return gettext("corpus %(corpus)s has no imported documents yet") % {"corpus": corpus.name}
    if pending.status == Upload.Status.QUEUED:
        text = gettext("corpus %(corpus)s has no imported documents yet: upload %(upload)s is still waiting for "
                       "a worker; start the run once it is imported")
    else:
        text = gettext("corpus %(corpus)s has no imported documents yet: upload %(upload)s is still importing; "
                       "start the run once it is done")
    return text % {"corpus": corpus.name, "upload": pending.original_name}


def run_enqueue(*, run: ScreeningRun) -> ScreeningRun:
    """Queue the run's first job; QueueUnavailable (the run then failed, saying why) when Redis is away."""
    return background.start(run, "screening.jobs.run_job", on_failure="screening.jobs.run_job_failed",
                            kind="run", fail=lambda error: run_fail(run_id=run.pk, error=error))


def run_start(*, corpus: Corpus, options: RunOptions, user=None) -> ScreeningRun:
    return run_enqueue(run=run_create(corpus=corpus, options=options, user=user))


def run_retry(*, run: ScreeningRun) -> ScreeningRun:
    """Queue a failed run again. It has no results (they are written only on success)."""
    if run.status != ScreeningRun.Status.FAILED:
        raise RunRefused(gettext("run %(run)s is %(state)s; only a failed run can be run again") % {
            "run": run.pk, "state": gettext(RunState(run.status).label)})
    ScreeningRun.objects.filter(pk=run.pk).update(status=ScreeningRun.Status.QUEUED, error="", finished_at=None)
    run.refresh_from_db()
    return run_enqueue(run=run)


def run_fail(*, run_id: int, error: str) -> None:
    """Mark the run failed (it shows nothing: results are written only on success) and say why; the pairs its
    tasks staged go."""
    background.mark_failed(ScreeningRun, run_id, error, final=(ScreeningRun.Status.COMPLETE,))
    StagedPair.objects.filter(run_id=run_id).delete()


def run_mark_running(*, run: ScreeningRun) -> None:
    """A new attempt of the run begins (its first job, before any chunk)."""
    ScreeningRun.objects.filter(pk=run.pk).update(status=ScreeningRun.Status.RUNNING, started_at=timezone.now(),
                                                  error="", attempts=F("attempts") + 1)
    run.status = ScreeningRun.Status.RUNNING


def verification_key_check(spec: RunSpec) -> None:
    """Every process that verifies a run's pairs (its driver, each task) must hash with the key the run was
    started with (the same DJANGO_SECRET_KEY): with another, scores and template shingles would silently
    disagree."""
    expected, key = spec.verification_key, verify_key().fingerprint
    if expected and expected != key:
        raise RunRefused(f"run {spec.run} was started with verification key {expected}, but this worker's is "
                         f"{key}: give every web and worker process the same DJANGO_SECRET_KEY")


def spec_of(run: ScreeningRun) -> RunSpec:
    """What the run is asked to do, resolved once for every step of it (the chunk sizes from the settings)."""
    return RunSpec(run=run.pk, corpus=run.corpus_id, uploads=tuple(run.upload_ids), exact=run.exact,
                   near=near_config_of(run) if run.near else None, incremental=bool(run.config.get("incremental")),
                   verification_key=run.config.get("verification_key", ""),
                   sizes=Sizes(sign=settings.DEDUP_SIGN_CHUNK, verify=settings.DEDUP_VERIFY_CHUNK,
                               band_keys=settings.DEDUP_BAND_KEYS))


def near_config_of(run: ScreeningRun) -> NearConfig:
    return NearConfig(**run.config["near"])


def documents_of(run: ScreeningRun):
    """The run's documents: those of the uploads in its manifest (later uploads are not part of it)."""
    return Document.objects.filter(corpus=run.corpus, upload_id__in=run.upload_ids)
