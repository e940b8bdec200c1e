"""The exact-content contract doc-content-v1 against seed 000's known answers (no database)."""

from __future__ import annotations

import copy
import hashlib
import unicodedata

import pytest

from screening.engine.contract import CONTRACT, content_bytes, group_records, sha256_hex
from tests.seeds import SEED000, SEED000_A, SEED000_A_HEX, SEED000_A_SHA256, SEED000_B, SEED000_C_SHA256


def shape(groups):
    return [(g.representative, [m.doc_id for m in g.members]) for g in groups]


def two(**changes):
    """Record A and a copy B with `changes`: how many groups do they make?"""
    return len(group_records([SEED000_A, dict(SEED000_B, **changes)]))


def test_content_bytes_of_record_a_are_the_seed_bytes():
    payload = content_bytes("fa", SEED000_A["title"], SEED000_A["body"])
    assert payload.hex() == SEED000_A_HEX
    assert len(payload) == 83
    assert payload == '["doc-content-v1","fa","راهنمای حسگر","ولتاژ برحسب V است."]'.encode()


def test_sha256_known_answers():
    assert sha256_hex(b"abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert sha256_hex(bytes.fromhex(SEED000_A_HEX)) == SEED000_A_SHA256
    c = SEED000[2]
    assert sha256_hex(content_bytes(c["language"], c["title"], c["body"])) == SEED000_C_SHA256


def test_seed_hand_answer_groups_a_with_b_and_leaves_c_alone():
    groups = group_records(SEED000)
    assert shape(groups) == [("A", ["A", "B"]), ("C", ["C"])]
    assert [(m.doc_id, m.source_id) for m in groups[0].members] == [("A", "Ref1"), ("B", "Ref2")]
    assert (groups[0].digest, groups[0].length) == (SEED000_A_SHA256, 83)
    assert (groups[1].digest, groups[1].length) == (SEED000_C_SHA256, 84)


def test_title_is_part_of_content():
    assert two(title="راهنمای موتور") == 2


def test_body_punctuation_is_part_of_content():
    assert two(body=SEED000_A["body"] + "!") == 2


def test_unit_v_and_mv_are_distinct():
    assert len(group_records([SEED000_A, SEED000[2]])) == 2


def test_language_tag_is_part_of_content():
    assert two(language="en") == 2


def test_lf_and_crlf_are_distinct():
    assert len(group_records([dict(SEED000_A, body="الف\nب"), dict(SEED000_B, body="الف\r\nب")])) == 2


def test_nfc_and_nfd_are_distinct():
    nfc, nfd = "café", "cafe\u0301"
    assert unicodedata.normalize("NFC", nfd) == nfc
    assert len(group_records([dict(SEED000_A, body=nfc), dict(SEED000_B, body=nfd)])) == 2


def test_trailing_space_is_significant():
    assert two(body=SEED000_A["body"] + " ") == 2


def test_case_is_significant():
    assert two(body=SEED000_A["body"].replace("V", "v")) == 2


def test_persian_yeh_and_arabic_yeh_are_distinct():
    assert two(title=SEED000_A["title"].replace("ی", "ي")) == 2


def test_concatenation_trap_is_avoided():
    left, right = dict(SEED000_A, title="ab", body="c"), dict(SEED000_B, title="a", body="bc")
    assert left["title"] + left["body"] == right["title"] + right["body"]
    assert len(group_records([left, right])) == 2


def test_ids_and_sources_are_outside_equality():
    assert two(doc_id="Z", source_id="Elsewhere") == 1


def test_forced_digest_collisions_still_group_correctly():
    groups = group_records(SEED000, digest=lambda payload: "0" * 64)
    assert shape(groups) == [("A", ["A", "B"]), ("C", ["C"])]
    assert all(g.digest == "0" * 64 for g in groups)


@pytest.mark.parametrize("value", ["x" * 64, "a" * 63, "A" * 64, None, True, 123, b"0" * 64])
def test_a_digest_that_breaks_its_contract_is_refused(value):
    with pytest.raises(ValueError, match="expected 64 lowercase hexadecimal characters"):
        group_records([SEED000_A], digest=lambda payload: value)


def test_input_order_changes_nothing():
    assert group_records(list(reversed(SEED000))) == group_records(SEED000)
    assert group_records([SEED000[1], SEED000[2], SEED000[0]]) == group_records(SEED000)


def test_input_records_are_not_modified():
    records = copy.deepcopy(SEED000)
    group_records(records)
    assert records == SEED000


def test_mutating_a_record_after_grouping_does_not_change_the_result():
    record = dict(SEED000_A)
    groups = group_records([record])
    record["source_id"] = "Changed"
    record["doc_id"] = "Q"
    assert groups[0].members[0].source_id == "Ref1" and groups[0].representative == "A"


def test_duplicate_doc_id_is_refused():
    with pytest.raises(ValueError, match="appears twice"):
        group_records([SEED000_A, SEED000_A])


def test_lone_surrogate_is_refused():
    with pytest.raises(ValueError, match="not encodable as UTF-8"):
        group_records([dict(SEED000_A, body="\ud800")])


def test_contract_name_is_inside_the_bytes():
    assert CONTRACT.encode() in content_bytes("en", "t", "b")
    assert hashlib.sha256(content_bytes("en", "t", "b")).hexdigest() == sha256_hex(content_bytes("en", "t", "b"))


def test_content_bytes_are_json_dumps_bytes_for_any_text():
    import json
    import random

    rng = random.Random(9)
    alphabet = ['"', "\\", "\x7f", "\u2028", "\u200c", "é", "ی", "中", "\U0001F600", "a", " ", "\\n", "\\u00e9"]
    alphabet += [chr(c) for c in range(0x20)]  # every control character, the five named escapes among them
    for i in range(3000):
        # Most fields without the rare control characters, as real text is, so both paths are taken.
        letters = alphabet if i % 3 == 0 else [c for c in alphabet if c >= " " or c in "\n\r\t\b\f"]
        fields = ["".join(rng.choice(letters) for _ in range(rng.randint(0, 12))) for _ in range(3)]
        expected = json.dumps(["doc-content-v1", *fields], ensure_ascii=False, separators=(",", ":")).encode()
        assert content_bytes(*fields) == expected
    with pytest.raises(ValueError, match="not encodable"):
        content_bytes("en", "", "a lone surrogate \ud800")
