"""Every page of the site, as each role sees it, in Persian, Chinese, a pseudo-locale and English, checked by
machine in Chromium: the interface's own words translated (no English word, and in Persian no Latin digit,
outside what is data: document text, names, ids and hashes, which pages mark with `dir`, `<bdi>`, `<code>` or
`translate="no"`); no string left unmarked for translation (the pseudo-locale wraps every message in ⟦ ⟧);
no raw vocabulary key (`merge-entry`, `needs_arbitration`); nothing left of a template (`{n}`, `%(name)s`);
every revision signal reading before → after in the page's direction; every `for`, `aria-describedby` and
`aria-labelledby` pointing at an element; axe-core with no violation, and every colour pair it leaves to review
(an arrow, a chart's text) reading at 4.5:1, worked out in the page (browser_helpers.CONTRAST).

The pages are found by walking the URL configuration, so a new page is swept without being listed here: each
URL argument is filled from the seeded instance by the word before it (`runs/<pk>` a run, `pairs/<pk>` a pair),
and an argument the sweep cannot fill fails it by name. The pages covered go to test-artifacts/sweep.json."""

from __future__ import annotations

import json
import os
import re

import pytest
from django.conf import settings
from django.test import override_settings
from django.urls import URLPattern, URLResolver, get_resolver
from playwright.sync_api import Error as PlaywrightError

from screening.vocabulary import PairState, Verdict
from tests import pseudo_locale
from tests.browser_helpers import CHROMIUM, SHOTS, axe_findings
from tests.factories import PASSWORD

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Chromium is not installed (apt-get install chromium)"),
]

LANGUAGES = {"fa": ("fa-IR,fa;q=0.9", "rtl"), "zh-hans": ("zh-CN,zh;q=0.9", "ltr"),
             pseudo_locale.CODE: (pseudo_locale.CODE, "ltr"), "en": ("en-US,en;q=0.9", "ltr")}
# Not this site's pages: Django's admin (its own translations), the API's JSON, and actions that only POST.
SKIPPED_NAMESPACES = {"admin"}
SKIPPED = {"set_language", "logout", "api:None"}
API_PAGES: set[str] = set()  # the API's docs page is Swagger UI's own, in English only: not swept
# Words that are the same in every language's interface: names of formats, measures and protocols.
NAMES = {"API", "REST", "LSH", "MinHash", "Jaccard", "UTC", "ZIP", "CSV", "JSON", "JSONL", "TXT", "SHA", "Ed25519",
         "OpenAPI", "ISO", "UTF", "BOM", "RFC", "TP", "FP", "FN", "Bearer", "PEM", "Redis", "RQ", "URL", "HTTP",
         "datasketch", "numba", "Django", "shingle", "Cohen", "kappa", "KB", "MB", "GB"}
# Keys a page should name in words: the verdicts and states as stored, field names of the selection.
KEYS = sorted({*(v.value for v in Verdict if "-" in v.value), *(s.value for s in PairState if "_" in s.value),
               "pass_name", "settled_only", "reviews_required", "storage_floor", "final_verdict"})

# What a page shows that is not data, and what is wrong in it. Data: document text and names, ids and hashes,
# which the pages mark (dir, bdi, code, kbd, pre, del/ins, translate="no"), and what the user typed (inputs).
SCAN = """([language, keys]) => {
  const data = "script, style, noscript, template, [dir]:not(html), bdi, code, kbd, pre, samp, del, ins, " +
    "textarea, select[name=language], [translate=no], .pane";
  const shown = [], wrong = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const element = node.parentElement;
    if (!element || !node.data.trim() || !element.checkVisibility()) continue;
    shown.push({text: node.data, data: !!element.closest(data), where: element.outerHTML.slice(0, 160)});
  }
  for (const element of document.querySelectorAll("[placeholder], [aria-label], input[type=submit][value]")) {
    if (!element.checkVisibility() || element.closest(data)) continue;
    for (const text of [element.getAttribute("placeholder"), element.getAttribute("aria-label"),
                        element.type === "submit" ? element.value : null]) {
      if (text) shown.push({text, data: false, where: element.outerHTML.slice(0, 160)});
    }
  }
  // Every id a label or an ARIA attribute names is an element of the page.
  const referring = "label[for], [aria-describedby], [aria-labelledby], [aria-controls]";
  for (const element of document.querySelectorAll(referring)) {
    const ids = [element.getAttribute("for"), element.getAttribute("aria-describedby"),
                 element.getAttribute("aria-labelledby"), element.getAttribute("aria-controls")]
      .filter(Boolean).flatMap(v => v.split(/\\s+/)).filter(Boolean);
    for (const id of ids) {
      if (document.getElementById(id)) continue;
      wrong.push(`points at no element: #${id} from ${element.outerHTML.slice(0, 160)}`);
    }
  }
  // A signal's two values either side of an arrow, drawn in the reading order of the page, the arrow pointing
  // from the first to the second.
  const rtl = document.documentElement.dir === "rtl";
  for (const arrow of document.querySelectorAll(".arrow")) {
    const before = arrow.previousElementSibling, after = arrow.nextElementSibling;
    if (!before || !after || !arrow.checkVisibility()) continue;
    if (!before.matches("bdi, [dir]") || !after.matches("bdi, [dir]")) continue;
    // Where the first value ends and the second begins, on one line (values wrapped apart show no order).
    const bs = before.getClientRects(), as = after.getClientRects();
    if (!bs.length || !as.length) continue;
    const b = rtl ? bs[bs.length - 1] : bs[bs.length - 1], a = as[0];
    if (Math.abs(b.top - a.top) > 4) continue;
    const flipped = getComputedStyle(arrow).transform.startsWith("matrix(-1");
    const right = (arrow.textContent.trim() === "→") !== flipped;
    const firstLeft = b.right <= a.left + 1;
    if (firstLeft === rtl || right !== firstLeft) {
      wrong.push(`signal read backwards: ${arrow.parentElement.outerHTML.slice(0, 200)}`);
    }
  }
  return {shown, wrong};
}"""

LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*[A-Za-z]")
# A token with a digit, _, -, ., : or / inside is an identifier (a file name, doc-content-v1, char:K, SHA-256),
# not a word of any language; nor are the language tags a form gives as examples.
IDENTIFIER = re.compile(r"\S*[A-Za-z0-9][._:/-]\S*[A-Za-z0-9]\S*|\S*[A-Za-z]\d\S*|\.[a-z]+\b")
TAGS = {"fa", "zh", "en"}
LEFT_OVER = re.compile(r"\{\{|\}\}|\{%|%\}|%\(\w+\)[sd]?|\{[a-z_]+\}")


def _outside_messages(shown: list[dict]) -> list[str]:
    """Each text's characters outside the pseudo-locale's ⟦ ⟧, the brackets followed across the text nodes in
    the order the page has them (a message with markup inside spans several nodes)."""
    depth, out = 0, []
    for item in shown:
        bare = []
        for char in item["text"]:
            if char == pseudo_locale.OPEN:
                depth += 1
            elif char == pseudo_locale.CLOSE:
                depth = max(depth - 1, 0)
            elif depth == 0:
                bare.append(char)
        out.append("".join(bare))
    return out


def findings(scan: dict, language: str) -> list[str]:
    """What is wrong in what a page shows, in `language`."""
    out = list(scan["wrong"])
    keys = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, KEYS)) + r")(?![\w-])")
    pseudo = language == pseudo_locale.CODE
    bare_texts = _outside_messages(scan["shown"]) if pseudo else [item["text"] for item in scan["shown"]]
    for item, bare in zip(scan["shown"], bare_texts, strict=True):
        text, where = item["text"], item["where"]
        if item["data"]:
            continue
        if LEFT_OVER.search(text):
            out.append(f"left of a template: {text.strip()[:80]!r} in {where}")
        if key := keys.search(text):
            out.append(f"raw key {key.group()!r}: {text.strip()[:80]!r} in {where}")
        if language == "en":
            continue
        bare = IDENTIFIER.sub(" ", bare)
        english = [w for w in LATIN_WORD.findall(bare) if w not in NAMES and w not in TAGS]
        if english:
            what = "not marked for translation" if pseudo else "English"
            out.append(f"{what} {english[:4]}: {text.strip()[:80]!r} in {where}")
        if language == "fa" and re.search(r"[0-9]", bare):
            out.append(f"Latin digits: {text.strip()[:80]!r} in {where}")
    return out


def _patterns(resolver=None, prefix: str = "", namespace: str = ""):
    """(name, route) of every URL pattern, its namespace first (`review:pair`, `review/pairs/<int:pk>/`)."""
    for entry in (resolver or get_resolver()).url_patterns:
        if isinstance(entry, URLResolver):
            inner = f"{namespace}:{entry.namespace}" if namespace and entry.namespace else entry.namespace or namespace
            yield from _patterns(entry, prefix + str(entry.pattern), inner)
        elif isinstance(entry, URLPattern):
            yield (f"{namespace}:{entry.name}" if namespace else str(entry.name)), prefix + str(entry.pattern)


ARGUMENT = re.compile(r"(?:(?P<noun>[\w-]+)/)?<(?:\w+:)?(?P<name>\w+)>")


def fill(route: str, ids: dict[str, str]) -> str:
    """The route with each argument filled by the object its noun names (`runs/<int:pk>`: a run's id)."""
    def one(match):
        noun, name = match["noun"], match["name"]
        value = ids.get(f"{noun}/{name}", ids.get(name) if name not in ("pk", "name") else None)
        if value is None:
            raise LookupError(f"the sweep has no {noun}/<{name}> to show: add one to its instance")
        return f"{noun}/{value}" if noun else str(value)

    return "/" + ARGUMENT.sub(one, route)


def _instance(import_records):
    """Every kind of object the pages show: a run of the sample guides with every suggestion and signal and its
    clusters, reviewed twice a pair (a dispute, an arbitration), labels and an evaluation, an audit, a sheet
    export, a rejected upload, a signature, users of every role."""
    from review import decisions, selectors, services
    from review.sheets import sheet_exports
    from screening import evaluation
    from screening.evaluation import audit
    from screening.ingest import uploads
    from screening.models import CandidatePair, Corpus, Document
    from tests.factories import completed_run, reviewer
    from tests.test_samples import SAMPLE
    from tests.test_signal_direction_browser import RECORDS

    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()] + RECORDS
    import_records("guides", records)
    run = completed_run("guides", near=True, reviews_required=2, policy="persian-arabic-fold-v1")
    users = {role: reviewer(name, role) for role, name in (("editor", "erin-editor"), ("arbiter", "arty-arbiter"),
                                                           ("admin", "alice-admin"))}
    second = reviewer("ed-editor")
    pairs = list(CandidatePair.objects.filter(run=run).order_by("-jaccard", "pk"))
    disputed, settled, arbitrated = pairs[0], pairs[1], pairs[2]
    services.judgement_record(pair=disputed, reviewer=users["editor"], verdict="merge-entry", reason="the same")
    services.judgement_record(pair=disputed, reviewer=second, verdict="keep-both", reason="two texts")
    for pair in (settled, arbitrated):
        services.judgement_record(pair=pair, reviewer=users["editor"], verdict="merge-entry", reason="the same")
        services.judgement_record(pair=pair, reviewer=second, verdict="valid-revision" if pair == arbitrated
                                  else "merge-entry", reason="a copy")
    services.arbitration_record(pair=arbitrated, arbiter=users["arbiter"], verdict="valid-revision",
                                reason="a new version")
    services.signature_record(reviewer=users["editor"], password=PASSWORD)
    corpus = Corpus.objects.get(name="guides")
    docs = dict(Document.objects.filter(corpus=corpus).values_list("doc_id", "pk"))
    labels = "left_id,right_id,label,reason\n" + "".join(
        f"{p.left.doc_id},{p.right.doc_id},{int(p.suggested_verdict in ('merge-entry',))},guess\n" for p in pairs)
    label_set = evaluation.labelset_import(corpus=corpus, data=labels.encode(), original_name="labels.csv")
    audit.audit_execute(audit=audit.audit_create(run=run, user=users["admin"]))
    export = sheet_exports.sheet_export_build(export=sheet_exports.sheet_export_create(run=run, user=users["admin"]))
    bad = b'{"doc_id": "x1", "language": "en"}\n{"doc_id": "x2", "language": "en", "body": "text", "extra": 1}\n'
    rejected = uploads.upload_process(upload=uploads.upload_create(corpus_name="guides", chunks=[bad], size=len(bad),
                                                                   original_name="broken.jsonl"))
    assert rejected.status == "rejected", rejected.status
    cluster = next(p.cluster for p in pairs if p.cluster is not None)
    plan_filters = selectors.QueueFilter(run=run.pk)
    assert decisions.bulk_plan(flt=plan_filters, reviewer=users["editor"], verdict="keep-both") is not None
    from dedup_site import tokens

    token, _ = tokens.token_create(user=users["admin"], name="nightly", actor=users["admin"])
    ids = {"runs/pk": run.pk, "runs/run_id": run.pk, "pairs/pk": pairs[3].pk, "corpora/name": corpus.name,
           "clusters/number": cluster, "uploads/pk": rejected.pk, "documents/pk": docs["en-guide-v1"],
           "sheets/pk": export.pk, "part": "csv", "audits/pk": audit.audit_latest(run)[0].pk,
           "tokens/pk": token.pk, "users/pk": second.pk, "arbitration/pk": disputed.pk}
    queries = {"screening:evaluation": f"?labels={label_set.pk}", "review:queue": f"?run={run.pk}",
               "review:bulk_preview": f"?run={run.pk}&verdict=keep-both"}
    return users, ids, queries


def _sweep_one(context, url: str, language: str, direction: str, axe: bool) -> tuple[int | str, list[str]]:
    """What one address answers (its status, or why it is not a page) and what is wrong on it, axe-core's
    findings too when `axe`. A tab of its own: a page that goes on navigating, or an error page, leaves
    nothing to the next."""
    page = context.new_page()
    try:
        response = page.goto(url)
    except PlaywrightError as error:  # an empty answer (a 405 to a GET), a download: not a page
        return f"not a page ({str(error).split(chr(10))[0][:80]})", []
    finally:
        if "response" not in locals():
            page.close()
    try:
        if response is None or "text/html" not in response.headers.get("content-type", ""):
            return f"not a page ({response.headers.get('content-type') if response else 'no answer'})", []
        if page.url.split("?")[0] != url.split("?")[0]:
            return f"{response.status}, to {page.url.split('/', 3)[-1]}", []
        found = [] if page.get_attribute("html", "dir") == direction else [f"the page is not {direction}"]
        found += findings(page.evaluate(SCAN, [language, KEYS]), language)
        return response.status, found + (axe_findings(page) if axe and response.status == 200 else [])
    finally:
        page.close()


@pytest.mark.django_db(transaction=True)
def test_every_page_reads_right_in_every_language_for_every_role(browser, live_server, import_records, tmp_path,
                                                                  monkeypatch):
    from django.conf.locale import LANG_INFO

    monkeypatch.setitem(LANG_INFO, pseudo_locale.CODE, {"bidi": False, "code": pseudo_locale.CODE,
                                                        "name": "Pseudo", "name_local": "Pseudo"})
    users, ids, queries = _instance(import_records)
    pages = []
    for name, route in _patterns():
        if name.split(":")[0] in SKIPPED_NAMESPACES or name in SKIPPED or (name.startswith("api:") and
                                                                            name not in API_PAGES):
            continue
        pages.append((name, fill(route, ids) + queries.get(name, "")))
    # While fixing pages: SWEEP_ONLY="review:queue review:pair" and SWEEP_LANGUAGES="fa en-xa" narrow the sweep.
    if only := os.environ.get("SWEEP_ONLY", "").split():
        pages = [(name, path) for name, path in pages if name in only]
    languages = {code: LANGUAGES[code] for code in os.environ.get("SWEEP_LANGUAGES", "").split()} or LANGUAGES
    folder = pseudo_locale.build(tmp_path / "locale")
    covered: dict[str, dict[str, int]] = {}
    problems: list[str] = []
    with override_settings(LANGUAGES=[*settings.LANGUAGES, (pseudo_locale.CODE, "Pseudo")],
                           LOCALE_PATHS=[*settings.LOCALE_PATHS, folder]):
        for language, (accept, direction) in languages.items():
            for role, user in users.items():
                context = browser.new_context(locale=accept.split(",")[0], viewport={"width": 1280, "height": 800},
                                              extra_http_headers={"Accept-Language": accept})
                page = context.new_page()
                page.goto(f"{live_server.url}/accounts/login/")
                if role == "editor":
                    problems += [f"{language} log-in: {f}" for f in
                                 findings(page.evaluate(SCAN, [language, KEYS]), language)]
                page.fill("input[name=username]", user.username)
                page.fill("input[name=password]", PASSWORD)
                page.click("main button[type=submit]")
                page.wait_for_url(f"{live_server.url}/")
                page.close()
                for name, path in pages:
                    # axe-core once a page in each real translation (its checks do not change with the role).
                    axe = language in ("fa", "zh-hans") and not any(
                        covered.get(name, {}).get(f"{language} {other}") == 200 for other in users)
                    outcome, found = _sweep_one(context, live_server.url + path, language, direction, axe)
                    covered.setdefault(name, {})[f"{language} {role}"] = outcome
                    problems += [f"{language} {role} {name}: {f}" for f in found]
                context.close()
    SHOTS.parent.mkdir(parents=True, exist_ok=True)
    (SHOTS.parent / "sweep.json").write_text(json.dumps({"pages": covered, "problems": problems}, ensure_ascii=False,
                                                        indent=1))
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(sorted(set(problems))[:300])


def test_the_pseudo_locale_keeps_placeholders_and_markup():
    assert pseudo_locale.pseudo("Saved {verdict} for %(pair)s <b>now</b>.") == \
        "⟦Šávéd {verdict} fór %(pair)s <b>ñów</b>.⟧"


def test_every_argument_of_a_route_is_filled_by_its_noun():
    assert fill("review/runs/<int:run_id>/clusters/<int:number>/", {"runs/run_id": 3, "clusters/number": 7}) == \
        "/review/runs/3/clusters/7/"
    with pytest.raises(LookupError, match="no widgets/<pk>"):
        fill("widgets/<int:pk>/", {})
