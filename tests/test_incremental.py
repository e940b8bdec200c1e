"""Incremental screening: a corpus keeps a persistent LSH index per configuration in Redis."""

from __future__ import annotations

import random

import numpy as np
import pytest
import redis
from django.core.management import call_command
from django.urls import reverse

from dedup_site.redis_direct import redis_kwargs
from screening import runs
from screening.engine import lsh_index
from screening.engine.lsh_index import IndexMismatch, PersistentIndex
from screening.engine.minhash import NearConfig
from screening.models import Corpus, LshIndex, ScreeningRun
from screening.runs import near
from tests.factories import completed_run

VOCAB = [f"w{i}" for i in range(3000)]


def family(rng: random.Random, prefix: str, members: int) -> list[dict]:
    base = [rng.choice(VOCAB) for _ in range(70)]
    out = []
    for m in range(members):
        rate = rng.choice([0.0, 0.03, 0.1, 0.3])
        body = " ".join(rng.choice(VOCAB) if rng.random() < rate else w for w in base)
        out.append({"doc_id": f"{prefix}-{m}", "source_id": prefix, "language": "en", "body": body})
    return out


def first_and_second_batches() -> tuple[list[dict], list[dict]]:
    rng = random.Random(11)
    first = [r for f in range(25) for r in family(rng, f"a{f:02}", 3)]
    second = [r for f in range(10) for r in family(rng, f"b{f:02}", 3)]  # new families (new-new pairs)
    for old in first[:30:3]:  # revisions of old documents (new-old pairs)
        words = old["body"].split()
        words[5:9] = ["revised", "text", "here", "now"]
        second.append({**old, "doc_id": f"rev-{old['doc_id']}", "body": " ".join(words)})
    # An exact copy with a smaller doc_id takes over as representative of an old document's group.
    second.append({**first[1], "doc_id": "0-copy"})
    second.append({"doc_id": "empty-new", "source_id": "x", "language": "en", "body": "!!"})
    return first, second


def pair_set(run: ScreeningRun) -> set[tuple]:
    return {(p.left.doc_id, p.right.doc_id, p.pass_name, round(p.jaccard, 12), p.template_share, p.cluster)
            for p in run.pairs.select_related("left", "right")}


@pytest.fixture
def _drop_indexes(db):
    yield
    client = redis.Redis(**redis_kwargs())
    for row in LshIndex.objects.all():
        lsh_index.drop(client, row.basename)


def _config_of(row: LshIndex) -> dict:
    policy, shingle, num_perm, seed, scheme = row.signature_key.split("|")
    return {"policy": policy, "shingle": shingle, "num_perm": int(num_perm), "seed": int(seed), "scheme": scheme,
            "bands": row.bands, "rows": row.rows}


@pytest.mark.django_db
@pytest.mark.usefixtures("_drop_indexes")
def test_incremental_run_gives_the_pairs_of_a_full_run_over_the_union(import_records):
    first, second = first_and_second_batches()
    import_records("grow", first)
    built = completed_run("grow", near=True, incremental=True)
    assert built.stats["near"]["index"]["built_now"] is True
    assert built.stats["near"]["stored"] > 20
    import_records("grow", second, name="second.jsonl")

    again = completed_run("grow", near=True, incremental=True)
    index = again.stats["near"]["index"]
    assert index["built_now"] is False
    assert index["indexed_before"] == built.stats["near"]["signed"]
    # Only the second batch's representatives were signed and looked up: the new ones, plus the copy that
    # replaced an old representative; the document without shingles is signed but not looked up.
    new_representatives = again.stats["near"]["representatives"] - built.stats["near"]["representatives"] + 1
    assert again.stats["near"]["newly_signed"] == new_representatives == index["new_documents"]
    assert index["looked_up"] == new_representatives - 1
    assert index["carried_candidates"] > 0 and index["new_candidates"] > 0

    import_records("union", first + second)
    full = completed_run("union", near=True, incremental=False)
    assert pair_set(again) == pair_set(full)
    assert again.stats["near"]["stored"] == full.stats["near"]["stored"]
    assert again.stats["near"]["template_shingles"] == full.stats["near"]["template_shingles"]
    # The demoted old document appears in no near pair; its new representative does.
    demoted = first[1]["doc_id"]
    assert not again.pairs.filter(pass_name="near", left__doc_id=demoted).exists()
    assert not again.pairs.filter(pass_name="near", right__doc_id=demoted).exists()
    assert again.pairs.filter(pass_name="exact", left__doc_id=demoted, right__doc_id="0-copy").exists()


@pytest.mark.django_db
@pytest.mark.usefixtures("_drop_indexes")
def test_a_third_run_with_nothing_new_looks_nothing_up_and_gives_the_same_pairs(import_records):
    first, second = first_and_second_batches()
    import_records("grow", first)
    completed_run("grow", near=True, incremental=True)
    import_records("grow", second, name="second.jsonl")
    second_run = completed_run("grow", near=True, incremental=True)
    third = completed_run("grow", near=True, incremental=True)
    assert third.stats["near"]["index"]["new_documents"] == 0
    assert third.stats["near"]["newly_signed"] == 0
    assert pair_set(third) == pair_set(second_run)


@pytest.mark.django_db
@pytest.mark.usefixtures("_drop_indexes")
def test_a_configuration_change_builds_its_own_index(import_records):
    first, _ = first_and_second_batches()
    import_records("grow", first)
    completed_run("grow", near=True, incremental=True)
    completed_run("grow", near=True, incremental=True, seed=2)
    completed_run("grow", near=True, incremental=True, bands=16, rows=8)
    rows = LshIndex.objects.filter(corpus__name="grow")
    assert rows.count() == 3
    assert len({r.basename for r in rows}) == 3


@pytest.mark.django_db
@pytest.mark.usefixtures("_drop_indexes")
def test_a_run_of_another_seed_or_scheme_cannot_use_an_existing_index(import_records):
    import_records("grow", first_and_second_batches()[0])
    completed_run("grow", near=True, incremental=True)
    row = LshIndex.objects.get()
    for change in ({"seed": 2}, {"num_perm": 64}):
        other = NearConfig(**{**_config_of(row), **change, "bands": None, "rows": None}).resolved()
        with pytest.raises(IndexMismatch, match="was built with"):
            PersistentIndex(redis_kwargs(), row.basename, other)
    # A run whose configuration record points at the index but asks for another seed fails, publishing nothing.
    LshIndex.objects.filter(pk=row.pk).update(signature_key=row.signature_key.replace("|1|", "|2|"))
    run = runs.run_create(corpus=Corpus.objects.get(name="grow"), exact=True, near=True, incremental=True,
                          near_config=NearConfig(seed=2))
    with pytest.raises(IndexMismatch):
        near.incremental_candidates(run.corpus, run.upload_ids, np.zeros(0, dtype=np.int64), runs.near_config_of(run))


@pytest.mark.django_db
@pytest.mark.usefixtures("_drop_indexes")
def test_an_index_lost_from_redis_is_rebuilt_with_the_same_pairs(import_records):
    first, second = first_and_second_batches()
    import_records("grow", first)
    completed_run("grow", near=True, incremental=True)
    import_records("grow", second, name="second.jsonl")
    row = LshIndex.objects.get()
    PersistentIndex(redis_kwargs(), row.basename, NearConfig(**_config_of(row))).drop()
    rebuilt = completed_run("grow", near=True, incremental=True)
    assert rebuilt.stats["near"]["index"]["built_now"] is True
    import_records("union", first + second)
    assert pair_set(rebuilt) == pair_set(completed_run("union", near=True, incremental=False))


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("_drop_indexes")
def test_screen_incremental_sync_and_the_corpus_page(import_records, admin_client, queue, capsys):
    import_records("grow", first_and_second_batches()[0])
    call_command("screen", "--corpus", "grow", "--near", "--incremental", "--sync")
    assert "incremental: built the LSH index" in capsys.readouterr().out
    assert ScreeningRun.objects.get().config["incremental"] is True
    page = admin_client.get(reverse("screening:corpus_detail", args=["grow"])).content.decode()
    assert "LSH indexes" in page and "nfkc-casefold-alnum-v1|char:5|128|1|affine32" in page
    assert "near (incremental)" in page
    run_page = admin_client.get(ScreeningRun.objects.get().get_absolute_url()).content.decode()
    assert "LSH index built by this run" in run_page and "through the corpus's persistent index" in run_page


@pytest.mark.django_db
def test_incremental_needs_the_near_pass(import_records):
    import_records("grow", first_and_second_batches()[0])
    with pytest.raises(runs.RunRefused, match="near pass"):
        runs.run_create(corpus=Corpus.objects.get(name="grow"), exact=True, near=False, incremental=True)
