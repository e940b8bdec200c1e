"""Benchmark: import + exact pass + near pass of a generated corpus on real workers, with per-stage figures.

    .venv/bin/python bench/million.py [--docs 1000000] [--workers 2] [--scaling-docs 100000] [--baseline 20000]

1. Generates --docs documents of ~2.2 KB (10% edited copies) to JSONL files of 250,000, streaming.
2. Imports them, one upload per file (`upload_process` in a forked child: its time and peak memory).
3. Starts --workers real `manage.py worker` processes and runs exact + near on the corpus. The run's progress
   is polled, so each stage's wall time is seen across all chunk jobs; the peak memory (RSS) of every worker
   and its work-horses is sampled with psutil.
4. Scaling: the same run over the first --scaling-docs documents with 1 and with 2 workers.
5. Baseline: the plain datasketch path (Python shingle sets, MinHash.update_batch, in-memory MinHashLSH) on
   --baseline documents in one process, as documents/s to compare with ours.

Database: SQLite in a throwaway folder, or DATABASE_URL. Redis: the embedded one, or REDIS_URL.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DEDUP_DATA_DIR", tempfile.mkdtemp(prefix="dedup-million-"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dedup_site.settings")

from bench.near_pass import edited_copy, in_child, make_vocabulary, new_text, plain_path  # noqa: E402

RECENT = 20_000  # edited copies are made from one of the last RECENT documents (bounded memory)


def write_corpus(directory: Path, n: int, part: int, seed: int = 7, dup_share: float = 0.1) -> tuple[list[Path], int]:
    """Stream n documents of ~2.2 KB to JSONL files of `part` documents each (uploads are capped at 1 GiB);
    dup_share are edited copies (1–15% of words replaced). Returns the files and the mean length."""
    rng = random.Random(seed)
    vocab = make_vocabulary(rng)
    recent: list[str] = []
    total = 0
    paths: list[Path] = []
    out = None
    for i in range(n):
        if i % part == 0:
            if out:
                out.close()
            paths.append(directory / f"corpus-{len(paths) + 1:02}.jsonl")
            out = open(paths[-1], "w", encoding="utf-8")  # noqa: SIM115 - closed when the next part opens
        dup = recent and rng.random() < dup_share
        text = edited_copy(rng, vocab, rng.choice(recent)) if dup else new_text(rng, vocab)
        recent.append(text)
        if len(recent) > RECENT:
            recent.pop(rng.randrange(len(recent)))
        total += len(text)
        out.write(json.dumps({"doc_id": f"d{i:07}", "source_id": f"s{i % 1000}", "language": "en",
                              "body": text}) + "\n")
    if out:
        out.close()
    return paths, total // max(n, 1)


def generated(directory: Path, n: int) -> tuple[list[Path], int]:
    """The corpus's files in `directory`, written unless a complete set is already there."""
    done = directory / "complete.json"
    if done.exists():
        meta = json.loads(done.read_text())
        return [directory / name for name in meta["files"]], meta["size"]
    directory.mkdir(parents=True, exist_ok=True)
    paths, size = write_corpus(directory, n, part=250_000)
    done.write_text(json.dumps({"files": [p.name for p in paths], "size": size}))
    return paths, size


def head(path: Path, target: Path, n: int) -> None:
    with open(path, encoding="utf-8") as src, open(target, "w", encoding="utf-8") as out:
        for i, line in enumerate(src):
            if i >= n:
                break
            out.write(line)


def do_import(corpus: str, paths: list[str]) -> int:
    from screening.ingest import uploads

    count = 0
    for path in paths:
        upload = uploads.upload_process(upload=uploads.upload_create_from_path(corpus_name=corpus,
                                                                                 path=Path(path)))
        assert upload.status == "complete", upload.problems[:3]
        count += upload.document_count
    return count


class PeakMemory(threading.Thread):
    """Samples the RSS of each worker process tree (the worker and its forked work-horses)."""

    def __init__(self, pids: list[int]):
        super().__init__(daemon=True)
        self.pids, self.peak, self.stop = pids, 0, threading.Event()

    def run(self) -> None:
        import psutil

        while not self.stop.is_set():
            for pid in self.pids:
                try:
                    parent = psutil.Process(pid)
                    for proc in [parent, *parent.children(recursive=True)]:
                        self.peak = max(self.peak, proc.memory_info().rss)
                except psutil.Error:
                    pass
            time.sleep(0.2)


def screen(corpus: str, workers: int) -> dict:
    """One exact + near run on `workers` real worker processes: wall time per stage and peak memory."""
    from django.db import connections

    from dedup_site import progress
    from screening import runs
    from screening.models import Corpus, ScreeningRun

    connections.close_all()
    procs = [subprocess.Popen([sys.executable, "manage.py", "worker"], cwd=ROOT, env=dict(os.environ),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(workers)]
    time.sleep(4)
    sampler = PeakMemory([p.pid for p in procs])
    sampler.start()
    start = time.perf_counter()
    run = runs.run_start(corpus=Corpus.objects.get(name=corpus), options=runs.RunOptions(exact=True, near=True))
    seen: dict[str, float] = {}
    while ScreeningRun.objects.get(pk=run.pk).is_active:
        state = progress.read("run", run.pk) or {}
        if state.get("stage"):
            seen.setdefault(state["stage"], time.perf_counter() - start)
        time.sleep(0.25)
    wall = time.perf_counter() - start
    sampler.stop.set()
    for p in procs:
        p.terminate()
        p.wait(timeout=60)
    run.refresh_from_db()
    assert run.status == "complete", run.error
    order = sorted(seen, key=seen.get)
    stages = {a: seen[b] - seen[a] for a, b in zip(order, [*order[1:], None], strict=True) if b}
    if order:
        stages[order[-1]] = wall - seen[order[-1]]
    return {"wall": wall, "stages": stages, "peak_mib": sampler.peak / 2**20, "pairs": run.stats["near"]["stored"],
            "candidates": run.stats["near"]["lsh_candidates"], "seconds": run.stats.get("seconds", {}),
            "workers": run.stats.get("workers", [])}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--scaling-docs", type=int, default=100_000, help="0 to skip the 1 → 2 worker check")
    parser.add_argument("--baseline", type=int, default=20_000, help="documents for the plain datasketch path")
    parser.add_argument("--corpus-dir", type=Path, help="keep the generated files here and reuse them next time "
                        "(the corpus is the same for the same --docs): two checkouts measured side by side")
    args = parser.parse_args()

    import django

    django.setup()
    from django.core.management import call_command

    from dedup_site.queues import ensure_redis

    call_command("migrate", verbosity=0)
    ensure_redis(stop_at_exit=True)
    data = Path(os.environ["DEDUP_DATA_DIR"])
    began = time.perf_counter()
    paths, size = generated(args.corpus_dir / str(args.docs) if args.corpus_dir else data, args.docs)
    print(f"{args.docs:,} documents of ~{size:,} characters ready in {time.perf_counter() - began:.0f} s "
          f"({sum(p.stat().st_size for p in paths) / 2**30:.2f} GiB in {len(paths)} files)", flush=True)

    count, seconds, peak = in_child(do_import, "big", [str(p) for p in paths])
    print(f"import: {seconds:.0f} s, {count / seconds:,.0f} docs/s, peak {peak:,.0f} MiB", flush=True)
    result = screen("big", args.workers)
    print(f"run on {args.workers} workers: {result['wall']:.0f} s, {args.docs / result['wall']:,.0f} docs/s, "
          f"{result['candidates']:,} candidates, {result['pairs']:,} pairs, peak worker RSS "
          f"{result['peak_mib']:,.0f} MiB", flush=True)
    for stage, spent in result["stages"].items():
        print(f"  {stage:<8} {spent:7.1f} s  {args.docs / spent if spent else 0:>10,.0f} docs/s")
    print(f"  seconds of each stage as the run recorded them: {result['seconds']}")
    print(f"import + run: {seconds + result['wall']:.0f} s ({(seconds + result['wall']) / 60:.1f} min)", flush=True)

    if args.scaling_docs:
        small = data / "scaling.jsonl"
        head(paths[0], small, args.scaling_docs)
        walls = {}
        for workers in (1, 2):
            in_child(do_import, f"scale{workers}", [str(small)])
            walls[workers] = screen(f"scale{workers}", workers)["wall"]
            print(f"scaling corpus {args.scaling_docs:,} docs, {workers} worker(s): {walls[workers]:.1f} s", flush=True)
        print(f"1 → 2 workers: ×{walls[1] / walls[2]:.2f}")

    if args.baseline:
        texts = []
        with open(paths[0], encoding="utf-8") as src:
            for line in src:
                texts.append(json.loads(line)["body"])
                if len(texts) >= args.baseline:
                    break
        _, plain_seconds, plain_peak = in_child(plain_path, texts)
        plain_rate = len(texts) / plain_seconds
        ours = args.docs / result["wall"]
        print(f"baseline, plain datasketch path on {len(texts):,} docs in one process: {plain_rate:,.0f} docs/s, "
              f"peak {plain_peak:,.0f} MiB; ours (whole run, {args.workers} workers): {ours:,.0f} docs/s = "
              f"×{ours / plain_rate:.1f}")


if __name__ == "__main__":
    main()
