"""Every interface string marked and translated, the Jinja2 partials included; numbers and dates in the
interface's language (Persian digits, optionally the Jalali calendar); exports the same bytes whatever the
language."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import polib
import pytest
from django.template import engines
from django.test import Client
from django.urls import reverse
from django.utils import translation

from dedup_site.numerals import LocalCount, jalali, local_digits
from review.sheets import sheet_exports, signing
from screening.models import CandidatePair
from tests.factories import copies_run, seed_run

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT / "templates"
CATALOGS = sorted(ROOT.glob("locale/*/LC_MESSAGES/django.po"))

# What a template may show untranslated: names of formats, measures and fields that are the same in every
# language (and the main element's class name, given through a block).
ALLOWED = {"CSV", "UTC", "SHA-256", "Jaccard", "doc_id", "source_id", "TP", "FP", "FN", "wide"}

_BLOCKS = re.compile(r"{%-?\s*(blocktranslate|blocktrans|comment|trans(?=\s+trimmed|\s*-?%}))\b.*?"
                     r"{%-?\s*end\1\s*-?%}", re.S)
_TAGS = re.compile(r"{%.*?%}|{{.*?}}|{#.*?#}", re.S)
_UNREAD = re.compile(r"<(script|style|code|pre|kbd)\b[^>]*>.*?</\1>|<!--.*?-->", re.S)
_SHOWN_ATTRIBUTE = re.compile(r"\b(?:title|placeholder|aria-label|alt)=\"([^\"]*)\"")
_WORD = re.compile(r"[A-Za-z][\w'’-]*[A-Za-z\d]")


def unmarked_words(source: str) -> list[str]:
    """The words a template (Django's or Jinja2's) shows outside translation tags: text between elements and
    the attributes people read (title, placeholder, aria-label, alt). Code and keys (<code>, <kbd>) are not
    the interface's words."""
    text = _TAGS.sub(" ", _BLOCKS.sub(" ", source))
    text = _UNREAD.sub(" ", text)
    chunks = [*_SHOWN_ATTRIBUTE.findall(text), *re.split(r"<[^>]*>", text)]
    return [word for chunk in chunks for word in _WORD.findall(chunk) if word not in ALLOWED]


def test_the_scanner_finds_english_outside_translation_tags():
    source = '<p>{% translate "Saved" %} for you <b title="a hint">{{ n }}</b></p>'
    assert sorted(unmarked_words(source)) == ["for", "hint", "you"]
    assert unmarked_words("{% blocktranslate trimmed %}Run {{ pk }}{% endblocktranslate %} <kbd>Enter</kbd>") == []
    assert unmarked_words('{{ _("Reason") }} <code>doc-content-v1</code> SHA-256 {% trans %}Skip{% endtrans %}') == []


@pytest.mark.parametrize("path", sorted(TEMPLATES.rglob("*.html")), ids=lambda p: str(p.relative_to(TEMPLATES)))
def test_no_template_shows_an_unmarked_english_word(path):
    assert unmarked_words(path.read_text(encoding="utf-8")) == [], "mark it with {% translate %} or _()"


def jinja_messages() -> set[str]:
    """The messages the Jinja2 partials mark (_(), gettext, ngettext, {% trans %}), read by Jinja2's own
    extractor: makemessages reads them only as far as Django's template syntax goes (a plain _("...")), so
    this catches a partial that marks a string in a form makemessages cannot see."""
    env = engines["jinja2"].env
    found = set()
    for path in sorted((TEMPLATES / "jinja2").rglob("*.html")):
        for _line, _function, message in env.extract_translations(path.read_text(encoding="utf-8")):
            found.update(m for m in (message if isinstance(message, tuple) else (message,)) if m)
    return found


@pytest.mark.parametrize("path", CATALOGS, ids=lambda p: p.parts[-3])
def test_the_jinja2_partials_messages_are_in_the_catalogs(path):
    messages = jinja_messages()
    assert len(messages) > 30
    catalog = polib.pofile(str(path))
    translated = {e.msgid for e in catalog if e.translated() and not e.fuzzy and not e.obsolete}
    assert messages - translated == set()


@pytest.mark.django_db
def test_the_pair_page_partials_speak_the_interface_language(import_records, editor):
    pair = CandidatePair.objects.get(run=copies_run(import_records, 1))
    client = Client(headers={"accept-language": "zh-CN"})
    client.force_login(editor)
    page = client.get(reverse("review:pair", args=[pair.pk])).content.decode()
    assert "修订信号" in page and "保留的版本" in page and "撤销我的上一步" in page  # the panes and the verdict bar
    assert "Revision signals" not in page and "Retained version" not in page


def test_persian_digits_only_in_the_persian_interface():
    assert local_digits("12 of 340, 0.915", "fa") == "۱۲ of ۳۴۰, ۰٫۹۱۵"
    assert local_digits("12 of 340, 0.915", "zh-hans") == "12 of 340, 0.915"
    assert local_digits("v1.2.3", "en") == "v1.2.3"


def test_a_count_is_a_number_written_in_the_interface_digits():
    from django.utils import translation

    count = LocalCount(1204)
    with translation.override("fa"):
        percent = "%(n)s" % {"n": count}  # noqa: UP031 - the catalogs' own placeholders
        assert (str(count), f"{count:,}", percent, count + 1) == ("۱۲۰۴", "۱,۲۰۴", "۱۲۰۴", 1205)
        assert translation.ngettext("%(n)s document", "%(n)s documents", LocalCount(1)) % {"n": LocalCount(1)} \
            == translation.ngettext("%(n)s document", "%(n)s documents", 1) % {"n": "۱"}
    with translation.override("zh-hans"):
        assert (str(count), f"{count:,}") == ("1204", "1,204")


def test_jalali_dates():
    assert jalali(dt.datetime(2024, 3, 20, 14, 5), "Y-m-d H:i") == "1403-01-01 14:05"  # Nowruz 1403
    assert jalali(dt.date(2026, 12, 6), "Y-m-d") == "1405-09-15"


@pytest.mark.django_db
def test_the_run_page_writes_its_counts_and_dates_in_persian_digits(import_records, editor, settings):
    run = copies_run(import_records, 3)
    client = Client(headers={"accept-language": "fa-IR"})
    client.force_login(editor)
    page = client.get(run.get_absolute_url()).content.decode()
    assert "<td>سندها</td><td class=\"num\">۶</td>" in page
    created = local_digits(run.created_at.strftime("%Y-%m-%d %H:%M:%S"), "fa")
    assert created in page
    corpus_page = client.get(run.corpus.get_absolute_url()).content.decode()
    size = run.corpus.uploads.get().source.size
    assert f'<td class="num">{local_digits(str(size), "fa")} بایت</td>' in corpus_page  # an upload's size
    # A count inside a sentence with plural forms, and the run's summary, in Persian digits as well.
    count = run.corpus.uploads.get().document_count
    with translation.override("fa"):
        added = translation.ngettext("%(counter)s document added", "%(counter)s documents added", count)
    assert added % {"counter": local_digits(str(count), "fa")} in corpus_page
    assert added % {"counter": count} not in corpus_page
    settings.JALALI_DATES = True
    page = client.get(run.get_absolute_url()).content.decode()
    assert local_digits(jalali(run.created_at, "Y-m-d"), "fa") in page and created not in page
    english = Client(headers={"accept-language": "en"})
    english.force_login(editor)
    page = english.get(run.get_absolute_url()).content.decode()
    assert run.created_at.strftime("%Y-%m-%d %H:%M:%S") in page  # Gregorian and ASCII digits in English


@pytest.mark.django_db
def test_the_run_pages_pair_scores_and_histogram_are_in_persian_digits(import_records, editor):
    run = seed_run(import_records)
    client = Client(headers={"accept-language": "fa-IR"})
    client.force_login(editor)
    page = client.get(run.get_absolute_url()).content.decode()
    pairs = page[page.index('id="pairs"'):]
    assert re.search(r'<td class="num">[۰-۹٫]+</td>', pairs) and not re.search(r'<td class="num">[0-9.]+</td>', pairs)
    ticks = re.findall(r'class="tick"[^>]*>([^<]+)</text>', page)
    assert ticks and all(not re.search("[0-9]", t) for t in ticks), ticks


@pytest.mark.django_db
def test_the_run_summary_is_punctuated_as_its_language_punctuates(import_records):
    from screening import runs

    run = seed_run(import_records)
    with translation.override("fa"):
        persian = runs.run_summary(run)
    with translation.override("zh-hans"):
        chinese = runs.run_summary(run)
    english = runs.run_summary(run)
    assert "؛ " in persian and ";" not in persian and "، " in persian
    assert "；" in chinese and ";" not in chinese
    assert "; " in english and "؛" not in english


@pytest.mark.django_db
def test_verdicts_in_the_queues_bulk_form_are_named_and_shares_are_in_persian_per_cent(import_records, editor):
    from screening.runs import selectors

    run = seed_run(import_records)
    client = Client(headers={"accept-language": "fa-IR"})
    client.force_login(editor)
    page = client.get(reverse("review:queue"), {"run": run.pk}).content.decode()
    with translation.override("fa"):
        keep_both = translation.gettext("keep both")
        assert selectors._share(0.5) == "۵۰٪"
    assert f'<option value="keep-both">{keep_both}</option>' in page
    assert ">keep-both<" not in page
    with translation.override("en"):
        assert selectors._share(0.5) == "50%"


@pytest.mark.django_db
def test_the_policies_are_described_in_the_interfaces_language_their_names_kept_left_to_right(import_records,
                                                                                               admin_user):
    from screening.engine.normalize import POLICIES

    run = seed_run(import_records)
    client = Client(headers={"accept-language": "fa-IR"})
    client.force_login(admin_user)  # who may start a run
    page = client.get(run.corpus.get_absolute_url()).content.decode()
    with translation.override("fa"):
        for policy in POLICIES.values():
            described = translation.gettext(policy.description)
            assert described != policy.description  # translated
            assert f"\u2066{policy.name}\u2069 — {described}" in page


def test_a_shortcut_is_named_by_both_letters_of_its_key_on_a_persian_keyboard():
    from dedup_site.numerals import keycap

    assert [keycap(k, "fa") for k in "kmqvanu"] == ["ن", "پ", "ض", "ر", "ش", "د", "ع"]
    assert keycap("k", "zh-hans") == keycap("k", "en") == keycap("Enter", "fa") == ""


@pytest.mark.parametrize("path", sorted(Path("locale").glob("*/LC_MESSAGES/django.po")))
def test_a_preset_reason_is_translated_by_words_of_its_own(path):
    # A preset reason is recorded in judgements (insert-only, signed): a translation borrowed from another
    # message by a fuzzy match ("the same content bytes") would be a false reason on every decision.
    from review.models import PRESET_REASONS

    entries = [e for e in polib.pofile(str(path)) if e.msgstr]
    for preset in filter(None, PRESET_REASONS.values()):
        (entry,) = [e for e in entries if e.msgid == preset and not e.msgctxt]
        assert [e.msgid for e in entries if e.msgstr == entry.msgstr] == [preset], (path, preset)


@pytest.mark.django_db
def test_a_review_sheet_is_the_same_bytes_in_every_interface_language(reviewed, admin_user, settings):
    settings.JALALI_DATES = True  # the most a language can change in what the interface shows
    built = {}
    for language in ("en", "fa", "zh-hans"):
        with translation.override(language):
            export = sheet_exports.sheet_export_build(
                export=sheet_exports.sheet_export_create(run=reviewed, user=admin_user))
            csv_path, manifest_path = sheet_exports.export_paths(export)
            built[language] = (export, csv_path.read_bytes(), manifest_path.read_bytes())
    # Each file is what the same export gives in English byte for byte (its rows chain through its own
    # number, so two exports never share bytes); the manifests differ only in the export's identity and moment
    # (the trail's hash among them: each export's start is an entry of the trail).
    for language, (export, data, _manifest) in built.items():
        with translation.override("en"):
            lines = signing.csv_lines(export.pk, sheet_exports.sheet_records(
                reviewed, sheet_exports.Selection.from_dict(export.selection)))
            assert b"".join(lines) == data, language

    def without_identity(manifest):
        manifest = json.loads(manifest)
        for key in ("export_id", "exported_at", "csv_file", "csv_sha256", "previous_export",
                    "previous_manifest_sha256", "signature", "trail_rows", "trail_last_entry", "trail_sha256"):
            manifest.pop(key)
        return manifest

    assert without_identity(built["en"][2]) == without_identity(built["fa"][2]) == without_identity(
        built["zh-hans"][2])
    for export, data, manifest in built.values():
        assert not re.search("[۰-۹]", (data + manifest).decode("utf-8")), "no Persian digit in an export"
        assert re.fullmatch(r"20\d\d-\d\d-\d\dT[\d:.]+Z", export.manifest["exported_at"])  # Gregorian, ISO


@pytest.mark.django_db
def test_the_pair_page_and_the_queue_write_scores_in_persian_digits_and_name_past_verdicts(import_records, editor):
    from review import services

    run = copies_run(import_records, 1)
    pair = CandidatePair.objects.get(run=run)
    services.judgement_record(pair=pair, reviewer=editor, verdict="merge-entry", reason="the same text")
    client = Client(headers={"accept-language": "fa"})
    client.force_login(editor)
    page = client.get(reverse("review:pair", args=[pair.pk])).content.decode()
    assert f"<dd>{local_digits(f'{pair.jaccard:.4f}', 'fa')}</dd>" in page
    assert "<strong>ادغام مدخل</strong>" in page and "<strong>merge-entry</strong>" not in page
    queue = client.get(reverse("review:queue") + f"?run={run.pk}").content.decode()
    assert re.search(r'<td class="num">[۰-۹٫]+', queue) and not re.search(r'<td class="num">[0-9.]+', queue)
