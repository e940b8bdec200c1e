"""The review pages in a real browser: Playwright driving Debian's Chromium (installed by .ci/run)."""

from __future__ import annotations

import os

import pytest

from review.models import PRESET_REASONS, Judgement
from screening.models import CandidatePair
from tests.browser_helpers import CHROMIUM, HOSTILE, login, shot
from tests.factories import completed_run, imported_run, seed_run

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Chromium is not installed (apt-get install chromium)"),
]


@pytest.mark.django_db(transaction=True)
def test_an_editor_reviews_a_pair_with_the_keyboard_alone(browser, live_server, import_records, editor):
    run = seed_run(import_records)
    page, dialogs = login(browser, live_server, editor.username)
    page.goto(f"{live_server.url}/review/next/?run={run.pk}")
    first = CandidatePair.objects.get(pk=int(page.url.split("/pairs/")[1].split("/")[0]))
    shot(page, "review-pair")
    page.keyboard.press("k")  # keep-both, its preset reason filled in
    assert page.input_value("#reason") == PRESET_REASONS["keep-both"]
    page.keyboard.press("m")  # merge-entry: the preset follows the verdict
    assert page.input_value("#reason") == PRESET_REASONS["merge-entry"]
    page.keyboard.press("e")  # a reason of my own instead
    page.keyboard.type("same guide, reformatted")
    page.keyboard.press("Enter")  # save and go to the next pair
    page.wait_for_url(lambda url: f"/pairs/{first.pk}/" not in url and "/pairs/" in url)
    judgement = Judgement.objects.get()
    assert (judgement.pair_id, judgement.verdict, judgement.reason, judgement.retained) == (
        first.pk, "merge-entry", "same guide, reformatted", "both")
    page.keyboard.press("v")
    page.keyboard.press("Escape")
    page.keyboard.press("l")  # retained: left
    page.focus("#reason")
    page.keyboard.type("每周 became 每天")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    second = Judgement.objects.order_by("-id").first()
    assert (second.verdict, second.retained) == ("valid-revision", "left")
    with page.expect_navigation():
        page.keyboard.press("u")  # undo my last decision
    assert Judgement.objects.order_by("-id").first().verdict == "withdrawn"
    shot(page, "review-after-undo")
    assert dialogs == []


@pytest.mark.django_db(transaction=True)
def test_clicking_a_matched_run_scrolls_to_its_partner(browser, live_server, import_records, editor):
    def text(word):
        return "\n".join(f"Paragraph {i}: the sensor reads voltage in volts and logs it {word}." for i in range(80))

    run = imported_run(import_records, "long", [
        {"doc_id": "L1", "language": "en", "body": text("daily")},
        {"doc_id": "L2", "language": "en", "body": "A preface was added here.\n" * 40 + text("hourly")}], near=True)
    page, _ = login(browser, live_server, editor.username)
    page.goto(f"{live_server.url}/review/pairs/{run.pairs.get(pass_name='near').pk}/")
    assert page.locator("#pane-left .run").count() > 40
    left_run = page.locator("#pane-left .run").nth(30)
    number = left_run.get_attribute("data-run")
    left_run.click()
    partner = page.locator(f'#pane-right .run[data-run="{number}"]')
    partner.wait_for(state="visible")
    page.wait_for_timeout(600)
    assert partner.evaluate("el => el.classList.contains('flash')")
    box, pane = partner.bounding_box(), page.locator("#pane-right").bounding_box()
    assert pane["y"] <= box["y"] <= pane["y"] + pane["height"]


@pytest.mark.django_db(transaction=True)
def test_hostile_documents_run_no_script_and_read_as_written(browser, live_server, import_records, editor):
    run = imported_run(import_records, "hostile", [
        {"doc_id": "x1", "language": "en", "title": HOSTILE, "body": "One. " + HOSTILE},
        {"doc_id": "x2", "language": "en", "title": HOSTILE, "body": "Two. " + HOSTILE}], near=True)
    page, dialogs = login(browser, live_server, editor.username)
    pair = run.pairs.get()
    for url in (f"/review/pairs/{pair.pk}/", f"/documents/{pair.left_id}/", "/corpora/hostile/",
                f"/review/?run={run.pk}"):
        page.goto(live_server.url + url)
        page.wait_for_load_state("networkidle")
        assert dialogs == [], url
        assert page.locator("img[src=x]").count() == 0, url
    page.goto(f"{live_server.url}/review/pairs/{pair.pk}/")
    assert "<script>alert(1)</script>" in page.locator("#pane-left").inner_text()
    assert "{{ 7*7 }}" in page.locator("#pane-left").inner_text()
    shot(page, "review-hostile")


@pytest.mark.django_db(transaction=True)
def test_a_hostile_zip_corpus_runs_no_script_on_any_page(browser, live_server, editor, tmp_path):
    import io
    import zipfile

    from django.core.management import call_command

    from screening.ingest import uploads

    rtl = "\u202eevil\u202c"
    members = {
        "<script>alert(1)<\\script>.txt": "First " + HOSTILE,
        '"><img src=x onerror=alert(1)>.txt': "Second " + HOSTILE,
        "javascript:alert(1).txt": "{% csrf_token %} " + rtl + " " + "long line " * 2000,
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name, body in members.items():
            zf.writestr(name, body)
    data = buffer.getvalue()
    upload = uploads.upload_process(upload=uploads.upload_create(
        corpus_name="zip", chunks=[data], size=len(data), original_name="<b>hostile<b>.zip", language="en"))
    assert upload.status == "complete", upload.problems
    run = completed_run("zip", near=True, storage_floor=0.05)
    page, dialogs = login(browser, live_server, editor.username)
    urls = ["/corpora/zip/", f"/runs/{run.pk}/", f"/review/?run={run.pk}"]
    urls += [f"/documents/{pk}/" for pk in run.corpus.documents.values_list("pk", flat=True)]
    urls += [f"/review/pairs/{pk}/" for pk in run.pairs.values_list("pk", flat=True)]
    for url in urls:
        page.goto(live_server.url + url)
        page.wait_for_load_state("networkidle")
        assert dialogs == [] and page.locator("img[src=x]").count() == 0 and page.locator("b").count() == 0, url
    page.goto(f"{live_server.url}/corpora/zip/")
    text = page.locator("main").inner_text()
    assert '"><img src=x onerror=alert(1)>' in text and "<b>hostile<b>.zip" in text and "javascript:alert(1)" in text
    assert page.locator("a[href^='javascript:']").count() == 0
    shot(page, "hostile-zip-corpus")
    out = tmp_path / "pairs.csv"
    call_command("export_pairs", str(run.pk), "--out", str(out))
    assert "=" not in [line[:1] for line in out.read_text(encoding="utf-8").splitlines()]


@pytest.mark.django_db(transaction=True)
def test_n_skips_to_another_pair_and_leaving_a_page_lets_its_lease_go(browser, live_server, import_records, editor):
    from review.models import Lease, Skip

    run = seed_run(import_records)
    page, dialogs = login(browser, live_server, editor.username)
    page.goto(f"{live_server.url}/review/next/?run={run.pk}")
    first = int(page.url.split("/pairs/")[1].split("/")[0])
    assert Lease.objects.filter(pair_id=first, reviewer=editor).exists()
    with page.expect_navigation():
        page.keyboard.press("n")
    second = int(page.url.split("/pairs/")[1].split("/")[0])
    assert second != first and Skip.objects.filter(pair_id=first, reviewer=editor).exists()
    assert not Lease.objects.filter(pair_id=first).exists()
    page.goto(f"{live_server.url}/review/?run={run.pk}")  # left without a decision
    for _ in range(50):
        if not Lease.objects.filter(pair_id=second).exists():
            break
        page.wait_for_timeout(100)
    assert not Lease.objects.filter(pair_id=second).exists()
    assert dialogs == []


@pytest.mark.django_db(transaction=True)
def test_an_admin_creates_a_reviewer_on_the_users_page(browser, live_server, admin_user, django_user_model):
    page, dialogs = login(browser, live_server, admin_user.username)
    page.click("text=Users")
    page.fill("input[name=username]", "nina")
    page.fill("input[name=full_name]", "Nina Noor")
    page.select_option("select[name=role]", "arbiter")
    page.fill("form.card input[name=password]", "a long passphrase 7")
    with page.expect_navigation():
        page.click("form.card button[type=submit]")
    assert "Created \u2068nina\u2069 as arbiter" in page.locator(".messages").inner_text()  # the name set apart
    assert django_user_model.objects.get(username="nina").groups.get().name == "arbiters"
    assert page.locator("select[name=role] option[value=admin]").count() == 0  # an admin cannot make admins
    shot(page, "users-page")
    assert dialogs == []


def _press(page, key: str, code: str, composing: bool = False) -> None:
    """A keystroke as a Persian layout or a Chinese input method sends it (Playwright's keyboard is US only)."""
    page.evaluate("""([key, code, composing]) => document.dispatchEvent(new KeyboardEvent("keydown",
        {key: key, code: code, isComposing: composing, bubbles: true}))""", [key, code, composing])


@pytest.mark.django_db(transaction=True)
def test_shortcuts_work_on_a_persian_layout_and_ignore_an_input_methods_keystrokes(browser, live_server,
                                                                                   import_records, editor):
    run = seed_run(import_records)
    page, dialogs = login(browser, live_server, editor.username)
    page.goto(f"{live_server.url}/review/next/?run={run.pk}")
    checked = 'input[name="verdict"]:checked'
    _press(page, "ن", "KeyK", composing=True)  # a Chinese IME's keystroke while it composes
    assert page.locator(checked).count() == 0
    _press(page, "ن", "KeyK")  # K on a Persian layout
    assert page.locator(checked).get_attribute("value") == "keep-both"
    _press(page, "پ", "KeyM")
    assert page.locator(checked).get_attribute("value") == "merge-entry"
    _press(page, "ل", "KeyL")  # the retained version: left, by position too
    assert page.locator('input[name="retained"]:checked').get_attribute("value") == "left"
    assert dialogs == []
