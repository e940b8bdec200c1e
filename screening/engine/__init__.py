"""Screening algorithms as plain Python modules (no Django imports), tested without a database."""

import hashlib
import os
import sys
from pathlib import Path


def _kernel_cache() -> str:
    """A folder for numba's compiled kernels named for this package's code. numba checks only the file of the
    function it compiled, so a kernel of fast.py that inlined foldtable.map_text kept the old map_text after
    foldtable.py changed; a change to any file here now compiles every kernel again."""
    here = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(here.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return str(here / "__pycache__" / f"kernels-{digest.hexdigest()[:12]}")


if "NUMBA_CACHE_DIR" not in os.environ:
    os.environ["NUMBA_CACHE_DIR"] = _kernel_cache()
    if "numba" in sys.modules:  # imported already (a bench's own kernel): read the setting again
        from numba.core import config

        config.reload_config()
