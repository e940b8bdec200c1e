"""A labelled development corpus in English, Persian and Chinese, built from real text on this machine: the
translation catalogs under /usr/share/locale (English source strings and their Persian and Chinese
translations). Every kind of pair the product must tell apart, labelled with what a reviewer would decide:

    copy-exact, copy-format, copy-edited, copy-reordered → merge-entry
    revision (a number, date, month, unit, sign or negation changed; same source, next version) → valid-revision
    template (two different texts under one long boilerplate) → keep-both
    quote (a short text quoting a paragraph of a longer one) → public-quote
    twin (the same text under two language tags) → merge-entry, flagged

Deterministic for a seed. `generate()` returns (records, labels); `write()` writes records.jsonl and
labels.csv (left_id, right_id, label, reason, split) for `import_corpus` / `import_labels`, plus kinds.csv.
"""

from __future__ import annotations

import csv
import gettext
import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path

LOCALE = Path("/usr/share/locale")
LANGS = {"en": "en", "fa": "fa", "zh": "zh_CN"}
TWIN_TAG = {"en": "en-us", "fa": "fa-ir", "zh": "zh-hans"}
KINDS = {
    "copy-exact": "merge-entry", "copy-format": "merge-entry", "copy-edited": "merge-entry",
    "copy-reordered": "merge-entry", "revision": "valid-revision", "template": "keep-both",
    "quote": "public-quote", "twin": "merge-entry",
}
_PLACEHOLDER = re.compile(r"%[-#0-9.]*[a-zA-Z]|\{[^}]*\}|<[^>]+>|_(?=\w)|&(?=\w)|\\n")
FA_DIGITS = str.maketrans("0123456789", "۰۱۲۳۴۵۶۷۸۹")

# Fact sentences: the details a valid revision changes. {slots} are filled per document.
FACTS = {
    "en": [
        "The device is rated at {n} {unit} and is checked every {k} {period}.",
        "This guide was last updated on {date}.",
        "The next review is planned for {month} {year}.",
        "This option is {neg}available on older systems.",
        "Keep the temperature between {sign}{a} °C and {b} °C.",
        "Install {word} copies of the tool before the upgrade.",
    ],
    "fa": [
        "ولتاژ این دستگاه {n} {unit} است و هر {k} {period} بررسی می\u200cشود.",
        "این راهنما در تاریخ {date} به\u200cروز شد.",
        "بازبینی بعدی در {month} {year} انجام می\u200cشود.",
        "این گزینه در سیستم\u200cهای قدیمی در دسترس {neg}.",
        "دما باید بین {sign}{a} و {b} درجه باشد.",
        "پیش از ارتقا {word} نسخه از ابزار را نصب کنید.",
    ],
    "zh": [
        "该设备的额定电压为{n}{unit}，每{k}{period}检查一次。",
        "本指南最后更新于{date}。",
        "下次审查计划在{month}进行。",
        "此选项在旧系统上{neg}可用。",
        "温度应保持在{sign}{a}到{b}摄氏度之间。",
        "升级前请安装{word}份工具。",
    ],
}
SLOTS = {
    "en": {"unit": ["V", "mV"], "period": ["days", "weeks", "months"], "neg": ["", "not "],
           "word": ["two", "three", "four", "five"],
           "month": ["January", "March", "May", "June", "September", "November"]},
    "fa": {"unit": ["ولت", "میلی\u200cولت"], "period": ["روز", "هفته", "ماه"], "neg": ["است", "نیست"],
           "word": ["دو", "سه", "چهار", "پنج"], "month": ["فروردین", "خرداد", "مهر", "آبان", "آذر", "اسفند"]},
    "zh": {"unit": ["伏", "毫伏"], "period": ["天", "周", "月"], "neg": ["", "不"],
           "word": ["两", "三", "四", "五"], "month": ["三月", "五月", "六月", "九月", "十一月"]},
}
BOILERPLATE = {
    "en": ("This document is distributed in the hope that it will be useful, but without any warranty; without "
           "even the implied warranty of merchantability or fitness for a particular purpose. Redistribution and "
           "use in source and binary forms, with or without modification, are permitted provided that the "
           "copyright notice and this list of conditions are retained in all copies and substantial portions."),
    "fa": ("این سند به این امید منتشر می\u200cشود که سودمند باشد، اما بدون هیچ ضمانتی؛ حتی بدون ضمانت ضمنی "
           "قابلیت فروش یا مناسب بودن برای هدفی خاص. بازنشر و استفاده به شکل متن یا دودویی، با تغییر یا بدون "
           "تغییر، مجاز است به شرط آن که اعلان حق نشر و این فهرست شرایط در همهٔ نسخه\u200cها و بخش\u200cهای "
           "عمدهٔ آن حفظ شود."),
    "zh": ("发布本文档是希望它能有所帮助，但不提供任何担保；甚至不提供适销性或适用于特定用途的默示担保。"
           "无论是否修改，均允许以源代码或二进制形式重新分发和使用，但须在所有副本及其重要部分中保留版权声明"
           "和本条件列表。"),
}


def _clean(text: str) -> str:
    text = _PLACEHOLDER.sub("", text).replace("\n", " ")
    return " ".join(text.split())


def catalog_texts(lang: str, minimum: int) -> list[str]:
    """Translated (fa, zh) or source (en) strings of the machine's catalogs, cleaned, without duplicates."""
    seen, out = set(), []
    source = LANGS["zh"] if lang == "en" else LANGS[lang]
    for path in sorted((LOCALE / source / "LC_MESSAGES").glob("*.mo")):
        try:
            with open(path, "rb") as f:
                catalog = gettext.GNUTranslations(f)._catalog
        except (OSError, ValueError, UnicodeDecodeError):
            continue
        for key, value in catalog.items():
            if not isinstance(key, str) or not key or not isinstance(value, str):
                continue
            text = _clean(key if lang == "en" else value)
            if len(text) >= minimum and text not in seen and not text.startswith(("Usage", "用法")):
                seen.add(text)
                out.append(text)
    return out


@dataclass
class Doc:
    doc_id: str
    lang: str
    paragraphs: list[str]
    facts: list[str] = field(default_factory=list)  # the fact sentences, also inside paragraphs
    slots: dict = field(default_factory=dict)
    source_id: str = ""
    version: str = "1"
    collected_at: str = "2025-01-10"
    title: str = ""
    language: str = ""

    @property
    def body(self) -> str:
        return "\n\n".join(self.paragraphs)

    def record(self) -> dict:
        return {"doc_id": self.doc_id, "source_id": self.source_id or self.doc_id, "version": self.version,
                "language": self.language or self.lang, "title": self.title, "body": self.body,
                "collected_at": self.collected_at}


class Builder:
    def __init__(self, seed: int = 7):
        self.rng = random.Random(seed)
        self.texts = {lang: catalog_texts(lang, 12 if lang == "fa" else 20) for lang in LANGS}
        for texts in self.texts.values():
            self.rng.shuffle(texts)
        self.cursor = dict.fromkeys(LANGS, 0)
        self.count = 0

    def _take(self, lang: str, n: int) -> list[str]:
        texts, start = self.texts[lang], self.cursor[lang]
        self.cursor[lang] = start + n
        return [texts[(start + i) % len(texts)] for i in range(n)]

    def _slots(self, lang: str) -> dict:
        rng, options = self.rng, SLOTS[lang]
        year = rng.randint(2019, 2026) if lang != "fa" else rng.randint(1398, 1405)
        date = (f"{year}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}" if lang != "fa"
                else f"{year}/{rng.randint(1, 12):02d}/{rng.randint(1, 29):02d}")
        return {"n": rng.choice([5, 12, 24, 48, 110, 220]), "k": rng.randint(2, 9), "a": rng.randint(2, 15),
                "b": rng.randint(20, 45), "sign": rng.choice(["", "-"]), "year": year, "date": date,
                **{name: rng.choice(values) for name, values in options.items()}}

    def _fact(self, lang: str, index: int, slots: dict) -> str:
        text = FACTS[lang][index].format(**slots)
        return text.translate(FA_DIGITS) if lang == "fa" and self.rng.random() < 0.5 else text

    def document(self, lang: str, paragraphs: int = 4) -> Doc:
        """A new text: paragraphs of catalog strings, two or three fact sentences among them."""
        self.count += 1
        per = 3 if lang == "fa" else 2
        paras = [" ".join(self._take(lang, per + self.rng.randint(0, 2))) for _ in range(paragraphs)]
        slots = self._slots(lang)
        chosen = self.rng.sample(range(len(FACTS[lang])), self.rng.randint(2, 3))
        facts = [self._fact(lang, i, slots) for i in chosen]
        slots["written"] = dict(zip(chosen, facts, strict=True))  # each fact as written, digits and all
        for fact in facts:
            i = self.rng.randrange(len(paras))
            paras[i] = paras[i] + (" " if lang != "zh" else "") + fact
        title = self._take(lang, 1)[0][:60]
        return Doc(f"{lang}-{self.count:05d}", lang, paras, facts, {"chosen": chosen, **slots}, title=title)


# --- the pair kinds ----------------------------------------------------------------------------------


def _derived(builder: Builder, base: Doc, paragraphs: list[str], *, source: str = "", version: str = "1",
             collected_at: str = "2025-03-01", language: str = "") -> Doc:
    builder.count += 1
    return Doc(f"{base.lang}-{builder.count:05d}", base.lang, paragraphs, base.facts, base.slots,
               source_id=source, version=version, collected_at=collected_at, title=base.title,
               language=language)


def format_only(rng: random.Random, doc: Doc) -> list[str]:
    """The same text, written differently: spacing, line breaks, case, width, punctuation, digits, letters."""
    out = []
    for p in doc.paragraphs:
        if doc.lang == "en":
            p = p.upper() if rng.random() < 0.3 else p
            p = re.sub(r"[A-Za-z]{4,}", lambda m: "".join(chr(ord(c) + 0xFEE0) for c in m.group())
                       if rng.random() < 0.05 else m.group(), p)
        elif doc.lang == "zh":
            p = p.replace("，", ", ").replace("。", ". ") if rng.random() < 0.5 else p
            p = re.sub(r"([\u4e00-\u9fff])([A-Za-z0-9])", r"\1 \2", p)
        else:
            p = p.translate(FA_DIGITS) if rng.random() < 0.5 else p.translate(str.maketrans("۰۱۲۳۴۵۶۷۸۹", "0123456789"))
            p = p.replace("ی", "ي").replace("ک", "ك") if rng.random() < 0.5 else p.replace("\u200c", "")
        words = p.split(" ")
        out.append("\n".join(" ".join(words[i:i + 9]) for i in range(0, len(words), 9)) + "  ")
    return out


# Words a light edit leaves alone: changing them would be a revision (negations, numbers, units, months).
KEEP = {"not", "no", "never", "without", "cannot", "none", "نه", "نیست", "بدون", "هیچ", "نمی", "نباید",
        *"不没无未非别勿否", *"一二两三四五六七八九十百千万月年日天周伏毫",
        *(v for options in SLOTS.values() for values in options.values() for v in values)}


def light_edit(rng: random.Random, doc: Doc) -> list[str]:
    """A few words changed or dropped, no detail a revision would change (numbers, units, dates...)."""
    paras = list(doc.paragraphs)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(paras))
        if doc.lang == "zh":
            chars = [j for j, c in enumerate(paras[i]) if "\u4e00" <= c <= "\u9fff" and c not in KEEP]
            if len(chars) > 4:
                j = rng.choice(chars[:len(chars) // 2])
                paras[i] = paras[i][:j] + paras[i][j + 1:]
            continue
        words = paras[i].split(" ")
        candidates = [j for j, w in enumerate(words) if w.isalpha() and len(w) > 3 and w not in KEEP]
        if candidates:
            j = rng.choice(candidates[: max(1, len(candidates) // 2)])
            words[j] = rng.choice([w for w in words if w.isalpha() and w not in KEEP] or [words[j]]) \
                if rng.random() < 0.5 else ""
            paras[i] = " ".join(w for w in words if w)
    return paras


def revise(rng: random.Random, builder: Builder, doc: Doc) -> tuple[list[str], str]:
    """The same text with one detail of a fact sentence changed; returns the paragraphs and what changed."""
    lang, slots = doc.lang, dict(doc.slots)
    index = rng.choice(slots["chosen"])
    changes = {0: rng.choice(["n", "unit", "period"]), 1: "date", 2: "month", 3: "neg", 4: "sign", 5: "word"}
    change = changes[index]
    options = SLOTS[lang]
    if change == "n":
        slots["n"] = rng.choice([v for v in (5, 12, 24, 48, 110, 220) if v != slots["n"]])
    elif change == "date":
        y, m, d = re.split(r"[-/]", slots["date"])
        slots["date"] = slots["date"].replace(f"{m}", f"{(int(m) % 12) + 1:02d}", 1)
    elif change == "sign":
        slots["sign"] = "" if slots["sign"] else "-"
    else:
        slots[change] = rng.choice([v for v in options[change] if v != slots[change]])
    old = doc.slots["written"][index]
    new = FACTS[lang][index].format(**slots)
    if any("۰" <= c <= "۹" for c in old):
        new = new.translate(FA_DIGITS)
    paras = [p.replace(old, new) for p in doc.paragraphs]
    assert paras != doc.paragraphs, (old, new)
    return paras, change


def generate(pairs_per_kind: int = 150, seed: int = 7) -> tuple[list[dict], list[dict]]:
    """Records and labels: `pairs_per_kind` pairs of every kind, four copy kinds, spread over 3 languages."""
    builder, rng = Builder(seed), random.Random(seed + 1)
    records, labels = [], []

    def label(a: Doc, b: Doc, kind: str, note: str = "") -> None:
        labels.append({"left_id": a.doc_id, "right_id": b.doc_id, "kind": kind, "expected": KINDS[kind],
                       "label": int(KINDS[kind] == "merge-entry"), "language": a.lang, "note": note,
                       "family": a.source_id or a.doc_id})

    langs = list(LANGS)
    for n in range(pairs_per_kind):
        lang = langs[n % 3]
        for kind in ("copy-exact", "copy-format", "copy-edited", "copy-reordered", "revision", "twin"):
            base = builder.document(lang)
            base.source_id = f"src-{base.doc_id}"
            if kind == "copy-exact":
                other = _derived(builder, base, list(base.paragraphs), source=f"mirror-{base.doc_id}")
            elif kind == "copy-format":
                other = _derived(builder, base, format_only(rng, base), source=f"mirror-{base.doc_id}")
            elif kind == "copy-edited":
                other = _derived(builder, base, light_edit(rng, base), source=f"mirror-{base.doc_id}")
            elif kind == "copy-reordered":
                paras = list(base.paragraphs)
                while paras == base.paragraphs:
                    rng.shuffle(paras)
                other = _derived(builder, base, paras, source=f"mirror-{base.doc_id}")
            elif kind == "revision":
                paras, change = revise(rng, builder, base)
                other = _derived(builder, base, paras, source=base.source_id, version="2",
                                 collected_at="2025-06-01")
            else:
                other = _derived(builder, base, list(base.paragraphs), source=f"mirror-{base.doc_id}",
                                 language=TWIN_TAG[lang])
            records += [base.record(), other.record()]
            label(base, other, kind, change if kind == "revision" else "")
        # Two different texts under one long boilerplate.
        first, second = builder.document(lang, 2), builder.document(lang, 2)
        for doc in (first, second):
            doc.paragraphs = [BOILERPLATE[lang], *doc.paragraphs, BOILERPLATE[lang]]
            doc.source_id = f"src-{doc.doc_id}"
        records += [first.record(), second.record()]
        label(first, second, "template")
        # A short text quoting a long paragraph of a longer one.
        long_doc = builder.document(lang, 5)
        long_doc.paragraphs[2] = " ".join([long_doc.paragraphs[2], *builder._take(lang, 4)])
        long_doc.source_id = f"src-{long_doc.doc_id}"
        quoting = builder.document(lang, 1)
        quote = ("“" + long_doc.paragraphs[2] + "”") if lang != "zh" else ("“" + long_doc.paragraphs[2] + "”")
        quoting.paragraphs = [quoting.paragraphs[0], quote]
        quoting.source_id = f"src-{quoting.doc_id}"
        records += [long_doc.record(), quoting.record()]
        label(long_doc, quoting, "quote")
    return records, labels


def write(folder: Path, pairs_per_kind: int = 150, seed: int = 7) -> tuple[Path, Path]:
    records, labels = generate(pairs_per_kind, seed)
    folder.mkdir(parents=True, exist_ok=True)
    corpus, label_file = folder / "records.jsonl", folder / "labels.csv"
    with open(corpus, "w", encoding="utf-8") as out:
        for r in records:
            out.write(json.dumps(r, ensure_ascii=False) + "\n")
    with open(label_file, "w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["left_id", "right_id", "label", "reason", "split"])
        for row in labels:
            writer.writerow([row["left_id"], row["right_id"], row["label"], f"{row['kind']}: {row['expected']}", ""])
    with open(folder / "kinds.csv", "w", encoding="utf-8", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=list(labels[0]))
        writer.writeheader()
        writer.writerows(labels)
    return corpus, label_file


if __name__ == "__main__":
    import sys

    target = Path(sys.argv[1] if len(sys.argv) > 1 else "var/devcorpus")
    paths = write(target, int(sys.argv[2]) if len(sys.argv) > 2 else 150)
    print("wrote", *paths)


def families(count: int = 60, seed: int = 7, sizes: tuple[int, int] = (2, 10)) -> list[dict]:
    """Families of copies for the review bench: each a text in one of the three languages and 1–9 copies of
    it from other channels (format-only or lightly edited), sizes spread over `sizes`; families share nothing."""
    builder, rng = Builder(seed), random.Random(seed)
    records = []
    for number in range(count):
        lang = ("en", "fa", "zh")[number % 3]
        base = builder.document(lang, 4)
        base.source_id = f"src-{base.doc_id}"
        members = [base]
        for copy in range(rng.randint(*sizes) - 1):
            paras = format_only(rng, base) if copy % 2 else light_edit(rng, base)
            members.append(_derived(builder, base, paras, source=f"channel-{copy}-{base.doc_id}",
                                    collected_at=f"2025-{1 + copy % 12:02d}-01"))
        records += [m.record() for m in members]
    return records


# --- the varied corpus (issue 38): several generator variants a kind, real text of more than one source -----

SEEDS = Path("/work/shared/seeds")
LICENCES = [Path("/usr/share/common-licenses"), *sorted(Path("/usr/share/doc").glob("*/copyright"))]
# Variants used while writing the rules (tuned); every other variant is held out and reported apart.
TUNED = {"copy-exact": "short", "copy-format": "rewrap", "copy-edited": "no-number",
         "copy-reordered": "long-paragraphs", "revision": "detail", "template": "corpus-boilerplate",
         "quote": "marked-middle", "twin": "exact"}
VARIANTS = {
    "copy-exact": ["short", "long", "prose"],
    "copy-format": ["rewrap", "full-width-split", "prose-rewrap"],
    "copy-edited": ["no-number", "beside-number", "prose"],
    "copy-reordered": ["long-paragraphs", "short-paragraphs", "lines", "sentences"],
    "revision": ["detail", "detail-rewrapped", "detail-long"],
    "template": ["corpus-boilerplate", "private-top", "private-bottom", "private-both"],
    "quote": ["marked-middle", "unmarked-start", "unmarked-end", "short-marked"],
    "twin": ["exact", "reformatted", "prose"],
}
_SENTENCE_END = re.compile(r"(?<=[.!?。！？؟])\s+|(?<=[。！？])")


def prose_sentences(lang: str) -> list[str]:
    """Sentences of real prose: Python's own documentation (English), the Persian and Chinese tutorials."""
    if lang == "en":
        import pydoc_data.topics as topics

        text = " ".join(" ".join(v.split()) for _, v in sorted(topics.topics.items()))
    else:
        chinese = [p for p in sorted(SEEDS.glob("*.txt")) if "001_" in p.name]
        paths = chinese if lang == "zh" else [p for p in sorted(SEEDS.glob("*.txt")) if p not in chinese]
        text = " ".join(" ".join(p.read_text(encoding="utf-8").split()) for p in paths)
    out = [s.strip() for s in _SENTENCE_END.split(text) if 25 <= len(s.strip()) <= 300 and "`" not in s]
    return list(dict.fromkeys(s for s in out if not re.search(r"[=(){}\[\]<>]", s)))


def licence_texts(lang: str) -> list[str]:
    """Licence and copyright texts of the machine (English: the packages' copyright files; Chinese and
    Persian: the catalogs' licence and warranty strings), cleaned into one line each."""
    if lang == "en":
        out = []
        for path in LICENCES:
            for file in ([*sorted(path.iterdir())][:20] if path.is_dir() else [path]):
                try:
                    text = " ".join(file.read_text(encoding="utf-8", errors="ignore").split())
                except OSError:
                    continue
                if len(text) > 400:
                    out.append(text)
        return out
    words = ("ضمانت", "مجوز", "اجازه", "حق", "شرایط", "توزیع", "پروانه") if lang == "fa" else \
        ("许可", "授权", "保证", "版权", "担保", "条款", "分发")
    return [t for t in catalog_texts(lang, 30) if any(w in t for w in words)]


class VariedBuilder(Builder):
    def __init__(self, seed: int = 7):
        super().__init__(seed)
        self.prose = {lang: prose_sentences(lang) for lang in LANGS}
        self.licences = {lang: licence_texts(lang) for lang in LANGS}
        for texts in (*self.prose.values(), *self.licences.values()):
            self.rng.shuffle(texts)
        self.prose_cursor = dict.fromkeys(LANGS, 0)

    def prose_document(self, lang: str, paragraphs: int = 4) -> Doc:
        """A text of real prose sentences, two or three fact sentences among them."""
        doc = self.document(lang, paragraphs)
        texts, start = self.prose[lang], self.prose_cursor[lang]
        per = 3
        paras = []
        for k in range(paragraphs):
            paras.append((" " if lang != "zh" else "").join(texts[(start + k * per + i) % len(texts)]
                                                          for i in range(per)))
        self.prose_cursor[lang] = start + paragraphs * per
        for fact in doc.facts:
            i = self.rng.randrange(len(paras))
            paras[i] = paras[i] + (" " if lang != "zh" else "") + fact
        doc.paragraphs = paras
        return doc

    def short_sentences(self, lang: str, count: int) -> Doc:
        """count one-sentence paragraphs (470–1,020 characters in all, as in the issue)."""
        doc = self.document(lang, 1)
        pool = [t for t in self.texts[lang] if 25 <= len(t) <= 90]
        start = self.rng.randrange(len(pool))
        doc.paragraphs = [pool[(start + i) % len(pool)] for i in range(count)]
        return doc

    def private_boilerplate(self, lang: str, size: int) -> str:
        """A licence or copyright text of about `size` characters that no other document holds."""
        texts = self.licences[lang]
        if lang == "en":
            text = self.rng.choice(texts)
            start = self.rng.randrange(max(1, len(text) - size))
            return text[start:start + size].split(" ", 1)[-1].rsplit(" ", 1)[0]
        out = ""
        picked = self.rng.sample(texts, len(texts))
        for t in picked:
            if len(out) >= size:
                break
            out += (" " if lang == "fa" else "") + _clean(t)
        return out.strip()


def _fullwidth_split(rng: random.Random, doc: Doc) -> list[str]:
    """Full-width letters and digits here and there, and lines wrapped inside long tokens."""
    out = []
    for p in doc.paragraphs:
        p = re.sub(r"[A-Za-z0-9']{3,}", lambda m: "".join(chr(ord(c) + 0xFEE0) for c in m.group())
                   if rng.random() < 0.2 else m.group(), p)
        p = re.sub(r"[0-9A-Za-z]{5,}", lambda m: m.group()[:3] + "\n" + m.group()[3:] if rng.random() < 0.2
                   else m.group(), p)
        out.append(p)
    return out


def _edit_beside_number(rng: random.Random, doc: Doc) -> list[str]:
    """A word dropped or doubled right before or after a number, the number itself left alone."""
    paras = list(doc.paragraphs)
    for i, p in enumerate(paras):
        words = p.split(" ")
        spots = [j for j, w in enumerate(words) if re.fullmatch(r"[0-9۰-۹]+", w)]
        if spots and doc.lang != "zh":
            j = rng.choice(spots)
            k = j - 1 if j > 0 and words[j - 1] not in KEEP and rng.random() < 0.5 else j + 1
            if 0 <= k < len(words) and words[k].isalpha() and words[k] not in KEEP and k != j:  # not a unit
                words[k] = words[k] + " " + words[k] if rng.random() < 0.5 else ""
            paras[i] = " ".join(w for w in words if w)
            return paras
    return light_edit(rng, doc)


def _pair(builder: VariedBuilder, rng: random.Random, kind: str, variant: str, lang: str
          ) -> tuple[Doc, Doc, str]:
    b = builder
    note = ""
    if kind in ("copy-exact", "copy-format", "copy-edited", "revision", "twin"):
        base = b.prose_document(lang) if "prose" in variant else b.document(
            lang, 2 if variant == "short" else 8 if variant in ("long", "detail-long") else 4)
        base.source_id = f"src-{base.doc_id}"
        mirror = f"mirror-{base.doc_id}"
        if kind == "copy-exact":
            other = _derived(b, base, list(base.paragraphs), source=mirror)
        elif kind == "copy-format":
            paras = _fullwidth_split(rng, base) if variant == "full-width-split" else format_only(rng, base)
            other = _derived(b, base, paras, source=mirror)
        elif kind == "copy-edited":
            paras = _edit_beside_number(rng, base) if variant == "beside-number" else light_edit(rng, base)
            other = _derived(b, base, paras, source=mirror)
        elif kind == "revision":
            paras, note = revise(rng, b, base)
            if variant == "detail-rewrapped":
                paras = format_only(rng, Doc(base.doc_id, lang, paras))
            other = _derived(b, base, paras, source=base.source_id, version="2", collected_at="2025-06-01")
        else:
            paras = format_only(rng, base) if variant == "reformatted" else list(base.paragraphs)
            other = _derived(b, base, paras, source=mirror, language=TWIN_TAG[lang])
        return base, other, note
    if kind == "copy-reordered":
        if variant == "long-paragraphs":
            base = b.document(lang, rng.randint(3, 5))
        else:
            base = b.short_sentences(lang, rng.randint(9, 15))
        base.source_id = f"src-{base.doc_id}"
        paras = list(base.paragraphs)
        while paras == base.paragraphs:
            rng.shuffle(paras)
        other = _derived(b, base, paras, source=f"mirror-{base.doc_id}")
        if variant in ("lines", "sentences"):
            joiner = "\n" if variant == "lines" else (" " if lang != "zh" else "")
            base.paragraphs, other.paragraphs = [joiner.join(base.paragraphs)], [joiner.join(paras)]
        return base, other, note
    if kind == "template":
        first, second = b.document(lang, 2), b.document(lang, 2)
        body = (len(first.body) + len(second.body)) // 2
        shared = BOILERPLATE[lang] if variant == "corpus-boilerplate" else \
            b.private_boilerplate(lang, int(body * rng.uniform(1 / 3, 2)))
        for doc in (first, second):
            top, bottom = {"private-top": ([shared], []), "private-bottom": ([], [shared])}.get(
                variant, ([shared], [shared]))
            doc.paragraphs = [*top, *doc.paragraphs, *bottom]
            doc.source_id = f"src-{doc.doc_id}"
        return first, second, note
    # quote: a text quoting a paragraph of a longer one, the quoted paragraph anywhere in its source
    long_doc = b.document(lang, 5)
    at = rng.randrange(5)
    if variant != "short-marked":
        long_doc.paragraphs[at] = " ".join([long_doc.paragraphs[at], *b._take(lang, 4)])
    long_doc.source_id = f"src-{long_doc.doc_id}"
    quoting = b.document(lang, 2)
    quoted = long_doc.paragraphs[at]
    quote = ("“" + quoted + "”") if "marked" in variant else quoted
    place = {"unmarked-start": 0, "unmarked-end": 2}.get(variant, 1)
    quoting.paragraphs.insert(place, quote)
    quoting.source_id = f"src-{quoting.doc_id}"
    return long_doc, quoting, f"paragraph {at + 1} of 5 quoted"


def generate_varied(pairs_per_variant: int = 30, seed: int = 7) -> tuple[list[dict], list[dict]]:
    """Records and labels: `pairs_per_variant` pairs of every variant of every kind over the three languages;
    each label names its kind, variant and whether the variant was held out from tuning."""
    builder, rng = VariedBuilder(seed), random.Random(seed + 1)
    records, labels = [], []
    for n in range(pairs_per_variant):
        lang = list(LANGS)[n % 3]
        for kind, variants in VARIANTS.items():
            for variant in variants:
                a, b, note = _pair(builder, rng, kind, variant, lang)
                records += [a.record(), b.record()]
                labels.append({"left_id": a.doc_id, "right_id": b.doc_id, "kind": kind, "variant": variant,
                               "held_out": TUNED[kind] != variant, "expected": KINDS[kind],
                               "label": int(KINDS[kind] == "merge-entry"), "language": lang, "note": note,
                               "family": a.source_id or a.doc_id})
    return records, labels


def write_records(folder: Path, records: list[dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "records.jsonl"
    with open(path, "w", encoding="utf-8") as out:
        for r in records:
            out.write(json.dumps(r, ensure_ascii=False) + "\n")
    return path
