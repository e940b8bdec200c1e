"""Benchmark: the peak memory of one banding job against the size of the corpus.

    .venv/bin/python bench/banding_memory.py [--sizes 250000,500000,1000000] [--band-keys 8000000]

Imports documents of about 300 characters (10% edited copies; banding reads only their signatures) in uploads
of the smallest size, signs them, then for each size measures, each in a forked child (time and peak RSS):

- **partitioned**: one banding job as a run now gives it (`near.band_part`: one partition of the band keys,
  read from the stored signatures), with the partitions that `DEDUP_BAND_KEYS` asks for;
- **one array** (the baseline, how banding worked before): every signature of the run in one array, banded
  with `lsh.band_pairs`.

Both find the same candidates (checked). The parent process stays small, so a child's peak is its own work
plus the same interpreter, Django and numpy.

Database: SQLite in a throwaway folder, or DATABASE_URL. Redis is not used.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DEDUP_DATA_DIR", tempfile.mkdtemp(prefix="dedup-banding-"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dedup_site.settings")

from bench.near_pass import in_child, make_vocabulary  # noqa: E402


def write_part(path: Path, start: int, n: int, rng: random.Random, vocab: list[str], recent: list[str]) -> None:
    with open(path, "w", encoding="utf-8") as out:
        for i in range(start, start + n):
            if recent and rng.random() < 0.1:
                words = rng.choice(recent).split(" ")
                words[rng.randrange(len(words))] = rng.choice(vocab)
                text = " ".join(words)
            else:
                text = " ".join(rng.choice(vocab) for _ in range(50))
            recent.append(text)
            if len(recent) > 5000:
                recent.pop(rng.randrange(len(recent)))
            out.write(json.dumps({"doc_id": f"d{i:07}", "language": "en", "body": text}) + "\n")


def build(sizes: list[int]) -> list[int]:
    """Import max(sizes) documents in uploads of min(sizes) and sign them; returns the upload ids."""
    import numpy as np

    from screening.ingest import uploads
    from screening.models import Document
    from screening.runs import steps

    step, data = min(sizes), Path(os.environ["DEDUP_DATA_DIR"])
    rng, recent = random.Random(7), []
    vocab = make_vocabulary(rng)
    ids = []
    for start in range(0, max(sizes), step):
        path = data / f"part-{start}.jsonl"
        write_part(path, start, step, rng, vocab, recent)
        upload = uploads.upload_process(upload=uploads.upload_create_from_path(corpus_name="big", path=path))
        assert upload.status == "complete", upload.problems[:3]
        ids.append(upload.pk)
        path.unlink()
    pks = np.array(Document.objects.order_by("pk").values_list("pk", flat=True), dtype=np.int64)
    steps.sign_step(_spec(), pks)
    return ids


def _spec():
    """A spec of a near pass with the default configuration (the steps read nothing else of it here)."""
    from screening.engine.minhash import NearConfig
    from screening.runs.spec import RunSpec

    return RunSpec(run=0, corpus=0, uploads=(), exact=False, near=NearConfig().resolved())


def run_pks(upload_ids: list[int]):
    """The documents of these uploads, as a run's banding job reads them (sorted pks, 8 bytes each)."""
    import numpy as np

    from screening.models import Document

    return np.fromiter(Document.objects.filter(upload_id__in=upload_ids).order_by("pk").values_list("pk", flat=True)
                       .iterator(10_000), dtype=np.int64)


def partitioned(upload_ids: list[int], band_keys: int) -> tuple[int, int]:
    """One partition job (the first; each holds about the same share) and how many partitions there are."""
    from screening.engine import lsh
    from screening.runs import steps

    spec, pks = _spec(), run_pks(upload_ids)
    parts = lsh.parts_for(len(pks), spec.near.bands, band_keys)
    pairs = steps.band_pairs_step(spec, steps.band_keys_step(spec, pks, parts, 0)[0])
    return int(pairs.shape[0]), parts


def one_array(upload_ids: list[int]) -> int:
    import numpy as np

    from screening.engine import lsh
    from screening.engine.minhash import NearConfig
    from screening.runs import near

    config, pks = NearConfig().resolved(), run_pks(upload_ids)
    matrix, at = np.zeros((len(pks), config.num_perm), dtype=np.uint32), 0
    for found, signatures in near.signature_batches(pks, config):
        matrix[at : at + len(found)] = signatures
        at += len(found)
    return int(lsh.band_pairs(matrix[:at], config.bands, config.rows).shape[0])


def all_parts(upload_ids: list[int], band_keys: int) -> int:
    from screening.engine import lsh
    from screening.runs import steps

    spec, pks = _spec(), run_pks(upload_ids)
    parts = lsh.parts_for(len(pks), spec.near.bands, band_keys)
    return len(steps.candidates_merged([steps.band_pairs_step(spec, steps.band_keys_step(spec, pks, parts, part)[part])
                                        for part in range(parts)]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="250000,500000,1000000")
    parser.add_argument("--band-keys", type=int, default=None, help="DEDUP_BAND_KEYS (default: the setting's)")
    parser.add_argument("--no-check", action="store_true", help="skip banding every partition to compare pairs")
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))

    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connections

    call_command("migrate", verbosity=0)
    band_keys = args.band_keys or settings.DEDUP_BAND_KEYS
    began = time.perf_counter()
    upload_ids = build(sizes)
    connections.close_all()  # each child opens its own connection
    print(f"{max(sizes):,} documents imported and signed in {time.perf_counter() - began:.0f} s; "
          f"DEDUP_BAND_KEYS {band_keys:,}", flush=True)
    print(f"{'documents':>10} {'partitions':>10} {'one job (partitioned)':>24} {'one array (baseline)':>24} "
          f"{'peak ratio':>10}")
    for size in sizes:
        uploads = upload_ids[: size // min(sizes)]
        (found, parts), seconds, peak = in_child(partitioned, uploads, band_keys)
        whole, base_seconds, base_peak = in_child(one_array, uploads)
        if not args.no_check:
            merged, _, _ = in_child(all_parts, uploads, band_keys)
            assert merged == whole, (merged, whole)
        print(f"{size:>10,} {parts:>10} {peak:>9,.0f} MiB {seconds:>7.1f} s   {base_peak:>9,.0f} MiB "
              f"{base_seconds:>7.1f} s   ×{peak / base_peak:.2f}   ({whole:,} candidates)", flush=True)


if __name__ == "__main__":
    main()
