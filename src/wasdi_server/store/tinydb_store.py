"""The default engine: a journaled document store in TinyDB's file format (our code; the TinyDB library is
not used), a JSON file per collection plus one append-only journal, so a write costs one appended line, not a
rewrite of its collection.

On disk, in ``<data_dir>/db`` (docs/server.md, "The store"):

* ``<name>.json``: the collection's snapshot in TinyDB's own format, ``{"<name>": {"<id>": doc}}``
  (readable by ``tinydb.TinyDB`` and by eye);
* ``journal-<n>.jsonl``: every commit since the snapshots, one line each, ``{"w": [[collection, id,
  doc or null], ...]}`` (``null``: deleted).  A line is fsynced before its writer is answered, and
  one line holds every write of an atomic block, so a crash keeps all of them or none.

Open: read each snapshot, replay the journals over it in order, and start a new journal.  Bytes after
a journal's last newline are an append a crash cut short (its writer was never answered) and are left
out; any complete line that cannot be read stops the start with the file and line named, since the write
it held was acknowledged (``wasdi-server store check`` and ``store drop-line``: docs/server.md).  Replaying is
idempotent (a line sets or removes one id), which makes compaction safe at any instant: when the
journals outgrow the data, a background thread switches writes to a new journal, writes every
changed collection's snapshot atomically (temp file, fsync, rename, fsync the directory) and only
then deletes the older journals.  A crash in between replays lines the snapshot already has.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import threading
from collections.abc import Iterable
from itertools import pairwise
from operator import itemgetter
from pathlib import Path
from typing import Any

from wasdi_sdk.atomic_files import fsync_dir, write_atomic

from .base import Document, StoreCorruptError, StoreError
from .engine import _TMP_SUFFIX, Commit, EngineStore

log = logging.getLogger(__name__)

SNAPSHOT_FILE: dict[str, Any] = {"mode": 0o600, "suffix": _TMP_SUFFIX}
"""How the store's files are written by ``write_atomic``: the owner's alone, and temporary files the next open
removes."""
JOURNAL_FILE = re.compile(r"^journal-(\d{8})\.jsonl$")
Op = tuple[int, "Document | None"]


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.ENOSPC, "no progress writing the journal")
        view = view[written:]


def _snapshot_payload(name: str, rows: list[tuple[int, Document]]) -> bytes:
    """``{"<name>": {"<id>": doc, ...}}``, encoded a document at a time: one json.dumps of the whole
    collection would hold the GIL for a second at 100,000 records, stalling every request meanwhile."""
    encode = json.JSONEncoder(ensure_ascii=False).encode
    parts = [f"{json.dumps(str(doc_id))}:{encode(doc)}" for doc_id, doc in rows]
    return ("{" + json.dumps(name) + ":{" + ",".join(parts) + "}}").encode()


def parse_journal_line(line: bytes) -> list[Any]:
    """The writes of one complete journal line, ``[[collection, id, document or null], ...]``; ``ValueError``
    saying what is wrong with it otherwise."""
    try:
        entry = json.loads(line)
        ops = entry["w"]
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"not a journal entry: {type(exc).__name__}: {str(exc)[:200]}") from None
    if not isinstance(ops, list) or not all(
        isinstance(op, list) and len(op) == 3 and isinstance(op[0], str) and isinstance(op[1], int)
        and (op[2] is None or isinstance(op[2], dict)) for op in ops
    ):
        raise ValueError("not a list of [collection, id, document] writes")
    return ops


def read_snapshot(path: Path, name: str) -> dict[int, Document]:
    """The documents of collection ``name`` in its snapshot file (none when the file does not exist);
    ``StoreCorruptError`` naming the file when it cannot be read."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}

    def corrupt(problem: str) -> StoreCorruptError:
        return StoreCorruptError(f"collection file {path} is corrupt ({problem}); it was left untouched: "
                                 "repair it or move it away")

    if not raw:  # every snapshot is written whole and atomically: an empty one was emptied by someone else
        raise corrupt("it is empty: zero bytes")

    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise corrupt(f"not valid JSON: {exc}") from exc
    if not isinstance(data, dict) or not all(
        isinstance(table, dict) and all(isinstance(doc, dict) for doc in table.values())
        for table in data.values()
    ):
        raise corrupt("not a JSON object of tables of documents")
    try:
        return {int(doc_id): doc for doc_id, doc in data.get(name, {}).items()}
    except ValueError as exc:
        raise corrupt(f"a document id is not a number: {exc}") from exc


def read_journal(path: Path) -> list[list[Any]]:
    """The writes of every complete line of a journal, in order (the bytes after its last newline are an append
    a crash cut short, left out); ``StoreCorruptError`` naming the line when a complete one cannot be read."""
    lines = path.read_bytes().split(b"\n")
    lines.pop()  # after the last newline: empty, or an append a crash cut short (its writer was never answered)
    entries: list[list[Any]] = []
    for number, line in enumerate(lines, start=1):
        try:
            entries.append(parse_journal_line(line))
        except ValueError as exc:
            # A whole line (its newline written) was acknowledged: losing it is the operator's decision.
            raise StoreCorruptError(
                f"journal {path} is corrupt at line {number} ({exc}); it was left untouched. See it with "
                f"'wasdi-server store check', then restore the data directory from a backup, or drop that "
                f"line (the write it held is lost) with 'wasdi-server store drop-line {path.name} {number}'"
            ) from exc
    return entries


def journals_of(db_dir: Path) -> list[tuple[int, Path]]:
    """The journals of a store folder with their sequence numbers, in order."""
    found = [(int(m.group(1)), p) for p in db_dir.glob("journal-*.jsonl") if (m := JOURNAL_FILE.match(p.name))]
    return sorted(found)


def read_documents(data_dir: Path) -> dict[str, dict[int, Document]]:
    """Every document of a data directory's store by collection, as opening it would give them, read without
    taking the data directory's lock or writing anything: what an operator's tool or a test may look at while a
    server holds the store (a write in flight may be seen or not)."""
    db_dir = Path(data_dir) / "db"
    if not db_dir.is_dir():
        return {}
    for _ in range(100):
        collections = {p.stem: read_snapshot(p, p.stem) for p in sorted(db_dir.glob("*.json"))}
        try:
            for _, journal in journals_of(db_dir):
                for ops in read_journal(journal):
                    for name, doc_id, doc in ops:
                        table = collections.setdefault(name, {})
                        if doc is None:
                            table.pop(doc_id, None)
                        else:
                            table[doc_id] = doc
        except FileNotFoundError:
            continue  # a compaction removed a journal meanwhile: its writes are in newer snapshots, read again
        return collections
    raise StoreError(f"the store of {data_dir} kept compacting while it was read: try again")


MANIFEST = "collections.manifest"
"""The list of collections whose snapshot files the data directory has had."""


class TinyDBStore(EngineStore):
    """Collections stored as ``<data_dir>/db/<name>.json`` plus ``journal-<n>.jsonl``."""

    def __init__(self, data_dir: Path, compact_bytes: int = 16 * 1024 * 1024) -> None:
        super().__init__(data_dir)
        self.compact_bytes = compact_bytes
        """Compact once the journals hold this many bytes (or half the snapshots' size, if larger)."""
        self._replay: dict[str, list[Op]] = {}
        self._journals: list[Path] = []
        self._journal_bytes = 0
        self._seq = 0
        try:
            for seq, path in journals_of(self.db_dir):
                self._seq = max(self._seq, seq)
                self._read_journal(path)
                self._journals.append(path)
                self._journal_bytes += path.stat().st_size
        except BaseException:
            self.release_data_dir()
            raise
        self._dirty: set[str] = set(self._replay)
        self._data_bytes = sum(p.stat().st_size for p in self.db_dir.glob("*.json"))
        self._fd: int | None = None
        self._fd_size = 0
        self._broken: OSError | None = None
        self._compacting = threading.Lock()
        self._wake = threading.Event()
        self._stopping = False
        self._compactor = threading.Thread(target=self._compact_when_asked, name="store-compactor", daemon=True)
        self._compactor.start()

    # -- reading ---------------------------------------------------------------------------------------
    def _read_journal(self, path: Path) -> None:
        for ops in read_journal(path):
            for name, doc_id, doc in ops:
                self._replay.setdefault(name, []).append((doc_id, doc))

    def _snapshot_path(self, name: str) -> Path:
        return self.db_dir / f"{name}.json"

    def _read_snapshot(self, name: str) -> dict[int, Document]:
        return read_snapshot(self._snapshot_path(name), name)

    def _rows_on_disk(self, name: str) -> dict[int, Document]:
        rows = self._read_snapshot(name)
        for doc_id, doc in self._replay.get(name, ()):
            if doc is None:
                rows.pop(doc_id, None)
            else:
                rows[doc_id] = doc
        return rows

    def _written_collections(self) -> set[str]:
        """The collections whose snapshot file this data directory has had (``db/collections.manifest``).

        A missing snapshot is normal only for a collection never declared here before; one this list
        names was lost, and the store refuses to start rather than serve it empty."""
        try:
            return set(json.loads(self._manifest_path().read_bytes()))
        except FileNotFoundError:
            # A data directory written before the list existed: what it has now is what it had.
            return {p.stem for p in self.db_dir.glob("*.json")}
        except ValueError as exc:
            raise StoreCorruptError(f"{self._manifest_path()} is corrupt ({exc}); it was left untouched") from exc

    def _manifest_path(self) -> Path:
        return self.db_dir / MANIFEST

    def load(self, name: str, key_field: str, indexes: tuple[str, ...]) -> tuple[Iterable[tuple[int, Document]], str]:
        path = self._snapshot_path(name)
        written = self._written_collections()
        if not path.exists() and name in written:
            raise StoreCorruptError(f"collection file {path} is missing, although this data directory had it; "
                                    "restore it from a backup, or move the data directory away")
        rows = self._rows_on_disk(name)
        if not path.exists():  # so that every declared collection has its readable file
            write_atomic(path, json.dumps({name: {}}).encode(), **SNAPSHOT_FILE)
        if name not in written or not self._manifest_path().exists():
            write_atomic(self._manifest_path(), json.dumps(sorted(written | {name})).encode(), **SNAPSHOT_FILE)
        self._replay.pop(name, None)  # from now on memory is the authority; _dirty still names it
        ordered = list(rows.items())
        ids = [doc_id for doc_id, _doc in ordered]
        if any(a >= b for a, b in pairwise(ids)):  # a snapshot is written in id order
            ordered.sort(key=itemgetter(0))
        return ordered, f"collection file {path}"

    # -- writing -----------------------------------------------------------------------------------------
    def _journal_fd(self) -> int:
        if self._fd is None:
            self._seq += 1
            path = self.db_dir / f"journal-{self._seq:08d}.jsonl"
            self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
            self._fd_size = 0
            self._journals.append(path)
            fsync_dir(self.db_dir)
        return self._fd

    def persist(self, batch: list[Commit]) -> None:
        if self._broken is not None:
            raise StoreError(f"the store stopped writing after a failed journal write ({self._broken}); "
                             "restart the server")
        lines = []
        names: set[str] = set()
        for commit in batch:
            ops: list[list[Any]] = []
            for collection, changes in commit.parts:
                names.add(collection.name)
                ops.extend([collection.name, doc_id, doc] for _key, doc_id, doc in changes)
            lines.append(json.dumps({"w": ops}, ensure_ascii=False, separators=(",", ":")))
        data = ("\n".join(lines) + "\n").encode()
        fd = self._journal_fd()
        try:
            _write_all(fd, data)
            os.fdatasync(fd)
        except BaseException:
            try:  # take back a partly written line, so later lines never follow a torn one
                os.ftruncate(fd, self._fd_size)
                os.fdatasync(fd)
            except OSError as exc:
                self._broken = exc
            raise
        self._fd_size += len(data)
        self._journal_bytes += len(data)
        self._dirty |= names
        if self._journal_bytes >= max(self.compact_bytes, self._data_bytes // 2):
            self._wake.set()

    # -- compaction --------------------------------------------------------------------------------------
    def _compact_when_asked(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            if self._stopping:
                return
            try:
                self.compact()
            except Exception:  # the journal still has everything: retry at the next threshold
                log.exception("store compaction failed; the journals are kept")

    def compact(self) -> bool:
        """Fold the journals into the snapshots; whether it ran (not while an atomic block is open)."""
        with self._compacting:
            with self.no_open_atomic_block() as clear:
                if not clear:
                    return False
                with self.exclusive_flush():
                    if self._fd is not None:
                        os.close(self._fd)
                        self._fd = None
                    rotated, self._journals = self._journals, []
                    dirty, self._dirty = self._dirty, set()
                    declared = {c.name: c for c in self.collections()}
                    snapshots = {name: declared[name].rows() for name in dirty if name in declared}
            try:
                for name in dirty:
                    rows = snapshots[name] if name in snapshots else sorted(self._rows_on_disk(name).items())
                    write_atomic(self._snapshot_path(name), _snapshot_payload(name, rows), **SNAPSHOT_FILE)
            except BaseException:
                with self.exclusive_flush():
                    self._dirty |= dirty
                    self._journals = rotated + self._journals
                raise
            for path in rotated:  # oldest first: a journal left behind is never older than one deleted
                path.unlink(missing_ok=True)
            fsync_dir(self.db_dir)
            for name in dirty:
                self._replay.pop(name, None)
            self._journal_bytes = self._fd_size if self._fd is not None else 0
            self._data_bytes = sum(p.stat().st_size for p in self.db_dir.glob("*.json"))
            return True

    def close_engine(self) -> None:
        self._stopping = True
        self._wake.set()
        self._compactor.join()
        try:
            if self._journals and self._broken is None:
                self.compact()  # a clean shutdown leaves only readable JSON files
        finally:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None



