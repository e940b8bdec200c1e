"""Direct access to the project's Redis: the queue object itself and connection settings for libraries
that build their own client. The apps reach Redis through `queues` (enqueue a job) and `progress`; only
the run's fan-out (its chunk jobs and staging keys) and the persistent LSH index use this module, which
import-linter enforces (pyproject.toml)."""

from __future__ import annotations

import django_rq
import redis
from django.conf import settings
from redis.backoff import ExponentialBackoff
from redis.connection import parse_url
from redis.retry import Retry
from rq import Queue

from dedup_site import redis_server

# Seconds a worker's Redis commands keep retrying through an outage (0 in web processes, which answer at once).
_patience = 0.0


def wait_out_outages(seconds: float) -> None:
    """Make this process's queue connections retry through a Redis outage of up to `seconds` (workers, and
    the work-horses they fork): a restart of Redis then delays a job instead of killing the worker or
    losing a job's result mid-report."""
    global _patience
    _patience = seconds


def patient(connection: redis.Redis) -> redis.Redis:
    """The connection, retrying through an outage of this process's patience (unchanged when it is 0)."""
    if _patience > 0:
        # Exponential backoff, capped: a short outage is ridden out, a long one waits the cap between tries.
        connection.set_retry(Retry(ExponentialBackoff(cap=2.0, base=0.1), retries=4 + int(_patience / 2)))
    return connection


def ensure_redis(*, stop_at_exit: bool = False) -> bool:
    """Make sure the configured Redis answers; True if this process started the embedded one."""
    if settings.REDIS_URL:
        return False
    return redis_server.ensure_running(settings.EMBEDDED_REDIS_DIR, stop_at_exit=stop_at_exit)


def get_queue(name: str = "default") -> Queue:
    ensure_redis()
    queue = django_rq.get_queue(name)
    patient(queue.connection)
    return queue


def redis_kwargs() -> dict:
    """Keyword arguments for `redis.Redis` aimed at the configured server, for libraries that build their own
    client from a dict (datasketch's Redis storage)."""
    ensure_redis()
    kwargs = parse_url(settings.RQ_QUEUES["default"]["URL"])
    kwargs.pop("connection_class", None)
    if "path" in kwargs:
        kwargs["unix_socket_path"] = kwargs.pop("path")
    return kwargs
