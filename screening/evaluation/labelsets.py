"""Label sets: imported from a CSV (all or nothing, every problem named), or made from a run's settled
verdicts. Both are kept as they were made (guarded in the database)."""

from __future__ import annotations

from pathlib import Path

from django.db import transaction
from django.utils.translation import gettext

from dedup_site import accounts
from dedup_site.roles import sees_all_verdicts
from dedup_site.trail import trail_record
from screening.engine import labelcsv
from screening.ingest import sources
from screening.models import Corpus, Document, Label, LabelSet, ScreeningRun, SourceFile


class EvaluationRefused(Exception):
    """An evaluation, label set or audit that cannot be made as asked; the message says why."""


def label_sets_visible(corpus: Corpus, user):
    """The corpus's label sets this user may see: label sets made from reviewers' settled verdicts are
    verdicts, which an editor sees only on pairs they judged (blind review), so editors see uploaded ones."""
    label_sets = corpus.label_sets.all()
    return label_sets if sees_all_verdicts(user) else label_sets.filter(from_run__isnull=True)


class LabelsRejected(Exception):
    def __init__(self, problems: list[str]):
        super().__init__(f"{len(problems)} problem(s)")
        self.problems = problems


def labelset_import(*, corpus: Corpus, data: bytes, original_name: str, name: str = "", user=None) -> LabelSet:
    """Store a labels CSV for the corpus: every row or none. Problems name their line."""
    if refusal := accounts.admin_refusal(user):
        raise LabelsRejected([refusal])
    original_name = Path(original_name).name
    name = (name or Path(original_name).stem).strip()[:100]
    rows, problems, notices = labelcsv.read_labels(data, original_name)
    if LabelSet.objects.filter(corpus=corpus, name=name).exists():
        problems.append(f"a label set named {name!r} already exists in corpus {corpus.name}; choose another name")
    ids = {r.left_id for r in rows} | {r.right_id for r in rows}
    pks = dict(Document.objects.filter(corpus=corpus, doc_id__in=ids).values_list("doc_id", "pk"))
    for r in rows:
        for doc_id in (r.left_id, r.right_id):
            if doc_id not in pks:
                problems.append(f"{original_name} line {r.line}: unknown doc_id {doc_id!r} in corpus {corpus.name}")
    if problems:
        raise LabelsRejected(problems)
    sha, size = sources.store([data])
    source, _ = SourceFile.objects.get_or_create(sha256=sha, defaults={"size": size})
    with transaction.atomic():
        label_set = LabelSet.objects.create(
            corpus=corpus, name=name, source=source, original_name=original_name, uploaded_by=user, notices=notices,
            size=len(rows), positives=sum(r.label for r in rows),
        )
        Label.objects.bulk_create(
            Label(label_set=label_set, left_id=pks[r.left_id], right_id=pks[r.right_id], label=r.label,
                  reason=r.reason, split=r.split, line=r.line) for r in rows
        )
        trail_record(actor=user, action="labels.import", target=corpus, after={
            "label_set": label_set.pk, "name": name, "file": original_name, "sha256": sha, "size": label_set.size,
            "positives": label_set.positives})
    return label_set


def labelset_from_run(*, run: ScreeningRun, labels: list[tuple[int, int, int, str]], user=None) -> LabelSet:
    """A label set made from a run's pairs (document pks, label, reason): the review app makes one from the
    run's settled verdicts. Named "verdicts of run N", numbered when there are several."""
    if not labels:
        raise EvaluationRefused(gettext("run %(run)s has no settled pair yet") % {"run": run.pk})
    with transaction.atomic():
        count = LabelSet.objects.filter(corpus=run.corpus, name__startswith=f"verdicts of run {run.pk}").count()
        label_set = LabelSet.objects.create(
            corpus=run.corpus, name=f"verdicts of run {run.pk}" + (f" ({count + 1})" if count else ""),
            from_run=run, uploaded_by=user, size=len(labels), positives=sum(label for _, _, label, _ in labels),
        )
        Label.objects.bulk_create(Label(label_set=label_set, left_id=a, right_id=b, label=label, reason=reason)
                                  for a, b, label, reason in labels)
        trail_record(actor=user, action="labels.from_verdicts", target=run, after={
            "label_set": label_set.pk, "name": label_set.name, "size": label_set.size,
            "positives": label_set.positives})
    return label_set
