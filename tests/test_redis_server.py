"""The embedded Redis server: started on first use, shared by processes, stopped cleanly."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import redis

from dedup_site import redis_server


def test_embedded_redis_starts_once_and_is_shared(tmp_path):
    directory = tmp_path / "redis"
    assert redis_server.ensure_running(directory) is True
    try:
        client = redis.Redis.from_url(redis_server.url_for(directory))
        client.set("k", "v")
        assert redis_server.ensure_running(directory) is False  # a second caller reuses it
        # Another process sees the same server and data.
        code = textwrap.dedent(f"""
            import redis, sys
            sys.path.insert(0, {str(Path(__file__).resolve().parent.parent)!r})
            from dedup_site import redis_server
            from pathlib import Path
            started = redis_server.ensure_running(Path({str(directory)!r}))
            print(started, redis.Redis.from_url(redis_server.url_for(Path({str(directory)!r}))).get("k"))
        """)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60).stdout
        assert out.strip() == "False b'v'"
    finally:
        redis_server.stop(directory)
    assert not redis_server.is_running(directory)


def test_embedded_redis_keeps_data_across_a_restart(tmp_path):
    directory = tmp_path / "redis"
    redis_server.ensure_running(directory)
    redis.Redis.from_url(redis_server.url_for(directory)).rpush("queue", "job-1")
    redis_server.stop(directory)
    redis_server.ensure_running(directory)
    try:
        assert redis.Redis.from_url(redis_server.url_for(directory)).lrange("queue", 0, -1) == [b"job-1"]
    finally:
        redis_server.stop(directory)


def test_a_process_stops_at_exit_only_the_server_it_started(tmp_path):
    directory = tmp_path / "redis"
    # A process starts the server and will stop it at exit; meanwhile the server is restarted by another.
    code = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(Path(__file__).resolve().parent.parent)!r})
        from pathlib import Path
        from dedup_site import redis_server
        print(redis_server.ensure_running(Path({str(directory)!r}), stop_at_exit=True), flush=True)
        sys.stdin.readline()  # until the server has been restarted by someone else
    """)
    starter = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert starter.stdout.readline().strip() == "True"
        redis_server.stop(directory)
        assert redis_server.ensure_running(directory) is True  # the restarted server is this test's
        starter.communicate("go\n", timeout=60)  # the first process exits, running its atexit handler
        assert redis_server.is_running(directory)  # it left the server it did not start alone
    finally:
        starter.kill()
        redis_server.stop(directory)
    assert not redis_server.is_running(directory)


def test_stopping_the_server_never_stops_the_one_started_after_it(tmp_path):
    """A shutdown sent again on reconnect (redis-py retries by default) reached the server another process had
    started in the meantime: a worker's job restarted Redis during a test's outage, and it was shut down too."""
    import threading
    import time

    directory = tmp_path / "redis"
    redis_server.ensure_running(directory)
    first = redis_server._pid(directory)
    restarted = threading.Event()

    def restart_when_gone():
        # Another process's get_queue() restarts the server as soon as its socket is gone.
        while redis_server._socket(directory).exists():
            time.sleep(0.005)
        redis_server.ensure_running(directory)
        restarted.set()

    restarter = threading.Thread(target=restart_when_gone)
    restarter.start()
    try:
        redis_server.stop(directory, only=first)
        restarter.join(timeout=30)
        assert restarted.is_set()
        time.sleep(3.0)  # longer than redis-py's first retries' backoff
        assert redis_server.is_running(directory), (directory / "redis.log").read_text()[-1500:]
        assert redis_server._pid(directory) != first
    finally:
        redis_server.stop(directory)
