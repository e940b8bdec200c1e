"""Ray nodes a test starts on this machine, each on its own loopback address (never 127.0.0.1, which Ray swaps for
the machine's outward address), with token authentication on, and stopped by their process ids: every process of
a node (its raylet, its workers, the head's GCS) is in the session of the `ray start` that began it."""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RAY = str(Path(sys.executable).with_name("ray"))
# A lost node is noticed in about a second, not fifteen (the head's GCS reads these when it starts).
FAST_HEALTH_CHECKS = {"RAY_health_check_initial_delay_ms": "1000", "RAY_health_check_period_ms": "500",
                      "RAY_health_check_timeout_ms": "500", "RAY_health_check_failure_threshold": "3"}
TOKEN = secrets.token_hex(32)


def free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def auth_env() -> dict[str, str]:
    """What a node and a driver need to be let in: the cluster's token, and token authentication on."""
    return {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": TOKEN, "RAY_USAGE_STATS_ENABLED": "0"}


class Node:
    """One `ray start --block` in a session of its own."""

    def __init__(self, address: str, env: dict[str, str], *, head_port: int | None = None, join: str = ""):
        self.address = address
        args = [RAY, "start", "--block", "--node-ip-address", address, "--num-cpus", "1",
                "--object-store-memory", str(100 * 2**20), "--disable-usage-stats"]
        if join:
            args += ["--address", join]
        else:
            args += ["--head", "--port", str(head_port), "--include-dashboard", "false"]
        self.process = subprocess.Popen(args, cwd=ROOT, start_new_session=True, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL,
                                        env={**env, **auth_env(), **FAST_HEALTH_CHECKS, "PYTHONPATH": str(ROOT)})

    def pids(self) -> list[int]:
        """Every process of the node: those in the session its `ray start` leads."""
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    stat = (entry / "stat").read_text()
                except OSError:
                    continue
                # After the command's name in parentheses: state, ppid, pgrp, session. A zombie is gone already.
                state, _, _, session = stat.rsplit(")", 1)[1].split()[:4]
                if int(session) == self.process.pid and state != "Z":
                    found.append(int(entry.name))
        return found

    def kill(self) -> None:
        """The node lost at once: every one of its processes killed, none let finish (again while any is left:
        a raylet may start a worker as it goes)."""
        deadline = time.monotonic() + 30
        while (pids := self.pids()) and time.monotonic() < deadline:
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.05)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        """Stopped as an operator would (its `ray start` drains it), then whatever is left killed."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                pass
        self.kill()


def wait_for_nodes(address: str, count: int, timeout: float = 120) -> None:
    """Until the cluster at `address` has `count` nodes alive (asked from a child process, so this one stays
    unconnected)."""
    code = ("import ray, sys, time\n"
            f"ray.init(address={address!r}, logging_level='ERROR', log_to_driver=False)\n"
            f"deadline = time.monotonic() + {timeout}\n"
            f"while sum(n['Alive'] for n in ray.nodes()) < {count}:\n"
            "    if time.monotonic() > deadline: sys.exit(1)\n"
            "    time.sleep(0.2)\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=timeout + 60, cwd=ROOT,
                   env={**os.environ, **auth_env()}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wait_gone(node: Node, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while node.pids() and time.monotonic() < deadline:
        time.sleep(0.1)
