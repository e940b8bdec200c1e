"""The interface in Persian and Chinese: the language from the browser or the switch, right to left in
Persian, the review's words from the vocabulary translated, and catalogs with nothing left untranslated."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import polib
import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from review import services
from screening.models import CandidatePair
from tests.factories import copies_run

ROOT = Path(__file__).resolve().parent.parent
CATALOGS = sorted(ROOT.glob("locale/*/LC_MESSAGES/django.po"))


@pytest.mark.django_db
@pytest.mark.parametrize(("accept", "lang", "direction", "word"), [
    ("fa-IR,fa;q=0.9", "fa", "rtl", "ورود"),
    ("zh-CN,zh;q=0.9", "zh-hans", "ltr", "登录"),
    ("en-US", "en", "ltr", "Log in"),
])
def test_the_log_in_page_follows_the_browsers_language(accept, lang, direction, word):
    page = Client(headers={"accept-language": accept}).get(reverse("login")).content.decode()
    assert f'<html lang="{lang}" dir="{direction}">' in page and word in page


@pytest.mark.django_db
def test_the_switch_in_the_header_changes_the_language(editor_client):
    editor_client.post(reverse("set_language"), {"language": "fa", "next": "/"})
    page = editor_client.get(reverse("screening:corpus_list")).content.decode()
    assert 'dir="rtl"' in page and "پیکره‌ها" in page
    # Each language named in its own words: someone who landed in Persian by mistake still finds "English".
    assert all(f">{name}</option>" in page for name in ("English", "فارسی", "简体中文"))


@pytest.mark.django_db
def test_a_saved_verdict_is_named_in_the_editors_language_in_the_message(import_records, editor):
    pair = CandidatePair.objects.get(run=copies_run(import_records, 1))
    client = Client(headers={"accept-language": "fa"})
    client.force_login(editor)
    post = {"verdict": "merge-entry", "reason": "the same text", "retained": "left"}
    page = client.post(reverse("review:judge", args=[pair.pk]), post, follow=True).content.decode()
    assert "ادغام مدخل" in page and "merge-entry برای" not in page


def test_a_revision_signal_among_the_reasons_isolates_each_value_beside_a_turning_arrow():
    from django.utils import translation

    from screening.runs.reasons import shown_reason

    drawn = '<bdi>12 V</bdi> <span class="arrow">→</span> <bdi>15 &lt;V&gt;</bdi>'
    with translation.override("fa"):
        assert shown_reason("number 12 V → 15 <V>") == f"عدد {drawn}"  # site.css turns the arrow round
    with translation.override("zh-hans"):
        assert shown_reason("number 12 V → 15 <V>") == f"数字 {drawn}"


@pytest.mark.django_db
def test_the_verdicts_are_named_in_the_editors_language(import_records, editor):
    pair = CandidatePair.objects.get(run=copies_run(import_records, 1))
    client = Client(headers={"accept-language": "zh-CN"})
    client.force_login(editor)
    page = client.get(reverse("review:pair", args=[pair.pk])).content.decode()
    assert all(label in page for label in ("合并条目", "两者都保留", "有效修订", "公开引用"))
    assert 'value="merge-entry"' in page  # keys stay as they are



@pytest.mark.django_db
def test_a_refusal_shown_on_the_pair_page_comes_in_the_browsers_language(import_records, editor, editor2):
    """A service's refusal ("Not saved: ...") is worded in the request's language; English stays the source."""
    pair = CandidatePair.objects.get(run=copies_run(import_records, 1))
    services.judgement_record(pair=pair, reviewer=editor, verdict="merge-entry", reason="the same text")
    post = {"verdict": "keep-both", "reason": "different", "retained": "both"}
    for accept, words, english in (("fa", "بازبین لازم خود را دارد", False), ("en", "reviewer(s) it needs", True)):
        client = Client(headers={"accept-language": accept})
        client.force_login(editor2)
        page = client.post(reverse("review:judge", args=[pair.pk]), post, follow=True).content.decode()
        assert words in page and ("reviewer(s) it needs" in page) == english, accept


@pytest.mark.parametrize("path", CATALOGS, ids=lambda p: p.parts[-3])
def test_every_catalog_entry_is_translated_and_none_is_fuzzy(path):
    catalog = polib.pofile(str(path))
    assert [e.msgid for e in catalog.untranslated_entries()] == []
    assert [e.msgid for e in catalog.fuzzy_entries()] == []


def test_there_are_catalogs_for_persian_and_chinese():
    assert {p.parts[-3] for p in CATALOGS} == {"fa", "zh_Hans"}


@pytest.mark.skipif(shutil.which("xgettext") is None, reason="GNU gettext is not installed (.ci/run installs it)")
def test_the_catalogs_hold_every_marked_string(tmp_path, settings, monkeypatch):
    # On a copy of the sources: makemessages writes into the catalogs it finds, never the committed ones here.
    for folder in ("dedup_site", "screening", "review", "templates", "static"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__", "*.mo"))
    settings.LOCALE_PATHS = [tmp_path / "locale"]
    monkeypatch.chdir(tmp_path)
    call_command("makemessages", locale=["fa"], no_obsolete=True, verbosity=0)
    fresh = {e.msgid for e in polib.pofile(str(tmp_path / "locale" / "fa" / "LC_MESSAGES" / "django.po"))}
    for path in CATALOGS:
        committed = {e.msgid for e in polib.pofile(str(path)) if not e.obsolete}
        assert fresh - committed == set(), f"run makemessages and translate into {path.parts[-3]}"
        assert committed - fresh == set(), f"{path.parts[-3]} holds messages no longer used"


@pytest.mark.django_db
def test_a_users_chosen_language_comes_back_at_every_log_in_whatever_the_browser(editor):
    from tests.factories import PASSWORD

    first = Client(headers={"accept-language": "en-US"})
    first.force_login(editor)
    first.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    later = Client(headers={"accept-language": "fa-IR"})  # another browser, another day
    assert later.post(reverse("login"), {"username": editor.username, "password": PASSWORD}).status_code == 302
    page = later.get(reverse("screening:corpus_list")).content.decode()
    assert '<html lang="zh-hans" dir="ltr">' in page and "语料库" in page


@pytest.mark.django_db
def test_the_account_page_offers_the_language_choice(editor_client):
    page = editor_client.get(reverse("password_change")).content.decode()
    assert 'id="language-preference"' in page and 'value="fa" lang="fa"' in page


def test_the_stylesheet_mirrors_in_a_right_to_left_language():
    css = (ROOT / "static" / "css" / "site.css").read_text(encoding="utf-8")
    physical = re.findall(r"(?:margin|padding|border)-(?:left|right)|(?<![\w-])(?:left|right)\s*:|"
                          r"text-align:\s*(?:left|right)|float:\s*(?:left|right)", css)
    assert physical == [], "use logical properties (margin-inline-start, inset-inline-end, text-align: start)"


@pytest.mark.parametrize("lang", ["fa", "zh-hans"])
def test_every_fixed_reason_the_rules_write_is_shown_in_the_editors_language(lang):
    import inspect

    from django.utils import translation

    from screening.engine import overlap, suggest
    from screening.runs import reasons

    # The rules' own words: each quoted phrase of the suggestion and overlap modules that reasons.py knows.
    written = set(re.findall(r'"([a-z][^"{}%]+)"', inspect.getsource(suggest) + inspect.getsource(overlap)))
    fixed = [text for text in reasons._FIXED if text in written]
    assert "it stands in quotation marks" in fixed and len(fixed) >= 8
    with translation.override(lang):
        assert all(reasons.shown_reason(text) != text for text in fixed)


@pytest.mark.django_db
def test_an_arbiter_reads_a_default_preset_in_their_language_with_the_reviewers_words_on_hover(
        import_records, editor, editor2, arbiter):
    from django.utils import translation

    from review.models import PRESET_REASONS

    pair = CandidatePair.objects.get(run=copies_run(import_records, 1, reviews_required=2))
    with translation.override("fa"):
        persian = translation.gettext(PRESET_REASONS["merge-entry"])
    services.judgement_record(pair=pair, reviewer=editor, verdict="merge-entry", reason=persian)
    services.judgement_record(pair=pair, reviewer=editor2, verdict="keep-both", reason="my own words")
    client = Client(headers={"accept-language": "en"})
    client.force_login(arbiter)
    page = client.get(reverse("review:arbitrate", args=[pair.pk])).content.decode()
    assert f'<bdi title="{persian}">{PRESET_REASONS["merge-entry"]}</bdi>' in page
    assert "<bdi>my own words</bdi>" in page


def test_a_negative_figure_keeps_its_minus_before_its_digits_in_persian():
    from dedup_site.numerals import local_digits

    assert local_digits("-0.250", "fa") == "\u2066-۰٫۲۵۰\u2069"  # isolated left to right: −0.250, never 0.250−
    assert local_digits("0.250", "fa") == "۰٫۲۵۰" and local_digits("-0.250", "en") == "-0.250"


@pytest.mark.django_db
@pytest.mark.parametrize(("language", "shown"), [("fa", "۲۰۲۳-۰۸-۱۴ ۲۰:۲۱"), ("en", "2023-08-14 20:21")])
def test_when_a_document_was_collected_reads_as_a_date_in_the_pages_language(import_records, editor, language,
                                                                          shown):
    import_records("dated", [{"doc_id": d, "language": "en", "collected_at": "2023-08-14T20:21:05Z",
                              "body": "the same words of a guide to the sensor " * 6} for d in ("a", "b")])
    from tests.factories import completed_run

    pair = CandidatePair.objects.get(run=completed_run("dated"))
    client = Client(headers={"accept-language": language})
    client.force_login(editor)
    page = client.get(reverse("review:pair", args=[pair.pk])).content.decode()
    assert shown in page and "2023-08-14T20:21" not in page
    document = client.get(reverse("screening:document_detail", args=[pair.left_id])).content.decode()
    assert shown in document and "T20:21" not in document


@pytest.mark.django_db
def test_a_bulk_and_a_cluster_decision_are_told_in_the_editors_words_and_digits(import_records, editor):
    from tests.factories import imported_run
    from tests.test_cluster_review import cluster_of, doc, family_records

    run = imported_run(import_records, "fam", family_records([3, 2]), near=True)
    client = Client(headers={"accept-language": "fa"})
    client.force_login(editor)
    number = cluster_of(run, "f0-m0")
    page = client.post(reverse("review:cluster_decide", args=[run.pk, number]),
                       {"keeper": doc(run, "f0-m0"), "verdict": "merge-entry", "reason": "یکی"}, follow=True)
    told = re.sub("\u2068[^\u2069]*\u2069", "", " ".join(str(m) for m in page.context["messages"]))  # ids apart
    assert "ادغام مدخل" in told and "merge-entry" not in told and not re.search(r"[0-9]", told), told
    preview = client.get(reverse("review:bulk_preview"), {"run": run.pk, "verdict": "keep-both"})
    token = preview.context["plan"].token
    page = client.post(f"{reverse('review:bulk_confirm')}?run={run.pk}",
                       {"verdict": "keep-both", "token": token, "reason": "دو سند"}, follow=True)
    told = re.sub("\u2068[^\u2069]*\u2069", "", " ".join(str(m) for m in page.context["messages"]))
    assert "نگه‌داشتن هر دو" in told and "keep-both" not in told and not re.search(r"[0-9]", told), told


@pytest.mark.django_db
def test_an_uploads_problems_are_said_in_the_readers_language_from_their_codes(admin_user):
    from screening.ingest import uploads

    bad = b'{"doc_id": "x1", "language": "en"}\n{"doc_id": "x2", "language": "en", "body": "t", "extra": 1}\n'
    upload = uploads.upload_process(upload=uploads.upload_create(corpus_name="bad", chunks=[bad], size=len(bad),
                                                                 original_name="broken.jsonl"))
    assert upload.problems[0] == "broken.jsonl line 1, field body: is required"  # stored in English, as before
    client = Client(headers={"accept-language": "fa"})
    client.force_login(admin_user)
    page = client.get(reverse("screening:corpus_detail", args=["bad"])).content.decode()
    assert "<bdi>broken.jsonl</bdi>، سطر ۲، فیلد <bdi>extra</bdi>: فیلد ناشناخته" in page
    assert "لازم است" in page and "is required" not in page and "unknown field" not in page
