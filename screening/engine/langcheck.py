"""The language a document's text reads as (no Django imports): py3langid on the first READ_CHARS characters,
its ISO 639-1 code and normalised probability, and the rule that says when a detection is confident enough
to set against the document's tag. The tag is what the uploader said and is never changed; this only tells.

py3langid was chosen over lingua-language-detector by bench/langid_choice.py (README, "Language check"):
the measured figures, and the threshold below, are there."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

READ_CHARS = 1024  # the start of a document tells its language as well as 4 KB do (bench), at a quarter of the cost
# A detection at or above this probability is confident: on 6,750 short real texts (bench/langid_choice.py) the
# lowest at which no fa/ar/ur or zh/ja text of 25-60 characters was confidently wrong (1 text of all was).
CONFIDENT = 0.95
# Codes another spelling of a tag may use for the same language (ISO 639-2/3, and codes ISO withdrew).
_ALIASES = {"iw": "he", "in": "id", "ji": "yi", "jw": "jv", "mo": "ro", "zho": "zh", "chi": "zh", "cmn": "zh",
            "fas": "fa", "per": "fa", "pes": "fa", "prs": "fa", "ara": "ar", "arb": "ar", "urd": "ur", "eng": "en",
            "jpn": "ja", "kor": "ko", "deu": "de", "ger": "de", "fra": "fr", "fre": "fr",
            # py3langid's varieties, under the language their ISO 639-1 code names (a Wu or Cantonese text is
            # tagged zh, a Moroccan or Egyptian one ar); Southern Uzbek is Uzbek written in Arabic script.
            "wuu": "zh", "yue": "zh", "ary": "ar", "arz": "ar", "uzs": "uz", "gug": "gn", "zxx": "", "und": ""}
_SEPARATOR = re.compile(r"[-_]")


@dataclass(frozen=True)
class Detection:
    language: str  # ISO 639-1, "" when the text has nothing to tell (no letters)
    confidence: float  # the identifier's normalised probability, 0..1

    @property
    def confident(self) -> bool:
        return bool(self.language) and self.confidence >= CONFIDENT


UNKNOWN = Detection("", 0.0)


def base(tag: str) -> str:
    """A tag's base language, lowercase: zh-Hans, zh_hant, zh-CN -> zh; fa-IR -> fa; fas -> fa."""
    first = _SEPARATOR.split((tag or "").strip().lower(), maxsplit=1)[0]
    return _ALIASES.get(first, first)


@cache
def _identifier():
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


@cache
def _base_of_label(label: str) -> str:
    return base(label)


def detect(text: str) -> Detection:
    """The language of the text's first READ_CHARS characters."""
    head = text[:READ_CHARS]
    if not any(c.isalpha() for c in head):
        return UNKNOWN
    # The varieties' shares added up under their language: a Chinese text split between zh, wuu and yue is
    # surely Chinese, though no one of the three is sure.
    shares: dict[str, float] = {}
    for language, probability in _identifier().rank(head):
        code = _base_of_label(language)
        shares[code] = shares.get(code, 0.0) + probability
    language = max(shares, key=shares.__getitem__)
    return Detection(language, round(min(shares[language], 1.0), 4)) if language else UNKNOWN


def disagrees(tag: str, detection: Detection) -> bool:
    """The tag names another language than a confident detection (compared by base language)."""
    return detection.confident and bool(tag) and base(tag) != detection.language


def matching_tag(tags: tuple[str, str], detection: Detection) -> int | None:
    """Which of two tags (0 or 1) a confident detection agrees with, when exactly one does."""
    if not detection.confident:
        return None
    hits = [i for i, tag in enumerate(tags) if base(tag) == detection.language]
    return hits[0] if len(hits) == 1 else None
