"""Where stored sources live: the local read-only folder (`storage`, the default) or the bucket of
DEDUP_SOURCES_URL (`dedup_site.buckets`). Either way a source is kept by its SHA-256 under `ab/abcdef...`,
written once, and never changed; a source read from a bucket is checked against its SHA-256 first."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from django.conf import settings

from dedup_site import buckets, object_storage
from screening.ingest import storage

Chunks = Iterable[bytes] | Callable[[], Iterable[bytes]]


def _bucket() -> buckets.Bucket | None:
    return object_storage.bucket(object_storage.SOURCES)


def _key(bucket: buckets.Bucket, sha256: str) -> str:
    return bucket.key(f"{sha256[:2]}/{sha256}")


def _rereadable(chunks: Chunks) -> Callable[[], Iterable[bytes]]:
    if callable(chunks):
        return chunks
    if iter(chunks) is chunks:
        raise TypeError("a source stored in a bucket is read twice (its SHA-256 names its key): pass a list of "
                        "chunks or a function that returns them anew")
    return lambda: chunks


def store(chunks: Chunks) -> tuple[str, int]:
    """Store the bytes by their SHA-256 (once); (sha256, size). In a bucket, the bytes are hashed first, then
    sent in multipart parts as they are read again (checked against that hash), so the key is known before
    the write and a source already there is not sent again. BucketError when the bucket fails."""
    bucket = _bucket()
    if bucket is None:
        sha, size, _ = storage.store_chunks(settings.SOURCES_DIR, chunks() if callable(chunks) else chunks)
        return sha, size
    again = _rereadable(chunks)
    digest = hashlib.sha256()
    for chunk in again():
        digest.update(chunk)
    sha = digest.hexdigest()
    sha, size, _ = bucket.put_once(_key(bucket, sha), again(), sha256=sha)
    return sha, size


def location(sha256: str) -> str:
    bucket = _bucket()
    return str(storage.path_for(settings.SOURCES_DIR, sha256)) if bucket is None else bucket.where(
        _key(bucket, sha256))


def readable(sha256: str, size: int) -> Path | buckets.ObjectSource:
    """What the import reads: the local file, or the bucket's object once its bytes matched their SHA-256
    (ObjectMissing, ObjectChanged otherwise); its later ranged reads fail if the object changes meanwhile."""
    bucket = _bucket()
    if bucket is None:
        return storage.path_for(settings.SOURCES_DIR, sha256)
    return bucket.open_checked(_key(bucket, sha256), sha256, size)


def chunks(sha256: str, size: int) -> Iterator[bytes]:
    """The stored source's bytes for a download: from a bucket only once they matched their SHA-256."""
    found = readable(sha256, size)
    if isinstance(found, Path):
        with open(found, "rb") as stream:
            yield from iter(lambda: stream.read(1 << 20), b"")
    else:
        yield from found.chunks()


def verify(sha256: str, size: int) -> str | None:
    """None when the stored source still has its size and hash; otherwise what is wrong with it."""
    bucket = _bucket()
    if bucket is None:
        return storage.verify(settings.SOURCES_DIR, sha256, size)
    key = _key(bucket, sha256)
    try:
        found, found_size, _ = bucket.checked_hash(key)
    except buckets.ObjectMissing:
        return f"missing ({bucket.where(key)})"
    if found != sha256 or found_size != size:
        return (f"changed (SHA-256 is now {found}, size {found_size:,} bytes, stored {size:,}; "
                f"{bucket.where(key)})")
    return None
