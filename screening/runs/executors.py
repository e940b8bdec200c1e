"""Who runs a run's steps. The driver hands an executor a step and its tasks (the arguments of each call) and
reads the results back in the order of the tasks, as they come: it holds no more than the results it keeps.

`InProcess` runs them here, one after the other: small corpora, the tests' quick path; `RayExecutor`
(dedup_site.ray_cluster) on a Ray cluster, or a Ray started on this machine."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol


class Executor(Protocol):
    local: bool  # the tasks run in the driver's own process

    def map(self, step: Callable[..., Any], tasks: Iterable[tuple]) -> Iterator[Any]:
        """step(*task) for each task, the results in the order of the tasks."""
        ...

    def shuffle(self, map_step: Callable[..., list], map_tasks: Iterable[tuple], parts: int,
                reduce_step: Callable[..., Any], reduce_args: tuple = ()) -> Iterator[Any]:
        """map_step(*task) for each task gives one piece a partition; reduce_step(*reduce_args, *pieces) is then
        called for each partition with that partition's piece from every map task. The results in partition
        order."""
        ...

    def places(self) -> list[str]:
        """Where the tasks ran (recorded with the run's results)."""
        ...

    def close(self) -> None:
        """Let go of what the executor started."""
        ...


class InProcess:
    """Each task in this process, when the driver asks for its result: one task's data at a time."""

    local = True

    def map(self, step: Callable[..., Any], tasks: Iterable[tuple]) -> Iterator[Any]:
        for task in tasks:
            yield step(*task)

    def shuffle(self, map_step: Callable[..., list], map_tasks: Iterable[tuple], parts: int,
                reduce_step: Callable[..., Any], reduce_args: tuple = ()) -> Iterator[Any]:
        # A partition at a time, the map done again for each (asked for that partition only): one process holds
        # one partition's pieces, never every partition's.
        tasks = list(map_tasks)
        for part in range(parts):
            yield reduce_step(*reduce_args, *(map_step(*task, part)[part] for task in tasks))

    def places(self) -> list[str]:
        return []  # the run's own process: nothing to name beside it

    def close(self) -> None:
        pass
