"""The exact pass (doc-content-v1, seed 000) over a run's documents."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, QuerySet

from dedup_site.progress import StageProgress as Progress
from screening.engine import contract

READ_BATCH = 2000


@dataclass
class ExactResult:
    """The groups of two or more members, the number of singleton documents, and the pk of every grouped
    doc_id."""

    groups: list[contract.Group]
    singletons: int
    doc_pks: dict[str, int]

    @property
    def duplicates(self) -> set[int]:
        """Every grouped document but its group's representative: the near pass signs representatives only."""
        return {self.doc_pks[m.doc_id] for g in self.groups for m in g.members[1:]}

    @property
    def edges(self) -> list[tuple[int, int]]:
        """(member, representative) document pks: the exact pairs."""
        return [(self.doc_pks[m.doc_id], self.doc_pks[g.representative]) for g in self.groups for m in g.members[1:]]


def shared_digests(documents: QuerySet) -> QuerySet:
    """The digests two or more of these documents share, in order (from the index document_digest_idx
    alone: no document row is read)."""
    return (documents.values("content_sha256").annotate(n=Count("pk")).filter(n__gt=1).order_by("content_sha256")
            .values_list("content_sha256", flat=True))


def exact_pass(documents: QuerySet, on_progress: Progress) -> ExactResult:
    """Group these documents (a run's) by doc-content-v1. The database groups the digests taken at import; only
    documents that share a digest are read, and the contract compares their full bytes."""
    shared = list(shared_digests(documents))
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
    return ExactResult(groups, singletons, doc_pks)
