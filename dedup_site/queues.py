"""Access to the job queue, starting the embedded Redis server on first use."""

from __future__ import annotations

import django_rq
from django.conf import settings
from rq import Queue

from dedup_site import redis_server


def ensure_redis(*, stop_at_exit: bool = False) -> bool:
    """Make sure the configured Redis answers; True if this process started the embedded one."""
    if settings.REDIS_URL:
        return False
    return redis_server.ensure_running(settings.EMBEDDED_REDIS_DIR, stop_at_exit=stop_at_exit)


def get_queue(name: str = "default") -> Queue:
    ensure_redis()
    return django_rq.get_queue(name)
