"""The near pass of a run: sign representatives, band, verify, score templates (database side).

The algorithms live in screening/engine; this module streams documents from the database in batches,
reuses stored signatures of the same configuration, and returns the verified pairs for the run to publish.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from dedup_site.progress import StageProgress as Progress
from dedup_site.redis_direct import redis_kwargs
from screening.engine import evidence, fast, foldtable, lsh, minhash, revision
from screening.engine.lsh_index import PersistentIndex
from screening.engine.normalize import POLICIES, get_policy
from screening.engine.shingle import VerifyKey
from screening.models import Corpus, Document, DocumentSignature, IndexCandidate, LshIndex

BATCH = 1000
BAND_READ = 20_000  # stored signatures read a query while banding
WINDOW = 1000  # candidates whose documents are tokenised together (two documents a candidate at most)
STRONGEST = POLICIES["persian-arabic-fold-v1"]  # what "the same once normalised" means across policies
TEMPLATE_SAMPLE = 5_000  # documents whose shingles estimate the corpus-wide frequencies
HISTOGRAM_BINS = 20  # over [0, 1]


@dataclass
class NearPair:
    left: int  # document pk (left has the smaller doc_id)
    right: int
    jaccard: float
    estimate: float
    template_share: float | None
    jaccard_without_template: float | None
    signals: list[list[str]] = field(default_factory=list)  # [[kind, left, right], ...]
    evidence: dict = field(default_factory=dict)  # screening.engine.evidence.Evidence.as_dict()


def batches(items: list, size: int = BATCH):
    for start in range(0, len(items), size):
        yield items[start : start + size]


@functools.cache
def verify_key() -> VerifyKey:
    """The installation's key of the verification hash, derived from its secret key: every process of one
    installation (web, workers on any machine) shares DJANGO_SECRET_KEY, hence this key."""
    return VerifyKey.derive(settings.SECRET_KEY.encode())


def verification_hashes(body: str, config: minhash.NearConfig) -> np.ndarray:
    """The keyed shingle hashes exact Jaccard, template scores and the audit compare (see engine.shingle)."""
    return fast.verify_hashes(body, config.policy_rules, config.spec, verify_key())


def hashes_of(bodies: dict[int, str], config: minhash.NearConfig) -> dict[int, np.ndarray]:
    """verification_hashes of each body, by pk, a batch in one compiled pass."""
    return dict(zip(bodies, fast.verify_hashes_many(list(bodies.values()), config.policy_rules, config.spec,
                                                    verify_key()), strict=True))


def hashes_for(pks: list[int], config: minhash.NearConfig) -> dict[int, np.ndarray]:
    """Verification hashes of the given documents."""
    out = {}
    for chunk in batches(pks):
        out.update(hashes_of(dict(Document.objects.filter(pk__in_ids=chunk).order_by().values_list("pk", "body")),
                             config))
    return out


def document_facts(pks) -> dict[int, evidence.DocFacts]:
    """What the evidence needs of each document besides its text (language, source, version, date)."""
    out = {}
    pks = sorted(pks)
    for chunk in batches(pks):
        for pk, *values in Document.objects.filter(pk__in_ids=chunk).order_by().values_list(
                "pk", "language", "source_id", "version", "collected_at"):
            out[pk] = evidence.DocFacts(*values)
    return out


@dataclass
class Involved:
    """What verifying pairs reads of their documents, by pk."""

    doc_ids: dict[int, str] = field(default_factory=dict)
    bodies: dict[int, str] = field(default_factory=dict)
    facts: dict[int, evidence.DocFacts] = field(default_factory=dict)
    signatures: dict[int, np.ndarray] = field(default_factory=dict)


def involved_documents(pks: list[int], config: minhash.NearConfig) -> Involved:
    """The doc_id, body, facts and stored signature of each of these documents (`pks` sorted), one query a
    batch: four queries a batch, each preparing its IN list, were much of verifying a pair that is dropped
    below the floor. A document without a signature with shingles under this key is left out: it is never
    a candidate."""
    out = Involved()
    for chunk in batches(pks):
        with connection.cursor() as cursor:
            cursor.execute(*_involved_query(connection.vendor, chunk, config.signature_key))
            rows = cursor.fetchall()
        if not rows:
            continue
        # Column by column: a dict update from zips, not four stores a row.
        found, doc_ids, bodies, languages, sources, versions, dates, values = zip(*rows, strict=True)
        out.doc_ids.update(zip(found, doc_ids, strict=True))
        out.bodies.update(zip(found, bodies, strict=True))
        out.facts.update(zip(found, map(evidence.DocFacts, languages, sources, versions, dates), strict=True))
        out.signatures.update(zip(found, minhash.from_bytes_many(list(map(bytes, values)), config), strict=True))
    return out


def _involved_query(vendor: str, chunk: list[int], key: str) -> tuple[str, list]:
    """involved_documents' query for a batch, written out: through the ORM, building the query (its IN list
    resolved value by value) and turning each row into a tuple cost as much CPU as SQLite reading the rows
    (bench/HISTORY.md). Names from the models, every value a parameter (the ids checked to be integers), the
    list as dedup_site.lookups passes it: one array on PostgreSQL, a marker an id elsewhere."""
    ids = [int(pk) for pk in chunk]
    if vendor == "postgresql":
        return _involved_sql(vendor, 1), [ids, key]
    return _involved_sql(vendor, len(ids)), [*ids, key]


@functools.lru_cache(maxsize=16)
def _involved_sql(vendor: str, count: int) -> str:
    quote = connection.ops.quote_name
    sig, doc = DocumentSignature._meta, Document._meta
    s, d = quote(sig.db_table), quote(doc.db_table)
    columns = ", ".join([f"{s}.{quote(sig.get_field('document').column)}"]
                        + [f"{d}.{quote(doc.get_field(name).column)}"
                           for name in ("doc_id", "body", "language", "source_id", "version", "collected_at")]
                        + [f"{s}.{quote(sig.get_field('values').column)}"])
    document = f"{s}.{quote(sig.get_field('document').column)}"
    within = f"{document} = ANY(%s)" if vendor == "postgresql" else f"{document} IN ({', '.join(['%s'] * count)})"
    return (f"SELECT {columns} FROM {s} INNER JOIN {d} ON ({document} = {d}.{quote(doc.pk.column)}) "  # noqa: S608
            f"WHERE {within} AND {s}.{quote(sig.get_field('key').column)} = %s "
            f"AND {s}.{quote(sig.get_field('shingle_count').column)} > 0")


class SignatureRow(NamedTuple):
    """A signature not yet stored (a model instance per row cost more than the row)."""

    document_id: int
    shingle_count: int
    values: bytes  # datasketch LeanMinHash bytes; empty without shingles


def compute_signatures(pks: list[int], config: minhash.NearConfig) -> Iterator[tuple[SignatureRow, str]]:
    """For each document (bodies read in batches): its signature row, not yet saved, and its body. A document
    without shingles gets a row with empty values."""
    policy, spec = config.policy_rules, config.spec
    perms = minhash.permutations(config.num_perm, config.seed, config.scheme)
    for chunk in batches(pks):
        rows = list(Document.objects.filter(pk__in_ids=chunk).order_by().values_list("pk", "body"))
        sigs, counts = fast.sign_texts([body for _, body in rows], policy, spec, perms)  # the batch in one call
        for (pk, body), data, count in zip(rows, minhash.to_bytes_many(sigs, config), counts.tolist(), strict=True):
            yield SignatureRow(pk, count, data if count else b""), body


SIGNATURE_COLUMNS = ("document_id", "key", "seed", "scheme", "shingle_count", "values", "created_at")


def insert_signatures(rows: list[SignatureRow], config: minhash.NearConfig) -> None:
    """Signature rows straight into their table in one transaction, a document already signed under the key left
    as it is (a retried chunk). Through the ORM, or a transaction a row (SQLite's autocommit), this was most of
    a signing job."""
    if not rows:
        return
    quote = connection.ops.quote_name
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    values = [(r.document_id, config.signature_key, config.seed, config.scheme, r.shingle_count, r.values, now)
              for r in rows]
    table, columns = quote(DocumentSignature._meta.db_table), ", ".join(quote(c) for c in SIGNATURE_COLUMNS)
    marks = ", ".join(["%s"] * len(SIGNATURE_COLUMNS))
    with transaction.atomic(), connection.cursor() as cursor:
        # Names from the model, values as parameters.
        cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks}) "  # noqa: S608
                           f"ON CONFLICT ({quote('document_id')}, {quote('key')}) DO NOTHING", values)


def template_sample(representatives: list[int]) -> set[int]:
    """Every n-th representative: the documents whose shingles estimate corpus-wide shingle frequencies."""
    step = max(1, math.ceil(len(representatives) / TEMPLATE_SAMPLE))
    return set(representatives[::step])


class _Texts:
    """The texts of a verification job's documents, each tokenised once a window for all its pairs there and folded
    at most once."""

    def __init__(self, bodies: dict[int, str], config: minhash.NearConfig):
        self.bodies, self._prepared, self._folded = bodies, {}, {}
        # Every policy folds ASCII as the strongest does, so two ASCII texts the same under the strongest fold
        # have the same character shingles, a Jaccard of 1: below the threshold, no need to fold them to know.
        self._char = config.spec.kind == "char"
        # Under the strongest fold itself, two texts the same once folded have the same character shingles: a
        # Jaccard of 1, at or above any threshold, so a pair below it never is.
        self._strongest = self._char and get_policy(config.policy) is STRONGEST

    def prepare(self, pks: set[int]) -> None:
        """Tokenise these documents (a window's) in one compiled call, those of the window before too: the
        window's evidence then reads the batch's arrays as they are (laying out again the quarter or so of its
        documents a window shares with the one before cost more than tokenising them again)."""
        order = sorted(pks)
        self._prepared = dict(zip(order, revision.prepare_many([self.bodies[pk] for pk in order]), strict=True))

    def prepared(self, pk: int) -> revision.Prepared:
        """Tokenised (by `prepare`, or now)."""
        if pk not in self._prepared:
            self._prepared[pk] = revision.Prepared(self.bodies[pk])
        return self._prepared[pk]

    def _fold(self, pk: int) -> bytes:
        if pk not in self._folded:
            self._folded[pk] = foldtable.normalized_codepoints(self.bodies[pk], STRONGEST).tobytes()
        return self._folded[pk]

    def same_under_strongest_fold(self, left: int, right: int) -> bool:
        """A copy the run's policy keeps apart (Persian digits under nfkc)."""
        if self._strongest or (self._char and self.bodies[left].isascii() and self.bodies[right].isascii()):
            return False
        return self._fold(left) == self._fold(right)


def _verify(candidates: list[tuple[int, int]], docs: Involved, template: np.ndarray, config: minhash.NearConfig,
            report: Progress) -> tuple[list[NearPair], int]:
    """Exact Jaccard of every candidate pair (document pks); those at or above the storage floor are kept with
    their estimate, template scores and evidence (at or above the threshold whole, below it partial: the token
    diff waits for the pair's first opening). Returns (pairs, number below the floor)."""
    pairs: list[NearPair] = []
    bodies, doc_ids, facts = docs.bodies, docs.doc_ids, docs.facts
    # The documents' hashes, and the same one after another for the window's merges in one compiled call each.
    found, laid, offsets = fast.verify_hashes_laid(list(bodies.values()), config.policy_rules, config.spec,
                                                   verify_key())
    hashes = dict(zip(bodies, found, strict=True))
    texts = _Texts(bodies, config)
    at = {pk: d for d, pk in enumerate(hashes)}
    pk_of = np.fromiter(hashes, dtype=np.int64, count=len(hashes))
    rank = _in_doc_id_order(pk_of, doc_ids)
    sizes, minhashes = np.diff(offsets), _signature_rows(docs.signatures, hashes, config.num_perm)
    # One merge a pair gives its Jaccard and the template's share of it; a document's own template count is
    # needed only once it is in a pair above the floor (-1 until then).
    index = fast.template_index(template)
    in_template = np.full(len(pk_of), -1, dtype=np.int64)
    below_floor, floor, threshold = 0, config.storage_floor, config.threshold
    scratch = evidence.Scratch()  # the arrays each window's evidence fills, kept from one window to the next
    for begin in range(0, len(candidates), WINDOW):
        # The window's Jaccards first (numpy's division of two integers is Python's): only the documents of
        # pairs at or above the floor are tokenised, together.
        window = candidates[begin : begin + WINDOW]
        ends = np.fromiter((at[pk] for pair in window for pk in pair), dtype=np.int64,
                           count=2 * len(window)).reshape(-1, 2)
        counts = fast.pair_counts_many(laid, offsets, ends[:, 0], ends[:, 1], *index)
        union = sizes[ends[:, 0]] + sizes[ends[:, 1]] - counts[:, 0]
        score = np.divide(counts[:, 0], union, out=np.zeros(len(window)), where=union > 0)
        keep = np.flatnonzero(score >= floor)
        below_floor += len(window) - keep.size
        ends, counts, union, score = ends[keep], counts[keep], union[keep], score[keep]
        ends[rank[ends[:, 0]] > rank[ends[:, 1]]] = ends[rank[ends[:, 0]] > rank[ends[:, 1]]][:, ::-1]
        involved = np.unique(ends)
        texts.prepare(set(pk_of[involved].tolist()))
        todo = involved[in_template[involved] < 0]
        in_template[todo] = fast.template_count_many(laid, offsets, todo, *index)
        # As explain.template_scores: the template share of what they share, and Jaccard without templates.
        rest = union - in_template[ends[:, 0]] - in_template[ends[:, 1]] + counts[:, 1]
        estimates = _estimates(minhashes, ends, config.num_perm)
        items, scores = [], []
        for (left, right), (shared, shared_t), rest_, score_, estimate in zip(
                pk_of[ends].tolist(), counts.tolist(), rest.tolist(), score.tolist(), estimates, strict=True):
            share, without = (shared_t / shared if shared else None), ((shared - shared_t) / rest_ if rest_ else None)
            # At or above the threshold, or the same text under the strongest fold (a copy the run's policy keeps
            # apart, Persian digits under nfkc): the whole evidence now.
            whole = score_ >= threshold or texts.same_under_strongest_fold(left, right)
            items.append(evidence.NearItem(texts.prepared(left), texts.prepared(right), hashes[left], hashes[right],
                                           facts[left], facts[right], score_, (share, without), shared, whole))
            scores.append((left, right, score_, float(estimate), share, without))
        for (left, right, score_, estimate, share, without), found in zip(
                scores, evidence.for_near_many(items, scratch), strict=True):
            pairs.append(NearPair(left, right, score_, estimate, share, without, [list(s) for s in found["signals"]],
                                  found))
        report(min(1.0, (begin + WINDOW) / len(candidates)), "verify")
    report(1.0, "verify")
    pairs.sort(key=lambda p: (-p.jaccard, doc_ids[p.left], doc_ids[p.right]))
    return pairs, below_floor


def _in_doc_id_order(pk_of: np.ndarray, doc_ids: dict[int, str]) -> np.ndarray:
    """Each document's place in doc_id order: which of a pair is left, for a window at once."""
    rank = np.empty(len(pk_of), dtype=np.int64)
    rank[sorted(range(len(pk_of)), key=lambda d: doc_ids[int(pk_of[d])])] = np.arange(len(pk_of))
    return rank


def _signature_rows(signatures: dict[int, np.ndarray], order, num_perm: int) -> np.ndarray:
    """The documents' signatures, a row each in this order of their pks (the job's documents' places)."""
    return np.stack([signatures[pk] for pk in order]) if order else np.zeros((0, num_perm), np.uint32)


def _estimates(minhashes: np.ndarray, ends: np.ndarray, num_perm: int) -> list[float]:
    """The MinHash estimate of each pair (minhash.estimate's) of a window, its documents' rows of the job's
    signatures (`ends`), in one comparison."""
    same = minhashes[ends[:, 0]] == minhashes[ends[:, 1]]
    return (np.count_nonzero(same, axis=1) / num_perm).tolist()


@dataclass
class Candidates:
    """The LSH candidates of a run, ready to verify (in chunks of whole components)."""

    pairs: np.ndarray  # (n, 2) document pks, smaller first, sorted
    template: np.ndarray
    stats: dict


def stored_counts(pks: list[int], config: minhash.NearConfig) -> dict[int, int]:
    """The shingle count of each of these documents' stored signatures under this configuration: one range
    scan of the signatures' (document, key) index, rows outside `pks` dropped here (after fanned-out signing
    every representative has one, and long IN lists cost more than the scan)."""
    wanted = set(pks)
    rows = DocumentSignature.objects.filter(key=config.signature_key, document_id__gte=min(pks),
                                            document_id__lte=max(pks)).values_list("document_id", "shingle_count")
    return {pk: count for pk, count in rows if pk in wanted}


def signature_batches(pks: np.ndarray, config: minhash.NearConfig) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(document pks, signatures) of these documents' stored signatures with shingles (`pks` sorted), BAND_READ
    documents at a time: each batch one range scan of the signatures' (document, key) index, the rows of
    documents outside the batch (another corpus's, an exact copy) dropped here."""
    stored = DocumentSignature.objects.filter(key=config.signature_key, shingle_count__gt=0)
    for start in range(0, len(pks), BAND_READ):
        batch = pks[start : start + BAND_READ]
        rows = list(stored.filter(document_id__gte=int(batch[0]), document_id__lte=int(batch[-1]))
                    .order_by("document_id").values_list("document_id", "values"))
        found = np.fromiter((pk for pk, _ in rows), dtype=np.int64, count=len(rows))
        keep = np.flatnonzero(np.isin(found, batch, assume_unique=True))
        if keep.size:
            yield found[keep], minhash.from_bytes_many([bytes(rows[i][1]) for i in keep.tolist()], config)


def doc_ids_of(pks) -> dict[int, str]:
    """The doc_id of each of these documents."""
    out: dict[int, str] = {}
    for chunk in batches(sorted(pks)):
        out.update(Document.objects.filter(pk__in_ids=chunk).order_by().values_list("pk", "doc_id"))
    return out


@functools.cache
def warmed() -> None:
    """Load every kernel verification calls, with the argument types it calls them with: one that is first
    loaded (or compiled) inside a job counts against its verification (tokdiff's batch tokeniser and the pair
    merges on strided columns were, about 10 ms a fresh process, a second on a fresh install)."""
    fast.warm()
    evidence.warm()
    _verify_warm()


def _verify_warm() -> None:
    """A verification of a few documents of no corpus, through `_verify` itself, under every policy."""
    frame = "Copyright the authors, all rights reserved; provided without warranty or liability of any kind."
    bodies = [f"{frame}\n\nA text of its own, version 1.2 of 3 May 2024, 12 V.\n\n{frame}",
              f"{frame}\n\nA text of its own, version 1.3 of 4 May 2024, 12 mV.\n\n{frame}",
              "«نقل قول» متنی دیگر با ۱۲ ولت", "另一段文字，十二伏。", "A text of its own, version 1.2 of 3 May 2024."]
    for policy in POLICIES:
        config = minhash.NearConfig(policy=policy).resolved()
        docs = Involved()
        for pk, body in enumerate(bodies):
            docs.doc_ids[pk], docs.bodies[pk] = f"warm-{pk}", body
            docs.facts[pk] = evidence.DocFacts("en", "", "", "")
            docs.signatures[pk] = np.zeros(config.num_perm, dtype=np.uint32)
        pairs = [(a, b) for a in range(len(bodies)) for b in range(a + 1, len(bodies))]
        _verify(pairs, docs, np.zeros(0, dtype=np.uint64), dataclasses.replace(config, storage_floor=0.0),
                lambda fraction, stage: None)


def verify_chunk(pairs: list[tuple[int, int]], template: np.ndarray, config: minhash.NearConfig,
                 report: Progress) -> tuple[list[NearPair], int]:
    """Verify some candidate pairs on their own: what they need of their documents comes from the database."""
    docs = involved_documents(sorted({pk for pair in pairs for pk in pair}), config)
    return _verify(pairs, docs, template, config, report)


@dataclass
class IndexUpdate:
    """What an incremental run adds to its index record, written when the run publishes."""

    index: LshIndex
    uploads: list[int]
    candidates: set[tuple[int, int]]  # newly found (left pk < right pk)
    size: int


def open_index(corpus: Corpus, config: minhash.NearConfig) -> tuple[LshIndex, PersistentIndex]:
    """The corpus's index for this configuration, created on first use. A configuration change (policy,
    shingles, num_perm, seed, scheme, bands, rows) gets an index of its own; the Redis side refuses a mismatch."""
    row, _ = LshIndex.objects.get_or_create(
        corpus=corpus, signature_key=config.signature_key, bands=config.bands, rows=config.rows,
        defaults={"basename": f"dedup:lsh:{corpus.pk}:{uuid.uuid4().hex[:16]}"},
    )
    return row, PersistentIndex(redis_kwargs(), row.basename, config)


def incremental_candidates(corpus: Corpus, upload_ids: list[int], representatives: np.ndarray,
                           config: minhash.NearConfig) -> tuple[np.ndarray, IndexUpdate, dict]:
    """The candidates of a run through the corpus's persistent index (the plan step of an incremental run, in
    place of banding): the signed documents of uploads not yet indexed are inserted and looked up, candidates
    found by earlier runs carried over. Verified as a full run's, they give its pairs. Returns the candidates (an
    (n, 2) array of document pks), what to record of the index, and its figures."""
    row, index = open_index(corpus, config)
    covered = set(row.uploads)
    if covered and index.size() < row.size:
        # Redis lost the index (flushed, or another server): build it again from the stored signatures.
        index.drop()
        row, index = open_index(corpus, config)
        covered = set()
    current = set(representatives.tolist())
    new = np.array([pk for pk in Document.objects.filter(corpus=corpus, upload_id__in=set(upload_ids) - covered)
                    .order_by("pk").values_list("pk", flat=True) if pk in current], dtype=np.int64)
    batches_ = list(signature_batches(new, config))  # the new documents with shingles, signed by now
    signed = [pk for found, _ in batches_ for pk in found.tolist()]
    matrix = (np.concatenate([signatures for _, signatures in batches_]) if batches_
              else np.zeros((0, config.num_perm), dtype=np.uint32))
    index.insert(signed, matrix)
    if covered:
        looked_up = index.query(matrix)
        found = {(min(pk, other), max(pk, other))
                 for pk, keys in zip(signed, looked_up, strict=True) for other in keys if other != pk}
    else:  # a new index: banding its first documents with numpy gives the same candidates, faster
        found = {(signed[i], signed[j]) for i, j in lsh.band_pairs(matrix, config.bands, config.rows).tolist()}
    carried = set(IndexCandidate.objects.filter(index=row).values_list("left_id", "right_id").iterator(5000))
    candidates = sorted(pair for pair in carried | found if pair[0] in current and pair[1] in current)
    stats = {"basename": row.basename, "indexed_before": row.size, "new_documents": len(new),
             "looked_up": len(signed) if covered else 0, "carried_candidates": len(carried),
             "new_candidates": len(found - carried), "built_now": not covered}
    pairs = np.array(candidates, dtype=np.int64).reshape(-1, 2)
    return pairs, IndexUpdate(row, sorted(covered | set(upload_ids)), found - carried, index.size()), stats


def index_record(update: IndexUpdate) -> None:
    """Record what a run added to its index (inside the run's publishing transaction)."""
    IndexCandidate.objects.bulk_create(
        (IndexCandidate(index=update.index, left_id=left, right_id=right) for left, right in update.candidates),
        batch_size=5000, ignore_conflicts=True,
    )
    row = LshIndex.objects.select_for_update().get(pk=update.index.pk)
    row.uploads = sorted(set(row.uploads) | set(update.uploads))
    row.size = update.size
    row.save(update_fields=["uploads", "size", "updated_at"])
