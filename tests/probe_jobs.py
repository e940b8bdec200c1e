"""Jobs that report something about the process a worker runs them in, for tests/test_worker_process.py."""

from __future__ import annotations

import gc


def frozen_objects() -> int:
    """How many objects this work-horse inherited out of the collector's reach."""
    return gc.get_freeze_count()
