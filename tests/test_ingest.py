"""Reading uploads into records: every format and every rejection rule (no database)."""

from __future__ import annotations

import csv
import io
import json
import stat
import zipfile

import pytest

from screening.ingest.formats import LANGUAGE_REQUIRED, Limits, read_all
from tests.seeds import SEED000, SEED001

LIMITS = Limits(upload_bytes=10_000_000, zip_members=100, member_bytes=1_000_000, expanded_bytes=3_000_000,
                compression_ratio=100)


def jsonl(records) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def csv_text(records, fields=("doc_id", "source_id", "version", "language", "title", "body", "collected_at")) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for r in records:
        writer.writerow({k: r.get(k, "") for k in fields})
    return out.getvalue()


def make_zip(members: dict[str, bytes | str], *, symlinks=()) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            if name in symlinks:
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, data.encode("utf-8") if isinstance(data, str) else data)
    return buf.getvalue()


def problems_of(path, name=None, **kw):
    records, report = read_all(path, name or path.name, limits=kw.pop("limits", LIMITS), **kw)
    return records, [str(p) for p in report.problems], report


# --- formats -------------------------------------------------------------------------------------


def test_jsonl_imports_the_seed000_records_with_their_fields(write):
    records, problems, _ = problems_of(write("seed.jsonl", jsonl(SEED000)))
    assert problems == []
    assert [(r.doc_id, r.source_id, r.language, r.title, r.body) for r in records] == [
        (s["doc_id"], s["source_id"], "fa", s["title"], s["body"]) for s in SEED000
    ]
    assert records[0].place == "seed.jsonl line 1"


def test_jsonl_keeps_an_integer_version_as_text_and_a_date(write):
    rec = dict(SEED000[0], version=3, collected_at="2026-10-16")
    (record,), problems, _ = problems_of(write("v.jsonl", jsonl([rec])))
    assert problems == []
    assert record.version == "3" and record.collected_at == "2026-10-16"


def test_jsonl_accepts_a_date_time_with_offset(write):
    rec = dict(SEED000[0], collected_at="2026-10-16T08:30:00+03:30")
    (record,), problems, _ = problems_of(write("v.jsonl", jsonl([rec])))
    assert problems == [] and record.collected_at == "2026-10-16T08:30:00+03:30"


def test_csv_imports_the_seed001_texts(write):
    records, problems, _ = problems_of(write("seed.csv", csv_text(SEED001)))
    assert problems == []
    assert {r.doc_id: r.body for r in records} == {s["doc_id"]: s["body"] for s in SEED001}
    assert all(r.version == "v1" and r.language == "zh" for r in records)


def test_csv_keeps_multiline_bodies_and_counts_physical_lines(write):
    body = "line one\r\nline two\n\nline four"
    text = csv_text([{"doc_id": "m", "language": "en", "body": body}, {"doc_id": "n", "language": "en", "body": ""}])
    records, problems, _ = problems_of(write("m.csv", text))
    assert records[0].body == body
    # the empty body of "n" starts on physical line 6: header, 4 lines of m's body
    assert problems == ["m.csv line 6, field body: is empty or only whitespace"]


def test_single_txt_takes_doc_id_from_file_name_and_language_from_upload(write):
    (record,), problems, _ = problems_of(write("guide-v2.txt", "ولتاژ برحسب V است.\n"), default_language="fa")
    assert problems == []
    assert (record.doc_id, record.source_id, record.language, record.body) == (
        "guide-v2", "guide-v2", "fa", "ولتاژ برحسب V است.\n"
    )


def test_single_txt_without_language_is_refused(write):
    _, problems, _ = problems_of(write("g.txt", "text"))
    assert problems == [f"g.txt, field language: {LANGUAGE_REQUIRED}"]


def test_zip_of_txt_with_manifest_gives_per_file_metadata(write):
    manifest = "file,doc_id,source_id,version,title,collected_at\na.txt,A,Ref1,1,راهنمای حسگر,2026-10-01\n"
    data = make_zip({"manifest.csv": manifest, "a.txt": SEED000[0]["body"], "docs/c.txt": SEED000[2]["body"]})
    records, problems, _ = problems_of(write("guides.zip", data), default_language="fa")
    assert problems == []
    by_id = {r.doc_id: r for r in records}
    assert set(by_id) == {"A", "docs/c"}
    assert (by_id["A"].source_id, by_id["A"].version, by_id["A"].title) == ("Ref1", "1", "راهنمای حسگر")
    assert by_id["docs/c"].member_path == "docs/c.txt" and by_id["docs/c"].body == SEED000[2]["body"]


def test_zip_manifest_naming_a_missing_member_is_reported(write):
    data = make_zip({"manifest.csv": "file,doc_id\nmissing.txt,X\n", "a.txt": "text"})
    _, problems, _ = problems_of(write("g.zip", data), default_language="en")
    assert problems == ["g.zip member manifest.csv line 2, field file: names 'missing.txt', which is not a .txt member "
                        "of the archive"]


def test_leading_bom_is_dropped_and_noted(write):
    (record,), problems, report = problems_of(write("b.txt", b"\xef\xbb\xbfhello"), default_language="en")
    assert problems == [] and record.body == "hello"
    assert report.notices == ["b.txt: a leading UTF-8 byte-order mark was dropped"]


def test_whitespace_and_line_endings_of_a_body_are_kept(write):
    body = "  first\r\nsecond  \n\tthird\n"
    (record,), _, _ = problems_of(write("w.jsonl", jsonl([{"doc_id": "w", "language": "en", "body": body}])))
    assert record.body == body


# --- rejections ----------------------------------------------------------------------------------


def test_zip_member_with_parent_traversal_is_refused(write):
    _, problems, _ = problems_of(write("t.zip", make_zip({"../evil.txt": "x", "ok.txt": "y"})), default_language="en")
    assert "t.zip member ../evil.txt: contains '..'; members must stay inside the archive" in problems


def test_zip_member_with_absolute_path_is_refused(write):
    _, problems, _ = problems_of(write("t.zip", make_zip({"/etc/evil.txt": "x"})), default_language="en")
    assert problems == ["t.zip member /etc/evil.txt: has an absolute path; members must use relative paths"]


def test_zip_member_that_is_a_symlink_is_refused(write):
    data = make_zip({"link.txt": "/etc/passwd"}, symlinks={"link.txt"})
    _, problems, _ = problems_of(write("t.zip", data), default_language="en")
    assert problems == ["t.zip member link.txt: is a symbolic link; links are not accepted"]


def test_nested_archive_is_refused_by_name(write):
    inner = make_zip({"a.txt": "x"})
    _, problems, _ = problems_of(write("t.zip", make_zip({"inner.zip": inner})), default_language="en")
    assert problems == ["t.zip member inner.zip: is an archive; nested archives are not accepted"]


def test_nested_archive_is_refused_by_content_under_a_txt_name(write):
    inner = make_zip({"a.txt": "x"})
    _, problems, _ = problems_of(write("t.zip", make_zip({"looks-plain.txt": inner})), default_language="en")
    assert problems == ["t.zip member looks-plain.txt: is an archive; nested archives are not accepted"]


def test_zip_bomb_ratio_is_caught_while_reading(write):
    bomb = make_zip({"bomb.txt": "a" * 900_000})  # deflates ~1000:1, under the member cap
    _, problems, _ = problems_of(write("b.zip", bomb), default_language="en")
    assert problems == ["b.zip member bomb.txt: expands more than 100× its compressed size (a zip bomb?)"]


def test_zip_total_expansion_over_the_cap_is_refused(write):
    limits = Limits(upload_bytes=10**7, zip_members=100, member_bytes=10**6, expanded_bytes=150_000,
                    compression_ratio=10**6)
    members = {f"m{i}.txt": "x" * 60_000 for i in range(4)}
    _, problems, _ = problems_of(write("big.zip", make_zip(members)), default_language="en", limits=limits)
    assert problems == ["big.zip member m2.txt: the archive expands to more than the 150,000-byte limit"]


def test_zip_member_over_the_member_cap_is_refused(write):
    limits = Limits(upload_bytes=10**7, zip_members=100, member_bytes=50_000, expanded_bytes=10**7,
                    compression_ratio=10**6)
    _, problems, _ = problems_of(write("m.zip", make_zip({"huge.txt": "y" * 80_000})), default_language="en",
                                 limits=limits)
    assert problems == ["m.zip member huge.txt: is larger than the 50,000-byte document limit once expanded"]


def test_zip_lying_about_its_size_is_refused(write):
    data = bytearray(make_zip({"a.txt": "z" * 5000}))
    # Patch the central directory's uncompressed size of a.txt to 10 bytes.
    cd = data.rfind(b"PK\x01\x02")
    data[cd + 24 : cd + 28] = (10).to_bytes(4, "little")
    _, problems, _ = problems_of(write("lie.zip", bytes(data)), default_language="en")
    assert len(problems) == 1 and problems[0].startswith("lie.zip member a.txt: cannot be read")


def test_too_many_zip_members_is_refused(write):
    limits = Limits(upload_bytes=10**7, zip_members=3, member_bytes=10**6, expanded_bytes=10**7, compression_ratio=100)
    _, problems, _ = problems_of(write("n.zip", make_zip({f"{i}.txt": "x" for i in range(4)})), limits=limits)
    assert problems == ["n.zip: has 4 members; the limit is 3"]


def test_upload_over_the_size_cap_is_refused(write):
    limits = Limits(upload_bytes=10, zip_members=3, member_bytes=10**6, expanded_bytes=10**7, compression_ratio=100)
    _, problems, _ = problems_of(write("big.jsonl", jsonl(SEED000)), limits=limits)
    assert problems[0].startswith("big.jsonl: is ") and "the upload limit is 10" in problems[0]


def test_zip_with_other_file_types_is_refused(write):
    _, problems, _ = problems_of(write("t.zip", make_zip({"img.png": b"\x89PNG"})), default_language="en")
    assert problems == ["t.zip member img.png: is not a .txt file; a ZIP may hold only .txt files and manifest.csv"]


@pytest.mark.parametrize("encoding", ["cp1256", "gbk"])
def test_non_utf8_text_is_refused_with_its_place(write, encoding):
    text = "ولتاژ برحسب V است." if encoding == "cp1256" else "资料整理说明"
    _, problems, _ = problems_of(write("x.txt", text.encode(encoding)), default_language="fa")
    assert len(problems) == 1
    assert problems[0].startswith("x.txt: is not UTF-8: invalid byte(s)")
    assert problems[0].endswith("only UTF-8 text is accepted")


def test_utf16_text_is_refused_by_name(write):
    _, problems, _ = problems_of(write("x.txt", "hello".encode("utf-16")), default_language="en")
    assert problems == ["x.txt: the file is UTF-16 (it starts with a UTF-16 byte-order mark); save it as UTF-8"]


def test_non_utf8_line_in_jsonl_names_its_line(write):
    good = jsonl(SEED000[:1]).encode()
    bad = jsonl([dict(SEED000[1])]).encode("utf-8").replace("حسگر".encode(), "حسگر".encode("cp1256"))
    _, problems, _ = problems_of(write("x.jsonl", good + bad))
    assert len(problems) == 1 and problems[0].startswith("x.jsonl line 2: is not UTF-8")


def test_nul_byte_is_refused(write):
    _, problems, _ = problems_of(write("n.txt", "first\nsec\x00ond"), default_language="en")
    assert problems == ["n.txt: contains a NUL byte (line 2); NUL bytes are not allowed in text"]


def test_nul_escape_inside_json_is_refused(write):
    _, problems, _ = problems_of(write("n.jsonl", '{"doc_id":"a","language":"en","body":"x\\u0000y"}\n'))
    assert problems == ["n.jsonl line 1, field body: contains a NUL character"]


@pytest.mark.parametrize("body", ["", "   \n\t "])
def test_empty_or_whitespace_body_is_refused(write, body):
    _, problems, _ = problems_of(write("e.jsonl", jsonl([{"doc_id": "a", "language": "en", "body": body}])))
    assert problems == ["e.jsonl line 1, field body: is empty or only whitespace"]


def test_unknown_field_is_refused(write):
    _, problems, _ = problems_of(write("u.jsonl", jsonl([dict(SEED000[0], author="x")])))
    assert problems == [
        "u.jsonl line 1, field author: unknown field; the fields are doc_id, source_id, version, language, title, "
        "body, collected_at"
    ]


def test_unknown_csv_column_is_refused(write):
    _, problems, _ = problems_of(write("u.csv", "doc_id,body,colour\na,b,c\n"))
    assert problems == ["u.csv line 1, field colour: unknown column; the columns are doc_id, source_id, version, "
                        "language, title, body, collected_at"]


def test_malformed_jsonl_line_names_its_line_number(write):
    text = jsonl(SEED000[:2]) + '{"doc_id": "C", "body": \n'
    _, problems, _ = problems_of(write("bad.jsonl", text))
    assert len(problems) == 1 and problems[0].startswith("bad.jsonl line 3: is not valid JSON (")


def test_jsonl_line_that_is_not_an_object_is_refused(write):
    _, problems, _ = problems_of(write("a.jsonl", '["doc"]\n'))
    assert problems == ["a.jsonl line 1: must be a JSON object, not list"]


@pytest.mark.parametrize(
    ("field", "value", "rule"),
    [
        ("version", True, "must be text or an integer, not bool"),
        ("version", 1.5, "must be text or an integer, not float"),
        ("title", 5, "must be text, not int"),
        ("body", ["x"], "must be text, not list"),
        ("doc_id", 7, "must be text, not int"),
        ("collected_at", 20260101, "must be an ISO 8601 text, not int"),
        ("collected_at", "16/10/2026", "'16/10/2026' is not an ISO 8601 date or date-time"),
        ("language", "FA", "'FA' is not a lowercase language tag such as fa, en, zh-hant"),
    ],
)
def test_wrong_type_or_value_is_refused_by_field(write, field, value, rule):
    _, problems, _ = problems_of(write("t.jsonl", jsonl([dict(SEED000[0], **{field: value})])))
    assert problems == [f"t.jsonl line 1, field {field}: {rule}"]


def test_every_problem_is_listed_not_just_the_first(write):
    text = jsonl([{"doc_id": "a", "body": ""}, {"language": "en", "body": "x"}])
    _, problems, _ = problems_of(write("many.jsonl", text))
    assert problems == [
        f"many.jsonl line 1, field language: {LANGUAGE_REQUIRED}",
        "many.jsonl line 1, field body: is empty or only whitespace",
        "many.jsonl line 2, field doc_id: is required",
    ]


def test_unsupported_file_type_is_refused(write):
    _, problems, _ = problems_of(write("doc.pdf", b"%PDF-1.7"))
    assert problems == ["doc.pdf: has an unsupported type; upload one of .zip, .txt, .jsonl, .csv"]


def test_reading_never_modifies_the_source_file(write):
    path = write("seed.jsonl", jsonl(SEED000))
    before = path.read_bytes()
    problems_of(path)
    assert path.read_bytes() == before


@pytest.mark.parametrize("control", ["\x01", "\x1f", "\x7f", "\x85", "\x9f"])
def test_an_id_with_a_control_character_is_refused(write, control):
    record = {"doc_id": f"a{control}b", "language": "en", "body": "text"}
    _, problems, _ = problems_of(write("c.jsonl", jsonl([record])))
    assert problems == ["c.jsonl line 1, field doc_id: must not contain control characters"]


def test_the_control_character_rule_is_unicode_category_cc():
    import unicodedata

    from screening.ingest.formats import CONTROL_RE

    assert [c for c in range(0x3000) if (unicodedata.category(chr(c)) == "Cc") != bool(CONTROL_RE.search(chr(c)))] == []
