"""Progress of long jobs, kept in Redis so pages can read it while the job's transaction is open."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

import django_rq
import redis

TTL = 7 * 24 * 3600
# How a long job reports: (fraction of the stage done, stage name).
StageProgress = Callable[[float, str], None]
logger = logging.getLogger(__name__)


def _connection() -> redis.Redis:
    # Never starts the embedded server: progress is read and written only where a queue already exists.
    return django_rq.get_connection("default")


def _key(kind: str, pk: int) -> str:
    return f"dedup:progress:{kind}:{pk}"


def report(kind: str, pk: int, fraction: float, stage: str = "", stages: dict | None = None) -> None:
    """Record how far a job is: overall fraction, current stage and, optionally, each stage's fraction.

    Progress is a courtesy: if Redis is briefly away (restarting), the job goes on without it."""
    value = json.dumps({"fraction": round(min(max(fraction, 0.0), 1.0), 4), "stage": stage,
                        "stages": {k: round(min(max(v, 0.0), 1.0), 4) for k, v in (stages or {}).items()}})
    try:
        _connection().set(_key(kind, pk), value, ex=TTL)
    except (redis.RedisError, OSError) as error:
        logger.warning("progress of %s %s not recorded: %s", kind, pk, error)


def read(kind: str, pk: int) -> dict | None:
    try:
        raw = _connection().get(_key(kind, pk))
    except (redis.RedisError, OSError, RuntimeError):
        return None
    return json.loads(raw) if raw else None


def members(key: str) -> list[str]:
    """The members of a Redis set (e.g. the workers that took part in a run), sorted; [] if unreachable."""
    try:
        return sorted(m.decode() for m in _connection().smembers(key))
    except (redis.RedisError, OSError, RuntimeError):
        return []
