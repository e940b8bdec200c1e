"""What a run is asked to do, resolved once and handed to every step of it: plain data that pickles and goes to
JSON, so a step in another process (an executor's worker) gets it as it is instead of loading the run again."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from screening.engine.minhash import NearConfig


@dataclass(frozen=True)
class Sizes:
    """How the run's work is cut up: every step is given its part, none reads a setting."""

    sign: int = 5000  # documents a signing task
    verify: int = 2000  # candidates a verification task
    band_keys: int = 8_000_000  # band keys one banding task holds at most


@dataclass(frozen=True)
class RunSpec:
    run: int
    corpus: int
    uploads: tuple[int, ...]  # the run's documents: those of these uploads of the corpus
    exact: bool
    near: NearConfig | None  # resolved (b × r chosen); None without the near pass
    incremental: bool = False
    verification_key: str = ""  # the fingerprint the run was started with
    sizes: Sizes = field(default_factory=Sizes)

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> RunSpec:
        return cls(**{**data, "uploads": tuple(data["uploads"]), "sizes": Sizes(**data["sizes"]),
                      "near": NearConfig(**data["near"]) if data["near"] else None})
