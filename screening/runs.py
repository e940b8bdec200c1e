"""Screening-run services: start, execute (exact pass), fail, retry, export."""

from __future__ import annotations

import platform
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import metadata

import django
from django.conf import settings
from django.db import transaction
from django.db.models import Count, F
from django.utils import timezone

import dedup_site
from screening import near
from screening.engine import cluster, contract, explain
from screening.engine.near import NearConfig
from screening.engine.normalize import get_policy
from screening.models import (
    CandidatePair,
    Cluster,
    Corpus,
    Document,
    ExactGroup,
    ExactGroupMember,
    ScreeningRun,
    Upload,
)
from screening.near import verify_key

Progress = Callable[[float, str], None]  # (fraction of the stage done, stage name)
STAGES = {"exact": 0.15, "sign": 0.5, "band": 0.1, "verify": 0.2, "publish": 0.05}  # share of a run's time
READ_BATCH = 2000
WRITE_BATCH = 5000
PAIR_COLUMNS = ["left_id", "right_id", "pass", "jaccard", "minhash_estimate", "left_source_id", "right_source_id",
                "revision_signals", "template_share", "jaccard_without_template", "cluster"]


class RunRefused(Exception):
    """A run cannot be started as asked (no documents, no pass chosen...)."""


def library_versions() -> dict[str, str]:
    return {
        "python": platform.python_version(),
        "django": django.get_version(),
        "datasketch": metadata.version("datasketch"),
        "rq": metadata.version("rq"),
    }


def run_create(*, corpus: Corpus, exact: bool = True, near: bool = False, near_config: NearConfig | None = None,
               incremental: bool = False, reviews_required: int = 1, user=None) -> ScreeningRun:
    """Record a queued run with its configuration, versions and input manifest (not yet enqueued).

    An incremental run keeps the corpus's LSH index for its configuration and signs and looks up only the
    documents of uploads the index has not seen; its pairs are those a full run would give."""
    if not (exact or near):
        raise RunRefused("choose at least one pass (exact or near)")
    if incremental and not near:
        raise RunRefused("an incremental run needs the near pass")
    if not 1 <= reviews_required <= 10:
        raise RunRefused("reviews required per pair must be 1-10")
    config: dict = {"passes": ["exact"] * exact + ["near"] * near, "incremental": incremental}
    if near:
        try:
            config["near"] = (near_config or NearConfig()).resolved().as_dict()
        except ValueError as error:
            raise RunRefused(str(error)) from error
        config["verification_key"] = verify_key().fingerprint
    uploads = (
        Upload.objects.filter(corpus=corpus, status=Upload.Status.COMPLETE)
        .select_related("source").order_by("pk")
    )
    manifest = [
        {"upload": u.pk, "name": u.original_name, "sha256": u.source.sha256, "documents": u.document_count}
        for u in uploads
    ]
    if not any(entry["documents"] for entry in manifest):
        raise RunRefused(f"corpus {corpus.name} has no imported documents yet")
    return ScreeningRun.objects.create(
        corpus=corpus, exact=exact, near=near, config=config,
        contract=contract.CONTRACT, program_version=dedup_site.__version__, versions=library_versions(),
        manifest=manifest, started_by=user, reviews_required=reviews_required,
    )


def run_enqueue(*, run: ScreeningRun) -> ScreeningRun:
    from dedup_site.queues import enqueue

    run.job_id = enqueue("screening.jobs.run_job", run.pk, kind="run", on_failure="screening.jobs.run_job_failed")
    ScreeningRun.objects.filter(pk=run.pk).update(job_id=run.job_id)
    return run


def run_start(*, corpus: Corpus, exact: bool = True, near: bool = False, near_config: NearConfig | None = None,
              incremental: bool = False, reviews_required: int = 1, user=None) -> ScreeningRun:
    run = run_create(corpus=corpus, exact=exact, near=near, near_config=near_config, incremental=incremental,
                     reviews_required=reviews_required, user=user)
    return run_enqueue(run=run)


def run_retry(*, run: ScreeningRun) -> ScreeningRun:
    """Queue a failed run again. It has no results (they are written only on success)."""
    if run.status != ScreeningRun.Status.FAILED:
        raise RunRefused(f"run {run.pk} is {run.status}; only a failed run can be run again")
    ScreeningRun.objects.filter(pk=run.pk).update(status=ScreeningRun.Status.QUEUED, error="", finished_at=None)
    run.refresh_from_db()
    return run_enqueue(run=run)


def run_fail(*, run_id: int, error: str) -> None:
    ScreeningRun.objects.filter(pk=run_id).exclude(status=ScreeningRun.Status.COMPLETE).update(
        status=ScreeningRun.Status.FAILED, finished_at=timezone.now(), error=error[:10000]
    )


def _documents(run: ScreeningRun):
    return Document.objects.filter(corpus=run.corpus, upload_id__in=run.upload_ids)


def exact_pass(run: ScreeningRun, on_progress: Progress) -> tuple[list[contract.Group], int, dict[str, int]]:
    """Group the run's documents by doc-content-v1. The database groups the digests taken at import; only
    documents that share a digest are read, and the contract compares their full bytes.

    Returns the groups of two or more members, the number of singleton documents, and the document pk of
    every grouped doc_id.
    """
    documents = _documents(run)
    shared = list(documents.values("content_sha256").annotate(n=Count("pk")).filter(n__gt=1)
                  .order_by("content_sha256").values_list("content_sha256", flat=True))
    singletons = documents.values("content_sha256").distinct().count() - len(shared)
    on_progress(0.2, "exact")
    groups: list[contract.Group] = []
    doc_pks: dict[str, int] = {}
    for start in range(0, len(shared), READ_BATCH // 4):
        records: dict[str, list[dict]] = {}
        rows = documents.filter(content_sha256__in=shared[start : start + READ_BATCH // 4]).values(
            "pk", "doc_id", "source_id", "language", "title", "body", "content_sha256")
        for row in rows.iterator(chunk_size=READ_BATCH):
            doc_pks[row["doc_id"]] = row.pop("pk")
            records.setdefault(row.pop("content_sha256"), []).append(row)
        for members in records.values():
            # Same digest: the contract compares the full bytes and picks the representative.
            for group in contract.group_records(members):
                if len(group.members) > 1:
                    groups.append(group)
                else:
                    singletons += 1
        on_progress(0.2 + 0.8 * min(1.0, (start + READ_BATCH // 4) / len(shared)), "exact")
    groups.sort(key=lambda g: (-len(g.members), g.representative))
    return groups, singletons, doc_pks


def _cluster_of(number_of: dict[int, int], left: int, right: int) -> int | None:
    """A pair's cluster: the one holding both of its documents (a pair below the threshold may still have
    both ends in one cluster through other pairs)."""
    number = number_of.get(left)
    return number if number is not None and number_of.get(right) == number else None


def _publish_exact(run: ScreeningRun, groups: list[contract.Group], doc_pks: dict[str, int],
                   number_of: dict[int, int]) -> int:
    rows = ExactGroup.objects.bulk_create(
        (ExactGroup(run=run, representative_id=doc_pks[g.representative], sha256=g.digest, length=g.length,
                    size=len(g.members)) for g in groups),
        batch_size=WRITE_BATCH,
    )
    ExactGroupMember.objects.bulk_create(
        (ExactGroupMember(group=row, document_id=doc_pks[m.doc_id], position=i)
         for row, g in zip(rows, groups, strict=True) for i, m in enumerate(g.members)),
        batch_size=WRITE_BATCH,
    )
    pairs = CandidatePair.objects.bulk_create(
        (CandidatePair(run=run, left_id=doc_pks[m.doc_id], right_id=doc_pks[g.representative],
                       pass_name=CandidatePair.Pass.EXACT, jaccard=1.0,
                       cluster=_cluster_of(number_of, doc_pks[m.doc_id], doc_pks[g.representative]))
         for g in groups for m in g.members[1:]),
        batch_size=WRITE_BATCH,
    )
    return len(pairs)


def sign_chunks(run: ScreeningRun) -> list[list[int]]:
    """The run's unsigned documents in chunks for parallel signing jobs; [] when one job is enough."""
    if not run.near:
        return []
    config = near_config_of(run)
    missing = list(_documents(run).exclude(signatures__key=config.signature_key).order_by("pk")
                   .values_list("pk", flat=True))
    size = settings.DEDUP_SIGN_CHUNK
    if len(missing) <= size:
        return []
    return [missing[i : i + size] for i in range(0, len(missing), size)]


def run_mark_running(*, run: ScreeningRun) -> None:
    ScreeningRun.objects.filter(pk=run.pk).update(status=ScreeningRun.Status.RUNNING, started_at=timezone.now(),
                                                  error="")


def verification_key_check(run: ScreeningRun) -> None:
    """Every process that verifies a run's pairs must hash with the key the run was started with (the same
    DJANGO_SECRET_KEY): with another, scores and template shingles would silently disagree."""
    expected = run.config.get("verification_key")
    if expected and expected != verify_key().fingerprint:
        raise RunRefused(f"run {run.pk} was started with verification key {expected}, but this worker's is "
                         f"{verify_key().fingerprint}: give every web and worker process the same "
                         f"DJANGO_SECRET_KEY")


def near_config_of(run: ScreeningRun) -> NearConfig:
    return NearConfig(**run.config["near"])


@dataclass
class Verified:
    """Verification done by chunk jobs, gathered for the publishing job."""

    candidates: int
    stats: dict  # of signing and banding
    pairs: list[near.NearPair]
    below_floor: int
    seconds: dict[str, float]  # of the stages before publishing, as measured by the jobs that did them


# Given the candidates and the stage seconds so far: True when chunk jobs took verification over.
Split = Callable[[near.Candidates, dict[str, float]], bool]


def run_execute(*, run: ScreeningRun, on_progress: Progress | None = None, split: Split | None = None,
                verified: Verified | None = None, workers: Callable[[], list[str]] | None = None) -> ScreeningRun:
    """Do the run's passes and publish every result at once, with the status, in one transaction.

    With `split`, verification may be handed to chunk jobs after banding (the run then stays running); the
    publishing job calls this again with what they `verified`. The exact pass is cheap and done again there.
    `workers` names the workers whose chunk jobs took part, recorded with the results.
    """
    outer = on_progress or (lambda fraction, stage: None)
    began: dict[str, float] = {}  # stage -> first report, for the seconds each stage took

    def report(fraction: float, stage: str) -> None:
        began.setdefault(stage, time.perf_counter())
        outer(fraction, stage)

    def seconds() -> dict[str, float]:
        began["end"] = time.perf_counter()
        order = sorted(began, key=began.get)
        return {a: round(began[b] - began[a], 3) for a, b in zip(order, order[1:], strict=False)}

    if run.status == ScreeningRun.Status.COMPLETE:
        return run  # a retried job must not publish twice
    verification_key_check(run)
    if verified is None:
        ScreeningRun.objects.filter(pk=run.pk).update(
            status=ScreeningRun.Status.RUNNING, started_at=timezone.now(), error="", attempts=F("attempts") + 1
        )
    stats: dict = {"documents": _documents(run).count()}
    # Exact groups are always found: the near pass signs one representative per group.
    report(0.0, "exact")
    groups, singletons, doc_pks = exact_pass(run, report)
    report(1.0, "exact")
    if run.exact:
        stats.update(exact_groups=len(groups), exact_grouped_documents=sum(len(g.members) for g in groups),
                     exact_singletons=singletons)
    near_result = index_update = None
    if run.near:
        config = near_config_of(run)
        duplicates = {doc_pks[m.doc_id] for g in groups for m in g.members[1:]}
        doc_ids = dict(_documents(run).order_by("pk").values_list("pk", "doc_id"))
        representatives = [pk for pk in doc_ids if pk not in duplicates]
        if run.config.get("incremental"):
            near_result, index_update = near.incremental_pass(run.corpus, run.upload_ids, representatives, doc_ids,
                                                              config, report)
        elif verified is not None:
            near_result = near.near_result(verified.pairs, verified.below_floor, verified.candidates, verified.stats,
                                           config, doc_ids)
        else:
            found = near.near_candidates(representatives, config, report)
            if split is not None and split(found, seconds()):
                return run  # chunk jobs verify; a publishing job ends the run
            pairs, below_floor = near.verify(found, doc_ids, config, report)
            near_result = near.near_result(pairs, below_floor, len(found.pairs), found.stats, config, doc_ids)
        stats["near"] = near_result.stats
    report(0.0, "publish")
    exact_edges = [(doc_pks[m.doc_id], doc_pks[g.representative]) for g in groups for m in g.members[1:]]
    near_pairs = near_result.pairs if near_result is not None else []
    names = doc_ids if run.near else {pk: doc_id for doc_id, pk in doc_pks.items()}
    threshold = run.config.get("near", {}).get("threshold", 1.0)
    with transaction.atomic():
        # Cluster numbers are known before any pair is written, so each pair is written once, complete.
        number_of = _publish_clusters(run, (exact_edges if run.exact else []) + [
            (p.left, p.right) for p in near_pairs if p.jaccard >= threshold], names)
        stats["exact_pairs"] = _publish_exact(run, groups, doc_pks, number_of) if run.exact else 0
        _publish_near(run, near_pairs, number_of)
        if index_update is not None:
            near.index_record(index_update)
        stats["clusters"] = len(set(number_of.values()))
        stats["seconds"] = {**seconds(), **(verified.seconds if verified else {})}
        if names := (workers() if workers else []):
            stats["workers"] = names
        ScreeningRun.objects.filter(pk=run.pk).update(
            status=ScreeningRun.Status.COMPLETE, finished_at=timezone.now(), stats=stats
        )
    report(1.0, "publish")
    refresh_statistics()
    run.refresh_from_db()
    return run


def refresh_statistics() -> None:
    """Tell PostgreSQL's planner about the pairs just written and the documents imported before. Until
    autovacuum gets there, stale statistics make it sort a whole run for one queue page (9 ms instead of
    0.2 ms at 20,000 pairs) and scan every document to name the 50 pairs shown (10 ms instead of 0.3)."""
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {CandidatePair._meta.db_table}, {Cluster._meta.db_table}, "
                           f"{Document._meta.db_table}")


def _publish_near(run: ScreeningRun, pairs: list[near.NearPair], number_of: dict[int, int]) -> None:
    CandidatePair.objects.bulk_create(
        (CandidatePair(run=run, left_id=p.left, right_id=p.right, pass_name=CandidatePair.Pass.NEAR,
                       jaccard=p.jaccard, minhash_estimate=p.estimate, template_share=p.template_share,
                       jaccard_without_template=p.jaccard_without_template, revision_signals=p.signals,
                       has_signals=bool(p.signals), cluster=_cluster_of(number_of, p.left, p.right)) for p in pairs),
        batch_size=WRITE_BATCH,
    )


def _publish_clusters(run: ScreeningRun, edges: list[tuple[int, int]], names: dict[int, str]) -> dict[int, int]:
    """Connected components of the run's pairs at or above the review threshold (exact pairs score 1.0),
    numbered largest first; returns each clustered document's number."""
    number_of: dict[int, int] = {}
    rows = []
    for number, members in enumerate(cluster.components(edges), start=1):
        members = sorted(members, key=names.__getitem__)
        rows.append(Cluster(run=run, number=number, size=len(members), members=[[pk, names[pk]] for pk in members]))
        number_of.update(dict.fromkeys(members, number))
    Cluster.objects.bulk_create(rows, batch_size=WRITE_BATCH)
    return number_of


def pair_rows(run: ScreeningRun) -> Iterator[list[str]]:
    """The run's candidate pairs as CSV rows (PAIR_COLUMNS), in a fixed order."""
    pairs = (
        CandidatePair.objects.filter(run=run)
        .order_by("pass_name", "-jaccard", "left__doc_id", "right__doc_id")
        .values_list("left__doc_id", "right__doc_id", "pass_name", "jaccard", "minhash_estimate",
                     "left__source_id", "right__source_id", "revision_signals", "template_share",
                     "jaccard_without_template", "cluster")
    )

    def number(value) -> str:
        return "" if value is None else repr(float(value))

    for (left, right, pass_name, jaccard, estimate, left_source, right_source, signals, share, without,
         cluster_number) in pairs.iterator(chunk_size=5000):
        yield [left, right, pass_name, number(jaccard), number(estimate), left_source, right_source,
               "; ".join(f"{a}→{b}" for _, a, b in signals), number(share), number(without),
               "" if cluster_number is None else str(cluster_number)]


def run_summary(run: ScreeningRun) -> str:
    s = run.stats
    if run.status == ScreeningRun.Status.FAILED:
        return f"run {run.pk} failed: {run.error.strip().splitlines()[-1] if run.error else 'unknown error'}"
    if run.status != ScreeningRun.Status.COMPLETE:
        return f"run {run.pk} is {run.status}"
    parts = [f"run {run.pk} complete: {s.get('documents', 0)} documents"]
    if run.exact:
        parts.append(
            f"exact pass: {s.get('exact_groups', 0)} groups of 2+ covering {s.get('exact_grouped_documents', 0)} "
            f"documents, {s.get('exact_singletons', 0)} singletons, {s.get('exact_pairs', 0)} candidate pairs"
        )
    if run.near:
        n = s["near"]
        parts.append(
            f"near pass: {n['signed']} signed ({n['empty']} without shingles), {n['lsh_candidates']} LSH candidates, "
            f"{n['stored']} pairs stored (Jaccard >= {run.config['near']['storage_floor']}; {n['below_floor']} below), "
            f"{n['at_or_above_threshold']} at or above {run.config['near']['threshold']}"
        )
        if index := n.get("index"):
            parts.append(f"incremental: built the LSH index ({index['new_documents']} documents)" if index["built_now"]
                         else f"incremental: {index['new_documents']} new documents looked up in the LSH index of "
                              f"{index['indexed_before']}")
    parts.append(f"{s.get('clusters', 0)} clusters")
    return "; ".join(parts)


def pair_explanation(pair: CandidatePair) -> dict:
    """Shared shingles and raw excerpts of a pair, computed on demand (bounded for large documents)."""
    left, right = pair.left.body, pair.right.body
    if pair.pass_name == CandidatePair.Pass.EXACT:
        return {"shared": [], "excerpts": [left[:500]] if left == right else [], "k": 0}
    config = near_config_of(pair.run)
    policy, spec = get_policy(config.policy), config.spec
    return {
        "shared": explain.shared_shingles(left, right, policy, spec),
        "excerpts": explain.raw_excerpts(left, right, spec.k if spec.kind == "char" else 5),
        "k": spec.k,
        "spec": str(spec),
    }


def with_documents(pair: CandidatePair) -> CandidatePair:
    """Attach both documents with their upload and source file, read in a second query: one nine-table
    join for a pair page cost PostgreSQL about 5 ms of planning alone, more than everything else it did."""
    documents = Document.objects.select_related("upload__source").in_bulk([pair.left_id, pair.right_id])
    pair.left, pair.right = documents[pair.left_id], documents[pair.right_id]
    return pair


def pair_context(pair: CandidatePair) -> dict:
    """What the pair panes show (the review page and the run's pair page): matched runs coloured alike on
    both sides, the token diff with its revision signals, shared shingles and raw excerpts."""
    from screening import present

    config = pair.run.config.get("near", {})
    k = int(config.get("shingle", "char:8").split(":")[1]) if config.get("shingle", "").startswith("char") else 8
    left, right, run_count = present.matched_segments(pair.left.body, pair.right.body, max(k, 4))
    diff, diff_cut, diff_total = present.diff_rows(pair.left.body, pair.right.body)
    return {
        "pair": pair, "left_segments": left, "right_segments": right, "run_count": run_count,
        "diff": diff, "diff_cut": diff_cut, "diff_total": diff_total, "explanation": pair_explanation(pair),
    }
