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


STARTING = "dedup:worker-starting:"  # + host:pid, while a worker loads and warms before it registers
STARTING_SECONDS = 600


def worker_starting(name: str, starting: bool) -> None:
    """Say in Redis that a worker is loading and warming its kernels (it is not counted by RQ until it
    registers), so that a queued job's page says a worker is on its way rather than that none runs."""
    try:
        connection = redis_direct.get_queue().connection
        if starting:
            connection.set(STARTING + name, "1", ex=STARTING_SECONDS)
        else:
            connection.delete(STARTING + name)
    except (redis.RedisError, OSError, RuntimeError):
        pass  # only a hint: a worker that cannot say so still works


def starting_workers() -> int:
    """How many workers are warming up now (0 when Redis does not answer)."""
    try:
        return sum(1 for _ in redis_direct.get_queue().connection.scan_iter(match=STARTING + "*", count=100))
    except (redis.RedisError, OSError, RuntimeError):
        return 0
