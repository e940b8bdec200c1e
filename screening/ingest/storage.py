"""Read-only, content-addressed storage of source files (no Django imports).

A file is stored once, byte for byte, at ROOT/ab/abcdef... (its SHA-256), mode 0444. Nothing here
writes to, moves or deletes a stored file after it is in place.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

READ_ONLY = 0o444


def path_for(root: Path, sha256: str) -> Path:
    return root / sha256[:2] / sha256


def store_chunks(root: Path, chunks: Iterable[bytes]) -> tuple[str, int, Path]:
    """Stream chunks into the store; return (sha256, size, stored path)."""
    staging = root / "staging"
    staging.mkdir(parents=True, exist_ok=True)
    digest, size = hashlib.sha256(), 0
    fd, tmp_name = tempfile.mkstemp(dir=staging)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for chunk in chunks:
                digest.update(chunk)
                size += len(chunk)
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        sha = digest.hexdigest()
        final = path_for(root, sha)
        if final.exists():
            return sha, size, final  # already stored: the bytes are the same by their hash
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp.chmod(READ_ONLY)
        os.link(tmp, final)  # fails rather than replace if another process stored it meanwhile
        return sha, size, final
    except FileExistsError:
        return sha, size, path_for(root, sha)
    finally:
        tmp.unlink(missing_ok=True)


def verify(root: Path, sha256: str, size: int) -> str | None:
    """None when the stored file still has its hash; otherwise what is wrong with it."""
    path = path_for(root, sha256)
    if not path.exists():
        return "missing"
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    if digest.hexdigest() != sha256:
        return f"changed (SHA-256 is now {digest.hexdigest()}, size {path.stat().st_size:,} bytes, stored {size:,})"
    if path.stat().st_mode & 0o222:
        return "writable (its read-only mode was changed)"
    return None
