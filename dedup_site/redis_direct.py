"""Direct access to the project's Redis: the queue object itself and connection settings for libraries
that build their own client. The apps reach Redis through `queues` (enqueue a job) and `progress`; only
the run's fan-out (its chunk jobs and staging keys) and the persistent LSH index use this module, which
import-linter enforces (pyproject.toml)."""

from __future__ import annotations

import django_rq
from django.conf import settings
from redis.connection import parse_url
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


def redis_kwargs() -> dict:
    """Keyword arguments for `redis.Redis` aimed at the configured server, for libraries that build their own
    client from a dict (datasketch's Redis storage)."""
    ensure_redis()
    kwargs = parse_url(settings.RQ_QUEUES["default"]["URL"])
    kwargs.pop("connection_class", None)
    if "path" in kwargs:
        kwargs["unix_socket_path"] = kwargs.pop("path")
    return kwargs
