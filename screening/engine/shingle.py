"""Shingles as sets, and the two shingle hashes built on them (no Django imports).

Character k-grams are cut from the normalised text; word k-grams are k consecutive words joined by one
space. Repeats count once. `fast.py` computes the same values as the readable functions here for whole
documents at once.

- The *signing* hash (`shingle_hash64`): a polynomial hash over code points mod 2^64, then the MurmurHash3
  64-bit finaliser. MinHash takes its low 32 bits, so signatures stay equal to datasketch's and to those
  stored by earlier runs. It is public, and crafted text can collide it (the Thue–Morse strings of 1,024
  characters do, for any odd multiplier), which costs at most a spurious LSH candidate.
- The *verification* hash (`verify_hash64`): a polynomial hash mod the prime 2^61 − 1 at a secret base,
  derived from the installation's secret key (`VerifyKey.derive`). Two different shingles of at most L
  characters collide with probability at most L / (2^61 − 1) over the key, whatever the text, so exact
  Jaccard, template scores and the audit cannot be forged by someone who does not know the key.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass

from screening.engine.normalize import Policy

MASK64 = (1 << 64) - 1
POLY = 0x100000001B3  # odd 64-bit multiplier (the FNV prime)
P61 = (1 << 61) - 1  # a Mersenne prime: the verification hash's modulus
SHINGLE_RE = re.compile(r"(char|word):(\d+)")


@dataclass(frozen=True)
class ShingleSpec:
    kind: str  # "char" | "word"
    k: int

    @classmethod
    def parse(cls, text: str) -> ShingleSpec:
        match = SHINGLE_RE.fullmatch(text or "")
        if not match:
            raise ValueError(f"shingle {text!r}: write char:K (K 1-32) or word:K (K 1-8)")
        kind, k = match[1], int(match[2])
        if not (1 <= k <= (32 if kind == "char" else 8)):
            raise ValueError(f"shingle {text!r}: K must be 1-32 for characters, 1-8 for words")
        return cls(kind, k)

    def __str__(self) -> str:
        return f"{self.kind}:{self.k}"


def char_shingles(normalized: str, k: int) -> set[str]:
    return {normalized[i : i + k] for i in range(len(normalized) - k + 1)}


def word_shingles(words: list[str], k: int) -> set[str]:
    return {" ".join(words[i : i + k]) for i in range(len(words) - k + 1)}


def shingles(text: str, policy: Policy, spec: ShingleSpec) -> set[str]:
    """The shingle set of a raw text under a policy (the readable reference path)."""
    if spec.kind == "char":
        return char_shingles(policy.normalize(text), spec.k)
    return word_shingles(policy.words(text), spec.k)


def fmix64(h: int) -> int:
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & MASK64
    h ^= h >> 33
    h = (h * 0xC4CEB9FE1A85EC53) & MASK64
    return h ^ (h >> 33)


def shingle_hash64(shingle: str) -> int:
    h = 0
    for c in shingle:
        h = (h * POLY + ord(c)) & MASK64
    return fmix64(h)


def shingle_hash32(shingle: str) -> int:
    """The hash datasketch MinHash gets (`hashfunc=`): the low 32 bits of shingle_hash64."""
    return shingle_hash64(shingle) & 0xFFFFFFFF


def jaccard(a: set, b: set) -> float | None:
    """Exact Jaccard of two sets; None when both are empty (undefined, never 'equal')."""
    union = len(a | b)
    return len(a & b) / union if union else None


@dataclass(frozen=True)
class VerifyKey:
    """The secret of the verification hash: a base in [2^32, 2^61 − 1) and a 64-bit mask."""

    base: int
    mask: int

    @property
    def fingerprint(self) -> str:
        """Names the key without revealing it: runs record it, and workers with another key refuse the run."""
        return hashlib.sha256(f"{self.base}:{self.mask}".encode()).hexdigest()[:16]

    @classmethod
    def derive(cls, secret: bytes) -> VerifyKey:
        digest = hmac.new(secret, b"dedup shingle verification hash v1", hashlib.sha256).digest()
        base = (1 << 32) + int.from_bytes(digest[:8], "little") % (P61 - (1 << 32))
        return cls(base, int.from_bytes(digest[8:16], "little"))


def verify_hash64(shingle: str, key: VerifyKey) -> int:
    """The keyed verification hash of one shingle (code point + 1, so a leading zero still counts)."""
    h = 0
    for c in shingle:
        h = (h * key.base + ord(c) + 1) % P61
    return fmix64(h ^ key.mask)
