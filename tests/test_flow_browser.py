"""The whole flow in a real browser, with a real worker process: upload, labels, run, two editors who
disagree, an arbiter, evaluation, a signed sheet that verify_sheet accepts. Screenshots of every page go to
test-artifacts/screenshots/flow-*.png."""

from __future__ import annotations

import json
import os

import pytest
from django.core.management import call_command

from review.models import Arbitration, Judgement
from screening.models import ScreeningRun
from tests.browser_helpers import CHROMIUM, login, shot
from tests.seeds import SEED001

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Chromium is not installed (apt-get install chromium)"),
]
LABELS = "left_id,right_id,label,reason\nA,B,1,reformatted copy\nA,C,0,valid revision\nA,D,0,template\n"


@pytest.mark.django_db(transaction=True)
def test_the_whole_flow(browser, live_server, worker_process, admin_user, editor, editor2, arbiter, tmp_path,
                        capsys):
    worker_process()
    corpus_file = tmp_path / "seed001.jsonl"
    corpus_file.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in SEED001), encoding="utf-8")
    labels_file = tmp_path / "gold.csv"
    labels_file.write_text(LABELS, encoding="utf-8")

    # An admin uploads the corpus and watches the import finish.
    admin, dialogs = login(browser, live_server, admin_user.username)
    shot(admin, "flow-01-corpora")
    admin.fill("input[name=corpus]", "flow")
    admin.set_input_files("input[name=file]", str(corpus_file))
    admin.click("form.upload button[type=submit]")
    admin.wait_for_selector("text=5 documents added", timeout=60_000)
    shot(admin, "flow-02-corpus")

    # ... uploads labels ...
    admin.click("text=Labels (0)")
    admin.fill("input[name=name]", "gold")
    admin.set_input_files("input[name=file]", str(labels_file))
    admin.click("form.card button[type=submit]")
    admin.wait_for_selector("text=Label set gold: 3 pairs, 1 positive.")
    shot(admin, "flow-03-labels")

    # ... starts a run needing two reviews per pair and watches its progress bar to the end.
    admin.goto(f"{live_server.url}/corpora/flow/")
    admin.fill("input[name=reviews_required]", "2")
    admin.click("form.run-form button[type=submit]")
    admin.wait_for_selector(".badge.status-complete", timeout=90_000)
    run = ScreeningRun.objects.get()
    assert run.status == "complete" and run.reviews_required == 2
    shot(admin, "flow-04-run")

    # Two editors review A–B with the keyboard and disagree.
    for user, key, reason in ((editor, "m", "same guide, reformatted"), (editor2, "k", "two channels, keep both")):
        page, _ = login(browser, live_server, user.username)
        page.goto(f"{live_server.url}/review/next/?run={run.pk}")
        assert "A · B" in page.locator(".pair-name").inner_text()
        shot(page, f"flow-05-review-{user.username}")
        page.keyboard.press(key)
        page.keyboard.press("e")  # a reason of my own rather than the preset
        page.keyboard.type(reason)
        with page.expect_navigation():
            page.keyboard.press("Enter")
        page.close()
    assert Judgement.objects.count() == 2

    # An arbiter settles it.
    page, _ = login(browser, live_server, arbiter.username)
    page.goto(f"{live_server.url}/review/arbitration/")
    shot(page, "flow-06-arbitration-queue")
    page.click("text=A · B")
    shot(page, "flow-07-arbitrate")
    page.keyboard.press("m")
    page.keyboard.press("e")
    page.keyboard.type("formatting only")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert Arbitration.objects.get().verdict == "merge-entry"

    # The admin evaluates the run and exports the signed sheet; verify_sheet accepts it.
    admin.goto(f"{live_server.url}/runs/{run.pk}/evaluation/")
    assert "Precision and recall against the threshold" in admin.content()
    shot(admin, "flow-08-evaluation")
    admin.goto(f"{live_server.url}/runs/{run.pk}/")
    admin.click("form[action$='/sheets/'] button[type=submit]")
    admin.wait_for_selector("text=signed manifest", timeout=60_000)
    shot(admin, "flow-09-sheets")
    with admin.expect_download() as csv_download:
        admin.click("text=CSV")
    with admin.expect_download() as manifest_download:
        admin.click("text=signed manifest")
    admin.goto(f"{live_server.url}/review/signing-key/")
    with admin.expect_download() as key_download:
        admin.click("text=Download the public key")
    sheet_csv, manifest, key = tmp_path / "sheet.csv", tmp_path / "sheet.manifest.json", tmp_path / "key.pem"
    csv_download.value.save_as(sheet_csv)
    manifest_download.value.save_as(manifest)
    key_download.value.save_as(key)
    call_command("verify_sheet", str(sheet_csv), "--manifest", str(manifest), "--public-key", str(key))
    assert "VALID: sheet.csv" in capsys.readouterr().out
    rows = sheet_csv.read_text(encoding="utf-8").count('"judgement"') + sheet_csv.read_text().count('"arbitration"')
    assert rows == 3 and dialogs == []
