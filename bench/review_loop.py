"""Benchmark: an editor reviewing 50 pairs with the keyboard alone, in Chromium, as they would.

    .venv/bin/python bench/review_loop.py [--decisions 50] [--baseline PATH_TO_OTHER_CHECKOUT]

Builds the labelled development corpus (bench/devcorpus.py), screens it, starts gunicorn and drives
Debian's Chromium through Playwright: "Review next", then for each pair the verdict a reader of both texts
would give (the label's; keep-both for unlabelled pairs) with its key; when the page puts the cursor in a
reason box that is empty, it types a short reason, as the editor would have to; then Enter. Prints
keystrokes and seconds per decision (page load to the next pair's page, the editor's reading time left
out). With --baseline, the same is done with the other checkout's code first, side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
PORT = 8766
PASSWORD = "review-loop-password-1"  # noqa: S105 - a throwaway account in a throwaway database
REASON = "as labelled"  # what an editor types when a reason must be typed
KEYS = {"keep-both": "k", "merge-entry": "m", "public-quote": "q", "valid-revision": "v"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--decisions", type=int, default=50)
    parser.add_argument("--baseline", type=Path, help="another checkout of the project, measured first")
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.decisions)))
        return
    trees = ([("baseline", args.baseline.resolve())] if args.baseline else []) + [("this checkout", HERE)]
    results = []
    for name, tree in trees:
        out = subprocess.run([sys.executable, __file__, "--one", str(tree), "--decisions", str(args.decisions)],
                             capture_output=True, text=True, check=True)
        results.append((name, json.loads(out.stdout.strip().splitlines()[-1])))
    print(f"{'code':<16} {'decisions':>9} {'keys/decision':>14} {'s/decision':>11} {'median s':>9} {'typed':>6}")
    for name, r in results:
        print(f"{name:<16} {r['decisions']:>9} {r['keys'] / r['decisions']:>14.2f} "
              f"{r['seconds'] / r['decisions']:>11.3f} {r['median']:>9.3f} {r['typed']:>6}")
    if len(results) == 2:
        (_, a), (_, b) = results
        print(f"keys per decision ×{(b['keys'] / b['decisions']) / (a['keys'] / a['decisions']):.2f}, "
              f"seconds per decision ×{(b['seconds'] / b['decisions']) / (a['seconds'] / a['decisions']):.2f}")


def setup(tree: Path) -> tuple[int, dict]:
    """A screened development corpus and an editor; returns the run and the expected verdict per doc pair."""
    import django

    django.setup()
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command

    from bench import devcorpus
    from screening import runs
    from screening.ingest import uploads
    from screening.models import Corpus

    call_command("migrate", verbosity=0)
    call_command("collectstatic", "--noinput", verbosity=0)
    call_command("bootstrap", verbosity=0)
    editor = User.objects.create_user("editor", password=PASSWORD)
    editor.groups.add(Group.objects.get(name="editors"))
    folder = Path(os.environ["DEDUP_DATA_DIR"]) / "devcorpus"
    path, _ = devcorpus.write(folder, 12, 7)
    _, labels = devcorpus.generate(12, 7)
    upload = uploads.upload_process(upload=uploads.upload_create_from_path(corpus_name="dev", path=path))
    assert upload.status == "complete", upload.problems[:3]
    run = runs.run_execute(run=runs.run_create(corpus=Corpus.objects.get(name="dev"), exact=True, near=True))
    expected = {"|".join(sorted((lab["left_id"], lab["right_id"]))): lab["expected"] for lab in labels}
    return run.pk, expected


def measure(tree: Path, decisions: int) -> dict:
    os.environ["DEDUP_DATA_DIR"] = tempfile.mkdtemp(prefix="dedup-loop-")
    os.environ["DJANGO_SETTINGS_MODULE"] = "dedup_site.settings"
    os.environ.pop("DATABASE_URL", None)
    sys.path.insert(0, str(tree))
    os.chdir(tree)
    run_id, expected = setup(tree)
    from screening.models import CandidatePair

    # Read before the browser starts: Playwright's loop makes the ORM refuse to run in this thread.
    verdicts = {pk: expected.get("|".join(sorted((left, right))), "keep-both") for pk, left, right in
                CandidatePair.objects.filter(run_id=run_id).values_list("pk", "left__doc_id", "right__doc_id")}

    env = dict(os.environ, DJANGO_ALLOWED_HOSTS="127.0.0.1")
    server = subprocess.Popen([sys.executable, "-m", "gunicorn", "dedup_site.wsgi:application", "--bind",
                               f"127.0.0.1:{PORT}", "--workers", "2"], cwd=tree, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(3)
        return drive(run_id, verdicts, decisions)
    finally:
        server.terminate()
        server.wait(10)


def drive(run_id: int, verdicts: dict[int, str], decisions: int) -> dict:
    from playwright.sync_api import sync_playwright

    base = f"http://127.0.0.1:{PORT}"
    keys = typed = 0
    times = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"])
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.goto(f"{base}/accounts/login/")
        page.fill("input[name=username]", "editor")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(f"{base}/")
        page.goto(f"{base}/review/next/?run={run_id}")
        for _ in range(decisions):
            if "/pairs/" not in page.url:
                break
            started = time.perf_counter()
            pk = int(page.url.split("/pairs/")[1].split("/")[0])
            verdict = verdicts[pk]
            page.keyboard.press(KEYS[verdict])
            keys += 1
            if page.evaluate("() => { const e = document.activeElement; return !!e && "
                             "(e.tagName === 'TEXTAREA' || (e.tagName === 'INPUT' && e.type === 'text')) "
                             "&& !e.value; }"):
                page.keyboard.type(REASON)
                keys += len(REASON)
                typed += 1
            with page.expect_navigation():
                page.keyboard.press("Enter")
            keys += 1
            page.wait_for_load_state("load")
            times.append(time.perf_counter() - started)
        browser.close()
    times.sort()
    return {"decisions": len(times), "keys": keys, "typed": typed, "seconds": sum(times),
            "median": times[len(times) // 2] if times else 0.0}


if __name__ == "__main__":
    main()
