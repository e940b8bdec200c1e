"""From outside, in Chromium with the browser's language Persian then Chinese: the share of the interface's
words (buttons, labels, headings, table headers, navigation; not documents' text, not names of documents,
users or corpora) still in English on the log-in, home, queue, pair, run, corpus, cluster and evaluation
pages stays within 5 %. The figures per page go to test-artifacts/interface-words.json."""

from __future__ import annotations

import json
import os

import pytest
from django.urls import reverse

from screening.models import CandidatePair
from tests.browser_helpers import CHROMIUM, SHOTS
from tests.factories import PASSWORD, imported_run
from tests.test_cluster_review import cluster_of, family_records
from tests.test_evaluation import seed_setup

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Chromium is not installed (apt-get install chromium)"),
]

# The words shown, outside what is data: documents' text and titles (dir="auto"), code, keys, names of
# documents (their links), of the user (the header), the language names in the switch and what a page marks
# translate="no" (the names of the libraries a run used). A token with a
# digit, _, -, . or : inside is an identifier (demo-A, merge-entry, records.jsonl, SHA-256, char:K), not a
# word of any language. A run of Chinese characters counts as one word, which if anything overstates the
# English share.
COUNT_WORDS = """() => {
  const skip = "script, style, code, kbd, pre, [dir=auto], .pane, .excerpt, .shingles, del, ins," +
    " select[name=language], .whoami > span, a[href*='/documents/'], .crumbs a, td.cut, title, svg text," +
    " [translate=no]";
  const latin = [], other = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const element = node.parentElement;
    if (!element || element.closest(skip) || !element.checkVisibility()) continue;
    for (const token of node.textContent.split(/\\s+/)) {
      const bare = token.replace(/^[^A-Za-z]+|[^A-Za-z]+$/g, "");
      const foreign = /[\\u0600-\\u06FF\\u4E00-\\u9FFF]/.test(token);
      if (/(^|[^A-Za-z])\\.[A-Za-z]/.test(token)) continue;  // a file name or extension (.jsonl)
      if (/^[A-Za-z][A-Za-z'’]*[A-Za-z]$/.test(bare) && !foreign) { latin.push(bare); continue; }
      const letters = token.replace(/[\\u06F0-\\u06F9\\u0660-\\u066C]/g, " ");  // digits are not words
      for (const run of letters.match(/[\\u0600-\\u06FF\\u200C]+|[\\u4E00-\\u9FFF]+/g) || []) other.push(run);
    }
  }
  return {latin, other: other.length};
}"""
# Names that are the same in every language's interface (measures, formats, a protocol), and the test's own
# data (corpus names, language tags, the label set's name). Counted apart: `strict` counts them as English too.
NAMES = {"API", "REST", "LSH", "MinHash", "Jaccard", "UTC", "ZIP", "CSV", "TP", "FP", "FN", "SHA", "JSON"}
DATA = {"zh", "fam", "en", "fa", "labels"}


@pytest.mark.django_db(transaction=True)
def test_at_most_five_percent_of_the_interface_is_english_in_persian_and_chinese(browser, live_server,
                                                                                  import_records, admin_user, editor):
    run, label_set = seed_setup(import_records)
    pair = CandidatePair.objects.filter(run=run).order_by("-jaccard").first()
    family = imported_run(import_records, "fam", family_records([4]), near=True)
    # The review pages as an editor sees them, the screening pages as an admin (with the forms to start runs).
    pages = {
        editor: {
            "home": reverse("screening:corpus_list"),
            "queue": f"{reverse('review:queue')}?run={run.pk}",
            "pair": reverse("review:pair", args=[pair.pk]),
            "cluster": reverse("review:cluster", args=[family.pk, cluster_of(family, "f0-m0")]),
        },
        admin_user: {
            "run": run.get_absolute_url(),
            "corpus": run.corpus.get_absolute_url(),
            "evaluation": f"{reverse('screening:evaluation', args=[run.pk])}?labels={label_set.pk}",
        },
    }
    figures = {}
    for locale in ("fa-IR", "zh-CN"):
        counted = {}
        for user, shown in pages.items():
            context = browser.new_context(locale=locale, viewport={"width": 1280, "height": 720})
            page = context.new_page()
            page.goto(f"{live_server.url}/accounts/login/")
            counted.setdefault("log-in", page.evaluate(COUNT_WORDS))
            page.fill("input[name=username]", user.username)
            page.fill("input[name=password]", PASSWORD)
            page.click("main button[type=submit]")
            page.wait_for_url(f"{live_server.url}/")
            for name, path in shown.items():
                response = page.goto(f"{live_server.url}{path}")
                assert response.status == 200, (name, response.status)
                counted[name] = page.evaluate(COUNT_WORDS)
            context.close()
        for name, words in counted.items():
            english = [w for w in words["latin"] if w not in NAMES and w not in DATA]
            names = [w for w in words["latin"] if w in NAMES]
            total = len(english) + len(names) + words["other"]
            figures[f"{locale} {name}"] = {
                "words": total, "english": len(english), "names": len(names),
                "share": round(len(english) / total, 4), "strict": round((len(english) + len(names)) / total, 4),
                "english_words": sorted(set(english)), "names_shown": sorted(set(names))}
    SHOTS.parent.mkdir(parents=True, exist_ok=True)
    (SHOTS.parent / "interface-words.json").write_text(json.dumps(figures, ensure_ascii=False, indent=1))
    over = {page: f["share"] for page, f in figures.items() if f["share"] > 0.05}
    assert over == {}, json.dumps({p: figures[p] for p in over}, ensure_ascii=False)
