"""Jobs that report something about the process a worker runs them in, for tests/test_worker_process.py."""

from __future__ import annotations

import gc


def frozen_objects() -> int:
    """How many objects this work-horse inherited out of the collector's reach."""
    return gc.get_freeze_count()


WARMING = None  # a threading.Event the test sets: warm_until_told waits for it, as a slow first warm-up would


def warm_until_told() -> None:
    """A worker's warm-up (settings.DEDUP_WORKER_WARM) that lasts until the test lets it end."""
    if WARMING is not None:
        WARMING.wait(30)
