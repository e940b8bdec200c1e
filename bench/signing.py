"""Benchmark: signing on one core (normalise, character 5-grams, 128-permutation MinHash) of real text in
English, Persian and Chinese, both policies, against a fused reference kernel measured in the same process.

    .venv/bin/python bench/signing.py [--docs 4000] [--datasketch 300]

Texts: about 2.2 KB each, made of the machine's translation catalogs (bench/devcorpus.py). Paths:
  project    screening.engine.fast.sign_texts, what a run's signing jobs call (a batch of texts at a time);
  fused      a reference written here, apart from the project's code: an ASCII fast path for normalisation
             (bytes.translate), the policy itself for other text, then code points → 5-gram hash → MinHash in
             one compiled loop;
  datasketch MinHash.update_batch with its default hash over the shingle strings (on --datasketch texts);
  datasketch bulk + mmh3, and rensa, when those packages are installed (they are not dependencies).
Every path's signatures are checked against the project's (the same hash function) where they share one.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from screening.engine import fast, minhash, shingle  # noqa: E402
from screening.engine.normalize import POLICIES  # noqa: E402
from screening.engine.shingle import POLY, ShingleSpec  # noqa: E402

SPEC = ShingleSpec("char", 5)
_LOWER_ALNUM = bytes(range(256)).translate(bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                                                           b"abcdefghijklmnopqrstuvwxyz"))
_DROP = bytes(c for c in range(128) if not chr(c).isalnum())


def texts_of(lang: str, n: int) -> list[str]:
    from bench import devcorpus

    builder, out = devcorpus.Builder(11), []
    while len(out) < n:
        text = builder.document(lang, 8).body
        while len(text.encode()) < 2200:
            text += "\n\n" + builder.document(lang, 4).body
        out.append(text)
    return out


@njit(cache=True, nogil=True)
def _reference_kernel(cp, offsets, k, a, b, sigs):
    p, mask = np.uint64(POLY), np.uint64(0xFFFFFFFF)
    pk = np.uint64(1)
    for _ in range(k):
        pk = pk * p
    for d in range(offsets.shape[0] - 1):
        s, n = offsets[d], offsets[d + 1] - offsets[d]
        row = sigs[d]
        row[:] = np.uint32(0xFFFFFFFF)
        if n < k:
            continue
        h = np.uint64(0)
        for i in range(k):
            h = h * p + np.uint64(cp[s + i])
        for w in range(n - k + 1):
            if w:
                h = h * p - np.uint64(cp[s + w - 1]) * pk + np.uint64(cp[s + w + k - 1])
            x = h ^ (h >> np.uint64(33))
            x *= np.uint64(0xFF51AFD7ED558CCD)
            x ^= x >> np.uint64(33)
            x *= np.uint64(0xC4CEB9FE1A85EC53)
            x ^= x >> np.uint64(33)
            y = np.uint32(x & mask)
            y ^= y >> np.uint32(16)
            y = np.uint32(y * np.uint32(0x85EBCA6B))
            y ^= y >> np.uint32(13)
            y = np.uint32(y * np.uint32(0xC2B2AE35))
            y ^= y >> np.uint32(16)
            for j in range(a.shape[0]):
                row[j] = min(row[j], np.uint32(a[j] * y + b[j]))  # vectorised minimums, as the project's


def fused(texts: list[str], policy, perms) -> np.ndarray:
    """The reference: normalise (ASCII by bytes.translate, the rest by the policy), then one fused loop."""
    normalized = []
    for text in texts:
        if text.isascii():
            normalized.append(text.encode().translate(_LOWER_ALNUM, _DROP).decode())
        else:
            normalized.append(policy.normalize(text))
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(t) for t in normalized], out=offsets[1:])
    cp = np.frombuffer("".join(normalized).encode("utf-32-le"), dtype=np.uint32)
    sigs = np.empty((len(texts), perms.shape[1]), dtype=np.uint32)
    _reference_kernel(cp, offsets, SPEC.k, perms[0].astype(np.uint32), perms[1].astype(np.uint32), sigs)
    return sigs


def project(texts: list[str], policy, perms) -> np.ndarray:
    out = []
    for start in range(0, len(texts), 2000):  # as a signing job reads its documents
        out.append(fast.sign_texts(texts[start:start + 2000], policy, SPEC, perms)[0])
    return np.vstack(out)


def datasketch_default(texts: list[str], policy) -> None:
    from datasketch import MinHash

    for text in texts:
        m = MinHash(num_perm=128, seed=1)
        m.update_batch([s.encode() for s in shingle.shingles(text, policy, SPEC)])


def datasketch_mmh3(texts: list[str], policy) -> None:
    import mmh3
    from datasketch import MinHash

    sets = [[s.encode() for s in shingle.shingles(t, policy, SPEC)] for t in texts]
    MinHash.bulk(sets, num_perm=128, seed=1, hashfunc=lambda d: mmh3.hash(d, signed=False))


def rensa(texts: list[str], policy) -> None:
    from rensa import RMinHash

    for text in texts:
        m = RMinHash(num_perm=128, seed=1)
        m.update(shingle.shingles(text, policy, SPEC))
        m.digest()


def best_of(fn, *args, repeat: int = 3) -> float:
    fn(*args)  # warm: compiled kernels, tables, caches
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=4000, help="texts per script")
    parser.add_argument("--datasketch", type=int, default=300, help="texts per script for the slow paths")
    args = parser.parse_args()
    perms = minhash.permutations(128, 1)
    print(f"{'policy':<24} {'script':<6} {'project':>9} {'fused':>9} {'project ÷ fused':>16} "
          f"{'datasketch':>11} {'+mmh3':>8} {'rensa':>8}   docs/s, one core")
    for name, policy in POLICIES.items():
        for lang in ("en", "fa", "zh"):
            texts = texts_of(lang, args.docs)
            assert (project(texts[:200], policy, perms) == fused(texts[:200], policy, perms)).all()
            ours = len(texts) / best_of(project, texts, policy, perms)
            ref = len(texts) / best_of(fused, texts, policy, perms)
            few = texts[: args.datasketch]
            cells = []
            for path in (datasketch_default, datasketch_mmh3, rensa):
                try:
                    cells.append(f"{len(few) / best_of(path, few, policy, repeat=1):.0f}")
                except ImportError:
                    cells.append("—")
            print(f"{name:<24} {lang:<6} {ours:>9.0f} {ref:>9.0f} {ours / ref:>16.2f} {cells[0]:>11} "
                  f"{cells[1]:>8} {cells[2]:>8}")


if __name__ == "__main__":
    main()
