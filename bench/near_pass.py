"""Benchmark: the near pass on generated ~2.2 KB documents, against the plain datasketch path.

    .venv/bin/python bench/near_pass.py [--docs 20000] [--service]

Both paths do the same work end to end — normalise, shingle (character 5-grams), sign (128 permutations),
band (b×r chosen for threshold 0.7), verify every candidate by exact Jaccard — on one core:
  plain:  Python shingle sets, datasketch MinHash.update_batch with its default hash, MinHashLSH(params),
          Jaccard of Python sets;
  ours:   screening.engine (compiled shingle hashing and signing, numpy banding, merge Jaccard).
With --service, also the whole run through the database (import not included). Each path runs in a forked
child so its peak memory (max RSS) is its own.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

THRESHOLD = 0.7


def make_vocabulary(rng: random.Random, size: int = 20_000) -> list[str]:
    syllables = [a + b for a in "bcdfghklmnprstvz" for b in "aeiou"]
    return ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 4))) for _ in range(size)]


def new_text(rng: random.Random, vocab: list[str]) -> str:
    """About 2.2 KB of words, with a full stop now and then."""
    words, size = [], 0
    while size < 2200:
        word = rng.choice(vocab) + ("." if rng.random() < 0.08 else "")
        words.append(word)
        size += len(word) + 1
    return " ".join(words)


def edited_copy(rng: random.Random, vocab: list[str], text: str) -> str:
    """The text with 1–15% of its words replaced."""
    rate = rng.choice([0.01, 0.03, 0.05, 0.1, 0.15])
    return " ".join(rng.choice(vocab) if rng.random() < rate else w for w in text.split(" "))


def generate(n: int, seed: int = 7, dup_share: float = 0.1) -> list[str]:
    """n documents of ~2.2 KB; dup_share of them are edited copies of earlier ones."""
    rng = random.Random(seed)
    vocab = make_vocabulary(rng)
    texts: list[str] = []
    for _ in range(n):
        dup = texts and rng.random() < dup_share
        texts.append(edited_copy(rng, vocab, rng.choice(texts)) if dup else new_text(rng, vocab))
    return texts


def plain_path(texts: list[str]) -> int:
    from datasketch import MinHash, MinHashLSH

    from screening.engine import lsh
    from screening.engine.normalize import get_policy

    policy = get_policy("nfkc-casefold-alnum-v1")
    bands, rows = lsh.choose_bands(128, THRESHOLD)
    index = MinHashLSH(num_perm=128, params=(bands, rows))
    sets, sketches = [], []
    for i, text in enumerate(texts):
        normalized = policy.normalize(text)
        shingles = {normalized[j : j + 5] for j in range(len(normalized) - 4)}
        m = MinHash(num_perm=128, seed=1)
        m.update_batch([s.encode("utf-8") for s in shingles])
        sets.append(shingles)
        sketches.append(m)
        index.insert(i, m)
    pairs = 0
    for i, m in enumerate(sketches):
        for j in index.query(m):
            if j > i and len(sets[i] & sets[j]) / len(sets[i] | sets[j]) >= 0.3:
                pairs += 1
    return pairs


def fast_path(texts: list[str]) -> int:
    import numpy as np

    from screening.engine import fast, lsh, minhash
    from screening.engine.normalize import get_policy
    from screening.engine.shingle import ShingleSpec

    policy, spec = get_policy("nfkc-casefold-alnum-v1"), ShingleSpec("char", 5)
    perms = minhash.permutations(128, 1)
    bands, rows = lsh.choose_bands(128, THRESHOLD)
    hashes = [fast.shingle_hashes(t, policy, spec) for t in texts]
    signatures = np.vstack([fast.signature(h, perms) for h in hashes])
    candidates = lsh.band_pairs(signatures, bands, rows)
    return sum(1 for i, j in candidates if fast.jaccard(hashes[i], hashes[j]) >= 0.3)


def service_path(texts: list[str]) -> int:
    import json

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connections

    from screening import runs
    from screening.engine.minhash import NearConfig
    from screening.ingest import uploads
    from screening.models import Corpus

    call_command("migrate", verbosity=0)
    path = Path(os.environ["DEDUP_DATA_DIR"]) / "near.jsonl"
    with open(path, "w", encoding="utf-8") as out:
        for i, t in enumerate(texts):
            out.write(json.dumps({"doc_id": f"d{i:06}", "language": "en", "body": t}) + "\n")
    uploads.upload_process(upload=uploads.upload_create_from_path(corpus_name="bench", path=path))
    connections.close_all()
    start = time.perf_counter()
    run = runs.run_create(corpus=Corpus.objects.get(name="bench"), exact=True, near=True, near_config=NearConfig())
    run = runs.run_execute(run=run)
    print(f"    (service run: {time.perf_counter() - start:.1f} s for the run itself)")
    return run.stats["near"]["stored"]


def in_child(fn, *args):
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()

    def target():
        start = time.perf_counter()
        result = fn(*args)
        queue.put((result, time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))

    process = ctx.Process(target=target)
    process.start()
    out = queue.get()
    process.join()
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=20_000)
    parser.add_argument("--plain-docs", type=int, default=None, help="documents for the slow plain path")
    parser.add_argument("--service", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("DEDUP_DATA_DIR", tempfile.mkdtemp(prefix="dedup-bench-"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dedup_site.settings")

    texts = generate(args.docs)
    plain_n = args.plain_docs or args.docs
    avg = sum(len(t) for t in texts) / len(texts)
    print(f"{args.docs:,} documents, {avg:,.0f} characters on average; character 5-grams, 128 permutations, "
          f"threshold {THRESHOLD}")
    fast_path(texts[:200])  # compile (cached after the first run)
    results = [("ours (compiled kernels, numpy banding)", args.docs, *in_child(fast_path, texts))]
    results.append(("plain datasketch path", plain_n, *in_child(plain_path, texts[:plain_n])))
    if args.service:
        results.append(("ours through the service and database", args.docs, *in_child(service_path, texts)))
    print(f"{'path':<40}{'docs':>8}{'pairs':>8}{'seconds':>9}{'docs/s':>9}{'peak MiB':>10}")
    for name, n, pairs, seconds, peak in results:
        print(f"{name:<40}{n:>8,}{pairs:>8,}{seconds:>9.1f}{n / seconds:>9,.0f}{peak:>10.0f}")
    ours, plain = results[0], results[1]
    print(f"speed-up, ours vs plain datasketch: ×{(ours[1] / ours[3]) / (plain[1] / plain[3]):.1f} documents/s")


if __name__ == "__main__":
    main()
