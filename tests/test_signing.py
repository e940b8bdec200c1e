"""Signing at speed: each policy's normalisation as a table per code point, and a batch of texts signed in one
compiled pass, giving what the policy and datasketch give, value for value, in every script."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from datasketch import MinHash

from screening.engine import fast, foldtable, minhash, shingle
from screening.engine.normalize import POLICIES
from screening.engine.shingle import ShingleSpec
from tests.seeds import SEED000, SEED001

MARKS = [*range(0x300, 0x370), *range(0x64B, 0x660), 0x670, 0x6D6, 0x6E1, 0xBBE, 0xBD7, 0x9BE, 0xB3E, 0xCD5]
BASES = [*map(ord, "aeiouAEIOUnNcCsSzZyYwW 0123"), 0x627, 0x648, 0x64A, 0x6CC, 0x649, 0x647, 0x6D5, 0x6C1, 0x6D2,
         0x643, 0x6A9, 0x6F4, 0x661, 0xBC6, 0xBC7, 0x9C7, 0xB47, 0xCC6, 0xFC, 0xE9, 0xEA, 0xFF45, 0xFF55, 0x200C,
         0x640, 0x3000, 0xFF0C, 0x4E2D, 0x6587, 0xFB50, 0xFDFA, 0x2460, 0x1E9E, 0xDF, 0x130, 0x3A3, 0xAC00, 0x1100]
TEXTS = [
    "Ｈｅｌｌｏ, World — ١٢٣ ۴۵۶ كتاب يك\u200cروز",
    "ده\u200cهزار ﻻ ﷺ ①②",
    "资料整理说明：先备份，再登记。ＲＴＬＤ",
    "ا\u0654 and أ, e\u0301 and é, ü\u031b",
    "한국어 텍스트 \U0001F600 emoji 𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
    "".join(map(chr, range(128))), "".join(chr(c) + "\u0301\u0338" for c in range(128)),  # every ASCII character
    *(r["body"] for r in SEED000 + SEED001)]


def dense_texts(n: int, seed: int = 1) -> list[str]:
    """Short texts dense in what normalisation joins, reorders, folds or deletes."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        cps = []
        for _ in range(rng.randint(1, 14)):
            r = rng.random()
            c = rng.choice(MARKS) if r < 0.35 else rng.choice(BASES) if r < 0.85 else rng.randrange(0x20, 0x10000)
            if not 0xD800 <= c < 0xE000:
                cps.append(c)
        out.append("".join(map(chr, cps)))
    return out


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_the_table_normalises_exactly_as_the_policy(name):
    policy = POLICIES[name]
    for text in TEXTS + dense_texts(4000):
        chars = foldtable.normalized_codepoints(text, policy).tobytes().decode("utf-32-le")
        words = foldtable.normalized_codepoints(text, policy, words=True).tobytes().decode("utf-32-le")
        assert (chars, words) == (policy.normalize(text), " ".join(policy.words(text))), ascii(text)


@pytest.mark.parametrize("text", ["한국어", "ا\u0654", "e\u0301", "\U0001F600", "ü\u031b"])
def test_what_the_table_cannot_normalise_goes_to_the_policy(text):
    policy = POLICIES["persian-arabic-fold-v1"]
    t = foldtable.table_for(policy)
    cp = foldtable.codepoints(text)
    out = np.empty(t.widest * len(text) + 1, dtype=np.uint32)
    assert foldtable.map_text(cp, 0, len(cp), t.kind, t.start, t.length, t.ccc, t.pool, t.alnum, t.pairs, False,
                              out) == -1
    assert foldtable.normalized_codepoints(text, policy).tobytes().decode("utf-32-le") == policy.normalize(text)


def test_persian_harakat_and_yeh_with_hamza_take_the_table():
    policy = POLICIES["persian-arabic-fold-v1"]
    t = foldtable.table_for(policy)
    text = "كِتَابٌ ئ همهٔ روزها"  # harakat, a precomposed yeh with hamza, heh + hamza above (no composite)
    cp = foldtable.codepoints(text)
    out = np.empty(t.widest * len(text), dtype=np.uint32)
    n = foldtable.map_text(cp, 0, len(cp), t.kind, t.start, t.length, t.ccc, t.pool, t.alnum, t.pairs, False, out)
    assert n > 0 and out[:n].tobytes().decode("utf-32-le") == policy.normalize(text)


@pytest.mark.parametrize("name", sorted(POLICIES))
@pytest.mark.parametrize(("num_perm", "seed", "k"), [(128, 1, 5), (64, 42, 3), (256, 7, 7)])
def test_batch_signatures_equal_datasketch_minhash_in_every_script(name, num_perm, seed, k):
    policy, spec = POLICIES[name], ShingleSpec("char", k)
    texts = TEXTS + dense_texts(300, seed) + ["", "ab", "短"]
    sigs, counts = fast.sign_texts(texts, policy, spec, minhash.permutations(num_perm, seed))
    for text, sig, count in zip(texts, sigs, counts, strict=True):
        shingles = shingle.shingles(text, policy, spec)
        assert count == len({shingle.shingle_hash64(s) for s in shingles})
        if shingles:
            reference = MinHash(num_perm=num_perm, seed=seed, hashfunc=shingle.shingle_hash32)
            reference.update_batch(shingles)
            assert sig.tolist() == reference.hashvalues.tolist(), ascii(text)


def test_batch_signatures_of_word_shingles_equal_one_at_a_time():
    policy, spec = POLICIES["nfkc-casefold-alnum-v1"], ShingleSpec("word", 2)
    perms = minhash.permutations(128, 1)
    sigs, counts = fast.sign_texts(TEXTS, policy, spec, perms)
    for text, sig, count in zip(TEXTS, sigs, counts, strict=True):
        hashes = fast.shingle_hashes(text, policy, spec)
        assert count == hashes.shape[0] and (not count or sig.tolist() == fast.signature(hashes, perms).tolist())


def test_stored_bytes_of_a_batch_equal_leanminhash_bytes():
    config = minhash.NearConfig().resolved()
    rows = np.random.default_rng(3).integers(0, 2**32, (20, 128), dtype=np.uint64).astype(np.uint32)
    assert minhash.to_bytes_many(rows, config) == [minhash.to_bytes(r, config) for r in rows]
    assert (minhash.from_bytes(minhash.to_bytes_many(rows, config)[0], config) == rows[0]).all()


def test_compiled_kernels_are_kept_in_a_folder_named_for_all_the_engines_code(tmp_path):
    from numba.core import config

    import screening.engine as engine

    here = Path(engine.__file__).resolve().parent
    assert config.CACHE_DIR == engine.kernel_cache(here)
    for path in here.glob("*.py"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    before = engine.kernel_cache(tmp_path)
    assert Path(before).name == Path(config.CACHE_DIR).name
    # A change to a module whose code other modules' kernels inline (numba alone would not see it).
    (tmp_path / "foldtable.py").write_text((tmp_path / "foldtable.py").read_text() + "\n# changed\n")
    assert engine.kernel_cache(tmp_path) != before
