"""Queuing a job, starting the embedded Redis server on first use. This is all the apps need of the queue;
direct access to Redis is `redis_direct`."""

from __future__ import annotations

import uuid

import redis
from django.conf import settings
from rq import Callback, Worker

from dedup_site import redis_direct

__all__ = ["QueueUnavailable", "enqueue", "ensure_redis", "listening_workers"]
ensure_redis = redis_direct.ensure_redis


class QueueUnavailable(Exception):
    """Redis did not answer, so the job was not queued."""


def enqueue(function: str, object_id: int, *, kind: str, on_failure: str) -> str:
    """Queue `function(object_id)` with a failure callback; returns the job id. Raises QueueUnavailable.

    The id is ours: django-rq defers an enqueue made inside a transaction to its commit and then returns
    None, and the caller still needs the id to record it.
    """
    job_id = f"{kind}-{object_id}-{uuid.uuid4().hex[:12]}"
    try:
        redis_direct.get_queue().enqueue(function, object_id, on_failure=Callback(on_failure),
                            job_timeout=settings.RQ_JOB_TIMEOUT, job_id=job_id)
    except (redis.RedisError, OSError, RuntimeError) as error:
        raise QueueUnavailable(f"the job queue (Redis) is not reachable: {error}") from error
    return job_id


def listening_workers() -> int | None:
    """How many workers take jobs from the queue now (None when Redis does not answer). A worker counts once it
    has warmed its kernels and registered, so a starting one is not counted yet."""
    try:
        queue = redis_direct.get_queue()
        return Worker.count(connection=queue.connection, queue=queue)
    except (redis.RedisError, OSError, RuntimeError):
        return None
