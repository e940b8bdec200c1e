"""Direct access to the project's Redis: the queue object itself, connection settings for libraries
that build their own client, and the API's rate windows (`rate_take`, for dedup_site.api_auth). The apps
reach Redis through `queues` (enqueue a job) and `progress`; only the run's fan-out (its chunk jobs and
staging keys) and the persistent LSH index use this module, which import-linter enforces (pyproject.toml)."""

from __future__ import annotations

import uuid

import django_rq
import redis
from django.conf import settings
from redis.backoff import ExponentialBackoff, NoBackoff
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


# A sliding window a key: a sorted set of the admitted requests' times, read and written by one script, so
# that counting and admitting are one step however many processes ask at once. The time is the server's
# (TIME), so web processes on several machines count alike whatever their clocks say. A refused request is
# not counted (as DRF's own throttle); the answer is the microseconds until the oldest one leaves the window.
_WINDOW = """
local now = redis.call('TIME')
local t = tonumber(now[1]) * 1000000 + tonumber(now[2])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', t - window)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], t, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], math.ceil(window / 1000))
  return 0
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(1, tonumber(oldest[2]) + window - t)
"""
_rate_clients: dict[str, tuple[redis.Redis, object]] = {}


def _rate_script():
    url = settings.RQ_QUEUES["default"]["URL"]
    if url not in _rate_clients:
        # One client a process, kept (its pool reconnects after a fork); no retries and short timeouts: a web
        # request asks once and goes on without an answer rather than wait out an outage.
        client = redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1, retry=Retry(NoBackoff(), 0))
        _rate_clients[url] = (client, client.register_script(_WINDOW))
    return _rate_clients[url][1]


def rate_take(key: str, *, limit: int, seconds: int) -> float:
    """Count one request under `key` against `limit` in any `seconds`, shared by every process on this Redis:
    0.0 when it is admitted, else the seconds until it would be. Raises redis.RedisError (or OSError) when
    Redis does not answer; the embedded server is started first if it is not running."""
    args = (limit, seconds * 1_000_000, uuid.uuid4().hex)
    try:
        waited = _rate_script()(keys=[key], args=args)
    except redis.ConnectionError:
        if not ensure_redis():  # nothing was started: the server is away, not merely not started yet
            raise
        waited = _rate_script()(keys=[key], args=args)
    return waited / 1_000_000
