"""What every engine shares: the data directory lock, declared collections, group commit, atomic blocks.

An engine only says how to load a collection's rows (``load``) and how to make a batch of commits
durable in one go (``persist``).  Group commit: a writer queues its commit and waits; whichever
writer finds no flush in progress becomes the leader, persists everything queued (one write and one
fsync for all of them), applies it to memory in order and wakes the others.  So concurrent writers
share fsyncs instead of queueing for one each.
"""

from __future__ import annotations

import fcntl
import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from .base import Document, StoreLockedError
from .memory import Change, MemoryCollection

_TMP_SUFFIX = ".tmp"


@dataclass
class Commit:
    """Changes to commit as one: (collection, changes) pairs, already in memory if ``applied``."""

    parts: list[tuple[MemoryCollection, list[Change]]]
    applied: bool = False
    done: bool = False
    error: BaseException | None = None


@dataclass
class AtomicBlock:
    """The open ``atomic()`` block of one thread: what it changed, how to undo it, what it holds."""

    parts: list[tuple[MemoryCollection, list[Change]]] = field(default_factory=list)
    undo: list[tuple[MemoryCollection, list[Change]]] = field(default_factory=list)
    held: list[MemoryCollection] = field(default_factory=list)


def lock_data_dir(data_dir: Path) -> int:
    """Hold ``<data_dir>/.lock`` exclusively (the descriptor; closing it releases the lock): one server, or one
    operator tool, at a time.  ``StoreLockedError`` when another process holds it."""
    fd = os.open(data_dir / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        other = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise StoreLockedError(
            f"data directory {data_dir} is in use by another wasdi server (pid {other}); "
            "stop it or use another --data-dir"
        ) from None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


class EngineStore(ABC):
    """The engine-neutral part of a store over ``<data_dir>/db``, with ``<data_dir>/.lock`` held exclusively."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = Path(data_dir)
        self.db_dir = self.data_dir / "db"
        self.db_dir.mkdir(parents=True, exist_ok=True)
        self._lock_fd: int | None = self._acquire_lock()
        for leftover in self.db_dir.glob(f".*{_TMP_SUFFIX}"):  # temp files of a crashed writer
            leftover.unlink(missing_ok=True)
        self._collections: dict[str, MemoryCollection] = {}
        self._guard = threading.Lock()
        self._queue_cv = threading.Condition(threading.Lock())
        self._queue: list[Commit] = []
        self._flushing = False
        self._last_batch = 1
        self._blocks = threading.local()
        self._atomic_guard = threading.Lock()
        self._atomic_open = 0

    # -- to implement ------------------------------------------------------------------------------------
    @abstractmethod
    def load(self, name: str, key_field: str, indexes: tuple[str, ...]) -> tuple[Iterable[tuple[int, Document]], str]:
        """The stored (id, document) rows of ``name`` in id order, and how to name their source in errors."""

    @abstractmethod
    def persist(self, batch: list[Commit]) -> None:
        """Make every commit of ``batch`` durable (all or, on failure, none); raise on failure."""

    @abstractmethod
    def close_engine(self) -> None:
        """Flush what the engine keeps and release its files."""

    # -- the data directory ------------------------------------------------------------------------------
    def _acquire_lock(self) -> int:
        return lock_data_dir(self.data_dir)

    # -- collections ---------------------------------------------------------------------------------------
    def declare(self, name: str, key_field: str, indexes: Iterable[str] = ()) -> MemoryCollection:
        """Open (or create) the collection ``name`` keyed by ``key_field``, indexing ``indexes``."""
        if not name.replace("_", "").replace("-", "").isalnum():
            raise ValueError(f"invalid collection name {name!r}")
        wanted = tuple(indexes)
        with self._guard:
            if self._lock_fd is None:
                raise RuntimeError("the store is closed")
            existing = self._collections.get(name)
            if existing is None:
                rows, source = self.load(name, key_field, wanted)
                existing = MemoryCollection(self, name, key_field, wanted, rows, source)
                self._collections[name] = existing
            elif existing.key_field != key_field:
                raise ValueError(f"collection {name!r} is keyed by {existing.key_field!r}, not {key_field!r}")
            else:
                self.add_indexes(existing, wanted)
            return existing

    def add_indexes(self, collection: MemoryCollection, indexes: tuple[str, ...]) -> None:
        """Index more fields of a declared collection."""
        collection.add_indexes(indexes)

    def collection(self, name: str) -> MemoryCollection:
        """The collection ``name`` (declared with ``declare``); ``KeyError`` if it was not."""
        try:
            return self._collections[name]
        except KeyError:
            raise KeyError(f"collection {name!r} was not declared") from None

    def collections(self) -> Iterator[MemoryCollection]:
        """Every declared collection."""
        return iter(list(self._collections.values()))

    # -- commits ---------------------------------------------------------------------------------------------
    def commit(self, collection: MemoryCollection, changes: list[Change]) -> None:
        """Make ``changes`` durable then visible (or, inside an atomic block, visible now, durable at its end)."""
        block: AtomicBlock | None = getattr(self._blocks, "block", None)
        if block is not None:
            block.undo.append((collection, collection.apply(changes)))
            block.parts.append((collection, changes))
            return
        self._commit(Commit([(collection, changes)]))

    def _commit(self, commit: Commit) -> None:
        with self._queue_cv:
            self._queue.append(commit)
            while not commit.done:
                if self._flushing:
                    self._queue_cv.wait()
                    continue
                self._flushing = True
                self._queue_cv.release()
                try:
                    if len(self._queue) < self._last_batch:
                        # The writers the last flush woke are likely about to queue their next commit: let them
                        # (this releases the GIL), so that one fsync carries them all.
                        os.sched_yield()
                    with self._queue_cv:
                        batch, self._queue = self._queue, []
                        self._last_batch = len(batch)
                    self._flush(batch)
                finally:
                    self._queue_cv.acquire()
                    self._flushing = False
                    self._queue_cv.notify_all()
        if commit.error is not None:
            raise commit.error

    def _flush(self, batch: list[Commit]) -> None:
        error: BaseException | None = None
        try:
            self.persist(batch)
        except BaseException as exc:
            error = exc
        for commit in batch:
            if error is None and not commit.applied:
                for collection, changes in commit.parts:
                    collection.apply(changes)
            commit.error = error
            commit.done = True

    @contextmanager
    def exclusive_flush(self) -> Iterator[None]:
        """No commit is being persisted while this is held (for rotating files)."""
        with self._queue_cv:
            while self._flushing:
                self._queue_cv.wait()
            self._flushing = True
        try:
            yield
        finally:
            with self._queue_cv:
                self._flushing = False
                self._queue_cv.notify_all()

    # -- atomic blocks ---------------------------------------------------------------------------------------
    def hold_in_atomic_block(self, collection: MemoryCollection) -> bool:
        """Inside an atomic block: hold ``collection`` until the block ends (and say so)."""
        block: AtomicBlock | None = getattr(self._blocks, "block", None)
        if block is None:
            return False
        if collection not in block.held:
            collection.hold()
            block.held.append(collection)
        return True

    @contextmanager
    def atomic(self) -> Iterator[None]:
        """Commit every write of the block, in any collections, as one (see ``base``)."""
        if getattr(self._blocks, "block", None) is not None:
            yield  # nested: part of the enclosing block
            return
        block = AtomicBlock()
        with self._atomic_guard:
            self._atomic_open += 1
        self._blocks.block = block
        try:
            try:
                yield
            finally:
                self._blocks.block = None
            if block.parts:
                self._commit(Commit(block.parts, applied=True))
        except BaseException:
            for collection, undo in reversed(block.undo):
                collection.apply(undo, undoing=True)
            raise
        finally:
            for collection in reversed(block.held):
                collection.let_go()
            with self._atomic_guard:
                self._atomic_open -= 1

    @contextmanager
    def no_open_atomic_block(self) -> Iterator[bool]:
        """Whether no atomic block has uncommitted changes in memory; none starts while this is held."""
        with self._atomic_guard:
            yield self._atomic_open == 0

    # -- lifetime ---------------------------------------------------------------------------------------------
    def close(self) -> None:
        """Flush what the engine keeps, release the files and the data directory (idempotent)."""
        with self._guard:
            if self._lock_fd is None:
                return
            try:
                self.close_engine()
            finally:
                self._collections.clear()
                self.release_data_dir()

    def release_data_dir(self) -> None:
        """Let another process open the data directory (also when opening fails half-way)."""
        if self._lock_fd is not None:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> EngineStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
