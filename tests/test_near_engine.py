"""Near-pass algorithms against the seeds and against datasketch itself (no database)."""

from __future__ import annotations

import random
import sys

import numpy as np
import pytest
from datasketch import MinHash, MinHashLSH
from scipy import sparse

from screening.engine import cluster, explain, fast, lsh, minhash, normalize, shingle
from screening.engine.shingle import ShingleSpec
from tests.seeds import SEED001_TEXTS

DEFAULT = normalize.get_policy("nfkc-casefold-alnum-v1")
PERSIAN = normalize.get_policy("persian-arabic-fold-v1")
CHAR5, CHAR3, WORD2 = ShingleSpec("char", 5), ShingleSpec("char", 3), ShingleSpec("word", 2)


# --- seeds ----------------------------------------------------------------------------------------


def test_seed001_normalised_example_and_its_three_grams():
    assert DEFAULT.normalize("资料，先备份！") == "资料先备份"
    assert shingle.char_shingles("资料先备份", 3) == {"资料先", "料先备", "先备份"}


def test_seed001_a_and_b_have_identical_normalised_text_and_signature():
    a, b = SEED001_TEXTS["A"], SEED001_TEXTS["B"]
    assert DEFAULT.normalize(a) == DEFAULT.normalize(b)
    perms = minhash.permutations(128, 1)
    sig_a = fast.signature(fast.shingle_hashes(a, DEFAULT, CHAR5), perms)
    sig_b = fast.signature(fast.shingle_hashes(b, DEFAULT, CHAR5), perms)
    assert (sig_a == sig_b).all()
    assert shingle.jaccard(shingle.shingles(a, DEFAULT, CHAR5), shingle.shingles(b, DEFAULT, CHAR5)) == 1.0


def test_seed001_c_is_a_high_scoring_revision_and_e_shares_nothing():
    sets = {k: shingle.shingles(t, DEFAULT, CHAR5) for k, t in SEED001_TEXTS.items()}
    # By hand: A has 33 normalised characters (29 five-grams); C differs in one character (周 -> 天),
    # which touches 5 five-grams: 24 shared, 29 + 29 - 24 = 34 in the union.
    assert len(DEFAULT.normalize(SEED001_TEXTS["A"])) == 33 and len(sets["A"]) == 29
    assert shingle.jaccard(sets["A"], sets["C"]) == 24 / 34
    assert shingle.jaccard(sets["A"], sets["E"]) == 0.0


def test_seed003_word_two_grams_and_their_jaccard():
    first, second = "motor sensor signal test", "motor sensor signal alarm"
    left, right = shingle.shingles(first, DEFAULT, WORD2), shingle.shingles(second, DEFAULT, WORD2)
    assert left == {"motor sensor", "sensor signal", "signal test"}
    assert right == {"motor sensor", "sensor signal", "signal alarm"}
    assert shingle.jaccard(left, right) == 1 / 2


def test_seed003_shingle_sets_ignore_repeats():
    assert shingle.shingles("a b a b", DEFAULT, WORD2) == {"a b", "b a"}
    assert fast.shingle_hashes("a b a b", DEFAULT, WORD2).size == 2


def test_seed003_documents_without_shingles_get_none():
    assert fast.shingle_hashes("motor", DEFAULT, WORD2).size == 0
    assert fast.shingle_hashes("!!! ...", DEFAULT, CHAR5).size == 0
    assert fast.shingle_hashes("abcd", DEFAULT, CHAR5).size == 0
    assert shingle.jaccard(set(), set()) is None


# --- normalisation --------------------------------------------------------------------------------


def test_default_policy_keeps_exactly_the_isalnum_characters():
    every = "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF)
    folded = DEFAULT.fold(every)
    assert DEFAULT.normalize(every) == "".join(c for c in folded if c.isalnum())


@pytest.mark.parametrize("policy", [DEFAULT, PERSIAN])
def test_ascii_text_is_normalised_as_the_fold_and_the_regex_do(policy):
    rng = random.Random(5)
    every = "".join(map(chr, range(128)))
    texts = [every, "", "Voltage: 12 V_max", *("".join(rng.choice(every) for _ in range(rng.randint(0, 80)))
                                               for _ in range(500))]
    for text in texts:
        assert policy.normalize(text) == normalize._NOT_ALNUM.sub("", policy.fold(text)), repr(text)


def test_persian_policy_folds_letters_digits_zwnj_and_tatweel():
    text = "كتاب علي\u200cاست ـــ ۱۲۳ ٤٥٦ يى"
    assert PERSIAN.normalize(text) == "کتابعلیاست123456یی"
    assert DEFAULT.normalize(text) != PERSIAN.normalize(text)


def test_persian_policy_description_keeps_its_arrows_left_to_right():
    # An arrow between two Arabic letters joins their right-to-left run and is shown turned round, unless a
    # left-to-right mark stands before it.
    import unicodedata

    text = normalize.POLICIES["persian-arabic-fold-v1"].description
    for at in (i for i, c in enumerate(text) if c == "→"):
        before = text[:at].rstrip(" ")[-1]
        assert unicodedata.bidirectional(before) not in ("R", "AL"), text[max(at - 6, 0):at + 3]


def test_persian_policy_makes_yeh_variants_pair():
    a, b = "راهنمای حسگر ولتاژ", "راهنماي حسگر ولتاژ"
    assert shingle.jaccard(shingle.shingles(a, DEFAULT, CHAR5), shingle.shingles(b, DEFAULT, CHAR5)) < 1
    assert shingle.jaccard(shingle.shingles(a, PERSIAN, CHAR5), shingle.shingles(b, PERSIAN, CHAR5)) == 1


def test_policies_are_pure_and_leave_the_input_alone():
    text = "Voltage ＶＯＬＴＳ in V"
    assert DEFAULT.normalize(text) == DEFAULT.normalize(text) == "voltagevoltsinv"
    assert text == "Voltage ＶＯＬＴＳ in V"


def test_unknown_policy_is_refused():
    with pytest.raises(ValueError, match="unknown normalisation policy"):
        normalize.get_policy("lowercase")


# --- fast path = reference = datasketch -------------------------------------------------------------

WORDS = "sensor voltage motor signal relay archive guide manual revision backup 资料 版本 ولتاژ حسگر".split()


def random_text(rng: random.Random, n: int = 80) -> str:
    return " ".join(rng.choice(WORDS) + rng.choice(["", ",", ".", "!"]) for _ in range(n))


@pytest.mark.parametrize("spec", [CHAR3, CHAR5, ShingleSpec("char", 7), WORD2, ShingleSpec("word", 3)])
def test_fast_shingle_hashes_equal_the_reference_hash_of_every_shingle(spec):
    rng = random.Random(3)
    for _ in range(20):
        text = random_text(rng)
        expected = sorted({shingle.shingle_hash64(s) for s in shingle.shingles(text, DEFAULT, spec)})
        assert fast.shingle_hashes(text, DEFAULT, spec).tolist() == expected


@pytest.mark.parametrize(("num_perm", "seed"), [(128, 1), (64, 42), (256, 7)])
def test_fast_signature_equals_datasketch_minhash_value_for_value(num_perm, seed):
    rng = random.Random(seed)
    for _ in range(10):
        shingles = shingle.shingles(random_text(rng), DEFAULT, CHAR5)
        reference = MinHash(num_perm=num_perm, seed=seed, hashfunc=shingle.shingle_hash32)
        reference.update_batch(shingles)
        hashes = np.array(sorted(shingle.shingle_hash64(s) for s in shingles), dtype=np.uint64)
        ours = fast.signature(hashes, minhash.permutations(num_perm, seed))
        assert reference.scheme == "affine32"
        assert ours.tolist() == reference.hashvalues.tolist()


KEY = shingle.VerifyKey.derive(b"a test installation's secret")


@pytest.mark.parametrize("spec", [CHAR3, CHAR5, WORD2, ShingleSpec("word", 3)])
def test_fast_verification_hashes_equal_the_keyed_reference_of_every_shingle(spec):
    rng = random.Random(4)
    for _ in range(20):
        text = random_text(rng)
        expected = sorted({shingle.verify_hash64(s, KEY) for s in shingle.shingles(text, DEFAULT, spec)})
        assert fast.verify_hashes(text, DEFAULT, spec, KEY).tolist() == expected


@pytest.mark.parametrize("policy", [DEFAULT, PERSIAN])
@pytest.mark.parametrize("spec", [CHAR3, CHAR5, ShingleSpec("char", 7), WORD2])
def test_a_batch_of_verification_hashes_equals_the_keyed_reference_text_by_text(policy, spec):
    rng = random.Random(5)
    # Random text in four scripts, texts the table leaves to the policy (a mark that composes, Hangul, an emoji),
    # shorter than a shingle, empty, and one folding to 18 times its length (more than the batch's buffer).
    texts = [random_text(rng) for _ in range(40)] + [
        "e\u0301te\u0301 café", "한국어 텍스트", "emoji \U0001F600 here", "abc", "", "\uFDFA" * 300,
        "abcdefg" * 700, *SEED001_TEXTS.values()]
    rng.shuffle(texts)
    batch = fast.verify_hashes_many(texts, policy, spec, KEY)
    for text, hashes in zip(texts, batch, strict=True):
        expected = sorted({shingle.verify_hash64(s, KEY) for s in shingle.shingles(text, policy, spec)})
        assert hashes.tolist() == expected, text
    # Laid out one after another, as one pass leaves them (plain texts), with the texts the table leaves to the
    # policy put in their places (one pass, the 18-fold text left out), or copied (the rest).
    for some in (texts, [t for t in texts if t.isascii() and len(t) < 2000][:12],
                 [t for t in texts if t != "\uFDFA" * 300]):
        found, laid, offsets = fast.verify_hashes_laid(some, policy, spec, KEY)
        assert [h.tolist() for h in found] == [h.tolist() for h in fast.verify_hashes_many(some, policy, spec, KEY)]
        assert [laid[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:], strict=True)] == [
            h.tolist() for h in found] and laid.dtype == np.uint64


def test_hashes_the_pass_leaves_unsorted_or_to_the_policy_are_put_in_their_places(monkeypatch):
    texts = ["abcdefgh", "e\u0301te\u0301 café", "ab", "ijklmnop", "mnopqrs"]
    second = fast.verify_hashes(texts[1], DEFAULT, CHAR5, KEY).tolist()
    calls = []

    def kernel(cp, offsets, first, *rest):
        # As _keyed_chars leaves them: the first text done, the second to the policy (nothing written), the third
        # without shingles, the fourth's hashes unsorted with a repeat, then no room for the fifth's, then done.
        out, ends = rest[-4], rest[-3]
        calls.append((first, int(ends[first]), out.shape[0]))
        if first == 0:
            out[:3], ends[1] = [1, 5, 9], 3
            return 1, fast.TO_POLICY
        if first == 2:
            ends[3] = ends[2]
            out[ends[2] : ends[2] + 3], ends[4] = [7, 3, 7], ends[2] + 3
            return 3, fast.UNSORTED
        if first == 4 and len(calls) == 3:
            return 4, fast.NO_ROOM
        out[ends[4] : ends[4] + 2], ends[5] = [2, 4], ends[4] + 2
        return 5, fast.FINISHED

    monkeypatch.setattr(fast, "_keyed_chars", kernel)
    found, laid, offsets = fast.verify_hashes_laid(texts, DEFAULT, CHAR5, KEY)
    m = len(second)
    assert [h.tolist() for h in found] == [[1, 5, 9], second, [], [3, 7], [2, 4]]
    assert laid.tolist() == [1, 5, 9, *second, 3, 7, 2, 4] and offsets.tolist() == [0, 3, 3 + m, 3 + m, 5 + m, 7 + m]
    assert [c[:2] for c in calls] == [(0, 0), (2, 3 + m), (4, 5 + m), (4, 5 + m)]
    assert calls[3][2] > calls[2][2] == calls[0][2]  # a larger buffer, the hashes before it kept


def test_a_batch_too_long_for_its_first_buffer_grows_it():
    texts = ["\uFDFA" * 300, "abc def ghi", "\uFDFA" * 50 + "x"]  # U+FDFA folds to 18 code points
    found, laid, offsets = fast.verify_hashes_laid(texts, DEFAULT, CHAR5, KEY)
    for text, hashes in zip(texts, found, strict=True):
        expected = {shingle.verify_hash64(s, KEY) for s in shingle.shingles(text, DEFAULT, CHAR5)}
        assert hashes.tolist() == sorted(expected)
    assert laid.tolist() == [v for h in found for v in h.tolist()] and offsets[-1] == laid.shape[0]


def test_the_bucket_sort_of_hashes_equals_numpys_unique_and_gives_up_on_many_repeated_values():
    rng = np.random.default_rng(8)
    spare, counts = np.empty(6000, dtype=np.uint64), np.empty(12_002, dtype=np.int64)  # for 5,462 values
    for n in (0, 1, 2, 3, 17, 1000, 4097):
        values = rng.integers(0, 2**64 - 1, size=n, dtype=np.uint64, endpoint=True)
        values = np.concatenate([values, values[: n // 3]])  # repeats
        rng.shuffle(values)
        edge = np.array([9, 1, 5, 1, 0], dtype=np.uint64)
        padded = np.concatenate([edge, values, edge])  # sorts values[lo:hi] only
        kept = fast._sort_unique(padded, 5, 5 + values.size, spare, counts)
        assert padded[5 : 5 + kept].tolist() == np.unique(values).tolist()
        assert padded[:5].tolist() == padded[-5:].tolist() == edge.tolist()
    # Two different values with the same top bits, each repeated and interleaved: too many moves, left as is.
    crafted = np.array([3, 2] * 200, dtype=np.uint64)
    assert fast._sort_unique(crafted, 0, crafted.size, spare, counts) == -1
    assert crafted.tolist() == [3, 2] * 200


def test_pair_counts_and_template_counts_equal_the_merges_by_binary_search():
    rng = np.random.default_rng(6)
    pool = np.unique(rng.integers(0, 2**64 - 1, size=5200, dtype=np.uint64))[:5000]
    template = np.unique(rng.choice(pool, size=800, replace=False))
    index = fast.template_index(template)
    for shared_share in (0.0, 0.05, 0.5, 0.95, 1.0):
        x = np.unique(rng.choice(pool, size=1500, replace=False))
        keep = x[rng.random(x.size) < shared_share]
        y = np.unique(np.concatenate([keep, rng.choice(np.setdiff1d(pool, x), size=1500 - keep.size, replace=False)]))
        shared, shared_t, x_t, y_t = fast.template_counts(x, y, template)
        assert shared == len(set(x.tolist()) & set(y.tolist())) == fast.intersection_size(x, y)
        assert fast.pair_counts(x, y, *index) == (shared, shared_t)
        assert (fast.template_count(x, *index), fast.template_count(y, *index)) == (x_t, y_t)
    assert fast.intersection_size(x[:0], y) == 0 and fast.pair_counts(x, y[:0], *index) == (0, 0)


def test_template_lookups_tell_zero_and_values_sharing_a_slot_apart():
    # 0 marks a free slot of the template's table, and values equal in their low bits share a slot.
    template = np.array([0, 5, 5 + 2**20, 5 + 2**21, 2**63], dtype=np.uint64)
    x = np.array([0, 5, 5 + 2**21, 5 + 2**22, 7, 2**63], dtype=np.uint64)
    with_zero, without_zero = fast.template_index(template), fast.template_index(template[1:])
    assert fast.template_count(x, *with_zero) == 4 and fast.template_count(x, *without_zero) == 3
    assert fast.pair_counts(x, x, *with_zero) == (6, 4) and fast.pair_counts(x, x[1:], *without_zero) == (5, 3)
    assert fast.template_count(x, *fast.template_index(template[:0])) == 0


def test_template_lookups_hold_for_templates_of_values_sharing_their_top_bits():
    # The table's first part goes by a value's top bits: values alike there fail the first try (others follow);
    # a template may hold repeats, and need not be sorted.
    rng = np.random.default_rng(4)
    alike = rng.integers(0, 2**40, size=3000, dtype=np.uint64)
    for template in (np.concatenate([alike, alike[:100]]), np.arange(0, 977 * 3000, 977, dtype=np.uint64),
                     rng.integers(0, 2**64 - 1, size=1, dtype=np.uint64, endpoint=True)):
        index = fast.template_index(template)
        x = np.unique(np.concatenate([template[::3], rng.integers(0, 2**40, size=2000, dtype=np.uint64)]))
        y = np.unique(np.concatenate([template[::2], x[::5]]))
        expected = [int(np.isin(x, template).sum()), int(np.isin(y, template).sum())]
        assert [fast.template_count(x, *index), fast.template_count(y, *index)] == expected
        shared = np.intersect1d(x, y)
        assert fast.pair_counts(x, y, *index) == (shared.size, int(np.isin(shared, template).sum()))


def thue_morse_words(n: int = 10) -> tuple[str, str]:
    """Two different words of 2^n letters that collide under any polynomial hash mod 2^64 once n is large
    enough (the Thue–Morse sequence and its complement): 1,024 letters suffice for the signing hash."""
    bits = [0]
    for _ in range(n):
        bits += [1 - b for b in bits]
    return "".join("ab"[b] for b in bits), "".join("ba"[b] for b in bits)


def test_crafted_words_collide_the_signing_hash_but_not_the_verification_hash():
    x, y = thue_morse_words()
    assert x != y and shingle.shingle_hash64(x) == shingle.shingle_hash64(y)  # the attack works on the public hash
    left, right = f"alpha beta gamma delta {x}", f"alpha beta gamma delta {y}"
    truth = shingle.jaccard(shingle.shingles(left, DEFAULT, WORD2), shingle.shingles(right, DEFAULT, WORD2))
    assert truth == pytest.approx(3 / 5)
    forged = fast.jaccard(fast.shingle_hashes(left, DEFAULT, WORD2), fast.shingle_hashes(right, DEFAULT, WORD2))
    assert forged == 1.0
    for secret in (b"one installation", b"another installation"):
        key = shingle.VerifyKey.derive(secret)
        verified = fast.jaccard(fast.verify_hashes(left, DEFAULT, WORD2, key),
                                fast.verify_hashes(right, DEFAULT, WORD2, key))
        assert verified == pytest.approx(truth)


def test_the_verification_key_depends_on_the_secret():
    assert shingle.VerifyKey.derive(b"one") != shingle.VerifyKey.derive(b"two")
    assert shingle.VerifyKey.derive(b"one") == shingle.VerifyKey.derive(b"one")


def test_fast_jaccard_equals_set_jaccard():
    rng = random.Random(5)
    for _ in range(20):
        a, b = random_text(rng), random_text(rng)
        expected = shingle.jaccard(shingle.shingles(a, DEFAULT, CHAR5), shingle.shingles(b, DEFAULT, CHAR5))
        got = fast.jaccard(fast.shingle_hashes(a, DEFAULT, CHAR5), fast.shingle_hashes(b, DEFAULT, CHAR5))
        assert got == pytest.approx(expected, abs=1e-12)


def test_stored_signature_round_trips_through_leanminhash_bytes():
    config = minhash.NearConfig().resolved()
    values = fast.signature(fast.shingle_hashes(SEED001_TEXTS["A"], DEFAULT, CHAR5), minhash.permutations(128, 1))
    assert (minhash.from_bytes(minhash.to_bytes(values, config), config) == values).all()


@pytest.mark.parametrize("other", [{"seed": 2}, {"num_perm": 64}])
def test_a_signature_of_another_seed_or_size_is_refused(other):
    config = minhash.NearConfig().resolved()
    alien = minhash.NearConfig(**other).resolved()
    values = fast.signature(fast.shingle_hashes(SEED001_TEXTS["A"], DEFAULT, CHAR5),
                            minhash.permutations(alien.num_perm, alien.seed))
    with pytest.raises(minhash.SchemeMismatch, match="this run uses scheme 'affine32', seed 1, 128"):
        minhash.from_bytes(minhash.to_bytes(values, alien), config)


def test_a_legacy_scheme_signature_is_refused():
    from datasketch import LeanMinHash

    config = minhash.NearConfig().resolved()
    legacy = LeanMinHash(seed=1, hashvalues=np.arange(128, dtype=np.uint64), scheme="legacy")
    buf = bytearray(legacy.bytesize("<"))
    legacy.serialize(buf, "<")
    with pytest.raises(minhash.SchemeMismatch, match="scheme 'legacy'"):
        minhash.from_bytes(bytes(buf), config)


def test_another_datasketch_scheme_cannot_be_configured():
    with pytest.raises(ValueError, match="scheme 'affine64' is not supported"):
        minhash.NearConfig(scheme="affine64").resolved()


# --- banding --------------------------------------------------------------------------------------


@pytest.mark.parametrize("threshold", [0.5, 0.6, 0.7, 0.8, 0.9])
def test_chosen_bands_catch_a_pair_at_the_threshold_with_probability_099(threshold):
    bands, rows = lsh.choose_bands(128, threshold)
    assert bands * rows == 128
    assert lsh.candidate_probability(threshold, bands, rows) >= 0.99


def test_default_configuration_is_32_bands_of_4_rows():
    config = minhash.NearConfig().resolved()
    assert (config.bands, config.rows) == (32, 4)
    assert config.probability_at_threshold == pytest.approx(1 - (1 - 0.7**4) ** 32)


def test_bands_must_multiply_to_num_perm():
    with pytest.raises(ValueError, match="bands × rows must equal num_perm"):
        minhash.NearConfig(bands=10, rows=10).resolved()


def families(n_families: int, size: int, seed: int) -> list[str]:
    """Texts in families: each member a copy of its family's base with a share of words replaced."""
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(5000)]
    texts = []
    for _ in range(n_families):
        base = [rng.choice(vocab) for _ in range(120)]
        for _ in range(size):
            rate = rng.choice([0.0, 0.02, 0.05, 0.1, 0.2, 0.4])
            texts.append(" ".join(rng.choice(vocab) if rng.random() < rate else w for w in base))
    return texts


def signatures_of(texts, num_perm=128, seed=1, spec=CHAR5):
    perms = minhash.permutations(num_perm, seed)
    hashes = [fast.shingle_hashes(t, DEFAULT, spec) for t in texts]
    return hashes, np.vstack([fast.signature(h, perms) for h in hashes])


@pytest.mark.parametrize(("bands", "rows"), [(32, 4), (16, 8), (64, 2)])
def test_band_pairs_equal_datasketch_minhashlsh_candidates(bands, rows):
    texts = families(60, 6, seed=bands)
    _, sigs = signatures_of(texts)
    index = MinHashLSH(num_perm=128, params=(bands, rows))
    sketches = []
    for i, values in enumerate(sigs):
        m = MinHash(num_perm=128, seed=1, hashvalues=values, scheme="affine32")
        sketches.append(m)
        index.insert(i, m)
    expected = {(min(i, j), max(i, j)) for i, m in enumerate(sketches) for j in index.query(m) if i != j}
    ours = {tuple(p) for p in lsh.band_pairs(sigs, bands, rows).tolist()}
    assert ours == expected and len(ours) > 100


@pytest.mark.parametrize("parts", [1, 3, 7])
def test_banding_in_partitions_of_band_keys_gives_the_pairs_of_one_banding(parts):
    texts = families(80, 6, seed=parts)
    _, sigs = signatures_of(texts)
    expected = {tuple(p) for p in lsh.band_pairs(sigs, 32, 4).tolist()}
    found = set()
    for part in range(parts):
        bander = lsh.Bander(32, 4, part, parts)
        for start in range(0, len(sigs), 100):  # in batches, as the database is read
            bander.add(sigs[start : start + 100], np.arange(start, min(start + 100, len(sigs))) + 1000)
        found |= {(i - 1000, j - 1000) for i, j in bander.pairs().tolist()}
    assert found == expected and len(expected) > 300


@pytest.mark.parametrize("parts", [1, 4])
def test_keys_split_once_by_partition_and_paired_by_partition_give_the_pairs_of_one_banding(parts):
    texts = families(60, 5, seed=parts + 10)
    _, sigs = signatures_of(texts)
    expected = lsh.band_pairs(sigs, 32, 4)
    # Map: each batch of signatures read once, its keys split by partition; reduce: a partition's keys paired.
    maps = [lsh.keys_by_partition(sigs[at : at + 70], np.arange(at, min(at + 70, len(sigs))), 32, 4, parts)
            for at in range(0, len(sigs), 70)]
    found = []
    for part in range(parts):
        bander = lsh.Bander(32, 4)
        for pieces in maps:
            bander.add_keys(pieces[part])
        found.append(bander.pairs())
    assert np.array_equal(np.unique(np.concatenate(found), axis=0), expected) and len(expected) > 100
    assert sum(len(pieces[part].owners) for pieces in maps for part in range(parts)) == len(sigs) * 32
    only = lsh.keys_by_partition(sigs, np.arange(len(sigs)), 32, 4, parts, only=parts - 1)
    assert all(not only[part].owners.size for part in range(parts - 1))
    assert len(only[parts - 1].owners) == sum(len(pieces[parts - 1].owners) for pieces in maps)


def test_partitions_hold_about_an_equal_share_of_the_keys():
    sigs = np.random.default_rng(3).integers(0, 2**20, size=(4000, 128), dtype=np.uint32)  # minima crowd low
    held = []
    for part in range(4):
        bander = lsh.Bander(32, 4, part, 4)
        bander.add(sigs, np.arange(4000))
        held.append(bander.keys)
    assert sum(held) == 4000 * 32
    assert max(held) < 1.1 * 4000 * 32 / 4
    assert lsh.parts_for(4000, 32, 40_000) == 4 and lsh.parts_for(10, 32, 8_000_000) == 1


def test_a_forced_hash_collision_still_gives_exact_pairs(monkeypatch):
    """Keys are sorted by a 64-bit hash; a fault that makes every key collide must still pair equal keys only."""
    texts = families(30, 5, seed=4)
    _, sigs = signatures_of(texts)
    expected = lsh.band_pairs(sigs, 32, 4)
    monkeypatch.setattr(lsh, "_mix", lambda words, seed=0: np.zeros(words.shape[0], dtype=np.uint64))
    assert np.array_equal(lsh.band_pairs(sigs, 32, 4), expected) and len(expected) > 50


def test_stored_signatures_read_in_bulk_equal_one_at_a_time_and_refuse_another_seed():
    config = minhash.NearConfig().resolved()
    rows = np.random.default_rng(5).integers(0, 2**32, size=(6, 128), dtype=np.uint32)
    stored = minhash.to_bytes_many(rows, config)
    assert np.array_equal(minhash.from_bytes_many(stored, config), rows)
    assert np.array_equal(minhash.from_bytes_many(stored, config)[2], minhash.from_bytes(stored[2], config))
    with pytest.raises(minhash.SchemeMismatch, match="seed 1"):
        minhash.from_bytes_many(stored, minhash.NearConfig(seed=2).resolved())


def all_pairs_jaccard(hashes: list[np.ndarray]) -> sparse.coo_matrix:
    """Exact Jaccard of every pair sharing a shingle, via a sparse incidence product."""
    vocabulary = {v: i for i, v in enumerate(np.unique(np.concatenate(hashes)))}
    rows = np.repeat(np.arange(len(hashes)), [h.size for h in hashes])
    cols = np.fromiter((vocabulary[v] for h in hashes for v in h), dtype=np.int64)
    m = sparse.csr_matrix((np.ones(rows.size, dtype=np.int32), (rows, cols)), shape=(len(hashes), len(vocabulary)))
    inter = sparse.triu(m @ m.T, k=1).tocoo()
    sizes = np.array([h.size for h in hashes])
    inter.data = inter.data / (sizes[inter.row] + sizes[inter.col] - inter.data)
    return inter


def test_all_pairs_check_finds_no_more_misses_than_the_probability_allows():
    texts = families(400, 6, seed=11)  # 2,400 documents
    hashes, sigs = signatures_of(texts)
    bands, rows = lsh.choose_bands(128, 0.7)
    found = {tuple(p) for p in lsh.band_pairs(sigs, bands, rows).tolist()}
    scores = all_pairs_jaccard(hashes)
    above = [(int(i), int(j)) for i, j, s in zip(scores.row, scores.col, scores.data, strict=True) if s >= 0.7]
    missed = [p for p in above if p not in found]
    # Each pair at >= 0.7 is missed with probability <= 1 - P(0.7) ≈ 1.5e-4: expect ~0 of these.
    allowed = max(3, 10 * len(above) * (1 - lsh.candidate_probability(0.7, bands, rows)))
    assert len(above) > 500 and len(missed) <= allowed


# --- explanation and clusters ---------------------------------------------------------------------


def test_raw_excerpts_come_from_the_raw_text():
    a, c = SEED001_TEXTS["A"], SEED001_TEXTS["C"]
    assert explain.raw_excerpts(a, c, 5) == [
        "资料整理说明：先备份原始稿件，再登记来源与版本。每", "归档一次，保留修改记录。"
    ]


def test_raw_excerpts_keep_punctuation_the_normalised_text_drops():
    a, b = SEED001_TEXTS["A"], SEED001_TEXTS["B"]
    excerpts = explain.raw_excerpts(a, b, 5)
    assert "先备份原始稿件，再登记来源与版本" in excerpts and all(len(e) >= 5 for e in excerpts)


def test_excerpts_and_shingles_keep_markup_as_text():
    hostile = 'note <script>alert(1)</script> and "><img src=x onerror=alert(1)> end'
    left, right = f"first {hostile}", f"second {hostile}"
    assert any("<script>alert(1)</script>" in e for e in explain.raw_excerpts(left, right, 5))
    assert "scriptalert1script" in explain.shared_shingles(left, right, DEFAULT, ShingleSpec("char", 18), limit=100)


def test_common_runs_are_bounded_on_a_megabyte_document():
    import time

    rng = random.Random(1)
    big = "".join(rng.choice("abcdefgh ") for _ in range(1_000_000))
    other = big[:400_000] + "CHANGED" + big[400_000:]
    start = time.perf_counter()
    runs = explain.common_runs(big, other, 5)
    assert time.perf_counter() - start < 30
    assert runs[0] == (0, 0, 400_000)


def test_compiled_common_runs_equal_the_reference():
    rng = random.Random(7)
    cases = [(SEED001_TEXTS["A"], SEED001_TEXTS["C"], 5), (SEED001_TEXTS["A"], SEED001_TEXTS["B"], 4)]
    for _ in range(300):
        alphabet = rng.choice(["ab ", "abcdefgh ", "سلام دنیا ۱۲۳", "资料整理说明，再登记", "x\U0001F600y z"])
        base = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 400)))
        other = list(base)
        for _ in range(rng.randrange(0, 12)):  # edits, inserts and deletions, as revisions make
            at = rng.randrange(0, len(other) + 1)
            if rng.random() < 0.5:
                other[at:at] = rng.choice(alphabet) * rng.randrange(1, 9)
            else:
                del other[at : at + rng.randrange(1, 30)]
        cases.append((base, "".join(other), rng.choice([1, 2, 3, 5, 8])))
    for left, right, k in cases:
        assert explain.common_runs(left, right, k) == explain.common_runs_reference(left, right, k), (left, right, k)


def test_shared_shingles_are_the_first_twenty_in_sorted_order():
    a, b = SEED001_TEXTS["A"], SEED001_TEXTS["B"]
    shared = explain.shared_shingles(a, b, DEFAULT, CHAR5)
    assert len(shared) == 20 and shared == sorted(shared)
    assert shared == sorted(shingle.shingles(a, DEFAULT, CHAR5) & shingle.shingles(b, DEFAULT, CHAR5))[:20]


def test_compiled_shared_shingles_equal_the_reference():
    rng = random.Random(11)
    cases = [(SEED001_TEXTS["A"], SEED001_TEXTS["C"], DEFAULT, CHAR5, 20), ("", "abc", DEFAULT, CHAR3, 20),
             ("abcabc", "abcabc", DEFAULT, CHAR3, 20), ("zzzz", "zzzz", DEFAULT, CHAR3, 1),
             ("ab ab", "ba ba", DEFAULT, WORD2, 5)]
    for _ in range(300):
        alphabet = rng.choice(["ab ", "abcdefgh ", "سلام دنیا ۱۲۳ كي", "资料整理说明，再登记", "x\U0001F600y z"])
        base = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 300)))
        other = list(base)
        for _ in range(rng.randrange(0, 12)):
            at = rng.randrange(0, len(other) + 1)
            other[at:at] = rng.choice(alphabet) * rng.randrange(1, 9)
        spec = rng.choice([CHAR3, CHAR5, ShingleSpec("char", 1)])
        cases.append((base, "".join(other), rng.choice([DEFAULT, PERSIAN]), spec, rng.choice([1, 3, 20, 1000])))
    for left, right, policy, spec, limit in cases:
        expected = explain.shared_shingles_reference(left, right, policy, spec, limit)
        assert explain.shared_shingles(left, right, policy, spec, limit) == expected, (left, right, spec, limit)


def test_template_shingles_are_those_found_in_many_documents():
    header = "资料整理说明 本文件仅供内部参考 "
    texts = [header + random_text(random.Random(i), 30) for i in range(20)]
    hashes = [fast.shingle_hashes(t, DEFAULT, CHAR5) for t in texts]
    template = explain.template_hashes(hashes, 20, share=0.5, min_docs=10)
    header_hashes = fast.shingle_hashes(header, DEFAULT, CHAR5)
    assert np.isin(header_hashes, template).all()
    share, without = explain.template_scores(hashes[0], hashes[1], template)
    assert share > 0.3 and without < fast.jaccard(hashes[0], hashes[1])


def test_components_are_sorted_largest_first():
    assert cluster.components([(3, 4), (1, 2), (2, 5), (7, 8), (8, 9), (9, 7)]) == [[1, 2, 5], [7, 8, 9], [3, 4]]


def test_verification_chunks_keep_a_components_pairs_together_in_order_of_their_first_pair():
    pairs = sorted([(1, 50), (2, 3), (3, 60), (4, 5), (50, 70), (5, 90), (6, 7), (7, 80), (60, 61)])
    chunks = cluster.chunks_by_component(np.array(pairs), 3)
    assert [len(c) for c in chunks] == [3, 3, 3]
    ordered = [tuple(p) for c in chunks for p in c.tolist()]
    # {1, 50, 70} first (its first pair comes first), then {2, 3, 60, 61}, {4, 5, 90}, {6, 7, 80}.
    assert ordered == [(1, 50), (50, 70), (2, 3), (3, 60), (60, 61), (4, 5), (5, 90), (6, 7), (7, 80)]
    assert cluster.chunks_by_component(np.zeros((0, 2), dtype=np.int64), 3) == []
