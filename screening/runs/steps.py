"""The steps of a run: plain functions over data, each given the run's spec and its part of the work, each reading
what it needs of the documents from the database itself. None reports progress, reads a setting, touches Redis
or knows where it runs: an executor runs them (here, or in another process or machine), the driver
(`pipeline`) puts them in order and owns the run's state.

    exact_step → sign_step (a slice of representatives each) → template_step → band_keys_step (a slice of
    representatives each, its keys by partition) → band_pairs_step (a partition each) → verify_step (a chunk of
    candidates each, whole components together)
"""

from __future__ import annotations

import ctypes
import time
from dataclasses import dataclass, field

import numpy as np

from screening.engine import explain, lsh, tokdiff
from screening.models import Document
from screening.runs import near, publish
from screening.runs.exact import ExactResult, exact_pass
from screening.runs.lifecycle import verification_key_check
from screening.runs.spec import RunSpec
from screening.suggestions import suggester_for


def documents(spec: RunSpec):
    """The run's documents: those of the uploads in its manifest (later uploads are not part of it)."""
    return Document.objects.filter(corpus_id=spec.corpus, upload_id__in=spec.uploads)


def exact_step(spec: RunSpec, report=None) -> ExactResult:
    """The exact groups (doc-content-v1) of the run's documents: the database groups the digests."""
    return exact_pass(documents(spec), report or (lambda fraction, stage: None))


def representatives(spec: RunSpec, duplicates: set[int]) -> np.ndarray:
    """The pks of the run's documents that the near pass signs, sorted: all but the exact copies of another
    (8 bytes a document)."""
    pks = np.fromiter(documents(spec).order_by("pk").values_list("pk", flat=True).iterator(10_000), dtype=np.int64)
    if duplicates:
        pks = pks[~np.isin(pks, np.fromiter(duplicates, dtype=np.int64, count=len(duplicates)))]
    return pks


@dataclass
class Signed:
    """What signing a slice of representatives did: how many were signed now, how many have no shingle."""

    computed: int = 0
    empty: int = 0

    def __add__(self, other: Signed) -> Signed:
        return Signed(self.computed + other.computed, self.empty + other.empty)


def sign_step(spec: RunSpec, pks: np.ndarray) -> Signed:
    """Sign these documents (`pks` sorted) that have no stored signature under the run's configuration and
    store what is computed (a task run twice stores nothing twice): the one way a run signs."""
    config, done = spec.near, Signed()
    for start in range(0, len(pks), near.BAND_READ):
        chunk = pks[start : start + near.BAND_READ].tolist()
        stored = near.stored_counts(chunk, config)
        done.empty += sum(1 for count in stored.values() if not count)
        for part in near.batches([pk for pk in chunk if pk not in stored]):
            rows = [row for row, _ in near.compute_signatures(part, config)]
            near.insert_signatures(rows, config)
            done.computed += len(rows)
            done.empty += sum(1 for row in rows if not row.shingle_count)
    return done


def template_step(spec: RunSpec, pks: np.ndarray, signed: int) -> np.ndarray:
    """The shingle hashes frequent enough across the run's `signed` documents to count as template, estimated
    from a sample of its representatives."""
    config = spec.near
    sample = [h for h in near.hashes_for(sorted(near.template_sample(pks.tolist())), config).values() if h.size]
    return explain.template_hashes(sample, signed, config.template_share, config.template_min_docs)


def band_keys_step(spec: RunSpec, pks: np.ndarray, parts: int, only: int | None = None) -> list[lsh.Keys]:
    """The map side of banding: the band keys of these documents' stored signatures (`pks` sorted, each
    signature read once), by partition of the band keys (only partition `only` when it is given)."""
    config, pieces = spec.near, [[] for _ in range(parts)]
    for found, signatures in near.signature_batches(pks, config):
        for part, keys in enumerate(lsh.keys_by_partition(signatures, found, config.bands, config.rows, parts, only)):
            pieces[part].append(keys)
    return [lsh.Keys.joined(keys, config.rows) for keys in pieces]


def band_pairs_step(spec: RunSpec, *keys: lsh.Keys) -> np.ndarray:
    """The reduce side: the candidate pairs (document pks, smaller first, sorted) of one partition's band keys,
    gathered from every map task. Holds that partition's keys, never a signature."""
    bander = lsh.Bander(spec.near.bands, spec.near.rows)
    for piece in keys:
        bander.add_keys(piece)
    return bander.pairs()


def candidates_merged(found: list[np.ndarray]) -> np.ndarray:
    """The candidates of every partition, as one sorted (n, 2) array of document pks."""
    return np.unique(np.concatenate(found), axis=0) if found else np.zeros((0, 2), dtype=np.int64)


@dataclass
class Verified:
    """What verifying candidates found, added up over chunks: how many pairs were stored (staged) and how many
    fell below the storage floor, the scores' histogram, the pairs at or above the threshold (the clusters'
    edges, an (n, 2) array of document pks) and the CPU seconds it took."""

    stored: int = 0
    below_floor: int = 0
    histogram: np.ndarray = field(default_factory=lambda: np.zeros(near.HISTOGRAM_BINS, dtype=np.int64))
    edges: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), dtype=np.int64))
    cpu: float = 0.0

    def __add__(self, other: Verified) -> Verified:
        return Verified(self.stored + other.stored, self.below_floor + other.below_floor,
                        self.histogram + other.histogram, np.concatenate([self.edges, other.edges]),
                        self.cpu + other.cpu)

    def stats(self, candidates: int) -> dict:
        return {"lsh_candidates": candidates, "verified": candidates, "stored": self.stored,
                "below_floor": self.below_floor, "at_or_above_threshold": len(self.edges),
                "histogram": self.histogram.tolist(), "verify_cpu_seconds": round(self.cpu, 3)}


def verify_step(spec: RunSpec, chunk: int, pairs: np.ndarray, template: np.ndarray) -> Verified:
    """Exact Jaccard, template scores and evidence of these candidates (document pks, an (n, 2) array), the
    documents they involve read here a batch a query; the pairs at or above the storage floor are staged in the
    database as chunk `chunk` of the run, with the verdicts their evidence suggests."""
    verification_key_check(spec)
    near.warmed()
    cpu = time.process_time()
    found, below_floor = near.verify_chunk([(int(a), int(b)) for a, b in pairs.tolist()], template, spec.near,
                                           lambda fraction, stage: None)
    publish.stage_pairs(run_id=spec.run, chunk=chunk,
                        rows=publish.staged_rows(spec.run, chunk, found, suggester_for(spec.corpus)))
    scores = np.array([p.jaccard for p in found], dtype=float)
    histogram, _ = np.histogram(scores, bins=near.HISTOGRAM_BINS, range=(0.0, 1.0))
    edges = np.array([(p.left, p.right) for p in found if p.jaccard >= spec.near.threshold],
                     dtype=np.int64).reshape(-1, 2)
    verified = Verified(len(found), below_floor, histogram.astype(np.int64), edges, time.process_time() - cpu)
    del found
    release_memory()
    return verified


def release_memory() -> None:
    """What a verification task held goes back to the system before the next task: the token diff's spare
    batches (about 300 MiB), and the heap's free pages (glibc keeps them otherwise: a worker's RSS grew with the
    size of its largest task)."""
    tokdiff.release_spares()
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def _libc():
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.malloc_trim  # noqa: B018 - glibc only
        return libc
    except (OSError, AttributeError):
        return None


_LIBC = _libc()
