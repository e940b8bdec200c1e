"""A persistent LSH index for incremental screening: datasketch `MinHashLSH` on Redis storage (no Django imports).

datasketch keeps the bands in Redis under a basename but learns the MinHash scheme only from the first insert
of each process, and never records the seed. So the index carries its own identity (policy, shingles,
num_perm, seed, scheme, bands, rows) in a Redis hash next to the bands, and every open compares it with the
run's configuration: an index is never used by a run of another configuration.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import redis
from datasketch import LeanMinHash, MinHashLSH

from screening.engine.minhash import NearConfig, SchemeMismatch

INSERT_BUFFER = 50_000  # commands per pipeline flush during an insertion session
QUERY_BATCH = 2_000  # documents whose band look-ups go to Redis in one pipeline per band


class IndexMismatch(SchemeMismatch):
    """The index was built under another configuration (scheme, seed, size, policy, shingles or banding)."""


def identity(config: NearConfig) -> dict[str, str]:
    return {
        "policy": config.policy, "shingle": config.shingle, "num_perm": str(config.num_perm),
        "seed": str(config.seed), "scheme": config.scheme, "bands": str(config.bands), "rows": str(config.rows),
    }


class PersistentIndex:
    """One corpus's index for one configuration. Keys are document ids (ints, stored as ASCII bytes)."""

    def __init__(self, redis_kwargs: dict, basename: str, config: NearConfig):
        self.config = config
        self.basename = basename.encode()
        self._redis = redis.Redis(**redis_kwargs)
        self.lsh = MinHashLSH(
            num_perm=config.num_perm, params=(config.bands, config.rows), prepickle=False,
            storage_config={"type": "redis", "redis": redis_kwargs, "basename": self.basename},
        )
        self._claim(identity(config))

    @property
    def meta_key(self) -> bytes:
        return self.basename + b"_meta"

    def _claim(self, wanted: dict[str, str]) -> None:
        """Record the identity on first use (first writer wins), then refuse any other configuration."""
        pipe = self._redis.pipeline()
        for field, value in wanted.items():
            pipe.hsetnx(self.meta_key, field, value)
        pipe.execute()
        stored = {k.decode(): v.decode() for k, v in self._redis.hgetall(self.meta_key).items()}
        differ = sorted(f for f in wanted.keys() | stored.keys() if stored.get(f) != wanted.get(f))
        if differ:
            built = ", ".join(f"{f}={stored.get(f)}" for f in differ)
            asked = ", ".join(f"{f}={wanted.get(f)}" for f in differ)
            raise IndexMismatch(f"LSH index {self.basename.decode()} was built with {built}; this run uses {asked}")

    def _lean(self, values: np.ndarray) -> LeanMinHash:
        return LeanMinHash(seed=self.config.seed, hashvalues=values, scheme=self.config.scheme)

    def insert(self, keys: Iterable[int], signatures: np.ndarray) -> None:
        """Bulk insert through an insertion session. Inserting a key twice is harmless (bands are sets)."""
        with self.lsh.insertion_session(buffer_size=INSERT_BUFFER) as session:
            for key, values in zip(keys, signatures, strict=True):
                session.insert(str(key).encode(), self._lean(values), check_duplication=False)

    def query(self, signatures: np.ndarray) -> list[set[int]]:
        """The keys sharing at least one band with each signature: what `MinHashLSH.query` returns, but with
        the band look-ups of many documents pipelined (one round trip per band per batch, not per document)."""
        found: list[set[int]] = []
        for start in range(0, signatures.shape[0], QUERY_BATCH):
            leans = [self._lean(values) for values in signatures[start : start + QUERY_BATCH]]
            batch: list[set[int]] = [set() for _ in leans]
            for (lo, hi), table in zip(self.lsh.hashranges, self.lsh.hashtables, strict=True):
                # _H is how MinHashLSH turns a band into its bucket key; using it keeps the two in step.
                members = table.getmany(*(self.lsh._H(lean.hashvalues[lo:hi]) for lean in leans))
                for keys, bucket in zip(batch, members, strict=True):
                    keys.update(int(k) for k in bucket)
            found.extend(batch)
        return found

    def size(self) -> int:
        return self.lsh.keys.size()

    def drop(self) -> None:
        drop(self._redis, self.basename.decode())


def drop(client: redis.Redis, basename: str) -> None:
    """Delete every Redis key of an index (bands, keys, identity), whatever its configuration."""
    for key in client.scan_iter(match=basename.encode() + b"*", count=10_000):
        client.delete(key)
