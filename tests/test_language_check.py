"""The language check (issue 38): what each document's text reads as, beside its tag, with known answers; the
rule (screening.engine.langcheck) without a database, then the service, the pages, the export, the command."""

from __future__ import annotations

import csv
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from screening.engine import langcheck
from screening.engine.langcheck import Detection
from tests.seeds import SEED001_TEXTS

PERSIAN = ("ولتاژ ورودی حسگر باید پیش از نصب اندازه‌گیری شود. اگر ولتاژ بیش از حد مجاز باشد، دستگاه خاموش "
           "می‌شود و پیام خطا در صفحهٔ نمایش دیده می‌شود.")
ENGLISH = ("Installation guide for the field sensor. Mount the sensor on a dry wall at least 30 cm above the "
           "floor, then connect the supply and check the voltage before you switch it on.")
GERMAN = ("Installationsanleitung für den Feldsensor. Montieren Sie den Sensor an einer trockenen Wand mindestens "
          "30 cm über dem Boden und prüfen Sie die Spannung, bevor Sie ihn einschalten.")
CHINESE = SEED001_TEXTS["A"] + SEED001_TEXTS["E"]


# --- the rule, no database --------------------------------------------------------------------------------


@pytest.mark.parametrize(("tag", "base"), [
    ("zh-Hans", "zh"), ("zh_hant", "zh"), ("zh-CN", "zh"), ("fa-IR", "fa"), ("FA", "fa"), ("fas", "fa"),
    ("en-us", "en"), ("iw", "he"), ("wuu", "zh"), ("arz", "ar"), ("", ""), ("  de-CH ", "de"),
])
def test_it_maps_tags_and_codes_to_their_base_language(tag, base):
    assert langcheck.base(tag) == base


@pytest.mark.parametrize(("text", "language"), [
    (PERSIAN, "fa"), (ENGLISH, "en"), (GERMAN, "de"), (CHINESE, "zh"),
    ("データの重複を見つけるために、各文書の指紋を計算して比較します。", "ja"),
    ("중복 문서를 찾기 위해 각 문서의 지문을 계산하고 비교합니다.", "ko"),
])
def test_it_detects_the_language_of_real_sentences_confidently(text, language):
    found = langcheck.detect(text)
    assert found.language == language and found.confident, found


def test_a_text_without_letters_has_no_language():
    assert langcheck.detect("12 345 — 67.8 %") == langcheck.UNKNOWN
    assert not langcheck.UNKNOWN.confident


def test_it_reads_only_the_start_of_a_long_text():
    assert langcheck.detect(PERSIAN * 40 + ENGLISH * 400).language == "fa"


def test_a_tag_disagrees_only_with_a_confident_detection_of_another_base_language():
    sure_en, unsure_en = Detection("en", 0.999), Detection("en", 0.6)
    assert langcheck.disagrees("de", sure_en)
    assert not langcheck.disagrees("de", unsure_en)
    assert not langcheck.disagrees("en-GB", sure_en)
    assert not langcheck.disagrees("zh-Hans", Detection("zh", 1.0))
    assert not langcheck.disagrees("", sure_en)  # no tag: nothing to disagree with
    assert not langcheck.disagrees("de", langcheck.UNKNOWN)


def test_it_says_which_of_two_tags_a_confident_detection_matches():
    assert langcheck.matching_tag(("fa", "ar"), Detection("fa", 0.995)) == 0
    assert langcheck.matching_tag(("ar", "fa-IR"), Detection("fa", 0.995)) == 1
    assert langcheck.matching_tag(("ar", "ur"), Detection("fa", 0.995)) is None
    assert langcheck.matching_tag(("fa", "ar"), Detection("fa", 0.5)) is None


# --- at import -------------------------------------------------------------------------------------------

RECORDS = [
    {"doc_id": "fa-1", "language": "fa-ir", "body": PERSIAN},
    {"doc_id": "zh-1", "language": "zh-hans", "body": CHINESE},
    {"doc_id": "en-1", "language": "en", "title": "Sensor", "body": ENGLISH},
    {"doc_id": "en-tagged-de", "language": "de", "body": ENGLISH},
    {"doc_id": "short", "language": "de", "body": "OK"},
]


@pytest.fixture
def checked(import_records):
    from screening.ingest import detection

    return detection.upload_language_check(upload=import_records("lang", RECORDS))


@pytest.mark.django_db
def test_the_check_keeps_the_detection_beside_the_tag_and_lists_the_disagreements(checked):
    from screening.models import Document

    found = {d.doc_id: (d.language, d.detected_language) for d in Document.objects.filter(corpus__name="lang")}
    assert found == {"fa-1": ("fa-ir", "fa"), "zh-1": ("zh-hans", "zh"), "en-1": ("en", "en"),
                     "en-tagged-de": ("de", "en"), "short": ("de", found["short"][1])}
    assert checked.language_checked_at is not None and checked.language_mismatch_count == 1
    (mismatch,) = checked.language_mismatches
    assert mismatch["doc_id"] == "en-tagged-de" and mismatch["tag"] == "de" and mismatch["detected"] == "en"
    assert mismatch["place"] == "records.jsonl line 4" and mismatch["confidence"] >= langcheck.CONFIDENT


@pytest.mark.django_db
def test_checking_again_detects_nothing_new_and_finds_the_same(checked):
    from screening.ingest import detection

    again = detection.upload_language_check(upload=checked)
    assert again.language_mismatches == checked.language_mismatches


@pytest.mark.django_db(transaction=True)
def test_the_upload_job_checks_the_languages_after_the_import(run_worker, write):
    from screening.ingest import uploads
    from screening.models import Document, Upload

    path = write("two.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in RECORDS[2:4]))
    upload = uploads.upload_enqueue(upload=uploads.upload_create_from_path(corpus_name="job", path=path))
    run_worker()
    upload = Upload.objects.get(pk=upload.pk)
    assert upload.status == "complete" and upload.language_mismatch_count == 1
    assert set(Document.objects.values_list("detected_language", flat=True)) == {"en"}


@pytest.mark.django_db
def test_import_corpus_names_the_documents_whose_tag_disagrees(write, capsys):
    path = write("guides.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in RECORDS))
    call_command("import_corpus", str(path), "--corpus", "cli")
    out = capsys.readouterr().out
    assert "language: guides.jsonl line 4 (en-tagged-de) is tagged de but reads as en" in out
    assert "fa-1" not in out and "zh-1" not in out


@pytest.mark.django_db
def test_detect_languages_checks_documents_imported_before_the_check(import_records, capsys):
    from screening.models import Document, Upload

    upload = import_records("old", RECORDS)  # imported, not checked (as before the check existed)
    assert not Document.objects.exclude(language_confidence=None).exists()
    call_command("detect_languages")
    assert "records.jsonl → old: 1 tag(s) disagree with the text" in capsys.readouterr().out
    assert not Document.objects.filter(language_confidence=None).exists()
    assert Upload.objects.get(pk=upload.pk).language_mismatches[0]["doc_id"] == "en-tagged-de"
    assert dict(Document.objects.values_list("doc_id", "language"))["en-tagged-de"] == "de"  # the tag as it was


# --- while the check runs --------------------------------------------------------------------------------

MANY = [{"doc_id": f"d{i}", "language": "de" if i % 10 == 3 else "en", "body": f"{ENGLISH} ({i})"}
        for i in range(40)]


def _phase(state: dict) -> tuple:
    """Where an upload stands for its page, in the order the states must come."""
    order = [("queued", ""), ("running", ""), ("complete", "queued"), ("complete", "running"),
             ("complete", "complete")]
    return order.index((state["status"], state["language_check"])), state["language_check_done"]


@pytest.mark.django_db(transaction=True)
def test_the_status_follows_the_import_then_the_language_check_in_order(admin_client, run_worker, write,
                                                                          settings):
    import threading

    from django.db import connections

    from screening.ingest import uploads

    settings.DEDUP_LANGUAGE_CHECK_BATCH = 1  # the work-horse forks with it: the bar moves once a document
    path = write("many.jsonl", "".join(json.dumps(r) + "\n" for r in MANY))
    upload = uploads.upload_enqueue(upload=uploads.upload_create_from_path(corpus_name="many", path=path))
    url = reverse("screening:upload_status", args=[upload.pk])
    seen, stop = [admin_client.get(url).json()], threading.Event()

    def watch() -> None:
        while not stop.is_set():
            seen.append(admin_client.get(url).json())
        connections.close_all()

    watcher = threading.Thread(target=watch)
    watcher.start()
    run_worker()
    stop.set()
    watcher.join()
    seen.append(admin_client.get(url).json())
    phases = [_phase(state) for state in seen]
    assert phases == sorted(phases), phases  # never back: import, then the check, its count only growing
    checking = [s for s in seen if s["language_check"] == "running" and 0 < s["language_check_done"] < 40]
    assert checking, phases
    middle = checking[len(checking) // 2]
    assert middle["active"] and middle["fraction"] == middle["language_check_done"] / 40
    assert middle["label"] == f"checking languages: {middle['language_check_done']} of 40 documents"
    assert phases[0] == (0, 0) and phases[-1] == (4, 40) and not seen[-1]["active"]
    page = admin_client.get(reverse("screening:corpus_detail", args=["many"])).content.decode()
    assert "The text of 4 documents does not read as their language tags" in page
    assert "checking languages" not in page and "data-status-url" not in page


@pytest.mark.django_db
def test_the_corpus_page_shows_the_check_under_way_and_no_mismatch_list(import_records, editor_client):
    from screening.ingest import detection
    from screening.models import Upload

    upload = import_records("wait", RECORDS)
    Upload.objects.filter(pk=upload.pk).update(language_check="running", language_check_done=2,
                                               language_mismatch_count=1)  # what a check half-way has
    page = editor_client.get(reverse("screening:corpus_detail", args=["wait"])).content.decode()
    assert "checking languages: 2 of 5 documents" in page and '<progress max="5" value="2">' in page
    assert "does not read as" not in page and "every text reads as its language tag" not in page
    detection.upload_language_check(upload=upload)
    page = editor_client.get(reverse("screening:corpus_detail", args=["wait"])).content.decode()
    assert "checking languages" not in page and "The text of 1 document does not read as its language tag" in page


@pytest.mark.django_db
def test_a_check_that_stopped_says_so_and_the_page_stops_waiting(import_records, editor_client):
    from screening.ingest import detection
    from screening.models import Upload

    upload = import_records("stopped", RECORDS[:3])
    Upload.objects.filter(pk=upload.pk).update(language_check="running")
    detection.language_check_fail(upload_id=upload.pk)
    page = editor_client.get(reverse("screening:corpus_detail", args=["stopped"])).content.decode()
    assert "the language check stopped" in page and "data-status-url" not in page
    state = editor_client.get(reverse("screening:upload_status", args=[upload.pk])).json()
    assert (state["active"], state["language_check"]) == (False, "failed")


@pytest.mark.django_db
def test_an_upload_whose_texts_all_read_as_their_tags_says_so(import_records, editor_client):
    from screening.ingest import detection

    detection.upload_language_check(upload=import_records("clean", RECORDS[:3]))
    page = editor_client.get(reverse("screening:corpus_detail", args=["clean"])).content.decode()
    assert "every text reads as its language tag" in page


# --- what the pages show ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_document_page_shows_what_the_text_reads_as_beside_the_tag(checked, import_records, editor_client):
    from screening.models import Document

    wrong = Document.objects.get(doc_id="en-tagged-de")
    page = editor_client.get(reverse("screening:document_detail", args=[wrong.pk])).content.decode()
    assert "<dd><bdi>de</bdi></dd>" in page and f"<dd><bdi>en</bdi> ({wrong.language_confidence:.2f})</dd>" in page
    import_records("later", [{"doc_id": "x", "language": "en", "body": ENGLISH}])
    later = Document.objects.get(corpus__name="later")
    page = editor_client.get(reverse("screening:document_detail", args=[later.pk])).content.decode()
    assert "not checked yet" in page


@pytest.mark.django_db
def test_the_upload_summary_lists_the_documents_whose_tag_disagrees(checked, editor_client):
    page = editor_client.get(reverse("screening:corpus_detail", args=["lang"])).content.decode()
    assert "does not read as its language tag" in page
    assert ("<bdi>records.jsonl line 4</bdi> (<bdi>en-tagged-de</bdi>): tagged <bdi>de</bdi>, reads as <bdi>en</bdi>"
            in page)


@pytest.mark.django_db
def test_the_upload_summary_is_translated(checked, editor_client):
    editor_client.post(reverse("set_language"), {"language": "fa", "next": "/"})
    page = editor_client.get(reverse("screening:corpus_detail", args=["lang"])).content.decode()
    assert "<bdi>records.jsonl line 4</bdi> (<bdi>en-tagged-de</bdi>)" in page and "reads as" not in page


TWIN_BODY = ENGLISH + " " + ("Keep the sensor away from direct sunlight and check the readings once a week; "
                             "write every reading in the log with the date and the time of the check.")


@pytest.fixture
def twin_run(import_records):
    from screening.ingest import detection
    from tests.factories import completed_run

    upload = import_records("twins", [
        {"doc_id": "orig", "source_id": "manual", "language": "en", "title": "Sensor care", "body": TWIN_BODY},
        {"doc_id": "twin", "source_id": "mirror", "language": "de", "body": TWIN_BODY},
    ])
    detection.upload_language_check(upload=upload)
    return completed_run("twins", near=True, threshold=0.5)


def _twin_pair(run):
    from screening.models import CandidatePair

    return CandidatePair.objects.get(run=run)


@pytest.mark.django_db
def test_the_queue_shows_a_badge_on_a_pair_whose_text_reads_as_another_language(twin_run, editor_client):
    page = editor_client.get(reverse("review:queue"), {"run": twin_run.pk}).content.decode()
    assert 'class="badge language-mismatch"' in page and "reads as en" in page
    # Before the title, which the one-line cell is allowed to cut.
    assert page.index("reads as en") < page.index("Sensor care</span>")


@pytest.mark.django_db
def test_the_pair_page_shows_the_badge_and_which_tag_the_text_matches(twin_run, editor_client):
    pair = _twin_pair(twin_run)
    page = editor_client.get(reverse("review:pair", args=[pair.pk])).content.decode()
    assert page.count('class="badge language-mismatch"') == 1  # the document tagged de only
    assert "The texts read as" in page and "tag (<bdi>en</bdi>) is right" in page


@pytest.mark.django_db
def test_the_badge_is_translated(twin_run, editor_client):
    pair = _twin_pair(twin_run)
    editor_client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    text = editor_client.get(reverse("review:pair", args=[pair.pk])).content.decode()
    assert 'class="badge language-mismatch"' in text and "reads as en" not in text


@pytest.mark.django_db
def test_export_pairs_gives_both_detected_languages(twin_run, tmp_path):
    out = tmp_path / "pairs.csv"
    call_command("export_pairs", str(twin_run.pk), "--out", str(out))
    (row,) = list(csv.DictReader(out.open(encoding="utf-8")))
    assert (row["left_detected_language"], row["right_detected_language"]) == ("en", "en")


@pytest.mark.django_db
def test_a_pair_of_documents_never_checked_shows_no_badge(import_records, editor_client):
    from tests.factories import completed_run

    import_records("unchecked", [{"doc_id": "a", "language": "de", "body": TWIN_BODY},
                                 {"doc_id": "b", "language": "en", "body": TWIN_BODY}])
    run = completed_run("unchecked", near=True, threshold=0.5)
    page = editor_client.get(reverse("review:pair", args=[_twin_pair(run).pk])).content.decode()
    assert "language-mismatch" not in page and "The texts read as" not in page


def test_the_compiled_walk_gives_py3langids_own_answers():
    from bench.langid_choice import samples

    texts = [PERSIAN, ENGLISH, GERMAN, CHINESE, PERSIAN.upper(), "Ｆｕｌｌ－ｗｉｄｔｈ ｔｅｘｔ"] + [
        t for _, _, t in samples(3)]
    for text in texts:
        fast, reference = langcheck.detect(text), langcheck.detect_reference(text)
        assert fast.language == reference.language and abs(fast.confidence - reference.confidence) < 1e-3, text
