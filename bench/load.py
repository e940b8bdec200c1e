"""Load on gunicorn over loopback: 20 editors judging at once, then 50 users browsing queue and pair pages.

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/dedup_load .venv/bin/python bench/load.py \
        [--seconds 60] [--editors 20] [--browsers 50] [--pairs 20000] [--pause 1 5] [--web-workers 4] \
        [--language fa]

The database must be a fresh, empty one (SQLite in a throwaway folder when DATABASE_URL is unset). Every
request goes to 127.0.0.1 only; loops are bounded in time. Pairs join 2.2 KB near-duplicate documents, so
pair pages diff and highlight real text. Browsing users log in first, arrive spread over one pause and
wait a pause drawn from --pause between pages (Locust's `between(1, 5)` by default; `--pause 0 2` is the
harsher one-second mean). Prints judgements submitted vs stored (none lost, none doubled), the latency
percentiles of the browsing phase per page kind, and the CPU gunicorn and PostgreSQL spent per page.
--language sets every request's Accept-Language (the pages in Persian, right to left; or zh-CN...).
"""

from __future__ import annotations

import argparse
import http.cookiejar
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DEDUP_DATA_DIR", tempfile.mkdtemp(prefix="dedup-load-"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dedup_site.settings")
PORT = 8765
BASE = f"http://127.0.0.1:{PORT}"
PASSWORD = "load-test-password-1"  # noqa: S105 - a throwaway account in a throwaway database
CSRF_RE = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


class Session:
    language = "en"  # every request's Accept-Language (--language)

    def __init__(self):
        self.jar = http.cookiejar.CookieJar()
        self.follow = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        self.stay = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar), NoRedirect)
        for opener in (self.follow, self.stay):
            opener.addheaders = [*opener.addheaders, ("Accept-Language", self.language)]

    def get(self, path: str) -> tuple[int, str, str]:
        with self.follow.open(BASE + path, timeout=30) as response:
            return response.status, response.geturl(), response.read().decode()

    def post(self, path: str, data: dict) -> tuple[int, str]:
        body = urllib.parse.urlencode(data).encode()
        request = urllib.request.Request(BASE + path, data=body, headers={"Referer": BASE + path})
        try:
            with self.stay.open(request, timeout=30) as response:
                return response.status, ""
        except urllib.error.HTTPError as error:  # 302 arrives as an "error" without redirect handling
            return error.code, error.headers.get("Location", "")

    def login(self, username: str) -> None:
        _, _, page = self.get("/accounts/login/")
        status, _ = self.post("/accounts/login/", {"username": username, "password": PASSWORD,
                                                    "csrfmiddlewaretoken": CSRF_RE.search(page).group(1)})
        assert status == 302, f"log-in of {username} failed ({status})"


def setup(n_pairs: int, editors: int) -> int:
    import django

    django.setup()
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command

    from bench.review_pages import fill

    call_command("migrate", verbosity=0)
    run_id = fill(n_pairs, n_docs=max(2000, n_pairs // 2), families=True)  # pairs of real near-duplicates
    group = Group.objects.get(name="editors")
    from dedup_site.accounts import password_owned
    from review.services import derived_writes
    from screening.models import CandidatePair

    for i in range(editors):
        user = User.objects.create_user(f"editor{i}", password=PASSWORD)
        user.groups.add(group)
        password_owned(user=user)  # each simulated editor set their own password, so may judge
    with derived_writes():  # every pair back to pending: review state only review.services writes
        CandidatePair.objects.filter(run_id=run_id).update(status="pending")
    from screening.runs import display, publish

    publish.refresh_statistics()
    # One pair drawn here first: the engine's compiled kernels (numba) are then in their cache before four
    # web workers would each compile them inside a request, past gunicorn's time-out on a fresh checkout.
    display.pair_panes(CandidatePair.objects.filter(run_id=run_id).first())
    return run_id


def editor_loop(i: int, run_id: int, until: float, submitted: list, errors: list) -> None:
    session = Session()
    session.login(f"editor{i}")
    rng = random.Random(i)
    while time.monotonic() < until:
        try:
            status, url, page = session.get(f"/review/next/?run={run_id}")
            match = re.search(r"/review/pairs/(\d+)/", url)
            if not match:
                break
            pair = int(match.group(1))
            token = CSRF_RE.search(page).group(1)
            verdict = rng.choice(["keep-both", "merge-entry", "valid-revision", "public-quote"])
            code, _ = session.post(f"/review/pairs/{pair}/judge/?run={run_id}", {
                "csrfmiddlewaretoken": token, "verdict": verdict, "reason": f"load test {i}", "retained": "both"})
            if code == 302:
                submitted.append((i, pair))
            else:
                errors.append(code)
        except Exception as error:  # noqa: BLE001 - counted and reported
            errors.append(repr(error))


def browse_loop(i: int, session: Session, run_id: int, until: float, pair_ids: list[int], times: list,
                errors: list, pause: tuple[float, float]) -> None:
    rng = random.Random(1000 + i)
    # Users arrive spread over one pause, as real ones do (and as Locust's spawn rate does): fifty first
    # clicks in the same millisecond would measure a queue no reader ever meets.
    time.sleep(rng.uniform(0, pause[1]))
    while time.monotonic() < until:
        kind = "queue" if rng.random() < 0.5 else "pair"
        path = f"/review/?run={run_id}" if kind == "queue" else f"/review/pairs/{rng.choice(pair_ids)}/"
        start = time.perf_counter()
        try:
            session.get(path)
            times.append((kind, (time.perf_counter() - start) * 1000))
            time.sleep(rng.uniform(*pause))  # a reader's pause between pages
        except Exception as error:  # noqa: BLE001 - counted and reported
            errors.append(repr(error))


def p95(values: list[float]) -> float:
    return values[int(0.95 * (len(values) - 1))]


def server_cpu(server: subprocess.Popen) -> dict[str, dict[int, float]]:
    """CPU-seconds used so far by each gunicorn process (master and workers) and each PostgreSQL process."""
    import psutil

    def seconds(processes) -> dict[int, float]:
        out = {}
        for process in processes:
            try:
                times = process.cpu_times()
                out[process.pid] = times.user + times.system
            except psutil.Error:
                pass
        return out

    master = psutil.Process(server.pid)
    postgres = [p for p in psutil.process_iter(["name"]) if (p.info["name"] or "").startswith("postgres")]
    return {"gunicorn": seconds([master, *master.children(recursive=True)]), "postgres": seconds(postgres)}


def cpu_used(before: dict[int, float], after: dict[int, float]) -> float:
    # Per process, so a connection that closed in between does not count as negative time.
    return sum(seconds - before.get(pid, 0.0) for pid, seconds in after.items())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--editors", type=int, default=20)
    parser.add_argument("--browsers", type=int, default=50)
    parser.add_argument("--pairs", type=int, default=20_000)
    parser.add_argument("--web-workers", type=int, default=4, help="gunicorn worker processes")
    parser.add_argument("--app", default="dedup_site.wsgi:application",
                        help="the WSGI application (bench.plain_querysets:application: without kept queries)")
    parser.add_argument("--web-threads", type=int, default=1, help="threads per gunicorn worker (1: sync workers)")
    parser.add_argument("--pause", type=float, nargs=2, default=(1.0, 5.0), metavar=("MIN", "MAX"),
                        help="a browsing user's pause between pages, drawn uniformly (s); Locust's between(1, 5)")
    parser.add_argument("--language", default="en", help="the browsers' Accept-Language: en, fa, zh-CN...")
    args = parser.parse_args()
    Session.language = args.language
    run_id = setup(args.pairs, args.editors)
    from django.db import connections

    from review.models import Judgement
    from screening.models import CandidatePair

    pair_ids = list(CandidatePair.objects.filter(run_id=run_id).values_list("pk", flat=True)[:5000])
    connections.close_all()
    server = subprocess.Popen([sys.executable, "-m", "gunicorn", args.app, "--bind",
                               f"127.0.0.1:{PORT}", "--workers", str(args.web_workers), "--threads",
                               str(args.web_threads), "--no-control-socket", "--log-level", "warning"],
                              cwd=ROOT, env=dict(os.environ))
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(BASE + "/accounts/login/", timeout=2).close()
                break
            except OSError:
                time.sleep(0.2)
        submitted, errors = [], []
        until = time.monotonic() + args.seconds
        threads = [threading.Thread(target=editor_loop, args=(i, run_id, until, submitted, errors))
                   for i in range(args.editors)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        stored = Judgement.objects.filter(pair__run_id=run_id).count()
        distinct = Judgement.objects.filter(pair__run_id=run_id).values("pair_id", "reviewer_id").distinct().count()
        print(f"{args.editors} editors for {args.seconds} s: {len(submitted)} judgements submitted, {stored} stored, "
              f"{distinct} distinct (pair, reviewer); errors {len(errors)} {errors[:3]}")
        assert stored == len(submitted) == distinct, "a judgement was lost or doubled"

        # Users log in before the clock starts: a password check (Argon2) is not browsing.
        sessions = [Session() for _ in range(args.browsers)]
        for i, session in enumerate(sessions):
            session.login(f"editor{i % args.editors}")
        _, _, home = sessions[0].get("/")
        assert f'<html lang="{args.language.split("-")[0].lower()}' in home, "the pages are not in --language"
        times, errors = [], []
        cpu_before, server_before = os.times(), server_cpu(server)
        until = time.monotonic() + args.seconds
        threads = [threading.Thread(target=browse_loop,
                                    args=(i, sessions[i], run_id, until, pair_ids, times, errors, tuple(args.pause)))
                   for i in range(args.browsers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        cpu = sum(os.times()[:2]) - sum(cpu_before[:2])
        server_after = server_cpu(server)
        per_page = {k: 1000 * cpu_used(server_before[k], server_after[k]) / max(len(times), 1) for k in server_after}
        every = sorted(ms for _, ms in times)
        print(f"{args.browsers} users browsing for {args.seconds} s: {len(times)} pages, median "
              f"{statistics.median(every):.0f} ms, p95 {p95(every):.0f} ms (target < 300 ms; "
              f"pause {args.pause[0]:g}–{args.pause[1]:g} s); "
              f"errors {len(errors)}; the load generator itself used {cpu:.0f} CPU-seconds of the "
              f"{2 * args.seconds} the two cores had")
        for kind in ("queue", "pair"):
            some = sorted(ms for k, ms in times if k == kind)
            print(f"  {kind} pages: {len(some)}, median {statistics.median(some):.0f} ms, p95 {p95(some):.0f} ms")
        print(f"Pages in {args.language!r}; "
              f"CPU per page: gunicorn {per_page['gunicorn']:.1f} ms, PostgreSQL {per_page['postgres']:.1f} ms; "
              f"{len(times) / args.seconds:.1f} pages/s")
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
