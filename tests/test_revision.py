"""Revision signals: a small aligned change of a number, date, month, sign, unit beside a number, or an
inserted or removed negation, in English, Persian and Chinese; nothing for reformatting or moved text."""

from __future__ import annotations

import pytest

from screening.engine import revision
from tests.seeds import SEED000, SEED001_TEXTS


def found(left: str, right: str) -> list[tuple[str, str]]:
    return [(s.kind, str(s)) for s in revision.signals(left, right)]


# --- known answers from the seeds --------------------------------------------------------------------


def test_seed000_unit_change_v_to_mv_is_a_signal():
    assert found(SEED000[0]["body"], SEED000[2]["body"]) == [("unit", "برحسب V است → برحسب mV است")]


def test_seed001_a_to_c_period_change_is_a_signal():
    assert found(SEED001_TEXTS["A"], SEED001_TEXTS["C"]) == [("unit", "每周归档 → 每天归档")]


def test_seed001_a_to_b_reformat_has_no_difference_at_all():
    changes, truncated = revision.diff(SEED001_TEXTS["A"], SEED001_TEXTS["B"])
    assert changes == [] and not truncated


# --- what a revision changes -------------------------------------------------------------------------


@pytest.mark.parametrize(("left", "right", "expected"), [
    ("Released in 2024.", "Released in 2025.", ("number", "in 2024 → in 2025")),
    ("Set it to 12.5 V", "Set it to 12.8 V", ("number", "to 12.5 V → to 12.8 V")),
    ("Use two cables.", "Use three cables.", ("number", "Use two cables → Use three cables")),
    ("Updated 2024-05-01.", "Updated 2024-06-01.", ("date", "Updated 2024-05-01 → Updated 2024-06-01")),
    ("Due in May 2024.", "Due in June 2024.", ("month", "in May 2024 → in June 2024")),
    ("Range +5 to 10", "Range −5 to 10", ("sign", "Range +5 to → Range −5 to")),
    ("Rated 12 V max", "Rated 12 mV max", ("unit", "12 V max → 12 mV max")),
    ("The device is safe.", "The device is not safe.", ("negation", "is safe → is not safe")),
    ("It is ready.", "It isn't ready.", ("negation", "It is ready → It isn't ready")),
], ids=["year", "decimal", "number-word", "date", "month", "sign", "unit", "not", "contraction"])
def test_english_revisions(left, right, expected):
    assert found(left, right) == [expected]


@pytest.mark.parametrize(("left", "right", "expected"), [
    ("مقدار ۱۲ ولت", "مقدار ۱۵ ولت", ("number", "مقدار ۱۲ ولت → مقدار ۱۵ ولت")),
    ("مقدار ۱۲ ولت است", "مقدار ۱۲ میلی‌ولت است", ("unit", "۱۲ ولت است → ۱۲ میلی‌ولت است")),
    ("این دستگاه ایمن است", "این دستگاه ایمن نیست", ("negation", "ایمن است → ایمن نیست")),
    ("در مهر ماه", "در آبان ماه", ("month", "در مهر ماه → در آبان ماه")),
    ("دو بار در روز", "سه بار در روز", ("number", "دو بار → سه بار")),
], ids=["number", "unit-with-zwnj", "negation", "month", "number-word"])
def test_persian_revisions(left, right, expected):
    assert found(left, right) == [expected]


@pytest.mark.parametrize(("left", "right", "expected"), [
    ("电压为12伏。", "电压为12毫伏。", ("unit", "12伏 → 12毫伏")),
    ("重量为5千克。", "重量为5克。", ("unit", "5千克 → 5克")),
    ("设备已准备好。", "设备没准备好。", ("negation", "设备已准备 → 设备没准备")),
    ("五月开始", "六月开始", ("month", "五月开 → 六月开")),
    ("每月5日", "每月6日", ("number", "每月5日 → 每月6日")),
    ("需要备份", "否需要备份", ("negation", "需要 → 否需要")),
], ids=["prefixed-unit", "unit-prefix-dropped", "negation", "month", "day", "fou"])
def test_chinese_revisions(left, right, expected):
    assert found(left, right) == [expected]


# --- what is no revision ------------------------------------------------------------------------------


@pytest.mark.parametrize(("left", "right"), [
    ("ＲＴＬＤ mode on", "RTLD mode on"),
    ("UPPER text here", "upper TEXT here"),
    ("Linux系统 12 V", "Linux 系统 12 V"),
    ("مقدار ۱۲ ولت", "مقدار 12 ولت"),
    ("يك كتاب", "یک کتاب"),
    ("Line one.\nLine  two ", "Line one.\r\n   Line two"),
    ("资料，整理。", "资料, 整理."),
], ids=["width", "case", "cjk-latin-spacing", "persian-digits", "yeh-kaf", "whitespace", "punctuation"])
def test_a_format_change_is_no_difference(left, right):
    assert revision.diff(left, right)[0] == []


@pytest.mark.parametrize(("left", "right"), [
    ("The cookie sets maxAge=86400 for a day.", "The cookie sets maxAge=864\n00 for a day."),
    ("The header is #ff8800 on every page.", "The header is #ff88 00 on every page."),
    ("I ｄｏｎ＇ｔ ａｃｔｕａｌｌｙ mind.", "I don't actually mind."),
    ("Build ｂｚｉｐ２－１．０．８ first, at ５０％.", "Build bzip2-1.0.8 first, at 50%."),
    ("A well-\nknown value of 12 V.", "A wellknown value of 12 V."),
], ids=["number-wrapped", "colour-split", "full-width-apostrophe", "full-width-digits", "hyphenated-line-end"])
def test_what_spacing_and_width_explain_is_no_difference(left, right):
    assert revision.diff(left, right)[0] == []


@pytest.mark.parametrize(("left", "right"), [
    ("The cookie sets maxAge=86400 for a day.", "The cookie sets maxAge=864-00 for a day."),
    ("Build ｂｚｉｐ２－１．０．８ first.", "Build bzip2-1.0.9 first."),
    ("Keep ５０％ of it.", "Keep 60% of it."),
], ids=["joined-by-a-hyphen", "full-width-date-changed", "full-width-number-changed"])
def test_a_change_beyond_spacing_and_width_stays_a_change(left, right):
    assert revision.diff(left, right)[0] != []


def test_moved_paragraphs_carry_no_signal():
    a = ("The sensor reads 12 V at night and logs it.\n\nThe motor runs at 50 Hz daily without stopping."
         "\n\nKeep the box dry at 20 °C.")
    b = ("The motor runs at 50 Hz daily without stopping.\n\nKeep the box dry at 20 °C.\n\n"
         "The sensor reads 12 V at night and logs it.")
    assert revision.signals(a, b) == []
    assert any(c.moved for c in revision.diff(a, b)[0])


@pytest.mark.parametrize(("left", "right"), [
    ("Put it in the box.", "Put it on the box."),
    ("A cat sat.", "The cat sat."),
    ("It's t time", "It's s time"),
], ids=["in-on", "a-the", "letters-no-number"])
def test_a_word_that_is_also_a_unit_is_no_signal_without_a_number(left, right):
    assert revision.signals(left, right) == []


def test_a_rewritten_stretch_is_a_change_without_a_signal():
    left = "Store the files in 2 folders before the weekly review starts."
    right = "Copy everything to the archive server and wait for 3 approvals from the team."
    changes = revision.diff(left, right)[0]
    assert changes and all(c.signal is None for c in changes)


def test_a_signal_is_short_even_in_a_long_line():
    left = "Paragraph " + "word " * 200 + "limit 12 V " + "more " * 200
    right = "Paragraph " + "word " * 200 + "limit 15 V " + "more " * 200
    (signal,) = revision.signals(left, right)
    assert signal.kind == "number" and len(signal.left) <= revision.MAX_SHOWN >= len(signal.right)


def test_a_changed_ordinary_word_is_a_change_but_not_a_signal():
    changes, _ = revision.diff("The quick fox.", "The slow fox.")
    assert len(changes) == 1 and changes[0].signal is None
    assert changes[0].left == (4, 9) and changes[0].right == (4, 8)


def test_signals_text_is_the_export_form():
    signals = revision.signals("ولتاژ برحسب V است. 每周归档", "ولتاژ برحسب mV است. 每天归档")
    assert revision.signals_text(signals) == "برحسب V است → برحسب mV است; 每周归档 → 每天归档"
    assert revision.signals_text([]) == ""


# --- the compiled scanner and the lazy tokens ----------------------------------------------------------

SCANNED = ("0123456789٠١٢٣٤٥٦٧٨٩۰۱۲۳۴۵۶۷۸۹-/.,٫٬+−%‰°CFaZ_ \u200c'’中文资料ابپيكé\u0301\u0654ﻻ한\n:;"
           "０１２９－／．，＋％＇ａＺ")


def test_the_scanner_finds_the_tokens_the_expression_finds():
    import random

    from screening.engine import tokscan

    rng = random.Random(2)
    texts = [SEED001_TEXTS[k] for k in sorted(SEED001_TEXTS)] + [r["body"] for r in SEED000]
    texts += ["".join(rng.choice(SCANNED) for _ in range(rng.randint(1, 30))) for _ in range(5000)]
    for text in texts:
        expected = [(tokscan.GROUPS.index(m.lastgroup), m.start(), m.end()) for m in revision.TOKEN_RE.finditer(text)]
        codes, starts, ends = tokscan.scan(text)
        assert list(zip(codes.tolist(), starts.tolist(), ends.tolist(), strict=True)) == expected, ascii(text)


def test_prepared_tokens_are_the_expressions_tokens_folded_alike():
    import random

    rng = random.Random(3)
    texts = ["12 V → 12 mV; ۱۲ ولت", "资料整理：每周 → 每天", "isn't it? e\u0301 ا\u0654 한국 \U0001F600 -5 °C 1,000.5"]
    texts += ["".join(rng.choice(SCANNED) for _ in range(rng.randint(1, 40))) for _ in range(3000)]
    for text in texts:
        assert list(revision.Prepared(text).toks) == revision.tokens(text), ascii(text)


def test_a_stretch_of_tokens_read_at_once_is_the_tokens_read_one_by_one():
    import random

    rng = random.Random(4)
    texts = ["12 V → 12 mV; ۱۲ ولت", "资料整理：每周 → 每天", "isn't it? ｄｏｎ＇ｔ -5 °C 1,000.5 ۱۲٫۵"]
    texts += ["".join(rng.choice(SCANNED) for _ in range(rng.randint(1, 40))) for _ in range(500)]
    for prepared in [revision.Prepared(text) for text in texts] + revision.prepare_many(texts):
        toks, n = prepared.toks, len(prepared.toks)
        one_by_one = [toks[i] for i in range(n)]
        for a in range(n + 1):
            for b in range(a, n + 1):
                assert toks.span(a, b) == toks[a:b] == one_by_one[a:b], ascii(prepared.text)


def test_a_negation_is_a_signal_even_where_the_new_sentence_reads_like_another_one_of_both_texts():
    # "This option is not available on older systems." stands elsewhere in both texts: the word added does not
    # come from there (that sentence stayed in place), so it is no move.
    from screening.engine import revision

    common = "This option is not available on older systems. Keep the temperature between 15 °C and 21 °C."
    left = f"{common}\n\nThe archive keeps every original file. This option is available on older systems."
    right = f"{common}\n\nThe archive keeps every original file. This option is not available on older systems."
    found = revision.compare(left, right)
    assert [s.kind for s in found.signals] == ["negation"] and found.changed_share > 0


LINES = ["git remote set-branches ...", "throw away local modifications", "MERGE not supported in WITH query",
         "TypeMatrix EZ-Reach 2030 USB", 'constraint "" does not exist', "enable or disable file system monitor",
         "addprocess: pid d () marked as still alive", "Do not write the gschema.compiled file",
         ": failed to create version record:", "Error: is not a valid interface name", "'ROR' operator not allowed",
         "File contains multiple dynamic string tables", "conversion between and is not supported",
         "create a shallow clone since a specific time", "Deleting temporary def file"]


def test_the_same_tokens_in_another_order_carry_no_revision_signal():
    # Lines of the development corpus in another order: the alignment set two stretches side by side that read
    # as a negation taken out, although not one word is more or less.
    from screening.engine import evidence, fast
    from screening.engine.normalize import get_policy
    from screening.engine.shingle import ShingleSpec, VerifyKey

    order = [2, 8, 5, 13, 9, 11, 14, 4, 3, 12, 1, 0, 10, 6, 7]
    left, right = "\n".join(LINES), "\n".join(LINES[k] for k in order)
    policy, spec, key = get_policy("persian-arabic-fold-v1"), ShingleSpec("char", 5), VerifyKey.derive(b"t")
    lh, rh = fast.verify_hashes(left, policy, spec, key), fast.verify_hashes(right, policy, spec, key)
    facts = evidence.DocFacts("en", "a", "1", "")
    e = evidence.for_near(left, right, lh, rh, facts, facts, fast.jaccard(lh, rh))
    assert e.token_overlap == 1.0 and e.moved_blocks and e.signals == []
