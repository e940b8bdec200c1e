"""Evidence per pair and the suggested verdict: the rules on small examples in English, Persian and Chinese,
then what a run stores and shows."""

from __future__ import annotations

import pytest

from screening.engine import evidence as ev
from screening.engine import fast, suggest
from screening.engine.normalize import get_policy
from screening.engine.shingle import ShingleSpec, VerifyKey

POLICY = get_policy("persian-arabic-fold-v1")
KEY = VerifyKey.derive(b"evidence tests")
BASE = ("The archive keeps every original file. Each upload is stored under its hash and never changed.\n\n"
        "The sensor is rated at 12 V and is checked every 3 weeks by the team on duty.\n\n"
        "Reviewers compare both texts side by side and record a verdict with a short reason.")


def facts(language="en", source="s1", version="1", collected="2025-01-01") -> ev.DocFacts:
    return ev.DocFacts(language, source, version, collected)


def evidence_of(left: str, right: str, lf=None, rf=None) -> ev.Evidence:
    spec = ShingleSpec("char", 5)
    lh, rh = (fast.verify_hashes(t, POLICY, spec, KEY) for t in (left, right))
    return ev.for_near(left, right, lh, rh, lf or facts(), rf or facts(source="s2"), fast.jaccard(lh, rh))


def test_a_reformatted_copy_reads_the_same_once_normalised():
    e = evidence_of(BASE, BASE.upper().replace("\n\n", "\n").replace(" ", "  "))
    assert e.same_normalised and e.changed_share == 0 and not e.signals
    s = suggest.suggest(e)
    assert (s.verdict, s.confidence) == ("merge-entry", 0.98) and "another source" in s.reasons


def test_reordered_paragraphs_only_moved():
    paragraphs = BASE.split("\n\n")
    e = evidence_of(BASE, "\n\n".join([paragraphs[2], paragraphs[0], paragraphs[1]]))
    assert e.changed_share == 0 and e.moved_share > 0.2 and not e.signals
    assert suggest.suggest(e).verdict == "merge-entry"


def test_a_revision_of_the_same_source_with_a_later_version():
    e = evidence_of(BASE, BASE.replace("12 V", "12 mV"), facts(version="1"), facts(version="2"))
    assert e.same_source and e.version_order == "left-older" and e.signals[0][0] == "unit"
    s = suggest.suggest(e)
    assert (s.verdict, s.confidence) == ("valid-revision", 0.97)
    assert s.reasons[0] == "unit 12 V and → 12 mV and" and "versions in order (left-older)" in s.reasons[1]


def test_a_revision_from_another_source_is_suggested_with_less_confidence():
    s = suggest.suggest(evidence_of(BASE, BASE.replace("3 weeks", "4 weeks")))
    assert (s.verdict, s.confidence) == ("valid-revision", 0.9)


def test_a_quotation_has_high_containment_and_low_jaccard():
    quoting = "A short note of ours.\n\n“The sensor is rated at 12 V and is checked every 3 weeks by the team.”"
    e = evidence_of(BASE + "\n\n" + "Another long paragraph about storage, hashing and review. " * 3, quoting)
    assert e.containment_right > 0.6 > e.jaccard and e.length_ratio < 0.5
    assert suggest.suggest(e).verdict == "public-quote"


def test_a_quotation_in_a_text_of_similar_length_is_still_a_quotation():
    # Half of each text is the quoted paragraph; the other halves were written apart, not revised.
    quoted = "The archive keeps every source file byte for byte and records who reviewed each pair and when."
    left = "Our guide to the storage room, its shelves, labels and the keys kept at the front desk.\n\n" + quoted
    right = quoted + "\n\nWe quote it in a newsletter for volunteers who sort donated books on Saturdays."
    e = evidence_of(left, right)
    assert e.length_ratio > 0.7 and e.changed_share > suggest.SMALL_CHANGE and e.containment >= 0.5
    assert suggest.suggest(e).verdict == "public-quote"


def test_language_twins_are_flagged_and_never_confidently_merged():
    e = evidence_of(BASE, BASE, facts("en"), facts("en-us"))
    assert e.languages_differ
    s = suggest.suggest(e)
    assert s.verdict == "merge-entry" and s.confidence < 0.95 and "two language tags (en, en-us)" in s.reasons[0]


@pytest.mark.parametrize(("left", "right"), [
    ("ولتاژ این دستگاه ۱۲ ولت است و هر ۳ هفته بررسی می‌شود. بایگانی هر پرونده را نگه می‌دارد.",
     "ولتاژ اين دستگاه 12 ولت است و هر 3 هفته بررسي ميشود. بایگانی هر پرونده را نگه می‌دارد."),
    ("该设备的额定电压为12伏，每3周检查一次。档案保存每个原始文件。",
     "该设备的额定电压为 12 伏, 每 3 周检查一次. 档案保存每个原始文件."),
], ids=["persian", "chinese"])
def test_format_only_copies_in_persian_and_chinese(left, right):
    e = evidence_of(left, right)
    assert e.same_normalised and not e.signals
    assert suggest.suggest(e).verdict == "merge-entry"


@pytest.mark.parametrize(("left", "right", "kind"), [
    ("ولتاژ این دستگاه ۱۲ ولت است و هر ۳ هفته بررسی می‌شود.", "ولتاژ این دستگاه ۱۲ میلی‌ولت است و هر ۳ هفته بررسی می‌شود.",
     "unit"),
    ("该设备的额定电压为12伏，每3周检查一次。此选项在旧系统上可用。",
     "该设备的额定电压为12伏，每3周检查一次。此选项在旧系统上不可用。", "negation"),
], ids=["persian-unit", "chinese-negation"])
def test_revisions_in_persian_and_chinese(left, right, kind):
    e = evidence_of(left, right, facts(version="1"), facts(version="2"))
    assert [s[0] for s in e.signals] == [kind]
    assert suggest.suggest(e).verdict == "valid-revision"


def test_an_exact_pair_is_the_same_content_bytes():
    e = ev.for_exact(facts(), facts(source="mirror"))
    s = suggest.suggest(e)
    assert (s.verdict, s.confidence) == ("merge-entry", 0.99) and s.reasons[0] == "the same content bytes"


def test_versions_are_ordered_by_their_numbers():
    assert ev.order("1.10", "1.9", ev._version_key) == "right-older"
    assert ev.order("v2", "v10", ev._version_key) == "left-older"
    assert ev.order("", "2", ev._version_key) == ""


def test_evidence_survives_a_round_trip_through_json():
    e = evidence_of(BASE, BASE.replace("12 V", "15 V"))
    assert ev.Evidence.from_dict(e.as_dict()) == e


# --- what a run stores and shows ----------------------------------------------------------------------


@pytest.fixture
def evidence_run(import_records):
    from tests.factories import completed_run

    base = BASE + "\n\nA last paragraph about the archive, the uploads and the signed sheets of every review."
    import_records("ev", [
        {"doc_id": "orig", "source_id": "manual", "version": "1", "language": "en", "body": base},
        {"doc_id": "rev", "source_id": "manual", "version": "2", "language": "en",
         "body": base.replace("12 V", "12 mV")},
        {"doc_id": "mirror", "source_id": "mirror", "language": "en", "body": base.upper()},
        {"doc_id": "twin", "source_id": "mirror", "language": "en-us", "body": base},
    ])
    return completed_run("ev", near=True, threshold=0.5)


def _pair(run, left, right):
    from screening.models import CandidatePair

    return CandidatePair.objects.get(run=run, left__doc_id=left, right__doc_id=right)


@pytest.mark.django_db
def test_a_run_stores_evidence_and_suggestions(evidence_run):
    rev = _pair(evidence_run, "orig", "rev")
    assert rev.suggested_verdict == "valid-revision" and rev.suggestion_confidence == 0.97
    assert rev.evidence["same_source"] and rev.evidence["version_order"] == "left-older"
    mirror = _pair(evidence_run, "mirror", "orig")
    assert mirror.suggested_verdict == "merge-entry" and mirror.evidence["same_normalised"]
    twin = _pair(evidence_run, "orig", "twin")
    assert twin.evidence["languages"] == ["en", "en-us"] and twin.suggestion_confidence < 0.95


@pytest.mark.django_db
def test_the_pair_page_shows_the_evidence_and_the_suggestion(evidence_run, editor_client):
    from django.urls import reverse

    page = editor_client.get(reverse("review:pair", args=[_pair(evidence_run, "orig", "twin").pk])).content.decode()
    assert "Suggested: <strong>merge entry</strong>" in page
    assert "two language tags (<bdi>en</bdi>, <bdi>en-us</bdi>)" in page
    assert 'class="flag"><bdi>en</bdi> · <bdi>en-us</bdi> — they differ' in page
    assert "Right&#39;s shingles found in the left" in page
    assert "Shared text" in page and "nearly all of both texts (1 block)" in page


@pytest.mark.django_db
def test_the_queue_filters_and_sorts_by_suggestion(evidence_run, editor_client):
    from django.urls import reverse

    from review import selectors

    page = editor_client.get(reverse("review:queue"), {"run": evidence_run.pk, "suggestion": "valid-revision"})
    text = page.content.decode()
    assert "orig · rev" in text and "orig · twin" not in text and "valid revision <span class=\"hint\">0.97" in text
    rows, cursor, seen = [], "", []
    flt = selectors.QueueFilter(run=evidence_run.pk, sort="confidence")
    while True:
        page = selectors.queue_page(flt, after=cursor, limit=2)
        rows, cursor = page.rows, page.next
        seen += [r.confidence for r in rows]
        if not cursor:
            break
    assert seen == sorted(seen, reverse=True) and len(seen) == evidence_run.pairs.count()
    confident = editor_client.get(reverse("review:queue"), {"run": evidence_run.pk, "min_confidence": "0.95"})
    assert "orig · twin" not in confident.content.decode()


@pytest.mark.django_db
def test_export_pairs_has_the_suggestion_and_evidence_columns(evidence_run, tmp_path):
    import csv
    import json

    from django.core.management import call_command

    out = tmp_path / "pairs.csv"
    call_command("export_pairs", str(evidence_run.pk), "--out", str(out))
    rows = {(r["left_id"], r["right_id"]): r for r in csv.DictReader(out.open(encoding="utf-8"))}
    rev = rows[("orig", "rev")]
    assert rev["suggested_verdict"] == "valid-revision" and float(rev["suggestion_confidence"]) == 0.97
    assert json.loads(rev["evidence"])["signals"][0][0] == "unit"


@pytest.mark.django_db
def test_the_evaluation_page_tables_suggestions_against_labels(evidence_run, admin_client):
    from django.urls import reverse

    from screening import evaluation

    labels = b"left_id,right_id,label\norig,mirror,1\norig,rev,0\norig,twin,1\n"
    label_set = evaluation.labelset_import(corpus=evidence_run.corpus, data=labels, original_name="l.csv")
    report = evaluation.run_evaluate(run=evidence_run, label_set=label_set)
    rows, agreement = report.suggestions["all"]
    assert {(r.suggestion, r.copies, r.others) for r in rows} == {("merge-entry", 2, 0), ("valid-revision", 0, 1)}
    assert agreement == 1.0
    page = admin_client.get(reverse("screening:evaluation", args=[evidence_run.pk]), {"labels": label_set.pk})
    assert "Suggested verdict against the labels" in page.content.decode()


# --- below the review threshold: the token diff waits for the pair's first opening ---------------------


FA = "بایگانی هر پرونده را نگه می‌دارد و نسخه‌ها را با تاریخ و منبع ثبت می‌کند تا هیچ چیز گم نشود."


@pytest.fixture
def partial_run(import_records):
    from tests.factories import completed_run

    import_records("low", [
        {"doc_id": "long", "source_id": "a", "language": "en", "body": BASE + "\n\n" + "More about shelves. " * 30},
        {"doc_id": "quote", "source_id": "b", "language": "en", "body": "We quote it: " + BASE},
        {"doc_id": "fa1", "source_id": "c", "language": "fa", "body": FA + " ولتاژ این دستگاه ۱۲ ولت است و هر ۳ هفته"},
        {"doc_id": "fa2", "source_id": "d", "language": "fa", "body": FA + " ولتاژ اين دستگاه 12 ولت است و هر 3 هفته"},
    ])
    # Many bands of two rows: LSH returns the low pairs too, all stored, all below the 0.95 threshold.
    return completed_run("low", near=True, policy="nfkc-casefold-alnum-v1", threshold=0.95, bands=64, rows=2,
                         storage_floor=0.1)


@pytest.mark.django_db
def test_a_pair_below_the_threshold_keeps_partial_evidence_until_first_opened(partial_run, editor_client):
    from django.urls import reverse

    pair = _pair(partial_run, "long", "quote")
    assert pair.jaccard < 0.95 and pair.evidence["partial"] and pair.suggested_verdict == "public-quote"
    editor_client.get(reverse("review:pair", args=[pair.pk]))
    pair.refresh_from_db()
    assert not pair.evidence["partial"] and pair.evidence["changed_share"] > 0  # kept once computed


@pytest.mark.django_db
def test_the_panes_are_drawn_on_first_opening_kept_and_drawn_again_for_a_new_version(evidence_run, editor_client):
    from django.urls import reverse
    from markupsafe import escape

    from screening.models import PairPanes
    from screening.runs import display

    pair = _pair(evidence_run, "orig", "rev")
    url = reverse("review:pair", args=[pair.pk])
    assert not PairPanes.objects.filter(pair=pair).exists()
    first = editor_client.get(url).content.decode()
    kept = PairPanes.objects.get(pair=pair)
    run_text, run = next(segment for segment in kept.html["left"] if segment[1] is not None)
    assert kept.version == display.VERSION and f'data-run="{run}" tabindex="0">{escape(run_text)}</span>' in first
    PairPanes.objects.filter(pk=kept.pk).update(version="panes-older", html={"left": [], "right": [], "diff": []})
    again = editor_client.get(url).content.decode()
    assert PairPanes.objects.filter(pair=pair).count() == 1
    redrawn = PairPanes.objects.get(pair=pair)
    assert redrawn.version == display.VERSION and redrawn.html == kept.html and escape(run_text) in again


@pytest.mark.django_db
def test_a_copy_the_policy_keeps_apart_gets_its_whole_evidence_at_once(partial_run):
    pair = _pair(partial_run, "fa1", "fa2")  # Persian and Arabic letters and digits: nfkc keeps them apart
    assert pair.jaccard < 0.95 and not pair.evidence.get("partial") and pair.evidence["same_normalised"]
    assert pair.suggested_verdict == "merge-entry"


def test_every_policy_folds_ascii_as_the_strongest_fold_does():
    # Verification skips the strongest fold for two ASCII texts below the threshold on this ground.
    import random

    from screening.engine.normalize import POLICIES

    strongest = POLICIES["persian-arabic-fold-v1"]
    rng = random.Random(4)
    texts = [chr(c) for c in range(128)] + ["".join(chr(rng.randrange(128)) for _ in range(60)) for _ in range(500)]
    for policy in POLICIES.values():
        assert all(policy.normalize(t) == strongest.normalize(t) for t in texts), policy.name


@pytest.mark.django_db
def test_export_pairs_writes_whole_evidence_for_pairs_below_the_threshold(partial_run, tmp_path):
    import csv
    import json

    from django.core.management import call_command

    call_command("export_pairs", str(partial_run.pk), "--out", str(tmp_path / "p.csv"))
    rows = list(csv.DictReader(open(tmp_path / "p.csv", encoding="utf-8")))  # noqa: SIM115
    assert rows and all(not json.loads(r["evidence"])["partial"] for r in rows)


SENTENCES = ["The archive keeps every original file.", "Each upload is stored under its hash.",
             "Nobody changes it afterwards.", "Reviewers compare both texts side by side.",
             "They record a verdict with a reason.", "The sensor is rated at 12 V.", "It is checked every 3 weeks.",
             "The team on duty signs the log.", "A second reviewer may disagree with the first.",
             "An arbiter settles the pair in the end.", "Undo withdraws a decision as a newer record."]


@pytest.mark.parametrize("joiner", ["\n\n", "\n", " "], ids=["paragraphs", "lines", "sentences"])
def test_a_permutation_of_short_blocks_is_the_same_words_in_another_order(joiner):
    import random

    shuffled = SENTENCES[:]
    random.Random(4).shuffle(shuffled)
    e = evidence_of(joiner.join(SENTENCES), joiner.join(shuffled))
    assert e.token_overlap == 1.0 and e.moved_blocks >= 5 and e.changed_share == 0 and not e.signals
    s = suggest.suggest(e)
    assert s.verdict == "merge-entry" and s.confidence >= 0.95 and "the same words in another order" in s.reasons[0]


LICENCE = ("Copyright 2024 the authors. Permission is hereby granted to copy and redistribute this text provided "
           "that this notice is kept. It is provided as is, without warranty of any kind, and the authors accept "
           "no liability for damages arising from its use.")
BODY_A = ("Our garden club meets on the first Saturday of each month to swap seeds and cuttings. Members bring "
          "a dish to share and the oldest member picks the next topic for the talk.")
BODY_B = ("The river path closes in winter when the water rises over the lower bridge. Walkers should use the "
          "road by the mill instead and mind the cyclists coming down the hill.")


@pytest.mark.parametrize("place", ["top", "bottom", "both"])
def test_a_private_licence_at_the_edges_of_both_texts_reads_as_a_template(place):
    def framed(body):
        return {"top": f"{LICENCE}\n\n{body}", "bottom": f"{body}\n\n{LICENCE}",
                "both": f"{LICENCE}\n\n{body}\n\n{LICENCE}"}[place]

    e = evidence_of(framed(BODY_A), framed(BODY_B))
    assert e.shared_where == "edges" and e.boilerplate and e.rest_similarity < 0.1
    s = suggest.suggest(e)
    assert s.verdict == "keep-both" and s.reasons[0].startswith("shared: ")


def test_a_body_framed_by_a_licence_twice_its_length_is_still_a_text_of_its_own():
    long_licence = " ".join([LICENCE, LICENCE.replace("2024", "2025").replace("text", "work"),
                             LICENCE.replace("2024", "2023").replace("authors", "editors")])
    e = evidence_of(f"{long_licence}\n\n{BODY_A}\n\n{long_licence}", f"{long_licence}\n\n{BODY_B}\n\n{long_licence}")
    assert e.shared_edges == ["top and bottom", "top and bottom"] and max(e.rest_left, e.rest_right) < 0.15
    assert suggest.suggest(e).verdict == "keep-both"


# A clause of a licence's patent, indemnity and distribution terms: none of the copyright or warranty words.
CLAUSE = ("The Commercial Contributor shall indemnify every Indemnified Contributor against any lawsuit, "
          "litigation or claim brought in any jurisdiction, notwithstanding the distribution of the Program by a "
          "third party, and whatsoever the royalty agreed between them.")


def test_a_licence_clause_reads_as_boilerplate_by_its_own_words():
    e = evidence_of(f"{BODY_A}\n\n{CLAUSE}", f"{BODY_B}\n\n{CLAUSE}")
    assert e.shared_where == "edges" and e.boilerplate
    assert suggest.suggest(e).verdict == "keep-both"


def test_the_same_block_inside_one_texts_middle_is_a_quotation():
    e = evidence_of(f"{BODY_A}\n\n{LICENCE}\n\n{BODY_B}", f"{LICENCE}\n\nWe print it here for our readers.")
    assert e.shared_where == "inside"
    assert suggest.suggest(e).verdict == "public-quote"


def test_a_shared_block_in_quotation_marks_is_a_quotation_even_at_the_edges():
    e = evidence_of(f"“{LICENCE}”\n\n{BODY_A}", f"{BODY_B}\n\n“{LICENCE}”")
    assert e.shared_where == "edges" and e.quoted
    assert suggest.suggest(e).verdict == "public-quote"


QUOTATION = ("Install five copies of the tool before the upgrade, and keep the old one until every copy has been "
             "checked by the team that runs the archive.")


def test_a_quotation_is_read_as_quoted_when_a_shared_token_stands_just_before_its_mark():
    # Both texts happen to have "°C." just before it: the shared block starts there, one token before the mark.
    left = f"{BODY_A} Keep the room between 15 °C and 21 °C.\n\n{QUOTATION}"
    right = f"Keep it at 42 °C.\n\n“{QUOTATION}”\n\nConflicting commands."
    e = evidence_of(left, right)
    assert e.quoted and e.shared_blocks[0][2] == right.index("°C")
    assert suggest.suggest(e).verdict == "public-quote"


def test_a_marked_quotation_frequent_in_the_corpus_is_still_a_quotation():
    # Many texts quoting the same words make them corpus-frequent: template share alone does not make a template.
    import dataclasses

    left = f"{BODY_A} Keep the room between 15 °C and 21 °C.\n\n{QUOTATION}"
    right = f"Keep it at 42 °C.\n\n“{QUOTATION}”\n\nConflicting commands."
    frequent = dataclasses.replace(evidence_of(left, right), template_share=0.56, jaccard_without_template=0.1)
    assert suggest.suggest(frequent).verdict == "public-quote"
    assert suggest.suggest(dataclasses.replace(frequent, quoted=False)).verdict == "keep-both"


LICENCE_ZH = "版权所有，保留一切权利。未经许可，禁止转载、复制或分发本文的任何部分，本软件按原样提供，不作任何担保。"
LICENCE_FA = ("کلیه حقوق این اثر محفوظ است. هرگونه بازنشر یا کپی بدون مجوز کتبی ممنوع است و مسئولیت استفاده با "
              "خواننده است.")


def _layouts(rng) -> list[tuple[str, str]]:
    """Pairs of every shape the shared text takes: whole, moved, at the edges, inside, quoted, none."""
    sentences = SENTENCES[:]
    out = [(BASE, BASE), (BASE, BASE.replace("12 V", "12 mV")), (BODY_A, BODY_B), ("", BODY_A), (BODY_A, "")]
    for _ in range(40):
        rng.shuffle(sentences)
        left = rng.choice(["\n\n", "\n", " "]).join(sentences[: rng.randint(3, len(sentences))])
        right = " ".join(rng.sample(sentences, rng.randint(2, len(sentences))))
        out.append((left, right))
        block = rng.choice([LICENCE, f"“{LICENCE}”", " ".join(sentences[:4]), LICENCE_ZH, LICENCE_FA])
        out += [(f"{block}\n\n{BODY_A}", f"{BODY_B}\n\n{block}"),
                (f"{block}\n\n{BODY_A}\n\n{block}", f"{block} {BODY_B}"),
                (f"{BODY_A} {block} {BODY_B}", f"{block}\n\nWe print it here."),
                (f"{BODY_A}\n{left}", f"{right}\n{BODY_B}"),
                (f"{BODY_A} 21 °C.\n\n{block}", f"42 °C.\n\n“{block}”\n\n{BODY_B}")]
    return out


def test_the_compiled_overlap_is_the_reference_one():
    import random

    from screening.engine import overlap, revision

    seen = set()
    for left, right in _layouts(random.Random(11)):
        lp, rp = revision.Prepared(left), revision.Prepared(right)
        tiled = revision.tiles(lp, rp)
        found = overlap.analyse(lp, rp, tiled)
        assert found == overlap.analyse_reference(lp, rp, tiled), (left, right)
        again, tiled_again = overlap.analyse_tiled(lp, rp)
        assert again == found and tiled_again.tolist() == tiled.tolist()
        seen.add((found.where, found.boilerplate, found.quoted, found.rest_similarity is None))
        for side, n in ((0, len(lp.toks)), (1, len(rp.toks))):
            assert revision.covered(tiled, n, side).tolist() == revision.covered_reference(tiled, n, side).tolist()
    assert {w for w, *_ in seen} == {"whole", "edges", "inside", "none"} and {b for _, b, _, _ in seen} == {True, False}
    assert {q for _, _, q, _ in seen} == {True, False} and {r for *_, r in seen} == {True, False}


def test_evidence_as_a_dict_keeps_the_fields_in_order():
    e = evidence_of(BASE, BASE.replace("12 V", "12 mV"))
    assert list(e.as_dict()) == list(ev.Evidence.__dataclass_fields__)
    assert list(ev.Evidence.from_dict(e.as_dict()).as_dict()) == list(ev.Evidence.__dataclass_fields__)


def test_a_window_of_pairs_in_one_call_is_each_pair_on_its_own():
    """for_near_many (one compiled call for all the pairs, the dicts built without an Evidence) gives what
    for_near and for_near_partial give, value for value and type for type, the documents shared between pairs."""
    import random

    from screening.engine import revision

    spec = ShingleSpec("char", 5)
    rng = random.Random(5)
    texts = [t for pair in _layouts(rng) for t in pair] + [
        "The cookie sets maxAge=86400 for a day.", "The cookie sets maxAge=864\n00 for a day.",
        "The cookie sets maxAge=864-00 for a day.", "The cookie sets maxAge=864 -\n 00 for a day.",
        "The re-\nformatted text is rated at 12 V.", "The reformatted text is rated at 12 mV.",
        "It is not rated at 3 weeks 😀 and costs ۱۲ درصد.", "It is rated at 4 weeks 😀 and costs ۱۳ درصد.",
        "سنسور هر ۳ هفته بررسی می‌شود.", "سنسور هر ۳ هفته بررسی نمی‌شود.",
        "每周检查一次，电压为12伏。", "每天检查一次，电压为12毫伏。"]
    hashes = [fast.verify_hashes(t, POLICY, spec, KEY) for t in texts]
    pairs = [(i, i + 1) for i in range(0, len(texts) - 1, 2)]
    pairs += [(rng.randrange(len(texts)), rng.randrange(len(texts))) for _ in range(150)]
    # Prepared one by one (the documents' arrays laid out), in one batch with a text the batch leaves to the
    # expression (laid out too), and in one batch of texts it tokenises all (its own arrays read as they are).
    plain = [k for k, t in enumerate(texts) if t.isascii()]
    for prepared, chosen in (([revision.Prepared(t) for t in texts], pairs), (revision.prepare_many(texts), pairs),
                             (revision.prepare_many(texts), [(i, j) for i, j in pairs if i in plain and j in plain])):
        assert len(chosen) > 50
        _same_as_each_pair_alone(prepared, hashes, chosen)
    batch = revision.prepare_many(texts)
    assert all(batch[k].laid for k in plain) and not batch[texts.index(next(t for t in texts if "😀" in t))].laid
    lp = batch[0]
    assert revision.tiles(lp, lp).tolist() == [[0, 0, len(lp.toks)]]  # what the window takes for equal tokens


def _same_as_each_pair_alone(prepared, hashes, pairs):
    import json

    items, expected = [], []
    for k, (i, j) in enumerate(pairs):
        lf, rf = facts(version=str(k % 3)), facts(source="s2", version="2", collected="2024-06-01")
        shared = fast.intersection_size(hashes[i], hashes[j])
        score, template = fast.jaccard(hashes[i], hashes[j]) or 0.0, ((0.25, 0.5), (None, None))[k % 2]
        whole = k % 3 != 0
        call = ev.for_near if whole else ev.for_near_partial
        expected.append(call(prepared[i], prepared[j], hashes[i], hashes[j], lf, rf, score, template,
                             shared=shared).as_dict())
        items.append(ev.NearItem(prepared[i], prepared[j], hashes[i], hashes[j], lf, rf, score, template, shared,
                                 whole))
    found = ev.for_near_many(items)
    assert len(found) == len(expected)
    for got, want, pair in zip(found, expected, pairs, strict=True):
        assert json.dumps(got) == json.dumps(want), pair
        assert [type(v) for v in got.values()] == [type(v) for v in want.values()], pair
    assert any(e["signals"] for e in expected) and any(e["same_normalised"] for e in expected)
    assert {e["shared_where"] for e in expected} == {"whole", "edges", "inside", "none"}
    assert ev.for_near_many([]) == []
    scratch = ev.Scratch()  # a job's windows one after another in the same arrays, smaller and larger
    for part in (items[:20], items, items[5:9], items[40:]):
        assert ev.for_near_many(part, scratch) == ev.for_near_many(part)
