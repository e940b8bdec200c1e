"""Near-pass configuration and signature storage format (no Django imports)."""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass, replace

import numpy as np
from datasketch import LeanMinHash, MinHash

from screening.engine import lsh
from screening.engine.normalize import DEFAULT_POLICY, Policy, get_policy
from screening.engine.shingle import ShingleSpec

SCHEME = "affine32"  # datasketch's default since 2.0; the compiled signer implements exactly this one
BYTEORDER = "<"
# What a configuration may ask for; the form and the command take their bounds from here.
NUM_PERM_RANGE = (8, 1024)
THRESHOLD_RANGE = (0.05, 1.0)


class SchemeMismatch(ValueError):
    """Signatures of different datasketch schemes, seeds or sizes must never be compared."""


@dataclass(frozen=True)
class NearConfig:
    policy: str = DEFAULT_POLICY
    shingle: str = "char:5"
    num_perm: int = 128
    seed: int = 1
    scheme: str = SCHEME
    threshold: float = 0.7
    bands: int | None = None
    rows: int | None = None
    storage_floor: float = 0.3
    template_share: float = 0.02
    template_min_docs: int = 10

    def resolved(self) -> NearConfig:
        """Validated, with (b, r) chosen for the threshold unless both were given."""
        get_policy(self.policy)
        ShingleSpec.parse(self.shingle)
        if self.scheme != SCHEME:
            raise ValueError(f"datasketch scheme {self.scheme!r} is not supported; use {SCHEME!r}")
        if not NUM_PERM_RANGE[0] <= self.num_perm <= NUM_PERM_RANGE[1]:
            raise ValueError(f"num_perm must be {NUM_PERM_RANGE[0]}-{NUM_PERM_RANGE[1]}")
        if not THRESHOLD_RANGE[0] <= self.threshold <= THRESHOLD_RANGE[1]:
            raise ValueError(f"the threshold must be {THRESHOLD_RANGE[0]}-{THRESHOLD_RANGE[1]}")
        if not 0 <= self.storage_floor <= self.threshold:
            raise ValueError("need 0 <= storage floor <= threshold")
        if (self.bands is None) != (self.rows is None):
            raise ValueError("give both bands and rows, or neither")
        if self.bands is None:
            bands, rows = lsh.choose_bands(self.num_perm, self.threshold)
            return replace(self, bands=bands, rows=rows)
        lsh.check_bands(self.num_perm, self.bands, self.rows)
        return self

    @property
    def spec(self) -> ShingleSpec:
        return ShingleSpec.parse(self.shingle)

    @property
    def policy_rules(self) -> Policy:
        """The normalisation policy this configuration names (`policy` is its name)."""
        return get_policy(self.policy)

    @property
    def probability_at_threshold(self) -> float:
        return lsh.candidate_probability(self.threshold, self.bands, self.rows)

    @property
    def signature_key(self) -> str:
        """What a stored signature depends on; signatures with different keys are never mixed."""
        return f"{self.policy}|{self.shingle}|{self.num_perm}|{self.seed}|{self.scheme}"

    def as_dict(self) -> dict:
        return asdict(self)


@functools.lru_cache(maxsize=8)
def permutations(num_perm: int, seed: int, scheme: str = SCHEME) -> np.ndarray:
    """datasketch's own permutation parameters for (num_perm, seed, scheme)."""
    return MinHash(num_perm=num_perm, seed=seed, scheme=scheme).permutations


def to_bytes(values: np.ndarray, config: NearConfig) -> bytes:
    lean = LeanMinHash(seed=config.seed, hashvalues=values, scheme=config.scheme)
    buf = bytearray(lean.bytesize(BYTEORDER))
    lean.serialize(buf, BYTEORDER)
    return bytes(buf)


@functools.lru_cache(maxsize=8)
def _header(seed: int, num_perm: int, scheme: str) -> bytes:
    """The bytes datasketch's LeanMinHash writes before the hash values (seed, size, scheme code)."""
    lean = LeanMinHash(seed=seed, hashvalues=np.zeros(num_perm, dtype=np.uint32), scheme=scheme)
    buf = bytearray(lean.bytesize(BYTEORDER))
    lean.serialize(buf, BYTEORDER)
    return bytes(buf[: len(buf) - 4 * num_perm])


def to_bytes_many(rows: np.ndarray, config: NearConfig) -> list[bytes]:
    """to_bytes for each row of a signature matrix: the same bytes, without a LeanMinHash per row."""
    header = _header(config.seed, config.num_perm, config.scheme)
    little = rows.astype("<u4", copy=False)
    return [header + row.tobytes() for row in little]


def from_bytes(data: bytes, config: NearConfig) -> np.ndarray:
    """The hash values of a stored LeanMinHash, refused unless its scheme, seed and size match."""
    lean = LeanMinHash.deserialize(data, BYTEORDER)
    if (lean.scheme, lean.seed, len(lean)) != (config.scheme, config.seed, config.num_perm):
        raise SchemeMismatch(
            f"stored signature has scheme {lean.scheme!r}, seed {lean.seed}, {len(lean)} permutations; "
            f"this run uses scheme {config.scheme!r}, seed {config.seed}, {config.num_perm}"
        )
    return np.asarray(lean.hashvalues, dtype=np.uint32)


def from_bytes_many(blobs: list[bytes], config: NearConfig) -> np.ndarray:
    """from_bytes for many stored signatures at once, as an (n, num_perm) uint32 array: one numpy view of the
    joined bytes when each carries this configuration's header (datasketch's seed, size and scheme), else row
    by row, which names the mismatch."""
    header = _header(config.seed, config.num_perm, config.scheme)
    width = len(header) + 4 * config.num_perm
    joined = b"".join(blobs)
    if len(joined) == width * len(blobs):
        raw = np.frombuffer(joined, dtype=np.uint8).reshape(len(blobs), width)
        if (raw[:, : len(header)] == np.frombuffer(header, dtype=np.uint8)).all():
            return np.ascontiguousarray(raw[:, len(header) :]).view("<u4").astype(np.uint32)
    return np.vstack([from_bytes(b, config) for b in blobs]) if blobs else np.zeros((0, config.num_perm), np.uint32)


def estimate(left: np.ndarray, right: np.ndarray) -> float:
    return float(np.count_nonzero(left == right)) / left.shape[0]
