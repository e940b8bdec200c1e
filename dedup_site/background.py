"""Work an RQ job does for a row (an upload, a run, a sheet export, an audit), handled one way for all:
queued with a failure callback (or marked failed at once when Redis is away), its failure recorded once
with the traceback, its status and progress answered to the pages in one JSON shape."""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from django.utils import timezone
from django.utils.translation import gettext, ngettext

from dedup_site import progress, storable
from dedup_site.numerals import LocalCount
from dedup_site.queues import QueueUnavailable, enqueue, listening_workers, starting_workers


def start(obj, function: str, *, on_failure: str, kind: str, fail: Callable[[str], None]):
    """Queue `function(obj.pk)` and record its job id. When the queue is not reachable, the row is marked
    failed with the reason (so it can be started again) and QueueUnavailable is raised for the caller."""
    try:
        job_id = enqueue(function, obj.pk, kind=kind, on_failure=on_failure)
    except QueueUnavailable as error:
        fail(str(error))
        raise
    type(obj).objects.filter(pk=obj.pk).update(job_id=job_id)
    obj.job_id = job_id
    return obj


@contextmanager
def failure_recorded(fail: Callable[[str], None]) -> Iterator[None]:
    """Inside a job: any exception marks the row failed with its traceback, then goes on to RQ."""
    try:
        yield
    except Exception:
        fail(traceback.format_exc(limit=8))
        raise


def mark_failed(model, pk: int, error: str, *, final: tuple[str, ...]) -> None:
    """Mark the row failed with the error, unless it ended already: `final` states, or failed (the first
    failure recorded, with its traceback, is the one kept; a failure callback that follows adds nothing).
    The error is stored escaped (storable.shown, NUL as \\x00): a message quoting text that no column can store
    would make the update itself fail and leave the row running for ever."""
    model.objects.filter(pk=pk).exclude(status__in=[*final, model.Status.FAILED]).update(
        status=model.Status.FAILED, finished_at=timezone.now(), error=storable.shown(error[:10000]).replace(
            "\x00", "\\x00"))


def failure_message(exc_type, exc_value) -> str:
    """What a failure callback records (the job body recorded the traceback already, unless it was killed)."""
    return f"{exc_type.__name__}: {exc_value}"


def reporter(kind: str, pk: int) -> Callable[[float], None]:
    return lambda fraction: progress.report(kind, pk, fraction)


def status(obj, kind: str, **extra) -> dict:
    """A background row's status for the pages' progress bars (static/js/progress.js)."""
    state = (progress.read(kind, obj.pk) or {}) if obj.is_active else {}
    if obj.is_queued:
        extra.setdefault("hint", waiting_hint())
    # label: the state in the interface's language (screening.vocabulary's run states are in the catalogs).
    return {"status": obj.status, "label": gettext(obj.status), "active": obj.is_active,
            "fraction": 1.0 if not obj.is_active else state.get("fraction", 0.0),
            "stage": state.get("stage", ""), "stages": state.get("stages", {}), **extra}


def waiting_hint() -> str:
    """What a queued job waits for, so a page left at "queued 0%" says why and what to do."""
    workers = listening_workers()
    if workers is None:
        return gettext("the job queue (Redis) is not answering")
    if workers == 0 and starting_workers():
        return gettext("a worker is starting: it loads its compiled kernels before it takes a job (about a minute on "
                       "a first start, seconds later)")
    if workers == 0:
        return gettext("no worker is taking jobs yet: a starting worker warms up for a few seconds; if this "
                       "stays, start one with “python manage.py worker” (make run starts one)")
    return ngettext("waiting for the worker", "waiting for one of %(count)s workers", workers) % {
        "count": LocalCount(workers)}
