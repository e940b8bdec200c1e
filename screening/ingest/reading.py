"""Reading an upload into document rows, in chunks, in this process or a second one (no Django imports: the
second process runs this module and imports nothing of Django)."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path

from screening.engine import contract
from screening.ingest import formats

BATCH = 2000  # rows a chunk
ROOT = Path(__file__).resolve().parent.parent.parent  # where `screening` is imported from


def row(record: formats.Record) -> tuple:
    """A document row without its corpus and upload (uploads.DOCUMENT_COLUMNS[2:]), its content digest taken."""
    return (record.doc_id, record.source_id, record.version, record.language, record.title, record.body,
            record.collected_at, record.member_path, record.place,
            contract.sha256_hex(contract.content_bytes(record.language, record.title, record.body)))


@dataclass
class Chunk:
    """Up to BATCH document rows read from an upload, with what reading found since the previous chunk."""

    rows: list[tuple]
    problems: list[formats.Problem]
    notices: list[str]
    done: int  # the report's progress
    total: int
    count: int  # records read so far


def parse(path: Path | formats.Stored, name: str, language: str, limits: formats.Limits) -> Iterator[Chunk]:
    """The upload's rows in chunks: records read and checked, doubled doc_ids within it refused."""
    report = formats.Report()
    seen: dict[str, str] = {}  # doc_id -> place
    rows: list[tuple] = []
    problems = notices = count = 0

    def chunk() -> Chunk:
        nonlocal rows, problems, notices
        out = Chunk(rows, report.problems[problems:], report.notices[notices:], report.done, report.total, count)
        rows, problems, notices = [], len(report.problems), len(report.notices)
        return out

    for count, record in enumerate(formats.read_records(path, name, report, default_language=language,  # noqa: B007
                                                       limits=limits), start=1):
        first = seen.get(record.doc_id)
        if first is not None:
            report.problem(record.place, "doc_id", formats.Rule("doc-id-twice", doc_id=repr(record.doc_id),
                                                                 first=first))
            continue
        seen[record.doc_id] = record.place
        rows.append(row(record))
        if len(rows) >= BATCH:
            yield chunk()
    yield chunk()


def _parse_in_child(path: Path | formats.Stored, name: str, language: str, limits: formats.Limits, pipe) -> None:
    try:
        for found in parse(path, name, language, limits):
            pipe.send(found)
        pipe.send(None)
    except BaseException as error:  # whatever it was, the parent fails the upload with it
        # A bucket's fault (the object changed, out of reach) goes as it is: the parent says which object.
        crosses = getattr(error, "crosses_processes", False)
        pipe.send(error if crosses else RuntimeError(f"reading the upload failed: {error!r}"))
    finally:
        pipe.close()


def chunks(path: Path | formats.Stored, name: str, language: str, limits: formats.Limits,
           parallel: bool) -> Iterator[Chunk]:
    """parse(), with `parallel` in a second process: reading and checking records costs as much as storing
    them, so the two overlap. The pipe holds a chunk or two, so the reader never runs far ahead.

    The reader is a fresh interpreter running this module, with the pipe's writing end and nothing else: a
    forked one kept the caller's database connection (and its open transaction) and the pipe's reading end,
    so a killed caller left both open behind it; multiprocessing's spawn runs the caller's main script again,
    which a script without a __main__ guard does not survive."""
    if not parallel:
        yield from parse(path, name, language, limits)
        return
    read_end, write_end = os.pipe()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
    child = subprocess.Popen([sys.executable, "-m", __name__, str(write_end)], stdin=subprocess.PIPE,  # noqa: S603
                             pass_fds=(write_end,), env=env, cwd=ROOT)
    os.close(write_end)
    receive = Connection(read_end, writable=False)
    try:
        child.stdin.write(pickle.dumps((path, name, language, limits)))
        child.stdin.close()
        while (found := _receive(receive)) is not None:
            if isinstance(found, Exception):
                raise found
            yield found
    finally:
        receive.close()
        if child.poll() is None:
            child.kill()
        child.wait()


class ReaderDied(RuntimeError):
    """The process reading the upload ended before it said it had finished (killed, out of memory)."""


def _receive(pipe):
    try:
        return pipe.recv()
    except (EOFError, OSError) as error:  # between messages, or in the middle of one
        raise ReaderDied("the process reading the upload died before it finished") from error


if __name__ == "__main__":  # the reader: arguments on stdin (pickled by chunks()), chunks to the pipe's fd
    # Through the module's own name, so that what it sends unpickles as screening.ingest.reading's classes.
    from screening.ingest import reading

    reading._parse_in_child(*pickle.load(sys.stdin.buffer), Connection(int(sys.argv[1]), readable=False))  # noqa: S301
