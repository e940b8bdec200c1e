"""The near pass of a run: sign representatives, band, verify, score templates (database side).

The algorithms live in screening/engine; this module streams documents from the database in batches,
reuses stored signatures of the same configuration, and returns the verified pairs for the run to publish.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from screening.engine import explain, fast, lsh, revision
from screening.engine import near as engine
from screening.engine.normalize import get_policy
from screening.models import Document, DocumentSignature

BATCH = 1000
TEMPLATE_SAMPLE = 5_000  # documents whose shingles estimate the corpus-wide frequencies
HISTOGRAM_BINS = 20  # over [0, 1]

Progress = Callable[[float, str], None]


@dataclass
class NearPair:
    left: int  # document pk (left has the smaller doc_id)
    right: int
    jaccard: float
    estimate: float
    template_share: float | None
    jaccard_without_template: float | None
    signals: list[list[str]] = field(default_factory=list)  # [[kind, left, right], ...]


@dataclass
class NearResult:
    pairs: list[NearPair] = field(default_factory=list)
    stats: dict = field(default_factory=dict)


def _batches(items: list, size: int = BATCH):
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _hashes_for(pks: list[int], config: engine.NearConfig, bodies: dict | None = None) -> dict[int, np.ndarray]:
    """Shingle hashes of the given documents (and their bodies into `bodies`, when given)."""
    policy, spec = get_policy(config.policy), config.spec
    out = {}
    for chunk in _batches(pks):
        for pk, body in Document.objects.filter(pk__in=chunk).values_list("pk", "body"):
            out[pk] = fast.shingle_hashes(body, policy, spec)
            if bodies is not None:
                bodies[pk] = body
    return out


def compute_signatures(pks: list[int], config: engine.NearConfig
                       ) -> Iterator[tuple[DocumentSignature, np.ndarray]]:
    """For each document (bodies read in batches): its signature row, not yet saved, and its shingle hashes.
    A document without shingles gets a row with empty values."""
    policy, spec = get_policy(config.policy), config.spec
    perms = engine.permutations(config.num_perm, config.seed, config.scheme)
    for chunk in _batches(pks):
        for pk, body in Document.objects.filter(pk__in=chunk).values_list("pk", "body"):
            hashes = fast.shingle_hashes(body, policy, spec)
            values = engine.to_bytes(fast.signature(hashes, perms), config) if hashes.size else b""
            yield DocumentSignature(document_id=pk, key=config.signature_key, seed=config.seed, scheme=config.scheme,
                                    shingle_count=int(hashes.size), values=values), hashes


def store_signatures(pks: list[int], config: engine.NearConfig) -> int:
    """Compute and store the signatures of these documents that have none under this key (a chunk job's
    work; idempotent). Returns how many were computed."""
    computed = 0
    for chunk in _batches(pks):
        have = set(DocumentSignature.objects.filter(document_id__in=chunk, key=config.signature_key)
                   .values_list("document_id", flat=True))
        rows = [row for row, _ in compute_signatures([pk for pk in chunk if pk not in have], config)]
        DocumentSignature.objects.bulk_create(rows, ignore_conflicts=True)
        computed += len(rows)
    return computed


def sign(representatives: list[int], config: engine.NearConfig, report: Progress
         ) -> tuple[list[int], np.ndarray, dict[int, np.ndarray], int, int]:
    """Signatures of the representatives (reused when stored under the same key, else computed and stored).

    Returns (signed pks in input order, their signatures as an (n, num_perm) uint32 array, shingle hashes of
    a sample of the signed documents, number of documents without shingles, number newly signed).
    """
    step = max(1, math.ceil(len(representatives) / TEMPLATE_SAMPLE))
    sampled = set(representatives[::step])
    signed: list[int] = []
    rows: list[np.ndarray] = []
    sample_hashes: dict[int, np.ndarray] = {}
    empty = computed = 0
    for done, chunk in enumerate(_batches(representatives), start=1):
        stored = {
            pk: (count, bytes(values))
            for pk, count, values in DocumentSignature.objects.filter(document_id__in=chunk, key=config.signature_key)
            .values_list("document_id", "shingle_count", "values")
        }
        new_rows = []
        for row, hashes in compute_signatures([pk for pk in chunk if pk not in stored], config):
            stored[row.document_id] = (row.shingle_count, row.values)
            if row.document_id in sampled and hashes.size:
                sample_hashes[row.document_id] = hashes  # kept: the template estimate needs them anyway
            new_rows.append(row)
        DocumentSignature.objects.bulk_create(new_rows, ignore_conflicts=True)
        computed += len(new_rows)
        for pk in chunk:
            count, data = stored[pk]
            if not count:
                empty += 1  # no shingle, no signature: never paired, not even with another empty one
                continue
            signed.append(pk)
            rows.append(engine.from_bytes(data, config))
        report(done * BATCH / max(len(representatives), 1), "sign")
    unsampled = [pk for pk in signed if pk in sampled and pk not in sample_hashes]
    sample_hashes.update(_hashes_for(unsampled, config))
    matrix = np.vstack(rows) if rows else np.zeros((0, config.num_perm), dtype=np.uint32)
    return signed, matrix, sample_hashes, empty, computed


def near_pass(representatives: list[int], doc_ids: dict[int, str], config: engine.NearConfig,
              corpus_size: int, report: Progress) -> NearResult:
    """Find, verify and score the near-duplicate pairs among the representatives (document pks)."""
    result = NearResult()
    signed, matrix, sample, empty, computed = sign(representatives, config, report)
    report(0.0, "band")
    candidates = lsh.band_pairs(matrix, config.bands, config.rows)
    report(1.0, "band")
    template = explain.template_hashes(list(sample.values()), len(signed), config.template_share,
                                       config.template_min_docs)
    involved = sorted({signed[i] for i in np.unique(candidates)}) if candidates.size else []
    bodies: dict[int, str] = {}
    hashes = _hashes_for(involved, config, bodies)
    below_floor = 0
    for n, (i, j) in enumerate(candidates):
        left, right = signed[i], signed[j]
        score = fast.jaccard(hashes[left], hashes[right]) or 0.0
        if score < config.storage_floor:
            below_floor += 1
            continue
        share, without = explain.template_scores(hashes[left], hashes[right], template)
        if doc_ids[left] > doc_ids[right]:
            left, right = right, left
        found = revision.signals(bodies[left], bodies[right])
        result.pairs.append(NearPair(left, right, score, engine.estimate(matrix[i], matrix[j]), share, without,
                                     [[s.kind, s.left, s.right] for s in found]))
        if n % 5000 == 0:
            report(n / len(candidates), "verify")
    report(1.0, "verify")
    result.pairs.sort(key=lambda p: (-p.jaccard, doc_ids[p.left], doc_ids[p.right]))
    scores = np.array([p.jaccard for p in result.pairs], dtype=float)
    histogram, _ = np.histogram(scores, bins=HISTOGRAM_BINS, range=(0.0, 1.0))
    result.stats = {
        "representatives": len(representatives), "signed": len(signed), "newly_signed": computed,
        "reused_signatures": len(representatives) - computed, "empty": empty,
        "lsh_candidates": int(candidates.shape[0]), "verified": int(candidates.shape[0]),
        "stored": len(result.pairs), "below_floor": below_floor, "template_shingles": int(template.size),
        "at_or_above_threshold": int((scores >= config.threshold).sum()), "histogram": histogram.tolist(),
    }
    return result
