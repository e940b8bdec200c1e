"""Judgements through the REST API against the same judgements through the web form, on gunicorn over loopback.

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/dedup_api_load .venv/bin/python bench/api_load.py \
        [--seconds 30] [--editors 20] [--pairs 20000] [--web-workers 4]

The database must be a fresh, empty one (SQLite in a throwaway folder when DATABASE_URL is unset). Each editor
has a personal API token (DEDUP_API_RATE caps one token, as a pipeline's; twenty editors' tokens are twenty
caps) and a logged-in browser session. Every editor judges pairs of their own (no two editors the same pair),
for --seconds each way:

  - api:  POST /api/v1/pairs/{id}/judgements/ with a bearer token and a JSON body;
  - web:  POST /review/pairs/{id}/judge/ with the session cookie, its CSRF token and the form's fields (the
          review page's own submit, answered 302);

then the same two with the pair handed out first, as an editor works: `POST /api/v1/runs/{id}/next/` (the
leased pair with its evidence) against `GET /review/next/` (the pair page). Prints judgements a second,
submitted against stored (none lost, none doubled), latency percentiles and the CPU gunicorn and PostgreSQL
spent per judgement, and the machine's load average (the cores are shared).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench import load  # noqa: E402
from bench.load import CSRF_RE, ROOT, Session, cpu_used, p95, server_cpu, setup  # noqa: E402


def free_port() -> int:
    import socket

    with socket.socket() as probe:  # another engineer's bench may hold load.py's fixed port
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


PORT = free_port()
BASE = load.BASE = f"http://127.0.0.1:{PORT}"  # load.Session reads its module's BASE

VERDICTS = ["keep-both", "merge-entry", "valid-revision", "public-quote"]


def api_call(token: str, method: str, path: str, body: dict | None = None) -> tuple[int, dict | None]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(BASE + path, data=data, method=method, headers={  # noqa: S310 - loopback
        "Authorization": f"Bearer {token}", **({"Content-Type": "application/json"} if data else {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - our own server on loopback
            content = response.read()
            return response.status, json.loads(content) if content else None
    except urllib.error.HTTPError as error:
        return error.code, None


def api_judge(i: int, token: str, pairs: list[int], until: float, out: list, errors: list, **_) -> None:
    for n, pair in enumerate(pairs):
        if time.monotonic() >= until:
            break
        start = time.perf_counter()
        status, _ = api_call(token, "POST", f"/api/v1/pairs/{pair}/judgements/",
                             {"verdict": VERDICTS[n % 4], "reason": f"api load {i}"})
        (out if status == 201 else errors).append((time.perf_counter() - start) * 1000 if status == 201 else status)


def web_judge(i: int, session: Session, pairs: list[int], until: float, out: list, errors: list, run_id: int,
              **_) -> None:
    token = CSRF_RE.search(session.get(f"/review/pairs/{pairs[0]}/")[2]).group(1)  # one page for the token
    for n, pair in enumerate(pairs):
        if time.monotonic() >= until:
            break
        start = time.perf_counter()
        status, _ = session.post(f"/review/pairs/{pair}/judge/?run={run_id}", {
            "csrfmiddlewaretoken": token, "verdict": VERDICTS[n % 4], "reason": f"web load {i}", "retained": "both"})
        (out if status == 302 else errors).append((time.perf_counter() - start) * 1000 if status == 302 else status)


def api_next_judge(i: int, token: str, until: float, out: list, errors: list, run_id: int, **_) -> None:
    n = 0
    while time.monotonic() < until:
        start = time.perf_counter()
        status, taken = api_call(token, "POST", f"/api/v1/runs/{run_id}/next/")
        if status != 200:
            errors.append(status)
            break
        status, _ = api_call(token, "POST", f"/api/v1/pairs/{taken['pair']['id']}/judgements/",
                             {"verdict": VERDICTS[n % 4], "reason": f"api loop {i}"})
        (out if status == 201 else errors).append((time.perf_counter() - start) * 1000 if status == 201 else status)
        n += 1


def web_next_judge(i: int, session: Session, until: float, out: list, errors: list, run_id: int, **_) -> None:
    n = 0
    while time.monotonic() < until:
        start = time.perf_counter()
        _, url, page = session.get(f"/review/next/?run={run_id}")
        match = re.search(r"/review/pairs/(\d+)/", url)
        if not match:
            errors.append("nothing left")
            break
        status, _ = session.post(f"/review/pairs/{match.group(1)}/judge/?run={run_id}", {
            "csrfmiddlewaretoken": CSRF_RE.search(page).group(1), "verdict": VERDICTS[n % 4],
            "reason": f"web loop {i}", "retained": "both"})
        (out if status == 302 else errors).append((time.perf_counter() - start) * 1000 if status == 302 else status)
        n += 1


def machine_busy() -> float:
    """CPU-seconds every process on the machine has used (the cores are shared: the client, and anyone else)."""
    import psutil

    times = psutil.cpu_times()
    return times.user + times.nice + times.system + times.irq + times.softirq + getattr(times, "steal", 0.0)


def phase(name: str, target, clients: list, shares: list[list[int]] | None, seconds: int, run_id: int,
          server) -> dict:
    from review.models import Judgement

    stored_before = Judgement.objects.filter(pair__run_id=run_id).count()
    out, errors = [], []
    load_before, cpu_before = os.getloadavg()[0], server_cpu(server)
    client_before, busy_before = time.process_time(), machine_busy()
    until = time.monotonic() + seconds
    began = time.monotonic()
    threads = [threading.Thread(target=target, kwargs={
        "i": i, "token": client, "session": client, "pairs": shares[i] if shares else None, "until": until,
        "out": out, "errors": errors, "run_id": run_id}) for i, client in enumerate(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - began
    cpu_after = server_cpu(server)
    client_ms = 1000 * (time.process_time() - client_before) / max(len(out), 1)
    busy_ms = 1000 * (machine_busy() - busy_before) / max(len(out), 1)
    stored = Judgement.objects.filter(pair__run_id=run_id).count() - stored_before
    cpu = {k: 1000 * cpu_used(cpu_before[k], cpu_after[k]) / max(len(out), 1) for k in cpu_after}
    times = sorted(out)
    row = {"name": name, "judgements": len(out), "stored": stored, "per_second": len(out) / elapsed,
           "median": statistics.median(times) if times else 0, "p95": p95(times) if times else 0,
           "errors": len(errors), "first_errors": errors[:3], "gunicorn_ms": cpu["gunicorn"],
           "postgres_ms": cpu["postgres"], "client_ms": client_ms, "busy_ms": busy_ms,
           "load": (load_before, os.getloadavg()[0])}
    print(f"{name:<22} {row['per_second']:7.1f}/s  {len(out):6d} submitted {stored:6d} stored  median "
          f"{row['median']:5.0f} ms p95 {row['p95']:5.0f} ms  CPU a judgement: gunicorn {row['gunicorn_ms']:5.1f} ms, "
          f"PostgreSQL {row['postgres_ms']:4.1f} ms, this client {client_ms:4.1f} ms, whole machine {busy_ms:4.1f} ms"
          f"  errors {len(errors)} {errors[:3]}  load "
          f"{row['load'][0]:.1f}→{row['load'][1]:.1f}", flush=True)
    assert stored == len(out), "a judgement was lost or doubled"
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--editors", type=int, default=20)
    parser.add_argument("--pairs", type=int, default=20_000)
    parser.add_argument("--web-workers", type=int, default=4, help="gunicorn worker processes")
    parser.add_argument("--loops", action="store_true", help="also the next-then-judge loops")
    args = parser.parse_args()
    run_id = setup(args.pairs, args.editors)
    from django.contrib.auth.models import User
    from django.db import connections

    from dedup_site import tokens
    from screening.models import CandidatePair

    pair_ids = list(CandidatePair.objects.filter(run_id=run_id).order_by("pk").values_list("pk", flat=True))
    editors = [User.objects.get(username=f"editor{i}") for i in range(args.editors)]
    api_tokens = [tokens.token_create(user=editor, actor=editor, name="bench")[1] for editor in editors]
    half = len(pair_ids) // 2  # the API's pairs and the form's apart: each a first judgement
    api_shares = [pair_ids[:half][i::args.editors] for i in range(args.editors)]
    web_shares = [pair_ids[half:][i::args.editors] for i in range(args.editors)]
    connections.close_all()
    server = subprocess.Popen([sys.executable, "-m", "gunicorn", "dedup_site.wsgi:application", "--bind",
                               f"127.0.0.1:{PORT}", "--workers", str(args.web_workers), "--no-control-socket",
                               "--log-level", "warning"], cwd=ROOT, env=dict(os.environ))
    try:
        for _ in range(150):
            try:
                urllib.request.urlopen(BASE + "/accounts/login/", timeout=2).close()  # noqa: S310 - loopback
                break
            except OSError:
                time.sleep(0.2)
        sessions = [Session() for _ in range(args.editors)]
        for i, session in enumerate(sessions):
            session.login(f"editor{i}")
        for token in api_tokens:  # every worker warm (the first request of each compiles and connects)
            api_call(token, "GET", "/api/v1/corpora/")
        print(f"{args.editors} editors, {args.web_workers} gunicorn workers, {args.seconds} s each way, "
              f"{os.cpu_count()} cores, database {connections['default'].vendor}; load average before "
              f"{os.getloadavg()[0]:.1f}", flush=True)
        rows = [phase("api judgements", api_judge, api_tokens, api_shares, args.seconds, run_id, server),
                phase("web form judgements", web_judge, sessions, web_shares, args.seconds, run_id, server)]
        if args.loops:
            rows += [phase("api next + judge", api_next_judge, api_tokens, None, args.seconds, run_id, server),
                     phase("web next + judge", web_next_judge, sessions, None, args.seconds, run_id, server)]
        api, web = rows[0], rows[1]
        print(f"API {api['per_second']:.0f} judgements/s against the web form's {web['per_second']:.0f} "
              f"(target ≥ 200/s on 2 cores)")
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
