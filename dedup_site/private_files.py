"""Secrets on disk (the secret key, the signing key, the first admin's password): created readable by
the owner only from their first byte, never written then chmod-ed (no Django imports: settings use it)."""

from __future__ import annotations

import os
from pathlib import Path

PRIVATE = 0o600


def create_private(path: Path, data: bytes) -> bool:
    """Write `data` to a new file at `path` with mode 0600, whatever the umask. The bytes go to a temporary
    file first and are linked into place, so no process ever reads a half-written secret, and a file
    another process created meanwhile is kept. Returns False when `path` already existed."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)
        return True
    except FileExistsError:
        return False
    finally:
        tmp.unlink(missing_ok=True)
