"""Screening algorithms as plain Python modules (no Django imports), tested without a database."""

import hashlib
from pathlib import Path

from numba.core import config as _numba


def kernel_cache(here: Path) -> str:
    """A folder for numba's compiled kernels named for this package's code. numba checks only the file of the
    function it compiled, so a kernel of fast.py that inlined foldtable.map_text kept the old map_text after
    foldtable.py changed; a change to any file here now compiles every kernel again."""
    digest = hashlib.sha256()
    for path in sorted(here.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return str(here / "__pycache__" / f"kernels-{digest.hexdigest()[:12]}")


# Set in numba's configuration, not in the environment, which processes started from this one (the
# autoreloader's) would inherit with the name of code since changed. NUMBA_CACHE_DIR, when given, wins.
if not _numba.CACHE_DIR:
    _numba.CACHE_DIR = kernel_cache(Path(__file__).resolve().parent)
