"""The compiled token diff: its alignment is rapidfuzz's Indel alignment, stretch for stretch (the diff that
verification used before), and its hashes and flags say what the strings say."""

import random

import numpy as np
from rapidfuzz.distance import Indel

from screening.engine import revision, tokdiff


def rapidfuzz_stretches(a: list[int], b: list[int]) -> list[tuple[int, int, int, int]]:
    """The non-equal stretches of rapidfuzz's opcodes, a deletion next to an insertion joined into one."""
    out: list[list[int]] = []
    joinable = False
    for op in Indel.opcodes(a, b):
        if op.tag == "equal":
            joinable = False
        elif joinable:
            out[-1][1], out[-1][3] = op.src_end, op.dest_end
        else:
            out.append([op.src_start, op.src_end, op.dest_start, op.dest_end])
            joinable = True
    return [tuple(s) for s in out]


def gaps(a: list[int], b: list[int]) -> list[tuple[int, int, int, int]]:
    found = tokdiff._gaps(np.array(a, dtype=np.uint64), np.array(b, dtype=np.uint64))
    return [tuple(row) for row in found.tolist()]


def test_alignment_is_rapidfuzz_alignment_on_short_sequences_dense_in_ties():
    rng = random.Random(5)
    for _ in range(20_000):
        letters = rng.randint(1, 4)
        a = [rng.randrange(letters) for _ in range(rng.randint(0, 12))]
        b = [rng.randrange(letters) for _ in range(rng.randint(0, 12))]
        assert gaps(a, b) == rapidfuzz_stretches(a, b), (a, b)


def test_alignment_is_rapidfuzz_alignment_across_machine_words():
    rng = random.Random(6)
    for _ in range(400):
        letters = rng.choice([2, 5, 50, 10_000])
        a = [rng.randrange(letters) for _ in range(rng.randint(60, 400))]
        b = [t if rng.random() < 0.8 else rng.randrange(letters) for t in a]  # an edited copy
        if rng.random() < 0.3:
            b = b[rng.randrange(len(b)):] + b[: rng.randrange(len(b))]  # and moved about
        assert gaps(a, b) == rapidfuzz_stretches(a, b)


def test_equal_strings_equal_hashes_and_flags_say_what_the_strings_say():
    hashes, flags = tokdiff.hash_strings(["isnt", "نمیرود", "12", "isnt", "", "x"])
    assert hashes[0] == hashes[3] and len(set(hashes.tolist())) == 5
    assert flags[0] & tokdiff.NT and flags[1] & tokdiff.STARTS_NUN and not flags[5]


def test_tokens_flag_what_a_signal_can_rest_on():
    toks = revision.Prepared("Set it to 12 V in May, not later; hello world.").toks
    telling = [toks[i].raw for i in range(len(toks)) if toks.flags[i] & tokdiff.TELLS]
    assert telling == ["12", "V", "in", "May", "not"]


def test_numbers_and_dates_read_by_value_as_the_expression_reads_them():
    rng = random.Random(8)
    digits, separators = "0123456789٠١٢٣٤٥٦٧٨٩۰۱۲۳۴۵۶۷۸۹", ["", ",", ".", "٫", "٬", "/", "-"]
    texts = ["1,000 1,000.5 12,5 1,0000 -1,234,567.25 +7 −3 ۱٬۰۰۰٫۵ 2024-05-01 ۱۴۰۳/۰۷/۲۴ 5%"]
    for _ in range(3000):
        parts = [rng.choice(["", "", "-", "+", "−"])] + [
            "".join(rng.choice(digits) for _ in range(rng.randint(1, 4))) + rng.choice(separators)
            for _ in range(rng.randint(1, 4))]
        texts.append("x " + "".join(parts) + " y")
    for text in texts:
        assert list(revision.Prepared(text).toks) == revision.tokens(text), ascii(text)


def test_a_batch_tokenised_in_one_call_is_each_text_tokenised_alone_with_its_quotation_marks():
    from screening.engine import overlap

    rng = random.Random(9)
    chars = ("0123456789٠١٢٣-/.,٫+−%°Ca_ \u200c'’中文ابپé\u0301ﻻ한\n\"“”«»「」ｄｏ＇ﷺ\U0001F600"
             "\u3400\u4db5\u4dc0\u4dff\u9fff\uf900\ufa6aنت‘‚")
    texts = ["", "«quoted» and “again”", "ﷺ" * 30, "an emoji \U0001F600 'here'", "x" * 80]
    texts += ["".join(rng.choice(chars) for _ in range(rng.randint(0, 40))) for _ in range(2000)]
    for text, batch in zip(texts, revision.prepare_many(texts), strict=True):
        alone = revision.Prepared(text)
        assert list(batch.toks) == list(alone.toks) == revision.tokens(text), ascii(text)
        assert batch.toks.hashes.tolist() == alone.toks.hashes.tolist(), ascii(text)
        assert batch.toks.flags.tolist() == alone.toks.flags.tolist(), ascii(text)
        # The kernel hashes and flags each token as it folds it: as segment_hashes does its normalised form.
        toks = batch.toks
        hashes, flags = tokdiff.token_hashes(toks.codes, toks.buf, toks.fs, toks.fe, revision._TELLING_HASHES)
        assert (toks.hashes.tolist(), toks.flags.tolist()) == (hashes.tolist(), flags.tolist()), ascii(text)
        expected = [m.start() for m in overlap._QUOTE_RE.finditer(text)]  # what the regular expression finds
        assert overlap.marks(batch).tolist() == expected, ascii(text)


def test_what_the_tokeniser_takes_for_granted_in_the_tables():
    """_tokenize tries a word before the other tokens, records a quotation mark only where no token starts or
    between a word's letters, and takes an ideograph of word_fold's run for a token folded to itself."""
    from screening.engine import foldtable, tokscan

    cls = tokscan.classes()
    starts = [tokscan.DIGIT, tokscan.SIGN, tokscan.IDEOGRAPH, tokscan.LETTER, tokscan.PERCENT]
    for i, a in enumerate(starts):
        for b in starts[i + 1:]:
            assert not np.any((cls & a) & ((cls & b) != 0)), (a, b)
    inside = tokscan.DIGIT | tokscan.SIGN | tokscan.IDEOGRAPH | tokscan.LETTER | tokscan.PERCENT | tokscan.DATE_SEP \
        | tokscan.NUMBER_SEP
    assert not np.any((cls & tokscan.QUOTE) & ((cls & inside) != 0))
    assert not any(cls[ord(c)] & tokscan.QUOTE for c in "°CF")
    table = foldtable.table_for(revision._FOLD_POLICY)
    (lo, hi), dropping = tokdiff.word_fold(table)
    assert lo <= 0x4E00 < 0x9FA5 < hi
    assert (cls[lo:hi] == tokscan.IDEOGRAPH).all() and (table.simple[lo:hi] == np.arange(lo, hi)).all()
    gone = table.kind == foldtable.GONE
    assert (dropping[gone] == tokdiff._GONE).all() and (table.simple[gone] == foldtable.NONE).all()
    assert (dropping[~gone] == table.simple[~gone]).all() and gone[0x200C]
    # The top 16 bits of every telling hash are in the filter; few others are.
    keys, head, _ = revision._TELLING_HASHES
    bits, tops = tokdiff.telling_bits(revision._TELLING_HASHES), keys[head >= 0] >> np.uint64(48)
    assert all(int(bits[t >> 6]) >> int(t & 63) & 1 for t in tops.tolist())
    assert sum(bin(int(w)).count("1") for w in bits) == len(set(tops.tolist()))


def test_a_batch_still_read_is_never_refilled():
    """prepare_many fills a spare batch's arrays only once nothing reads them: a Prepared of it, or a view of
    one of its arrays, keeps its tokens as they were while later batches are made."""
    texts = ["the first text, 12 V", "«a quotation» and more", "另一段文字，十二伏。"]
    others = ["something else entirely, 99 kW", "no marks here", "وات ۱۲"]
    kept = revision.prepare_many(texts)
    view = revision.prepare_many(texts)[1].toks.hashes  # only a view of this one's batch is left
    expected = [(p.toks.hashes.tolist(), [t.norm for t in p.toks[:]], p.quotes.tolist()) for p in kept]
    view_expected = view.tolist()
    for _ in range(4):
        revision.prepare_many(others)
        assert [(p.toks.hashes.tolist(), [t.norm for t in p.toks[:]], p.quotes.tolist()) for p in kept] == expected
        assert view.tolist() == view_expected
    # A batch nothing reads is refilled (the point of keeping it), with the tokens of its new texts.
    spare = revision.prepare_many(others)[0].laid[0].codes.ctypes.data
    again = revision.prepare_many(texts)
    # (Only where reference counts tell it: a GIL build of CPython before 3.14, tokdiff._REUSE.)
    assert not tokdiff._REUSE or again[0].laid[0].codes.ctypes.data == spare or len(tokdiff._SPARE) == 2
    assert [(p.toks.hashes.tolist(), [t.norm for t in p.toks[:]], p.quotes.tolist()) for p in again] == expected


def test_a_small_stretch_is_found_moved_alike_by_reading_the_other_text_or_by_its_index():
    rng = random.Random(11)
    for _ in range(3000):
        hay = np.array([rng.randrange(4) for _ in range(rng.randint(1, 40))], dtype=np.uint64)
        at, k = rng.randrange(hay.shape[0]), rng.randint(1, 6)
        needle = hay[at:at + k].copy() if rng.random() < 0.7 else np.array(
            [rng.randrange(4) for _ in range(k)], dtype=np.uint64)
        core = rng.randrange(needle.shape[0])
        size = rng.randint(1, needle.shape[0] - core)
        diff = np.array([rng.random() < 0.2 for _ in range(hay.shape[0])], dtype=np.bool_)
        keys, head, after = tokdiff._index(hay)
        assert tokdiff._occurs_scanned(needle, hay, core, size, diff) == tokdiff._occurs(
            needle, hay, keys, head, after, core, size, diff)
