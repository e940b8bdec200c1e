"""Publishing a run: every result written at once, with the run's status, in one transaction."""

from __future__ import annotations

import dataclasses
import itertools
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
from django.db import connection, models, transaction
from django.utils import timezone

from screening.engine import cluster, contract, evidence, revision, suggest
from screening.models import (
    CandidatePair,
    Cluster,
    Document,
    ExactGroup,
    ExactGroupMember,
    ScreeningRun,
    StagedPair,
)
from screening.runs import near
from screening.runs.exact import ExactResult
from screening.suggestions import suggester_for

WRITE_BATCH = 5000
Suggester = Callable[[evidence.Evidence], suggest.Suggestion]


@dataclass
class Outcome:
    """What a run found, ready to publish: its near pairs are staged in the database by the tasks that verified
    them (`StagedPair`); here are the edges they add to the clusters."""

    exact: ExactResult
    stats: dict
    edges: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), dtype=np.int64))  # near, >= threshold
    index_update: near.IndexUpdate | None = None
    seconds: dict[str, float] = field(default_factory=dict)


def run_publish(*, run: ScreeningRun, outcome: Outcome, nodes: Callable[[], list[str]] | None = None,
                report: Callable[[float, str], None] = lambda fraction, stage: None,
                suggester: Suggester | None = None) -> ScreeningRun:
    """Write the clusters, exact groups and pairs (each with its evidence and suggested verdict), the index
    record and the run's status in one transaction: a run that fails on the way shows nothing. `nodes`
    names the Ray nodes whose tasks took part."""
    report(0.0, "publish")
    started = time.perf_counter()
    suggester = suggester or suggester_for(run.corpus_id)  # the rules, or the corpus's learned model
    exact, stats = outcome.exact, dict(outcome.stats)
    edges = (exact.edges if run.exact else []) + [(int(a), int(b)) for a, b in outcome.edges.tolist()]
    names = {**{pk: doc_id for doc_id, pk in exact.doc_pks.items()},
             **near.doc_ids_of({pk for a, b in outcome.edges.tolist() for pk in (a, b)})}
    with transaction.atomic():
        # Cluster numbers are known before any pair is written, so each pair is written once, complete.
        number_of = _publish_clusters(run, edges, names)
        stats["exact_pairs"] = (_publish_exact(run, exact.groups, exact.doc_pks, number_of, suggester)
                                if run.exact else 0)
        _publish_near(run, number_of)
        if outcome.index_update is not None:
            near.index_record(outcome.index_update)
        stats["clusters"] = len(set(number_of.values()))
        stats["seconds"] = {**outcome.seconds, "publish": round(time.perf_counter() - started, 3)}
        if names := (nodes() if nodes else []):
            stats["nodes"] = names
        ScreeningRun.objects.filter(pk=run.pk).update(
            status=ScreeningRun.Status.COMPLETE, finished_at=timezone.now(), stats=stats
        )
    report(1.0, "publish")
    refresh_statistics()
    run.refresh_from_db()
    return run


def _cluster_of(number_of: dict[int, int], left: int, right: int) -> int | None:
    """A pair's cluster: the one holding both of its documents (a pair below the threshold may still have
    both ends in one cluster through other pairs)."""
    number = number_of.get(left)
    return number if number is not None and number_of.get(right) == number else None


def _publish_exact(run: ScreeningRun, groups: list[contract.Group], doc_pks: dict[str, int],
                   number_of: dict[int, int], suggester: Suggester) -> int:
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
    edges = [(doc_pks[m.doc_id], doc_pks[g.representative]) for g in groups for m in g.members[1:]]
    facts = near.document_facts({pk for edge in edges for pk in edge})
    return insert_rows(CandidatePair, (
        {"run_id": run.pk, "left_id": left, "right_id": right, "pass_name": CandidatePair.Pass.EXACT, "jaccard": 1.0,
         "cluster": _cluster_of(number_of, left, right),
         **suggested_fields(evidence.for_exact(facts[left], facts[right]), suggester)}
        for left, right in edges))


def suggested_fields(found: evidence.Evidence, suggester: Suggester) -> dict:
    """A pair's evidence and the verdict it suggests, as CandidatePair fields."""
    s = suggester(found)
    return {"evidence": found.as_dict(), "suggested_verdict": s.verdict, "suggestion_confidence": s.confidence,
            "suggestion_reasons": list(s.reasons), "suggestion_source": s.source}


def staged_rows(run_id: int, chunk: int, pairs: list[near.NearPair], suggester: Suggester) -> Iterable[dict]:
    """Verified near pairs as StagedPair rows of a run's chunk, each with the verdict its evidence suggests."""
    return ({"run_id": run_id, "chunk": chunk, "left_id": p.left, "right_id": p.right, "jaccard": p.jaccard,
             "minhash_estimate": p.estimate, "template_share": p.template_share,
             "jaccard_without_template": p.jaccard_without_template, "revision_signals": p.signals,
             "has_signals": bool(p.signals), **suggested_fields(evidence.Evidence.from_dict(p.evidence), suggester)}
            for p in pairs)


def stage_pairs(*, run_id: int, chunk: int, rows: Iterable[dict]) -> None:
    """A verification task's pairs, in its own transaction; a chunk verified again replaces its rows."""
    with transaction.atomic():
        StagedPair.objects.filter(run_id=run_id, chunk=chunk).delete()
        insert_rows(StagedPair, rows)


# The columns a staged pair carries over as they are; the rest are the pass, the cluster and the review state.
_CARRIED = ("run_id", "left_id", "right_id", "jaccard", "minhash_estimate", "template_share",
            "jaccard_without_template", "revision_signals", "has_signals", "evidence", "suggested_verdict",
            "suggestion_confidence", "suggestion_reasons", "suggestion_source")


def _publish_near(run: ScreeningRun, number_of: dict[int, int]) -> None:
    """Move the run's staged pairs into its pairs in the database, in the order one process gave them (best score
    first, then the doc_ids, compared byte for byte as Python compares them), each with its cluster: the number of
    both its documents' cluster, looked up in a temporary table of the run's clustered documents."""
    quote, vendor = connection.ops.quote_name, connection.vendor
    pair, staged, doc = CandidatePair._meta, StagedPair._meta, Document._meta
    defaults = {name: pair.get_field(name).get_default() for name in ("suggestion", "status", "final_verdict", "flag")}
    columns = [*(pair.get_field(name.removesuffix("_id")).column for name in _CARRIED), "pass_name", "cluster",
               *(pair.get_field(name).column for name in defaults)]
    byte_order = ' COLLATE "C"' if vendor == "postgresql" else ""  # SQLite compares text byte for byte already
    temp = quote("dedup_publish_cluster_of")
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {temp}")
        cursor.execute(f"CREATE TEMPORARY TABLE {temp} (document_id bigint PRIMARY KEY, number integer)")
        cursor.executemany(f"INSERT INTO {temp} (document_id, number) VALUES (%s, %s)",  # noqa: S608
                           list(number_of.items()))
        s, d = quote(staged.db_table), quote(doc.db_table)
        carried = ", ".join(f"s.{quote(staged.get_field(name.removesuffix('_id')).column)}" for name in _CARRIED)
        doc_id = quote(doc.get_field("doc_id").column)
        # Names from the models, values as parameters.
        cursor.execute(
            f"INSERT INTO {quote(pair.db_table)} ({', '.join(quote(c) for c in columns)}) "  # noqa: S608
            f"SELECT {carried}, %s, CASE WHEN cl.number = cr.number THEN cl.number END, "
            f"{', '.join(['%s'] * len(defaults))} FROM {s} s "
            f"INNER JOIN {d} ld ON ld.{quote(doc.pk.column)} = s.{quote(staged.get_field('left').column)} "
            f"INNER JOIN {d} rd ON rd.{quote(doc.pk.column)} = s.{quote(staged.get_field('right').column)} "
            f"LEFT JOIN {temp} cl ON cl.document_id = s.{quote(staged.get_field('left').column)} "
            f"LEFT JOIN {temp} cr ON cr.document_id = s.{quote(staged.get_field('right').column)} "
            f"WHERE s.{quote(staged.get_field('run').column)} = %s "
            f"ORDER BY s.{quote(staged.get_field('jaccard').column)} DESC, ld.{doc_id}{byte_order}, "
            f"rd.{doc_id}{byte_order}",
            [CandidatePair.Pass.NEAR.value, *defaults.values(), run.pk])
        cursor.execute(f"DROP TABLE {temp}")
    StagedPair.objects.filter(run=run).delete()


def _converter(f: models.Field) -> Callable:
    """What a value of this column becomes as a parameter: JSON through the field, numbers as Python's own
    (numpy's integers are not ints to the drivers), the rest as it is."""
    if isinstance(f, models.JSONField):
        return lambda v, f=f: f.get_db_prep_save(v, connection)
    if isinstance(f, (models.IntegerField, models.ForeignKey)):
        return lambda v: None if v is None else int(v)
    if isinstance(f, models.FloatField):
        return lambda v: None if v is None else float(v)
    if isinstance(f, (models.CharField, models.TextField)):
        return lambda v: None if v is None else str(v)  # a choices enum as its plain value
    return lambda v: v


def insert_rows(model: type[models.Model], rows: Iterable[dict], batch: int = WRITE_BATCH) -> int:
    """INSERT rows given as {attname: value}, every other column its model default (auto_now fields are not
    filled), with executemany; returns how many. bulk_create spent five sixths of publishing in Python,
    building each row's SQL and parameters; this suits write-once rows whose primary keys nobody needs back."""
    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    quote = connection.ops.quote_name
    sql = (f"INSERT INTO {quote(model._meta.db_table)} ({', '.join(quote(f.column) for f in fields)}) "  # noqa: S608
           f"VALUES ({', '.join(['%s'] * len(fields))})")
    columns = [(f.attname, f.get_default, _converter(f)) for f in fields]
    done = 0
    with connection.cursor() as cursor:
        for chunk in itertools.batched(rows, batch):
            cursor.executemany(sql, [[convert(row[name]) if name in row else convert(default())
                                      for name, default, convert in columns] for row in chunk])
            done += len(chunk)
    return done


def _publish_clusters(run: ScreeningRun, edges: list[tuple[int, int]], names: dict[int, str]) -> dict[int, int]:
    """Connected components of the run's pairs at or above the review threshold (exact pairs score 1.0),
    numbered largest first; returns each clustered document's number."""
    number_of: dict[int, int] = {}
    rows = []
    for number, members in enumerate(cluster.components(edges), start=1):
        members = sorted(members, key=names.__getitem__)
        rows.append({"run_id": run.pk, "number": number, "size": len(members),
                     "members": [[pk, names[pk]] for pk in members]})
        number_of.update(dict.fromkeys(members, number))
    insert_rows(Cluster, rows)
    return number_of


def refresh_statistics() -> None:
    """Tell PostgreSQL's planner about the pairs just written and the documents imported before. Until
    autovacuum gets there, stale statistics make it sort a whole run for one queue page and scan every
    document to name the 50 pairs shown (bench/HISTORY.md)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {CandidatePair._meta.db_table}, {Cluster._meta.db_table}, "
                           f"{Document._meta.db_table}")


def pair_evidence_complete(*, pair: CandidatePair) -> CandidatePair:
    """A pair stored below its run's review threshold has partial evidence (the run left the token diff out);
    its first opening computes the rest (signals, changed and moved shares) and its suggestion again, and
    keeps them on the pair. A pair with its evidence whole is returned as it is."""
    if not pair.evidence.get("partial"):
        return pair
    found = evidence.Evidence.from_dict(pair.evidence)
    comparison = revision.compare(pair.left.body, pair.right.body)
    found = dataclasses.replace(
        found, partial=False, same_normalised=comparison.changed_share == comparison.moved_share == 0,
        changed_share=round(comparison.changed_share, 4), moved_share=round(comparison.moved_share, 4),
        signals=[[s.kind, s.left, s.right] for s in comparison.signals])
    fields = {**suggested_fields(found, suggester_for(pair.run.corpus_id)), "revision_signals": found.signals,
              "has_signals": bool(found.signals)}
    # Only while still partial: two first openings at once write the same thing once.
    CandidatePair.objects.filter(pk=pair.pk, evidence__partial=True).update(**fields)
    for name, value in fields.items():
        setattr(pair, name, value)
    return pair


def run_evidence_complete(*, run: ScreeningRun, batch: int = 500) -> int:
    """Complete the evidence of every pair of the run still partial (an export writes whole evidence);
    returns how many."""
    done = 0
    while True:
        pairs = list(CandidatePair.objects.filter(run=run, evidence__partial=True).select_related(
            "left", "right", "run").order_by("pk")[:batch])
        if not pairs:
            return done
        for pair in pairs:
            pair_evidence_complete(pair=pair)
        done += len(pairs)
