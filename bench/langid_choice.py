"""Benchmark: which language identifier the import uses (issue 38), by accuracy on short real text in
en/fa/ar/ur/zh/ja/ko/de/fr and by speed, and at which confidence a detection counts as confident.

    .venv/bin/python bench/langid_choice.py [--per-bucket 200] [--only py3langid]

Both candidates are measured when installed (`pip install py3langid lingua-language-detector`; the project
pins one of them), each on the same texts, in this process. The texts are real, from the machine:

- translated message catalogs: the system's (/usr/share/locale/<lang>/LC_MESSAGES/*.mo) and those in this
  virtualenv's site-packages (Django's, DRF's, axes', ...: */locale/<lang>/LC_MESSAGES/django.po), their
  msgstr (a translation equal to its msgid is left out), the English side from the msgids;
- the seed documents (../shared/seeds), samples/guides.jsonl and the project's own catalogs (fa, zh_Hans);
- English prose from licence files and module docstrings of the standard library.

Consecutive messages of one catalog are joined into texts of about 25, 60, 150, 400 and 2,000 characters
(the buckets). A text's language is its catalog's. Printed: accuracy per language and bucket, the
fa/ar/ur and zh/ja confusions, the share of right answers among those above each confidence, and the time a
text takes (first 4 KB of the 2,000-character bucket, as the import does).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import sysconfig
import time
from collections import Counter, defaultdict
from pathlib import Path

import polib

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))

from screening.engine import langcheck  # noqa: E402

LANGUAGES = ("en", "fa", "ar", "ur", "zh", "ja", "ko", "de", "fr")
CATALOG_DIRS = {"zh": ("zh_CN", "zh_Hans", "zh-hans", "zh_hans"), "fa": ("fa", "fa_IR"), "ar": ("ar",),
                "ur": ("ur", "ur_PK"), "ja": ("ja",), "ko": ("ko",), "de": ("de",), "fr": ("fr",)}
BUCKETS = (25, 60, 150, 400, 2000)
NEIGHBOURS = ("fa", "ar", "ur", "zh", "ja")  # the confusions short text invites
THRESHOLDS = (0.5, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999)
_MARKUP = re.compile(r"%\([^)]*\)[sdrfi]|%[-#0-9.]*[sdrfiuxXc%]|\{[^}]*\}|<[^>]*>|&[a-z]+;|[_&](?=\w)|\\n|\s+")


def _clean(text: str) -> str:
    return _MARKUP.sub(" ", text).strip()


def _catalog_messages(path: Path) -> tuple[list[str], list[str]]:
    try:
        catalog = polib.mofile(str(path)) if path.suffix == ".mo" else polib.pofile(str(path))
    except (OSError, ValueError, UnicodeDecodeError):
        return [], []
    translated, english = [], []
    for entry in catalog:
        if entry.obsolete or "fuzzy" in entry.flags or not entry.msgstr or entry.msgstr == entry.msgid:
            continue
        translated.append(_clean(entry.msgstr))
        english.append(_clean(entry.msgid))
    return [t for t in translated if len(t) >= 3], [e for e in english if len(e) >= 3]


def _catalogs() -> dict[str, list[list[str]]]:
    """Per language, lists of messages, one list per catalog file (joined only within one catalog)."""
    roots = [Path("/usr/share/locale"), Path(sysconfig.get_paths()["purelib"]), HERE / "locale"]
    found: dict[str, list[list[str]]] = defaultdict(list)
    english: list[list[str]] = []
    for language, names in CATALOG_DIRS.items():
        for root in roots:
            for name in names:
                pattern = f"{name}/LC_MESSAGES/*.[mp]o" if root.name in ("locale",) else \
                    f"**/locale/{name}/LC_MESSAGES/*.[mp]o"
                for path in sorted(root.glob(pattern)):
                    translated, msgids = _catalog_messages(path)
                    if translated:
                        found[language].append(translated)
                    if msgids and language == "de":  # one language's msgids are English enough; once
                        english.append(msgids)
    found["en"] += english
    return found


def _prose() -> dict[str, list[list[str]]]:
    """Longer real text, as paragraphs: seeds, samples, licences and docstrings."""
    found: dict[str, list[list[str]]] = defaultdict(list)
    seeds = HERE.parent / "shared" / "seeds"
    for path in sorted(seeds.glob("*.txt")) if seeds.is_dir() else []:
        text = path.read_text(encoding="utf-8")
        han = sum("\u4e00" <= c <= "\u9fff" for c in text)
        # The seeds' code and JSON blocks are English (ASCII): only the lines written in the seed's script.
        lines = [p for p in map(_clean, text.split("\n")) if sum(c.isalpha() and c > "\x7f" for c in p) > len(p) / 3]
        found["zh" if han > len(text) / 10 else "fa"].append(lines)
    for line in (HERE / "samples" / "guides.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["language"] in LANGUAGES and "tagged" not in record["doc_id"]:  # a planted wrong tag
            found[record["language"]].append([p for p in map(_clean, record["body"].split("\n")) if p])
    site = Path(sysconfig.get_paths()["purelib"])
    for path in sorted(site.glob("*.dist-info/licenses/LICEN[CS]E*"))[:40]:
        found["en"].append([p for p in map(_clean, path.read_text(errors="ignore").split("\n\n")) if p])
    import pydoc

    for name in ("json", "argparse", "collections", "pathlib", "subprocess", "unittest", "logging", "decimal",
                 "email", "http.client", "asyncio", "itertools"):
        doc = pydoc.getdoc(__import__(name, fromlist=["_"])) or ""
        found["en"].append([p for p in map(_clean, doc.split("\n\n")) if len(p) > 20])
    return found


def samples(per_bucket: int, seed: int = 38) -> list[tuple[str, int, str]]:
    """(language, bucket, text): about `per_bucket` texts per language and bucket, each from one source."""
    rng = random.Random(seed)
    sources = _catalogs()
    for language, paragraphs in _prose().items():
        sources[language] += paragraphs
    out = []
    for language in LANGUAGES:
        pools = [p for p in sources.get(language, []) if p]
        for bucket in BUCKETS:
            made, tries = 0, 0
            while made < per_bucket and tries < per_bucket * 20 and pools:
                tries += 1
                pool = rng.choice(pools)
                start = rng.randrange(len(pool))
                parts, size = [], 0
                for message in pool[start:] + pool[:start]:
                    parts.append(message)
                    size += len(message) + 1
                    if size >= bucket:
                        break
                text = " ".join(parts)
                if len(text) < bucket * 0.6:
                    continue
                out.append((language, bucket, text[: max(bucket * 2, bucket + 40)]))
                made += 1
    return out


class Py3langid:
    name = "py3langid"

    def __init__(self) -> None:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier

        self.identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)

    def __call__(self, text: str) -> tuple[str, float]:
        language, probability = self.identifier.classify(text)
        return langcheck.base(language), float(probability)


class Langcheck:
    """py3langid as the project calls it (screening.engine.langcheck): varieties summed under their language."""

    name = "langcheck (py3langid, varieties summed, compiled walk)"

    def __init__(self) -> None:
        langcheck.detect("warm up")

    def __call__(self, text: str) -> tuple[str, float]:
        found = langcheck.detect(text)
        return found.language, found.confidence


class Lingua:
    def __init__(self, low_accuracy: bool = False) -> None:
        from lingua import LanguageDetectorBuilder

        builder = LanguageDetectorBuilder.from_all_languages().with_preloaded_language_models()
        self.detector = (builder.with_low_accuracy_mode() if low_accuracy else builder).build()
        self.name = "lingua (low accuracy)" if low_accuracy else "lingua"

    def __call__(self, text: str) -> tuple[str, float]:
        values = self.detector.compute_language_confidence_values(text)
        if not values:
            return "", 0.0
        top = values[0]
        return top.language.iso_code_639_1.name.lower(), float(top.value)


def detectors(only: str) -> list:
    made = []
    for factory in (Langcheck, Py3langid, Lingua, lambda: Lingua(low_accuracy=True)):
        try:
            start = time.perf_counter()
            detector = factory()
            detector.load_seconds = time.perf_counter() - start
            if not only or detector.name.startswith(only):
                made.append(detector)
        except ImportError as error:
            print(f"(not installed: {error.name})")
    return made


def measure(detector, texts: list[tuple[str, int, str]]) -> None:
    right: Counter = Counter()
    total: Counter = Counter()
    confused: Counter = Counter()
    scored = []  # (confidence, right)
    wrong_but_sure = []
    scored_by_language = []
    seconds: dict[int, float] = defaultdict(float)
    for language, bucket, text in texts:
        start = time.perf_counter()
        got, confidence = detector(text[: langcheck.READ_CHARS])
        seconds[bucket] += time.perf_counter() - start
        ok = langcheck.base(got) == language
        right[language, bucket] += ok
        total[language, bucket] += 1
        scored.append((confidence, ok, bucket))
        scored_by_language.append((confidence, ok, bucket, language))
        if not ok:
            confused[language, got] += 1
            if confidence >= langcheck.CONFIDENT:
                wrong_but_sure.append(f"{language}→{got} {confidence:.4f} {text[:70]!r}")
    print(f"\n== {detector.name}: loaded in {detector.load_seconds:.2f} s")
    print("accuracy   " + "".join(f"{b:>7}" for b in BUCKETS))
    for language in LANGUAGES:
        print(f"  {language:<8} " + "".join(
            f"{right[language, b] / total[language, b]:>7.3f}" if total[language, b] else "      -"
            for b in BUCKETS))
    print("  all      " + "".join(
        f"{sum(right[x, b] for x in LANGUAGES) / max(1, sum(total[x, b] for x in LANGUAGES)):>7.3f}"
        for b in BUCKETS))
    count = Counter(b for _, b, _ in texts)
    print("µs a text  " + "".join(f"{seconds[b] / count[b] * 1e6:>7.0f}" for b in BUCKETS))
    print("confused   " + ", ".join(f"{a}→{b}: {n}" for (a, b), n in confused.most_common(12)))
    print(f"wrong at or above {langcheck.CONFIDENT} ({len(wrong_but_sure)}):")
    for line in wrong_but_sure[:12]:
        print("  " + line)
    for label, keep in (("all buckets", lambda b: True), (">= 150 chars", lambda b: b >= 150)):
        print(f"confident ({label}): threshold  share of texts above  right among them  wrong")
        for threshold in THRESHOLDS:
            above = [ok for c, ok, b in scored if c >= threshold and keep(b)]
            n = sum(1 for _, _, b in scored if keep(b))
            print(f"  {threshold:>7}  {len(above) / n:>8.3f}  {sum(above) / max(1, len(above)):>8.4f}"
                  f"  {len(above) - sum(above):>5}")
    print("fa/ar/ur and zh/ja at 25-60 characters: threshold  share confident  wrong among them")
    for threshold in THRESHOLDS:
        above = [ok for c, ok, b, x in scored_by_language if c >= threshold and b <= 60 and x in NEIGHBOURS]
        n = sum(1 for _, _, b, x in scored_by_language if b <= 60 and x in NEIGHBOURS)
        print(f"  {threshold:>7}  {len(above) / n:>8.3f}  {len(above) - sum(above):>5}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--per-bucket", type=int, default=200)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    texts = samples(args.per_bucket)
    print(f"{len(texts)} texts: " + ", ".join(f"{x} {n}" for x, n in sorted(Counter(t[0] for t in texts).items())))
    for detector in detectors(args.only):
        measure(detector, texts)


if __name__ == "__main__":
    main()
