"""The persistent LSH index on a real Redis: same answers as datasketch and as numpy banding, identity checked."""

from __future__ import annotations

import uuid

import numpy as np
import pytest
from datasketch import LeanMinHash

from dedup_site.redis_direct import redis_kwargs
from screening.engine import lsh
from screening.engine.lsh_index import IndexMismatch, PersistentIndex
from screening.engine.minhash import NearConfig

CONFIG = NearConfig(num_perm=32, bands=8, rows=4).resolved()


@pytest.fixture
def open_index():
    opened = []

    def _open(config=CONFIG, basename=None):
        index = PersistentIndex(redis_kwargs(), basename or f"test:lsh:{uuid.uuid4().hex}", config)
        opened.append(index)
        return index

    yield _open
    for index in opened:
        index.drop()


def signatures(n: int, seed: int = 7) -> np.ndarray:
    """Random signatures with planted near copies (a few values changed) so that bands collide."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 2**32, size=(n, CONFIG.num_perm), dtype=np.uint32)
    for i in range(1, n, 3):
        base[i] = base[i - 1]
        base[i, rng.integers(0, CONFIG.num_perm, size=6)] = rng.integers(0, 2**32, size=6, dtype=np.uint32)
    return base


def test_pipelined_query_equals_datasketch_query(open_index):
    sigs = signatures(60)
    index = open_index()
    index.insert(range(60), sigs)
    assert index.size() == 60
    for i in (0, 1, 2, 30, 59):
        lean = LeanMinHash(seed=CONFIG.seed, hashvalues=sigs[i], scheme=CONFIG.scheme)
        assert index.query(sigs[i : i + 1])[0] == {int(k) for k in index.lsh.query(lean)}


def test_index_finds_the_same_candidates_as_numpy_banding(open_index):
    sigs = signatures(300)
    index = open_index()
    index.insert(range(300), sigs)
    found = {(min(i, j), max(i, j)) for i, keys in enumerate(index.query(sigs)) for j in keys if j != i}
    expected = {tuple(p) for p in lsh.band_pairs(sigs, CONFIG.bands, CONFIG.rows).tolist()}
    assert found == expected and expected


def test_inserting_a_key_again_changes_nothing(open_index):
    sigs = signatures(9)
    index = open_index()
    index.insert(range(9), sigs)
    before = index.query(sigs)
    index.insert(range(9), sigs)
    assert index.size() == 9 and index.query(sigs) == before


@pytest.mark.parametrize("change", [{"seed": 2}, {"num_perm": 64, "bands": 16, "rows": 4}, {"bands": 4, "rows": 8},
                                    {"shingle": "char:3"}])
def test_an_index_refuses_another_configuration(open_index, change):
    index = open_index()
    index.insert(range(3), signatures(3))
    other = NearConfig(**{**CONFIG.as_dict(), **change}).resolved()
    with pytest.raises(IndexMismatch, match="was built with"):
        open_index(other, basename=index.basename.decode())


def test_the_same_configuration_reopens_the_index(open_index):
    sigs = signatures(12)
    index = open_index()
    index.insert(range(12), sigs)
    again = open_index(basename=index.basename.decode())
    assert again.size() == 12 and again.query(sigs) == index.query(sigs)
