"""A progress bar for management commands: redrawn in place on a terminal, one line per stage otherwise
(so a log file gets a readable record, not thousands of carriage returns)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TextIO

WIDTH = 30


class ProgressBar:
    def __init__(self, stream: TextIO, label: str = ""):
        self.stream, self.label = stream, label
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.last_stage, self.last_line = None, ""

    def draw(self, fraction: float, stage: str = "") -> None:
        fraction = min(max(fraction, 0.0), 1.0)
        if self.tty:
            filled = round(WIDTH * fraction)
            line = f"{self.label} [{'#' * filled}{'.' * (WIDTH - filled)}] {fraction:4.0%} {stage}".rstrip()
            if line != self.last_line:
                self.stream.write("\r" + line.ljust(len(self.last_line)))
                self.stream.flush()
                self.last_line = line
        elif stage != self.last_stage:
            self.stream.write(f"{self.label} {fraction:4.0%} {stage}\n".lstrip())
            self.stream.flush()
        self.last_stage = stage

    def close(self) -> None:
        if self.tty and self.last_line:
            self.stream.write("\n")
            self.stream.flush()


class Poller:
    """Draws what `read` returns ((fraction, stage) or None) every `every` seconds on a thread, while the
    calling thread does the work (a burst worker must run in the main thread: it installs signal handlers)."""

    def __init__(self, bar: ProgressBar, read: Callable[[], tuple[float, str] | None], every: float = 0.3):
        self.bar, self.read, self.every = bar, read, every
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self.stop.is_set():
            state = self.read()
            if state is not None:
                self.bar.draw(*state)
            self.stop.wait(self.every)

    def __enter__(self) -> Poller:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()
        state = self.read()  # where the work ended, which the last tick may have missed
        if state is not None:
            self.bar.draw(*state)
        self.bar.close()


def wait_until(done: Callable[[], bool], every: float = 0.5) -> None:
    while not done():
        time.sleep(every)
