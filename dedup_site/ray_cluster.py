"""Ray, where a run's steps go beyond one process: a cluster named by DEDUP_RAY_ADDRESS, or a Ray this process
starts on this machine. The only module that knows Ray.

A Ray this process starts advertises a loopback address other than 127.0.0.1 (Ray swaps 127.0.0.1 for the
machine's outward address) and keeps Ray's token authentication on, with a token of its own in a file only this
user reads (Ray's own is world-readable): Ray 2.60 opens its gRPC ports on every interface whatever address it is
given, and a Ray port that takes no token runs whatever code is sent to it. A cluster is reached with
RAY_AUTH_MODE=token and the cluster's token (RAY_AUTH_TOKEN or RAY_AUTH_TOKEN_PATH, as its nodes have it).

A task sets Django up in its worker process once, then calls the step by its module and name: the steps read the
documents from the database themselves, so the driver sends each task only its part of the work.
"""

from __future__ import annotations

import importlib
import os
import secrets
import socket
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

LOCAL_ADDRESS = "127.0.0.2"
LOCAL_OBJECT_STORE = 512 * 2**20  # bytes: a run's tasks pass ids and figures, not documents
# Ray retries a connection for about 14 minutes by default: a cluster out of reach is said in seconds instead.
_CONNECT_LIMITS = {"RAY_NUM_REDIS_GET_RETRIES": "2", "RAY_py_gcs_connect_timeout_s": "10",
                   "RAY_gcs_rpc_server_connect_timeout_s": "5"}
_DJANGO_READY = False


class RayUnavailable(Exception):
    """The cluster could not be reached (or a local Ray not started); says why."""


def django_setup() -> None:
    """A Ray worker process's start (runtime_env's worker_process_setup_hook): Django set up before any task's
    arguments are read, as reading a step's spec imports the app's modules."""
    global _DJANGO_READY
    if not _DJANGO_READY:
        import django

        django.setup()
        _DJANGO_READY = True


def _in_django(module: str, name: str, *args) -> tuple[str, Any]:
    """A step in a Ray worker, called by its module and name; (this node's address, its result)."""
    import ray

    django_setup()
    return ray.util.get_node_ip_address(), getattr(importlib.import_module(module), name)(*args)


def _pieces_in_django(module: str, name: str, *args) -> list:
    """A map step in a Ray worker: this node's address, then its pieces, one a return value (one object each)."""
    import ray

    django_setup()
    return [ray.util.get_node_ip_address(), *getattr(importlib.import_module(module), name)(*args)]


class RayExecutor:
    """Each task a Ray task (retried on another node when its node is lost), at most a few per CPU of the cluster
    in flight, the results read back in the order of the tasks."""

    local = False

    def __init__(self, *, address: str = "", env: dict[str, str] | None = None, cpus: int | None = None,
                 retries: int = 3, token_file: Path | None = None):
        if address:
            _reachable(address)
        for name, value in {"RAY_AUTH_MODE": "token", **_CONNECT_LIMITS}.items():
            os.environ.setdefault(name, value)
        if not address and token_file is not None and "RAY_AUTH_TOKEN" not in os.environ:
            os.environ.setdefault("RAY_AUTH_TOKEN_PATH", str(_token(token_file)))
        import ray

        self._ray, self._places = ray, set()
        self._owned = not ray.is_initialized()
        options = {"runtime_env": {"env_vars": dict(env or {}),
                                   "worker_process_setup_hook": "dedup_site.ray_cluster.django_setup"},
                   "logging_level": "ERROR", "log_to_driver": False, "configure_logging": False}
        try:
            if not self._owned:
                pass  # this process is connected already
            elif address:
                ray.init(address=address, **options)
            else:
                # "local": a Ray of its own, even where a cluster started by `ray start` runs on this machine.
                ray.init(address="local", num_cpus=cpus, _node_ip_address=LOCAL_ADDRESS, include_dashboard=False,
                         object_store_memory=LOCAL_OBJECT_STORE, **options)
        except Exception as error:  # noqa: BLE001 - Ray raises several kinds; each is the same refusal here
            raise RayUnavailable(f"Ray at {address or 'a local start'} is not available: {error}") from error
        self._retries = retries
        self._remote = ray.remote(_in_django).options(max_retries=retries, retry_exceptions=False, num_cpus=1)
        self._in_flight = max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))

    def map(self, step: Callable[..., Any], tasks: Iterable[tuple]) -> Iterator[Any]:
        window: deque = deque()
        for task in tasks:
            window.append(self._remote.remote(step.__module__, step.__name__, *task))
            if len(window) >= self._in_flight:
                yield self._result(window.popleft())
        while window:
            yield self._result(window.popleft())

    def shuffle(self, map_step: Callable[..., list], map_tasks: Iterable[tuple], parts: int,
                reduce_step: Callable[..., Any], reduce_args: tuple = ()) -> Iterator[Any]:
        """Each map task's pieces stay in Ray's object store (spilled to disk as it must) and go straight to the
        reduce task of their partition: the driver never holds one."""
        mapper = self._ray.remote(_pieces_in_django).options(num_returns=parts + 1, max_retries=self._retries,
                                                              retry_exceptions=False, num_cpus=1)
        outputs = [mapper.remote(map_step.__module__, map_step.__name__, *task) for task in map_tasks]
        reduces = [self._remote.remote(reduce_step.__module__, reduce_step.__name__, *reduce_args,
                                       *(output[1 + part] for output in outputs)) for part in range(parts)]
        for output in outputs:
            self._places.add(self._ray.get(output[0]))
        del outputs  # each piece is freed once its reduce task is done with it
        for ref in reduces:
            yield self._result(ref)

    def _result(self, ref) -> Any:
        node, result = self._ray.get(ref)
        self._places.add(node)
        return result

    def places(self) -> list[str]:
        return sorted(self._places)

    def close(self) -> None:
        """Stop the Ray this executor started (a cluster's, or one already running here, is left running)."""
        if self._owned:
            self._ray.shutdown()


def _reachable(address: str) -> None:
    """A cluster's address (host:port, or ray://host:port) answers, or RayUnavailable at once ("auto" is read
    from this machine's running cluster by Ray itself)."""
    if address == "auto":
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except (OSError, ValueError) as error:
        raise RayUnavailable(f"the Ray cluster at {address} is not reachable: {error}") from error


def _token(path: Path) -> Path:
    """The local Ray's token file, made on first use, readable by this user alone."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as out:
            out.write(secrets.token_hex(32))
    return path


def task_env(database_url: str, *, secrets: bool) -> dict[str, str]:
    """What a task's process needs to read the database this one reads: its URL, this repository on the path and,
    for a Ray started here (`secrets`), the settings of this process (the secret key the verification hash is
    keyed with, the data folder). A cluster's nodes have their own settings; a step checks the key's fingerprint."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {"DATABASE_URL": database_url, "DJANGO_SETTINGS_MODULE": "dedup_site.settings", "PYTHONPATH": root}
    if secrets:
        env.update({name: value for name, value in os.environ.items()
                    if name.startswith(("DEDUP_", "DJANGO_")) and name != "DJANGO_SETTINGS_MODULE"})
    return env
