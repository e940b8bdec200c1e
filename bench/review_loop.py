"""Benchmark: an editor reviewing with the keyboard alone, in Chromium, as they would.

    .venv/bin/python bench/review_loop.py [--decisions 50] [--baseline PATH_TO_OTHER_CHECKOUT]
    .venv/bin/python bench/review_loop.py --families [--decisions 200]    # pair by pair, by cluster, in bulk

Builds the labelled development corpus (bench/devcorpus.py), screens it, starts gunicorn and drives
Debian's Chromium through Playwright: "Review next", then for each pair the verdict a reader of both texts
would give (the label's; keep-both for unlabelled pairs) with its key; when the page puts the cursor in a
reason box that is empty, it types a short reason, as the editor would have to; then Enter. Prints
keystrokes and seconds per decision (page load to the next pair's page, the editor's reading time left
out). With --baseline, the same is done with the other checkout's code first, side by side.

With --families the corpus is 60 families of copies (2–10 members each, English, Persian, Chinese, from
bench/devcorpus.families) and the same editor decides it three ways, each on a fresh copy: pair by pair (as
above), by cluster (the cluster page: m, Enter for each family) and in bulk (the queue filtered to pairs
suggested merge-entry at confidence ≥ 0.95, the preview, Enter). It prints judgements recorded, keys per
judgement and judgements per minute of the machine's time for each.
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
    parser.add_argument("--families", action="store_true", help="pair by pair, by cluster and in bulk")
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--mode", default="pair", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.decisions, args.mode, args.families)))
        return
    if args.families:
        families_table(args.decisions)
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


def families_table(decisions: int) -> None:
    print(f"{'mode':<12} {'judgements':>10} {'keys':>6} {'keys/judgement':>15} {'judgements/min':>15}")
    for mode in ("pair", "cluster", "bulk"):
        out = subprocess.run([sys.executable, __file__, "--one", str(HERE), "--decisions", str(decisions),
                              "--mode", mode, "--families"], capture_output=True, text=True, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        n = max(r["judgements"], 1)
        print(f"{mode:<12} {r['judgements']:>10} {r['keys']:>6} {r['keys'] / n:>15.2f} "
              f"{60 * r['judgements'] / max(r['seconds'], 1e-9):>15.0f}")


def setup(tree: Path, families: bool = False) -> tuple[int, dict]:
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
    from dedup_site.accounts import password_owned

    password_owned(user=editor)  # the bench plays its owner, who may judge
    folder = Path(os.environ["DEDUP_DATA_DIR"]) / "devcorpus"
    if families:
        folder.mkdir(parents=True, exist_ok=True)
        path, labels = folder / "families.jsonl", []
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in devcorpus.families(60, 7)),
                        encoding="utf-8")
    else:
        path, _ = devcorpus.write(folder, 12, 7)
        _, labels = devcorpus.generate(12, 7)
    upload = uploads.upload_process(upload=uploads.upload_create_from_path(corpus_name="dev", path=path))
    assert upload.status == "complete", upload.problems[:3]
    run = runs.run_execute(run=runs.run_create(corpus=Corpus.objects.get(name="dev"), exact=True, near=True))
    expected = {"|".join(sorted((lab["left_id"], lab["right_id"]))): lab["expected"] for lab in labels}
    return run.pk, expected


def measure(tree: Path, decisions: int, mode: str = "pair", families: bool = False) -> dict:
    os.environ["DEDUP_DATA_DIR"] = tempfile.mkdtemp(prefix="dedup-loop-")
    os.environ["DJANGO_SETTINGS_MODULE"] = "dedup_site.settings"
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # counting judgements while Playwright's loop runs
    os.environ.pop("DATABASE_URL", None)
    sys.path.insert(0, str(tree))
    os.chdir(tree)
    run_id, expected = setup(tree, families)
    from screening.models import CandidatePair

    # In a family corpus every stored pair within a family is a copy; across families, different texts.
    def expected_verdict(left: str, right: str) -> str:
        if families:
            return "merge-entry" if left.split("-")[0] == right.split("-")[0] else "keep-both"
        return expected.get("|".join(sorted((left, right))), "keep-both")

    verdicts = {pk: expected_verdict(left, right) for pk, left, right in
                CandidatePair.objects.filter(run_id=run_id).values_list("pk", "left__doc_id", "right__doc_id")}

    env = dict(os.environ, DJANGO_ALLOWED_HOSTS="127.0.0.1")
    server = subprocess.Popen([sys.executable, "-m", "gunicorn", "dedup_site.wsgi:application", "--bind",
                               f"127.0.0.1:{PORT}", "--workers", "2"], cwd=tree, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(3)
        return {"pair": drive, "cluster": drive_clusters, "bulk": drive_bulk}[mode](run_id, verdicts, decisions)
    finally:
        server.terminate()
        server.wait(10)


BASE = f"http://127.0.0.1:{PORT}"


def _browser(p):
    browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=[
        "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"])
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.goto(f"{BASE}/accounts/login/")
    page.fill("input[name=username]", "editor")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{BASE}/")
    return browser, page


def _judgements() -> int:
    try:
        from review.models import Judgement
    except ImportError:
        return 0
    return Judgement.objects.count()


def drive_clusters(run_id: int, verdicts: dict[int, str], decisions: int) -> dict:
    """Each family on its cluster page: m (the family are copies; the suggested keeper), Enter."""
    from playwright.sync_api import sync_playwright

    keys, started = 0, time.perf_counter()
    with sync_playwright() as p:
        browser, page = _browser(p)
        page.goto(f"{BASE}/review/runs/{run_id}/clusters/next/")
        while "/clusters/" in page.url and _judgements() < decisions:
            page.keyboard.press("m")
            with page.expect_navigation():
                page.keyboard.press("Enter")
            page.wait_for_load_state("load")
            keys += 2
        browser.close()
    return {"judgements": _judgements(), "keys": keys, "seconds": time.perf_counter() - started}


def drive_bulk(run_id: int, verdicts: dict[int, str], decisions: int) -> dict:
    """The queue filtered to confident merge-entry suggestions, the bulk preview, Enter to confirm."""
    from playwright.sync_api import sync_playwright

    started = time.perf_counter()
    with sync_playwright() as p:
        browser, page = _browser(p)
        page.goto(f"{BASE}/review/?run={run_id}&suggestion=merge-entry&min_confidence=0.95")
        with page.expect_navigation():
            page.click("#bulk-form button[type=submit]")  # Preview (merge-entry is the first choice)
        with page.expect_navigation():
            page.keyboard.press("Enter")  # the confirmation button has the focus
        browser.close()
    return {"judgements": _judgements(), "keys": 2, "seconds": time.perf_counter() - started}


def drive(run_id: int, verdicts: dict[int, str], decisions: int) -> dict:
    from playwright.sync_api import sync_playwright

    keys = typed = 0
    times = []
    with sync_playwright() as p:
        browser, page = _browser(p)
        page.goto(f"{BASE}/review/next/?run={run_id}")
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
    total = sum(times)
    times.sort()
    return {"decisions": len(times), "judgements": len(times), "keys": keys, "typed": typed, "seconds": total,
            "median": times[len(times) // 2] if times else 0.0}


if __name__ == "__main__":
    main()
