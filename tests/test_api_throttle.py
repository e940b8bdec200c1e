"""The API's rate limit per token, counted in Redis: it holds across the web server's processes (a real
gunicorn with two workers on a loopback port), the default rate turns a burst above it into 429s, Retry-After
says when the next request is taken, and with Redis away requests go through with a line in the log."""

from __future__ import annotations

import http.client
import logging
import socket
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from dedup_site.api_auth import TokenRateThrottle
from tests.conftest import process_env
from tests.test_api import Api, token_for

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def server(queue, tmp_path):
    """Start the program's web server as `make run` does (gunicorn, two worker processes) on a free loopback
    port, on this test's database and Redis; yields (port, access log) and stops it after the test."""
    started = []

    def start(**env):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        log = tmp_path / f"access-{port}.log"
        # Sync workers take one request at a time, so a burst from several threads is served by both.
        process = subprocess.Popen([  # noqa: S603 - fixed argv
            sys.executable, "-m", "gunicorn", "dedup_site.wsgi:application", "--bind", f"127.0.0.1:{port}",
            "--workers", "2", "--worker-class", "sync", "--access-logfile", str(log),
            "--access-logformat", "%(p)s %(s)s %(U)s", "--no-control-socket"],
            cwd=ROOT, env=process_env(**env), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        started.append(process)
        deadline = time.monotonic() + 60
        while True:  # both workers answer once a request has been served by each (Django loads on the first)
            try:
                _get(port, "/api/v1/corpora/")
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the web server did not start") from None
                time.sleep(0.2)
        for _ in range(4):
            _get(port, "/api/v1/corpora/")  # no token: not counted, but loads Django in both workers
        return port, log

    yield start
    for process in started:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


def _get(port: int, path: str, token: str = "") -> tuple[int, str]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", path, headers={"Authorization": f"Bearer {token}"} if token else {})
        response = connection.getresponse()
        response.read()
        return response.status, response.getheader("Retry-After") or ""
    finally:
        connection.close()


def _burst(port: int, token: str, n: int, threads: int = 8) -> tuple[list[tuple[int, str]], float]:
    start = time.monotonic()
    with ThreadPoolExecutor(threads) as pool:
        answers = list(pool.map(lambda _: _get(port, "/api/v1/corpora/", token), range(n)))
    return answers, time.monotonic() - start


def _pids_that_served(log: Path, status: int) -> set[str]:
    return {pid for pid, code, path in (line.split() for line in log.read_text().splitlines())
            if code == str(status) and path == "/api/v1/corpora/"}


@pytest.mark.django_db(transaction=True)
def test_the_limit_holds_across_the_servers_processes(server, editor):
    port, log = server(DEDUP_API_RATE="20/minute")
    token = token_for(editor)
    answers, _ = _burst(port, token, 60)
    assert Counter(status for status, _ in answers) == {200: 20, 429: 40}  # per process it would be 40 and 20
    assert len(_pids_that_served(log, 200) | _pids_that_served(log, 429)) == 2  # both processes counted
    waits = [int(wait) for status, wait in answers if status == 429]
    assert all(50 <= wait <= 60 for wait in waits), waits  # until the first of the 20 leaves the minute
    assert _get(port, "/api/v1/corpora/", token_for(editor))[0] == 200  # another token, its own count


@pytest.mark.django_db(transaction=True)
def test_the_default_rate_turns_a_burst_above_it_into_429s(server, editor, settings):
    assert settings.DEDUP_API_RATE == "100/second"
    port, log = server()
    token = token_for(editor)
    answers, seconds = _burst(port, token, 400, threads=12)
    counts = Counter(status for status, _ in answers)
    print(f"{counts} in {seconds:.2f} s")
    assert counts[200] <= 100 * (int(seconds) + 1) and set(counts) <= {200, 429}, (counts, seconds)
    if len(answers) / seconds > 150:  # a burst well above the rate (a machine too busy to send one cannot)
        assert counts[429] and {wait for status, wait in answers if status == 429} == {"1"}, (counts, seconds)
    assert len(_pids_that_served(log, 200)) == 2


def test_retry_after_is_when_the_next_request_is_taken(db, editor, settings):
    settings.DEDUP_API_RATE = "2/second"
    ed = Api(token_for(editor))
    assert [ed.get("/corpora/").status_code for _ in range(2)] == [200, 200]
    refused = ed.get("/corpora/")
    assert refused.status_code == 429 and refused["Retry-After"] == "1"
    time.sleep(1.0)
    assert ed.get("/corpora/").status_code == 200


def test_with_redis_away_requests_go_through_and_the_log_says_so(db, editor, settings, tmp_path, caplog,
                                                                 monkeypatch):
    monkeypatch.setattr(TokenRateThrottle, "_away_until", 0.0)
    settings.DEDUP_API_RATE = "1/minute"
    settings.REDIS_URL = f"unix://{tmp_path}/nothing.sock"  # an external Redis that does not answer
    settings.RQ_QUEUES = {"default": {**settings.RQ_QUEUES["default"], "URL": settings.REDIS_URL}}
    ed = Api(token_for(editor))
    with caplog.at_level(logging.WARNING, logger="dedup_site.api_auth"):
        assert [ed.get("/corpora/").status_code for _ in range(3)] == [200, 200, 200]
    logged = [r.getMessage() for r in caplog.records if r.name == "dedup_site.api_auth"]
    assert len(logged) == 1 and logged[0].startswith("API rate not counted for 5.0 s: Redis does not answer (")
    assert f"{tmp_path}/nothing.sock" in logged[0]  # once, not a line a request
