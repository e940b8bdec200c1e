"""Benchmark: a whole exact + near run of N generated documents, driven from one process, with the peak memory
of every process involved and the wall time of each stage, for this tree or another checkout (issue 53).

    .venv/bin/python bench/run_scale.py [--tree PATH] [--docs 1000000] [--corpus-dir DIR] [--data-dir DIR]
        [--mode auto|sync|workers] [--workers 2] [--ray-cpus 2] [--local-documents N] [--json FILE]

1. The corpus: bench/million.py's generator (bench/near_pass.py's vocabulary, ~2.2 KB documents, 10% edited
   copies, seed 7), written once to --corpus-dir in JSONL files of 250,000 and reused by every tree. The same
   seed gives the same first documents whatever N, so a corpus of 2,000,000 holds the one of 1,000,000 as its
   first four files, and a smaller N (a multiple of 250,000) is read from a larger set.
2. Import, one upload a file, in a forked child (its wall time). Skipped when the data folder (or the
   database of DATABASE_URL) already holds the corpus: then every stored signature is deleted first, so the
   run signs from scratch all the same.
3. The run, exact + near:
   - `sync` (a tree with screening/runs/executors.py, issue 53): `manage.py screen --corpus C --sync` in a
     process of its own, which drives the run and hands its steps to a local Ray it starts (at least
     DEDUP_RAY_LOCAL_DOCUMENTS documents; --ray-cpus CPUs) or runs them itself (--local-documents above N);
   - `workers` (a tree before it): the run queued (`runs.run_start`) and taken by --workers real
     `manage.py worker` processes, the RQ fan-out of chunk jobs (as bench/million.py does it).
   Every 0.2 s the RSS of every process involved is sampled (psutil): the screen process and all of its
   descendants (Ray's gcs_server, raylet, agents, workers: the Ray processes are also found by their session
   folder, in case one is not a descendant), or each RQ worker and its work-horses; the embedded redis-server
   and this process. The report gives each kind of process its peak (the largest single process), how many
   there were, the peak of their sum, and the stage that was running at the peak.
   The Redis keys of the run's database are listed as each stage begins and every few seconds during
   verification (name, type, bytes): a run that keeps its data out of Redis shows only progress keys.
4. Stage seconds as the run recorded them (run.stats["seconds"]), stage seconds as seen from outside (the
   run's progress polled), throughput per stage, per core, and the load average.

Database: SQLite in --data-dir (default: a throwaway folder), or DATABASE_URL (PostgreSQL). Redis: the
embedded one of the data folder, or REDIS_URL.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PART = 250_000
RECENT = 20_000  # as bench/million.py: edited copies are made from one of the last RECENT documents


def _generator():
    """bench/near_pass.py of this checkout, by its file, under a name of its own: the corpus is the same for
    every tree measured, and the `bench` and `screening` packages imported later are the measured tree's."""
    saved = list(sys.path)
    spec = importlib.util.spec_from_file_location("_run_scale_near_pass", HERE / "near_pass.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.path[:] = saved  # near_pass puts its own checkout first on the path
    return module


def write_corpus(directory: Path, n: int, seed: int = 7, dup_share: float = 0.1) -> tuple[list[Path], int]:
    """bench/million.py's write_corpus, unchanged: n documents to JSONL files of PART documents each."""
    import random

    gen = _generator()
    rng = random.Random(seed)
    vocab = gen.make_vocabulary(rng)
    recent: list[str] = []
    total = 0
    paths: list[Path] = []
    out = None
    for i in range(n):
        if i % PART == 0:
            if out:
                out.close()
            paths.append(directory / f"corpus-{len(paths) + 1:02}.jsonl")
            out = open(paths[-1], "w", encoding="utf-8")  # noqa: SIM115 - closed when the next part opens
        dup = recent and rng.random() < dup_share
        text = gen.edited_copy(rng, vocab, rng.choice(recent)) if dup else gen.new_text(rng, vocab)
        recent.append(text)
        if len(recent) > RECENT:
            recent.pop(rng.randrange(len(recent)))
        total += len(text)
        out.write(json.dumps({"doc_id": f"d{i:07}", "source_id": f"s{i % 1000}", "language": "en",
                              "body": text}) + "\n")
    if out:
        out.close()
    return paths, total // max(n, 1)


def corpus_files(directory: Path, n: int) -> list[Path]:
    """The files of the first n documents: from a complete set in `directory` of at least n (n a multiple of
    PART), else written there now."""
    done = directory / "complete.json"
    if done.exists():
        meta = json.loads(done.read_text())
        if meta["docs"] >= n and (n % PART == 0 or meta["docs"] == n):
            return [directory / name for name in meta["files"][: -(-n // PART)]]
        raise SystemExit(f"{directory} holds {meta['docs']:,} documents: use another --corpus-dir for {n:,}")
    directory.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    paths, size = write_corpus(directory, n)
    done.write_text(json.dumps({"files": [p.name for p in paths], "docs": n, "mean_chars": size}))
    print(f"generated {n:,} documents of ~{size:,} characters in {time.perf_counter() - began:.0f} s", flush=True)
    return paths


def do_import(corpus: str, paths: list[str]) -> int:
    from screening.ingest import uploads

    count = 0
    for path in paths:
        upload = uploads.upload_process(upload=uploads.upload_create_from_path(corpus_name=corpus,
                                                                                 path=Path(path)))
        assert upload.status == "complete", upload.problems[:3]
        count += upload.document_count
    return count


def in_child(fn, *args):
    """fn(*args) in a forked child: (its result, its wall seconds)."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()

    def target():
        start = time.perf_counter()
        queue.put((fn(*args), time.perf_counter() - start))

    process = ctx.Process(target=target)
    process.start()
    out = queue.get()
    process.join()
    return out


# ---------------------------------------------------------------------------------------------------- memory

RAY_KINDS = [("ray::", "ray worker"), ("default_worker.py", "ray worker"), ("gcs_server", "ray gcs_server"),
             ("dashboard/agent.py", "ray dashboard agent"), ("runtime_env/agent", "ray runtime_env agent"),
             ("log_monitor", "ray log_monitor"), ("autoscaler/_private/monitor", "ray monitor"),
             ("dashboard/dashboard.py", "ray dashboard")]
SESSION = re.compile(r"session_\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d_\d+_\d+")


class Sampler(threading.Thread):
    """The RSS of every process involved, every `every` seconds: each process's peak and the stage then, the peak
    of each kind's sum and of the whole's, each process's last CPU seconds."""

    def __init__(self, roots: dict[int, str], every: float = 0.2, database: str = ""):
        super().__init__(daemon=True)
        self.database = database  # PostgreSQL: its backends serving this database ("postgres: user db ...")
        self.roots, self.every, self.stop = dict(roots), every, threading.Event()
        self.stage = "start"
        self.kind: dict[int, str] = {}
        self.cmds: dict[int, str] = {}
        self.peak: dict[int, int] = {}
        self.peak_stage: dict[int, str] = {}
        self.cpu: dict[int, float] = {}
        self.kind_sum_peak: dict[str, tuple[int, str]] = {}
        self.total_peak, self.total_stage = 0, ""
        self.sessions: set[str] = set()
        self.samples = 0
        self.load_max = 0.0

    def _classify(self, proc, parent_kind: str | None) -> str:
        try:
            argv = proc.cmdline()
        except Exception:  # noqa: BLE001 - gone or unreadable
            argv = []
        cmd, program = " ".join(argv), os.path.basename(argv[0]) if argv else ""
        if program in ("raylet", "gcs_server"):
            return f"ray {program}"
        for mark, kind in RAY_KINDS:
            if mark in cmd:
                return kind
        if "redis-server" in cmd:
            return "redis-server"
        if parent_kind == "rq worker":
            return "rq work-horse"
        if parent_kind:
            return f"child of {parent_kind}: {proc.name()}"
        return proc.name()

    def _processes(self):
        import psutil

        found = {}
        # The roots nearest a process name its kind: this process (the parent of the others) last.
        for pid, kind in sorted(self.roots.items(), key=lambda item: item[1] == "bench (this process)"):
            try:
                root = psutil.Process(pid)
            except psutil.Error:
                continue
            found[pid] = (root, kind)
            try:
                children = root.children(recursive=True)
            except psutil.Error:
                children = []
            for child in children:
                if child.pid not in found:
                    found[child.pid] = (child, None if child.pid in self.kind else kind)
        if self.samples % 5 == 0:  # Ray's processes by their session folder, descendants or not
            for proc in psutil.process_iter(["cmdline"]):
                cmd = " ".join(proc.info["cmdline"] or [])
                for session in SESSION.findall(cmd):
                    self.sessions.add(session)
                if proc.pid not in found and any(s in cmd for s in self.sessions):
                    found[proc.pid] = (proc, None)
                if self.database and cmd.startswith("postgres: ") and f" {self.database} " in cmd:
                    self.roots.setdefault(proc.pid, "postgres backend")
                    found.setdefault(proc.pid, (proc, None))
        return found

    def run(self) -> None:
        import psutil

        while not self.stop.is_set():
            sums: dict[str, int] = {}
            total = 0
            for pid, (proc, parent_kind) in self._processes().items():
                try:
                    rss = proc.memory_info().rss
                    cpu = proc.cpu_times()
                except psutil.Error:
                    continue
                if pid not in self.kind:
                    if pid not in self.roots:  # the root nearest it (children are listed racily)
                        try:
                            parent_kind = next((self.roots[p.pid] for p in proc.parents() if p.pid in self.roots),
                                               parent_kind)
                        except psutil.Error:
                            pass
                    self.kind[pid] = (self.roots[pid] if pid in self.roots
                                      else self._classify(proc, parent_kind or "unknown"))
                    try:
                        self.cmds[pid] = " ".join(proc.cmdline())[:160]
                    except psutil.Error:
                        self.cmds[pid] = "?"
                if rss > self.peak.get(pid, 0):
                    self.peak[pid], self.peak_stage[pid] = rss, self.stage
                self.cpu[pid] = cpu.user + cpu.system
                kind = self.kind[pid]
                sums[kind] = sums.get(kind, 0) + rss
                total += rss
            for kind, value in sums.items():
                if value > self.kind_sum_peak.get(kind, (0, ""))[0]:
                    self.kind_sum_peak[kind] = (value, self.stage)
            if total > self.total_peak:
                self.total_peak, self.total_stage = total, self.stage
            self.load_max = max(self.load_max, os.getloadavg()[0])
            self.samples += 1
            time.sleep(self.every)

    def report(self) -> dict:
        kinds: dict[str, dict] = {}
        for pid, kind in self.kind.items():
            k = kinds.setdefault(kind, {"processes": 0, "peak_mib": 0.0, "peak_stage": "", "cpu_s": 0.0, "pids": []})
            k["processes"] += 1
            k["cpu_s"] += self.cpu.get(pid, 0.0)
            k["pids"].append(pid)
            mib = self.peak.get(pid, 0) / 2**20
            if mib > k["peak_mib"]:
                k["peak_mib"], k["peak_stage"] = mib, self.peak_stage.get(pid, "")
        for kind, k in kinds.items():
            value, stage = self.kind_sum_peak.get(kind, (0, ""))
            k["sum_peak_mib"], k["sum_peak_stage"] = value / 2**20, stage
            k["cpu_s"] = round(k["cpu_s"], 1)
        return {"kinds": kinds, "total_peak_mib": self.total_peak / 2**20, "total_peak_stage": self.total_stage,
                "samples": self.samples, "ray_sessions": sorted(self.sessions), "load_max": self.load_max,
                "processes": {pid: {"kind": self.kind[pid], "peak_mib": round(self.peak.get(pid, 0) / 2**20, 1),
                                    "stage": self.peak_stage.get(pid, ""), "cpu_s": round(self.cpu.get(pid, 0), 1),
                                    "cmd": self.cmds.get(pid, "")} for pid in self.kind}}


# ----------------------------------------------------------------------------------------------------- redis

def redis_client():
    import redis
    from django.conf import settings

    if settings.REDIS_URL:
        return redis.Redis.from_url(settings.REDIS_URL)
    return redis.Redis(unix_socket_path=str(settings.EMBEDDED_REDIS_DIR / "redis.sock"))


def redis_pid() -> int | None:
    from django.conf import settings

    if settings.REDIS_URL:
        return None
    try:
        return int((settings.EMBEDDED_REDIS_DIR / "redis.pid").read_text())
    except (OSError, ValueError):
        return None


def redis_keys(client) -> dict[str, dict]:
    """Every key of every database of the server: {db/key: {type, bytes}}."""
    import redis

    found = {}
    conn = client.connection_pool.connection_kwargs
    where = ({"unix_socket_path": conn["path"]} if conn.get("path")
             else {k: conn[k] for k in ("host", "port", "password", "username") if k in conn})
    for name in client.info("keyspace"):
        db = int(name.removeprefix("db"))
        other = redis.Redis(db=db, **where)
        for key in other.scan_iter(count=1000):
            try:
                found[f"{db}/{key.decode(errors='replace')}"] = {"type": other.type(key).decode(),
                                                                 "bytes": other.memory_usage(key) or 0}
            except redis.RedisError:
                pass
    return found


ACCEPTABLE = re.compile(r"^\d+/(dedup:progress:|rq:(workers|worker:|queues|queue:|clean_registries|"
                        r"scheduler|wip:|finished:|failed:|deferred:|started:|scheduled:|canceled:|"
                        r"job:|executions?|results))")


# ------------------------------------------------------------------------------------------------------- run

def delete_signatures() -> int:
    from django.db import connection

    from screening.models import DocumentSignature

    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {DocumentSignature._meta.db_table}")  # noqa: S608 - the model's own name
        deleted = cursor.rowcount
    return deleted


def run_once(tree: Path, corpus: str, mode: str, workers: int, docs: int, out_dir: Path) -> dict:
    """One exact + near run of the corpus: see the module's doc."""
    import psutil
    from django.db import connections

    from dedup_site import progress
    from screening.models import Corpus, ScreeningRun

    connections.close_all()
    database = connections["default"].settings_dict["NAME"] if connections["default"].vendor == "postgresql" else ""
    client = redis_client()
    roots = {os.getpid(): "bench (this process)"}
    pid = redis_pid()
    if pid:
        roots[pid] = "redis-server"
    procs: list[subprocess.Popen] = []
    run_id: list[int] = []
    started = time.perf_counter()
    load_before = os.getloadavg()
    if mode == "workers":
        for _ in range(workers):
            procs.append(subprocess.Popen([sys.executable, "manage.py", "worker"], cwd=tree, env=dict(os.environ),
                                          stdout=subprocess.DEVNULL, stderr=open(out_dir / "worker.log", "a")))
            roots[procs[-1].pid] = "rq worker"
        time.sleep(4)
        sampler = Sampler(roots, database=database)
        sampler.start()
        from screening import runs

        started = time.perf_counter()
        run = runs.run_start(corpus=Corpus.objects.get(name=corpus), options=runs.RunOptions(exact=True, near=True))
        run_id.append(run.pk)
        screen = None
    else:
        screen = subprocess.Popen([sys.executable, "manage.py", "screen", "--corpus", corpus, "--sync"], cwd=tree,
                                  env=dict(os.environ), stdout=subprocess.PIPE, text=True,
                                  stderr=open(out_dir / "screen.stderr", "w"))
        roots[screen.pid] = "driver (screen --sync)"
        sampler = Sampler(roots, database=database)
        sampler.start()
        lines: list[str] = []

        def read_out():
            for line in screen.stdout:
                lines.append(line.rstrip())
                found = re.match(r"run (\d+)$", line.strip())
                if found and not run_id:
                    run_id.append(int(found.group(1)))

        threading.Thread(target=read_out, daemon=True).start()

    seen: dict[str, float] = {}
    keys_seen: dict[str, dict] = {}
    key_checks: list[dict] = []
    last_check = 0.0

    def check_keys(stage: str) -> None:
        keys = redis_keys(client)
        key_checks.append({"at": round(time.perf_counter() - started, 1), "stage": stage, "keys": len(keys),
                           "bytes": sum(v["bytes"] for v in keys.values())})
        for key, value in keys.items():
            old = keys_seen.setdefault(key, {**value, "stages": []})
            old["bytes"] = max(old["bytes"], value["bytes"])
            if stage not in old["stages"]:
                old["stages"].append(stage)

    def active() -> bool:
        if screen is not None:
            return screen.poll() is None
        return ScreeningRun.objects.get(pk=run_id[0]).is_active

    while active():
        state = (progress.read("run", run_id[0]) or {}) if run_id else {}
        stage = state.get("stage")
        now = time.perf_counter()
        if stage:
            if stage not in seen:
                seen[stage] = now - started
                sampler.stage = stage
                check_keys(stage)
                last_check = now
            elif stage == "verify" and now - last_check > 5:
                check_keys(stage)
                last_check = now
        time.sleep(0.25)
    wall = time.perf_counter() - started
    sampler.stage = "end"
    time.sleep(0.5)
    sampler.stop.set()
    sampler.join()
    for p in procs:
        p.terminate()
        p.wait(timeout=60)
    if screen is not None:
        screen.wait()
        if screen.returncode:
            print((out_dir / "screen.stderr").read_text()[-5000:], file=sys.stderr)
    check_keys("after")
    leftover = [p.pid for p in psutil.process_iter(["cmdline"])
                if any(s in " ".join(p.info["cmdline"] or []) for s in sampler.sessions)]
    run = ScreeningRun.objects.get(pk=run_id[0])
    order = sorted(seen, key=seen.get)
    outside = {a: round(seen[b] - seen[a], 1) for a, b in zip(order, [*order[1:], None], strict=True) if b}
    if order:
        outside[order[-1]] = round(wall - seen[order[-1]], 1)
    unacceptable = sorted(k for k in keys_seen if not ACCEPTABLE.match(k))
    return {"run": run.pk, "status": run.status, "error": run.error, "wall": wall, "outside_stages": outside,
            "stats": run.stats, "memory": sampler.report(), "load_before": load_before, "load_after": os.getloadavg(),
            "redis": {"checks": key_checks, "keys": keys_seen, "unacceptable": unacceptable},
            "ray_leftover_pids": leftover}


def throughput(result: dict, cores: int) -> dict:
    stats, seconds = result["stats"], result["stats"].get("seconds", {})
    near = stats.get("near", {})
    docs = stats.get("documents", 0)
    signed = near.get("representatives", 0)  # every representative is signed: the run signs from scratch
    rates = {}
    for stage, count, unit, per in (("exact", docs, "documents", 1), ("sign", signed, "documents", cores),
                                    ("band", near.get("representatives", signed), "documents", cores),
                                    ("verify", near.get("lsh_candidates", 0), "candidates", cores),
                                    ("publish", near.get("stored", 0), "pairs", 1)):
        if seconds.get(stage):
            rate = count / seconds[stage]
            rates[stage] = {"seconds": seconds[stage], "count": count, "unit": unit, "per_s": round(rate),
                            "cores": per, "per_s_per_core": round(rate / per)}
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", type=Path, default=HERE.parent, help="the checkout to measure (default: this)")
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--corpus-dir", type=Path, help="the generated files, kept and shared by the trees")
    parser.add_argument("--data-dir", type=Path, help="DEDUP_DATA_DIR (SQLite and the embedded Redis); kept, "
                        "and its corpus reused (signatures deleted) when run again")
    parser.add_argument("--mode", choices=("auto", "sync", "workers"), default="auto")
    parser.add_argument("--workers", type=int, default=2, help="RQ workers (workers mode)")
    parser.add_argument("--ray-cpus", type=int, default=2, help="DEDUP_RAY_CPUS (sync mode)")
    parser.add_argument("--local-documents", type=int, help="DEDUP_RAY_LOCAL_DOCUMENTS (sync mode): above "
                        "--docs, the in-process executor")
    parser.add_argument("--import-only", action="store_true", help="import the corpus and stop (a later "
                        "call with the same --data-dir or DATABASE_URL runs on it)")
    parser.add_argument("--label", default="")
    parser.add_argument("--json", type=Path, help="append the whole result as one JSON line")
    args = parser.parse_args()

    tree = args.tree.resolve()
    mode = args.mode
    if mode == "auto":
        mode = "sync" if (tree / "screening/runs/executors.py").exists() else "workers"
    data = args.data_dir or Path(tempfile.mkdtemp(prefix="dedup-run-scale-"))
    data.mkdir(parents=True, exist_ok=True)
    os.environ["DEDUP_DATA_DIR"] = str(data.resolve())
    os.environ["DJANGO_SETTINGS_MODULE"] = "dedup_site.settings"
    os.environ["DEDUP_RAY_CPUS"] = str(args.ray_cpus)
    if args.local_documents is not None:
        os.environ["DEDUP_RAY_LOCAL_DOCUMENTS"] = str(args.local_documents)
    corpus_dir = args.corpus_dir or data / "corpus"
    paths = corpus_files(corpus_dir, args.docs)

    os.chdir(tree)
    sys.path.insert(0, str(tree))
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection

    from dedup_site.queues import ensure_redis
    from screening.models import Corpus, Document

    call_command("migrate", verbosity=0)
    ensure_redis(stop_at_exit=True)
    name = f"scale{args.docs}"
    db = connection.vendor
    commit = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], text=True,
                            capture_output=True).stdout.strip()
    head = f"tree {tree} ({commit}), mode {mode}, {db}, {args.docs:,} documents, data {data}"
    print(head, flush=True)
    imported = None
    if Corpus.objects.filter(name=name).exists():
        count = Document.objects.filter(corpus__name=name).count()
        assert count == args.docs, f"corpus {name} holds {count:,} documents"
        began = time.perf_counter()
        deleted = delete_signatures()
        print(f"corpus {name} already imported; {deleted:,} stored signatures deleted in "
              f"{time.perf_counter() - began:.0f} s", flush=True)
    else:
        load = os.getloadavg()
        count, seconds = in_child(do_import, name, [str(p) for p in paths])
        imported = {"seconds": seconds, "documents": count, "load_before": load}
        print(f"import: {seconds:.0f} s, {count / seconds:,.0f} docs/s (load average before {load[0]:.2f})",
              flush=True)
    connection.close()
    if args.import_only:
        return

    result = run_once(tree, name, mode, args.workers, args.docs, data)
    in_process = mode == "sync" and not result["stats"].get("nodes") and args.docs < int(
        os.environ.get("DEDUP_RAY_LOCAL_DOCUMENTS", settings.DEDUP_RAY_LOCAL_DOCUMENTS))
    cores = 1 if in_process else (args.ray_cpus if mode == "sync" else args.workers)
    result.update(label=args.label, tree=str(tree), mode=mode, executor="in-process" if in_process else
                  ("ray" if mode == "sync" else "rq"), database=db, docs=args.docs, imported=imported,
                  throughput=throughput(result, cores), head=head)
    near = result["stats"].get("near", {})
    print(f"run {result['run']} {result['status']} {result['error'] or ''}: {result['wall']:.1f} s "
          f"({result['executor']}), {near.get('lsh_candidates', 0):,} candidates, {near.get('stored', 0):,} pairs; "
          f"load average {result['load_before'][0]:.2f} before, max {result['memory']['load_max']:.2f} during",
          flush=True)
    print(f"  stages as recorded: {result['stats'].get('seconds')}")
    print(f"  stages seen from outside: {result['outside_stages']}")
    for stage, rate in result["throughput"].items():
        print(f"  {stage:<8} {rate['seconds']:8.1f} s {rate['per_s']:>10,} {rate['unit']}/s "
              f"{rate['per_s_per_core']:>10,} /s/core ({rate['cores']})")
    memory = result["memory"]
    print(f"  peak RSS, all processes together: {memory['total_peak_mib']:,.0f} MiB ({memory['total_peak_stage']})")
    for kind, k in sorted(memory["kinds"].items(), key=lambda kv: -kv[1]["peak_mib"]):
        print(f"  {kind:<28} ×{k['processes']:<3} peak {k['peak_mib']:7,.0f} MiB ({k['peak_stage']:<7}) "
              f"sum peak {k['sum_peak_mib']:7,.0f} MiB ({k['sum_peak_stage']}), CPU {k['cpu_s']:,.0f} s")
    red = result["redis"]
    print(f"  redis keys: {len(red['keys'])} seen; not progress/RQ bookkeeping: {red['unacceptable'] or 'none'}")
    for check in red["checks"]:
        print(f"    at {check['at']:7.1f} s ({check['stage']}): {check['keys']} keys, {check['bytes']:,} bytes")
    if result["ray_leftover_pids"]:
        print(f"  Ray processes left after the run: {result['ray_leftover_pids']}")
    if imported:
        print(f"import + run: {imported['seconds'] + result['wall']:.0f} s")
    if args.json:
        with open(args.json, "a") as out:
            out.write(json.dumps(result, default=str) + "\n")
    if result["status"] != "complete":
        raise SystemExit(1)


if __name__ == "__main__":
    main()
