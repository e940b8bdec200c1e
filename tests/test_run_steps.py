"""A run as steps over data, put in order by one driver and run by an executor: the spec handed to every step,
signing in slices, verification in chunks of whole components, the same answers however the work is cut."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

from screening import runs
from screening.models import CandidatePair, Corpus, DocumentSignature, StagedPair
from screening.runs import pipeline, steps
from screening.runs.executors import InProcess
from screening.runs.lifecycle import spec_of
from screening.runs.spec import RunSpec
from tests.factories import completed_run
from tests.families import evidence, family_records, pairs


class Recording(InProcess):
    """The in-process executor, noting which step each task it ran belonged to."""

    def __init__(self):
        self.tasks: list[str] = []

    def map(self, step, tasks):
        for task in tasks:
            self.tasks.append(step.__name__)
            yield step(*task)

    def shuffle(self, map_step, map_tasks, parts, reduce_step, reduce_args=()):
        def counted(step):
            def call(*args):
                self.tasks.append(step.__name__)
                return step(*args)
            return call

        return super().shuffle(counted(map_step), map_tasks, parts, counted(reduce_step), reduce_args)


def _run(corpus: str, **options):
    return runs.run_create(corpus=Corpus.objects.get(name=corpus), options=runs.RunOptions(**options))


@pytest.mark.django_db
def test_a_run_spec_goes_through_json_and_pickle_unchanged(import_records):
    import_records("many", family_records(4, 3))
    spec = spec_of(_run("many", exact=True, near=True, incremental=True))
    assert spec.near.bands and spec.near.rows  # resolved once, for every step
    assert RunSpec.from_dict(json.loads(json.dumps(spec.as_dict()))) == spec
    assert pickle.loads(pickle.dumps(spec)) == spec  # noqa: S301 - our own bytes, as an executor sends them
    assert spec_of(_run("many", exact=True)).near is None


@pytest.mark.django_db
def test_verification_in_chunks_gives_the_pairs_and_evidence_of_one_chunk(import_records, settings):
    records = family_records()
    import_records("one", records)
    import_records("chunked", records)
    whole = completed_run("one", near=True)
    settings.DEDUP_VERIFY_CHUNK, settings.DEDUP_SIGN_CHUNK = 20, 50
    executor = Recording()
    cut = pipeline.drive(run=_run("chunked", exact=True, near=True), executor=executor)
    assert cut.status == "complete", cut.error
    assert pairs(cut) == pairs(whole) and evidence(cut) == evidence(whole)
    for name in ("lsh_candidates", "below_floor", "histogram", "signed", "empty", "template_shingles"):
        assert cut.stats["near"][name] == whole.stats["near"][name], name
    candidates = cut.stats["near"]["lsh_candidates"]
    assert executor.tasks.count("verify_step") >= candidates / 20 > 5
    assert executor.tasks.count("sign_step") == -(-cut.stats["near"]["representatives"] // 50)
    assert executor.tasks.count("band_pairs_step") == cut.stats["near"]["band_parts"] == 1
    assert executor.tasks.count("band_keys_step") == executor.tasks.count("sign_step")  # the same slices


@pytest.mark.django_db
def test_band_keys_in_partitions_give_the_candidates_of_one(import_records, settings):
    records = family_records(30, 4)
    import_records("one", records)
    import_records("parts", records)
    whole = completed_run("one", near=True)
    settings.DEDUP_BAND_KEYS = 500  # 120 documents x 32 bands: several partitions
    executor = Recording()
    parted = pipeline.drive(run=_run("parts", exact=True, near=True), executor=executor)
    assert parted.stats["near"]["band_parts"] == executor.tasks.count("band_pairs_step") > 4
    assert pairs(parted) == pairs(whole)
    assert parted.stats["near"]["lsh_candidates"] == whole.stats["near"]["lsh_candidates"]


@pytest.mark.django_db
def test_signing_a_slice_twice_stores_each_signature_once_and_counts_the_empty(import_records):
    import_records("many", [*family_records(3, 2), {"doc_id": "blank", "language": "en", "body": "a b"}])
    spec = spec_of(_run("many", exact=True, near=True))
    pks = steps.representatives(spec, set())
    first, again = steps.sign_step(spec, pks), steps.sign_step(spec, pks)
    assert (first.computed, first.empty) == (len(pks), 1)  # "a b" has no character 5-gram
    assert (again.computed, again.empty) == (0, 1)
    assert DocumentSignature.objects.filter(key=spec.near.signature_key).count() == len(pks)


@pytest.mark.django_db
def test_a_step_refuses_to_verify_with_another_verification_key(import_records):
    import_records("many", family_records(3, 2))
    spec = spec_of(_run("many", exact=True, near=True))
    other = RunSpec.from_dict({**spec.as_dict(), "verification_key": "0" * 16})
    with pytest.raises(runs.RunRefused, match="DJANGO_SECRET_KEY"):
        steps.verify_step(other, 0, np.array([[1, 2]], dtype=np.int64), np.zeros(0, dtype=np.uint64))


class Backwards(InProcess):
    """Runs a step's tasks last first (as tasks on other machines may end), then gives the results in order."""

    def map(self, step, tasks):
        tasks = list(tasks)
        return iter(reversed([step(*task) for task in reversed(tasks)]))


def _published_order(run) -> list[tuple[str, str]]:
    return [(p.left.doc_id, p.right.doc_id) for p in run.pairs.select_related("left", "right").order_by("pk")]


@pytest.mark.django_db
def test_pairs_are_published_in_one_order_whatever_order_their_chunks_were_verified_in(import_records, settings):
    records = family_records(30, 4)
    # doc_ids whose byte order differs from a language's collation (PostgreSQL's default): upper case first
    for record in records[::3]:
        record["doc_id"] = record["doc_id"].upper()
    import_records("ahead", records)
    import_records("behind", records)
    settings.DEDUP_VERIFY_CHUNK = 10
    ahead = pipeline.drive(run=_run("ahead", exact=True, near=True), executor=InProcess())
    behind = pipeline.drive(run=_run("behind", exact=True, near=True), executor=Backwards())
    order = _published_order(ahead)
    assert order == _published_order(behind) and len(order) > 50
    near = [(p.jaccard, p.left.doc_id, p.right.doc_id)
            for p in ahead.pairs.filter(pass_name="near").select_related("left", "right").order_by("pk")]
    assert near == sorted(near, key=lambda p: (-p[0], p[1], p[2]))  # Python's order of strings: code points
    def clusters(run):
        return {(p.left.doc_id, p.right.doc_id): p.cluster for p in run.pairs.select_related("left", "right")}

    assert clusters(ahead) == clusters(behind)
    assert all(number is not None for (left, right), number in clusters(ahead).items()
               if ahead.pairs.get(left__doc_id=left, right__doc_id=right).jaccard >= 0.7)


def _ready_to_verify(import_records):
    """A run's spec with its representatives signed and banded: (spec, candidates, template)."""
    import_records("many", family_records(6, 4))
    spec = spec_of(_run("many", exact=True, near=True))
    pks = steps.representatives(spec, set())
    steps.sign_step(spec, pks)
    candidates = steps.candidates_merged([steps.band_pairs_step(spec, steps.band_keys_step(spec, pks, 1)[0])])
    return spec, candidates, steps.template_step(spec, pks, len(pks))


@pytest.mark.django_db
def test_a_verification_task_run_again_replaces_its_staged_pairs(import_records):
    spec, candidates, template = _ready_to_verify(import_records)
    first = steps.verify_step(spec, 0, candidates, template)
    again = steps.verify_step(spec, 0, candidates, template)
    assert first.stored == again.stored > 5
    assert StagedPair.objects.filter(run_id=spec.run).count() == first.stored


@pytest.mark.django_db
def test_a_run_that_fails_while_publishing_shows_no_pair_and_keeps_none_staged(import_records, monkeypatch):
    import_records("many", family_records(6, 4))
    from screening.runs import publish

    def broken(*args):
        raise RuntimeError("forced failure while publishing")

    monkeypatch.setattr(publish, "_publish_near", broken)
    run = _run("many", exact=True, near=True)
    with pytest.raises(RuntimeError, match="forced failure"):
        pipeline.run_execute(run=run)
    runs.run_fail(run_id=run.pk, error="forced failure")  # as the job's failure callback does
    assert not CandidatePair.objects.filter(run=run).exists() and not run.clusters.exists()
    assert not StagedPair.objects.filter(run=run).exists()


@pytest.mark.django_db
def test_a_verification_task_gives_back_what_it_held(import_records):
    from screening.engine import tokdiff

    spec, candidates, template = _ready_to_verify(import_records)
    assert steps.verify_step(spec, 0, candidates, template).stored > 5
    assert not tokdiff._SPARE  # the next task, or none, may come much later: no 300 MiB kept for it
