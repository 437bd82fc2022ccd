"""The operator's tool for a journal line the store refuses to read (``wasdi-server store check`` and
``wasdi-server store drop-line``).

A complete journal line was acknowledged to its writer, so a line that cannot be read stops the start
rather than disappear.  ``check`` shows every journal of the data directory and, for each, the first line
that cannot be read (number, reason, the start of its bytes); ``drop_line`` removes one line on the
operator's word: the line's bytes are kept beside the journal (``<journal>.line-<n>.dropped``) and the
journal is rewritten atomically without it.  Both hold the data directory's lock, so they refuse to run
beside a server.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from wasdi_sdk.atomic_files import write_atomic

from ..store.engine import lock_data_dir
from ..store.tinydb_store import JOURNAL_FILE, SNAPSHOT_FILE, parse_journal_line

PREVIEW_BYTES = 120


class RepairError(Exception):
    """A repair that cannot be done (the message says why and what to do)."""


@dataclass(frozen=True)
class BadLine:
    number: int
    reason: str
    preview: str
    """The start of the line's bytes, as text."""


@dataclass(frozen=True)
class JournalReport:
    name: str
    lines: int
    """Complete lines."""
    size: int
    torn_tail: int
    """Bytes after the last newline: an append a crash cut short, left out at start."""
    bad: tuple[BadLine, ...]


@contextmanager
def held(data_dir: Path) -> Iterator[Path]:
    """The data directory's ``db`` folder, with the directory locked against a server starting meanwhile."""
    db = data_dir / "db"
    if not db.is_dir():
        raise RepairError(f"{data_dir} has no store (no db folder): is it a data directory?")
    fd = lock_data_dir(data_dir)
    try:
        yield db
    finally:
        os.close(fd)


def _journals(db: Path) -> list[Path]:
    return sorted(p for p in db.iterdir() if JOURNAL_FILE.match(p.name))


def _report(path: Path) -> JournalReport:
    data = path.read_bytes()
    lines = data.split(b"\n")
    tail = lines.pop()
    bad = []
    for number, line in enumerate(lines, start=1):
        try:
            parse_journal_line(line)
        except ValueError as exc:
            bad.append(BadLine(number, str(exc), line[:PREVIEW_BYTES].decode("utf-8", "replace")))
    return JournalReport(path.name, len(lines), len(data), len(tail), tuple(bad))


def check(data_dir: Path) -> list[JournalReport]:
    """Every journal of the data directory, oldest first, with the lines that cannot be read."""
    with held(data_dir) as db:
        return [_report(path) for path in _journals(db)]


def drop_line(data_dir: Path, journal: str, number: int) -> Path:
    """Remove complete line ``number`` (from 1) of ``journal`` (its file name); where its bytes were kept."""
    if not JOURNAL_FILE.match(journal):
        raise RepairError(f"{journal!r} is not a journal file name (journal-NNNNNNNN.jsonl)")
    with held(data_dir) as db:
        path = db / journal
        if not path.is_file():
            raise RepairError(f"there is no {journal} in {db}: 'wasdi-server store check' lists the journals")
        lines = path.read_bytes().split(b"\n")
        tail = lines.pop()
        if not 1 <= number <= len(lines):
            raise RepairError(f"{journal} has {len(lines)} complete lines: there is no line {number}")
        kept = db / f"{journal}.line-{number}.dropped"
        write_atomic(kept, lines[number - 1] + b"\n", **SNAPSHOT_FILE)
        rest = lines[:number - 1] + lines[number:]
        write_atomic(path, b"".join(line + b"\n" for line in rest) + tail, **SNAPSHOT_FILE)
        return kept
