"""Jobs that exist only to cause a fault at a chosen moment, for tests/test_faults.py. A worker imports this
module by name when it takes one of these jobs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from dedup_site import redis_server


def stop_redis_for(directory: str, seconds: float) -> str:
    """Stop the embedded Redis server and have it started again `seconds` later, then return at once: the
    work-horse reports this job's end while Redis is down."""
    restart = (f"import time; from pathlib import Path; from dedup_site import redis_server; time.sleep({seconds}); "
               f"redis_server.ensure_running(Path({directory!r}))")
    subprocess.Popen([sys.executable, "-c", restart], cwd=Path(__file__).resolve().parent.parent,  # noqa: S603
                     start_new_session=True)
    redis_server.stop(Path(directory))
    return "stopped"
