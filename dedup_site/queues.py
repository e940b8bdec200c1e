"""Access to the job queue, starting the embedded Redis server on first use."""

from __future__ import annotations

import uuid

import django_rq
import redis
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


def redis_kwargs() -> dict:
    """Keyword arguments for `redis.Redis` aimed at the configured server, for libraries that build their own
    client from a dict (datasketch's Redis storage)."""
    from redis.connection import parse_url

    ensure_redis()
    kwargs = parse_url(settings.RQ_QUEUES["default"]["URL"])
    kwargs.pop("connection_class", None)
    if "path" in kwargs:
        kwargs["unix_socket_path"] = kwargs.pop("path")
    return kwargs


class QueueUnavailable(Exception):
    """Redis did not answer, so the job was not queued."""


def enqueue(function: str, object_id: int, *, kind: str, on_failure: str) -> str:
    """Queue `function(object_id)` with a failure callback; returns the job id. Raises QueueUnavailable.

    The id is ours: django-rq defers an enqueue made inside a transaction to its commit and then returns
    None, and the caller still needs the id to record it.
    """
    from rq import Callback

    job_id = f"{kind}-{object_id}-{uuid.uuid4().hex[:12]}"
    try:
        get_queue().enqueue(function, object_id, on_failure=Callback(on_failure),
                            job_timeout=settings.RQ_JOB_TIMEOUT, job_id=job_id)
    except (redis.RedisError, OSError, RuntimeError) as error:
        raise QueueUnavailable(f"the job queue (Redis) is not reachable: {error}") from error
    return job_id
