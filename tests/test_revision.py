"""Revision signals: changed numbers, dates, units and negations (no database)."""

from __future__ import annotations

from screening.engine import revision
from tests.seeds import SEED000, SEED001_TEXTS


def texts(found):
    return [(s.kind, str(s)) for s in found]


def test_seed000_unit_change_v_to_mv_is_a_signal():
    assert texts(revision.signals(SEED000[0]["body"], SEED000[2]["body"])) == [("unit", "V→mV")]


def test_seed001_a_to_c_period_change_is_a_signal():
    assert texts(revision.signals(SEED001_TEXTS["A"], SEED001_TEXTS["C"])) == [("unit", "每周→每天")]


def test_seed001_a_to_b_reformat_has_no_signal():
    assert revision.signals(SEED001_TEXTS["A"], SEED001_TEXTS["B"]) == []


def test_whitespace_and_crlf_reformat_has_no_difference_at_all():
    changes, truncated = revision.diff("Line one.\nLine  two ", "Line one.\r\n   Line two")
    assert changes == [] and not truncated


def test_year_change_is_a_number_signal():
    assert texts(revision.signals("Released in 2024.", "Released in 2025.")) == [("number", "2024→2025")]


def test_date_change_is_a_date_signal():
    assert texts(revision.signals("Updated 2024-05-01.", "Updated 2024-06-01.")) == [("date", "2024-05-01→2024-06-01")]


def test_decimal_number_stays_whole():
    assert texts(revision.signals("Set it to 12.5 V", "Set it to 12.8 V")) == [("number", "12.5→12.8")]


def test_inserted_negation_is_a_signal_with_its_word():
    assert texts(revision.signals("The device is safe.", "The device is not safe.")) == [("negation", "is→is not")]


def test_persian_negation_and_digits():
    assert texts(revision.signals("این دستگاه ایمن است", "این دستگاه ایمن نیست")) == [
        ("negation", "ایمن است→ایمن نیست")]
    assert texts(revision.signals("مقدار ۱۲ ولت", "مقدار ۱۵ ولت")) == [("number", "۱۲→۱۵")]


def test_a_changed_ordinary_word_is_a_change_but_not_a_signal():
    changes, _ = revision.diff("The quick fox.", "The slow fox.")
    assert len(changes) == 1 and changes[0].signal is None
    assert changes[0].left == (4, 9) and changes[0].right == (4, 8)


def test_signals_text_is_the_export_form():
    found = revision.signals("ولتاژ برحسب V است. 每周", "ولتاژ برحسب mV است. 每天")
    assert revision.signals_text(found) == "V→mV; 每周→每天"
    assert revision.signals_text([]) == ""
