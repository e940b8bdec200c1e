"""The language a document's text reads as (no Django imports): py3langid on the first READ_CHARS characters,
its ISO 639-1 code and normalised probability, and the rule that says when a detection is confident enough
to set against the document's tag. The tag is what the uploader said and is never changed; this only tells.

py3langid was chosen over lingua-language-detector by bench/langid_choice.py (README, "Language check"):
the measured figures, and the threshold below, are there."""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from functools import cache

import numpy as np
from numba import njit

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
def _model() -> _Model:
    """py3langid's model as arrays for the compiled walk, and each of its labels' base language."""
    identifier = _identifier()
    bases = [base(label) for label in identifier.nb_classes]
    names = sorted(set(bases))
    return _Model(np.frombuffer(identifier.tk_nextmove, dtype=np.uint32),
                  np.asarray(identifier._rowbase, dtype=np.int64), np.asarray(identifier.tk_output, dtype=np.int64),
                  identifier.nb_ptc, np.asarray(identifier.nb_pc, dtype=np.float32),
                  np.asarray([names.index(b) for b in bases], dtype=np.int64), names)


@dataclass(frozen=True)
class _Model:
    nextmove: np.ndarray
    rowbase: np.ndarray
    output: np.ndarray
    ptc: np.ndarray  # features x labels, float16
    pc: np.ndarray
    base_of: np.ndarray  # label -> index in names
    names: list[str]


@njit(cache=True, nogil=True)
def _features(data: np.ndarray, nextmove: np.ndarray, rowbase: np.ndarray, output: np.ndarray):
    """py3langid's walk of its automaton over the bytes (langid.visit_counts), compiled: the features met and
    how often, sorted."""
    found = np.empty(data.size, dtype=np.int64)
    k, state = 0, 0
    for i in range(data.size):
        state = nextmove[rowbase[state] + data[i]]
        f = output[state]
        if f >= 0:
            found[k] = f
            k += 1
    found = np.sort(found[:k])
    features = np.empty(k, dtype=np.int64)
    counts = np.empty(k, dtype=np.float32)
    n = 0
    for i in range(k):
        if n and features[n - 1] == found[i]:
            counts[n - 1] += 1
        else:
            features[n] = found[i]
            counts[n] = 1
            n += 1
    return features[:n], counts[:n]


def _encoded(text: str) -> np.ndarray:
    # As py3langid encodes a text (LanguageIdentifier._encode): an all-capitals text lowered, NFC, UTF-8.
    text = unicodedata.normalize("NFC", text.lower() if text.isupper() else text)
    return np.frombuffer(text.encode("utf-8", errors="surrogatepass"), dtype=np.uint8)


def detect(text: str) -> Detection:
    """The language of the text's first READ_CHARS characters: py3langid's naive Bayes with normalised
    probabilities (its automaton walked by compiled code), the varieties' shares added up under their
    language: a Chinese text split between zh, wuu and yue is surely Chinese, though no one of the three is."""
    head = text[:READ_CHARS]
    if not any(c.isalpha() for c in head):
        return UNKNOWN
    model, data = _model(), _encoded(head)
    features, counts = _features(data, model.nextmove, model.rowbase, model.output)
    if not features.size:
        return UNKNOWN
    scores = np.log1p(counts) @ model.ptc[features].astype(np.float32) + model.pc
    scores *= 1.0 / math.sqrt(data.size)  # py3langid's temperature: calibrated across lengths
    np.exp(scores - scores.max(), out=scores)
    shares = np.bincount(model.base_of, weights=scores / scores.sum(), minlength=len(model.names))
    best = int(shares.argmax())
    language = model.names[best]
    return Detection(language, round(min(float(shares[best]), 1.0), 4)) if language else UNKNOWN


def detect_reference(text: str) -> Detection:
    """detect() through py3langid's own code (its rank), for the tests and the bench to hold detect() to."""
    head = text[:READ_CHARS]
    if not any(c.isalpha() for c in head):
        return UNKNOWN
    shares: dict[str, float] = {}
    for label, probability in _identifier().rank(head):
        code = base(label)
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
