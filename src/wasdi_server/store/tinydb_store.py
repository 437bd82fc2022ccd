"""The durable store: one TinyDB file per collection, written atomically, safe for threads.

TinyDB rewrites its whole file in place and knows nothing of threads, so here:

* ``AtomicJSONStorage`` writes to a temp file in the same directory, fsyncs it, ``os.replace``-s it
  onto the target and fsyncs the directory, so a crash leaves the old file or the new one, never a
  torn one.  It serves reads from an in-memory copy (we hold the data directory's exclusive lock, so
  nobody else writes the files); a failed write drops that copy, so memory never shows a write the
  disk did not take.  This matters because ``Table._update_table`` mutates the read data in place.
* Each collection has its own file, TinyDB instance, ``RLock`` (around every read and every whole
  read-modify-write) and key -> doc_id index for O(1) lookups.
* Documents go in and come out through a JSON round trip (faster than ``copy.deepcopy`` for small
  documents), so callers never share objects with the store and memory holds exactly what disk does.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from tinydb import TinyDB
from tinydb.storages import Storage

from .base import (
    Document,
    DuplicateKeyError,
    Predicate,
    StoreCorruptError,
    StoreLockedError,
    matches,
)

Tables = dict[str, dict[str, Any]]
_TMP_SUFFIX = ".tmp"


def _clone(value: Any) -> Any:
    """An independent copy of JSON data (also rejects what JSON cannot store): for data coming in."""
    return json.loads(json.dumps(value))


def _copy(value: Any) -> Any:
    """An independent copy of stored (already JSON) data: for data going out.

    Documents are mostly flat, so copying only the nested dicts and lists is several times faster than
    a JSON round trip, and reads are the hot path.
    """
    if isinstance(value, dict):
        return {k: _copy(v) if isinstance(v, dict | list) else v for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) if isinstance(v, dict | list) else v for v in value]
    return value


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class AtomicJSONStorage(Storage):
    """A TinyDB storage writing its JSON file atomically and durably, reading from memory."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._data: Tables | None = None

    def read(self) -> Tables:
        """The tables, loaded from disk on first use (or after a failed write)."""
        if self._data is None:
            self._data = self._load()
        return self._data

    def _load(self) -> Tables:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        if not raw:  # left by a crash of a non-atomic writer
            return {}
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise self._corrupt(f"not valid JSON: {exc}") from exc
        if not isinstance(data, dict) or not all(
            isinstance(table, dict) and all(isinstance(doc, dict) for doc in table.values())
            for table in data.values()
        ):
            raise self._corrupt("not a JSON object of tables of documents")
        return data

    def _corrupt(self, problem: str) -> StoreCorruptError:
        return StoreCorruptError(
            f"collection file {self.path} is corrupt ({problem}); it was left untouched: "
            "repair it or move it away"
        )

    def write(self, data: Tables) -> None:
        """Replace the file with ``data``; on failure forget the in-memory copy and re-raise."""
        tmp = None
        try:
            payload = json.dumps(data, ensure_ascii=False).encode()
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.",
                                       suffix=_TMP_SUFFIX)
            with open(fd, "wb") as handle:
                handle.write(payload)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path)
            tmp = None
            _fsync_dir(self.path.parent)
        except BaseException:
            self._data = None
            if tmp is not None:
                with suppress(OSError):
                    os.unlink(tmp)
            raise
        self._data = data

    def close(self) -> None:
        """Forget the in-memory copy."""
        self._data = None


class TinyDBCollection:
    """A collection of documents keyed by ``key_field``, stored in its own TinyDB file."""

    def __init__(self, name: str, key_field: str, path: Path) -> None:
        self.name = name
        self.key_field = key_field
        self._path = path
        self._lock = threading.RLock()
        self._db = TinyDB(path, storage=AtomicJSONStorage)
        self._table = self._db.table(name, cache_size=0)
        self._index: dict[str, int] = {}
        self.version = 0
        """Goes up on every write (attempted or done): readers cache by it."""
        self._reindex()

    def _reindex(self) -> None:
        """Rebuild the key -> doc_id index from the table."""
        index: dict[str, int] = {}
        for doc in self._table:
            key = doc.get(self.key_field)
            if key is None or str(key) in index:
                raise StoreCorruptError(
                    f"collection file {self._path} has a document with a missing or "
                    f"duplicate {self.key_field!r} ({key!r}); it was left untouched"
                )
            index[str(key)] = doc.doc_id
        self._index = index

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """Around a table write: if it fails, the storage reloads from disk, so re-sync the index."""
        try:
            yield
        except BaseException:
            self._reindex()
            raise
        finally:
            self.version += 1

    def _key_of(self, document: Mapping[str, Any]) -> str:
        if document.get(self.key_field) is None:
            raise ValueError(f"{self.name} document has no {self.key_field!r}")
        return str(document[self.key_field])

    def _raw(self, key: str) -> dict[str, Any] | None:
        doc_id = self._index.get(str(key))
        return None if doc_id is None else self._rows().get(str(doc_id))

    def _rows(self) -> Mapping[str, dict[str, Any]]:
        """The stored documents by doc id, as TinyDB holds them (not copies: never hand them out)."""
        return self._table._read_table()  # the storage serves this from memory

    def _matching_ids(self, predicate: Predicate | None, equals: Mapping[str, Any]) -> list[int]:
        return [int(doc_id) for doc_id, doc in self._rows().items() if matches(doc, predicate, equals)]

    def _replace(self, key: str, new: Document) -> None:
        """Store ``new`` (already a private copy) in place of the document ``key``."""
        if self._key_of(new) != key:
            raise ValueError(f"cannot change the {self.key_field!r} of {self.name} document {key!r}")

        def replace(doc: MutableMapping[str, Any]) -> None:
            doc.clear()
            doc.update(new)

        with self._writing():
            self._table.update(replace, doc_ids=[self._index[key]])

    def get(self, key: str) -> Document | None:
        """The document with this key, or ``None``."""
        with self._lock:
            doc = self._raw(key)
            return None if doc is None else _copy(doc)

    def find(self, predicate: Predicate | None = None, /, **equals: Any) -> list[Document]:
        """Documents whose fields equal ``equals`` and for which ``predicate`` is true."""
        with self._lock:
            return [_copy(doc) for doc in self._rows().values() if matches(doc, predicate, equals)]

    def find_one(self, predicate: Predicate | None = None, /, **equals: Any) -> Document | None:
        """The first document ``find`` would return, or ``None``."""
        with self._lock:
            doc = next((d for d in self._rows().values() if matches(d, predicate, equals)), None)
            return None if doc is None else _copy(doc)

    def count(self, predicate: Predicate | None = None, /, **equals: Any) -> int:
        """How many documents ``find`` would return."""
        with self._lock:
            if predicate is None and not equals:
                return len(self._index)
            return len(self._matching_ids(predicate, equals))

    def all(self) -> list[Document]:
        """Every document, in insertion order."""
        return self.find()

    def insert(self, document: Mapping[str, Any]) -> Document:
        """Add a document; raises ``DuplicateKeyError`` if its key is taken."""
        doc = _clone(document)
        key = self._key_of(doc)
        with self._lock:
            if key in self._index:
                raise DuplicateKeyError(f"{self.name} already has {self.key_field}={key!r}")
            with self._writing():
                self._index[key] = self._table.insert(doc)
            return _clone(doc)

    def upsert(self, document: Mapping[str, Any]) -> Document:
        """Add the document, or replace the one with the same key."""
        doc = _clone(document)
        key = self._key_of(doc)
        with self._lock:
            if key not in self._index:
                return self.insert(doc)
            self._replace(key, doc)
            return _clone(doc)

    def update(self, key: str, changes: Mapping[str, Any]) -> Document | None:
        """Merge ``changes`` into the document; the new document, or ``None`` if absent."""
        changes = _clone(changes)
        return self.modify(key, lambda doc: {**doc, **changes})

    def modify(self, key: str, change: Callable[[Document], Document | None]) -> Document | None:
        """Read-modify-write under the collection's lock.

        ``change`` gets a copy of the document and returns the new one (or ``None`` to leave it
        unchanged).  Returns the stored document, or ``None`` if the key is absent.
        """
        with self._lock:
            doc = self._raw(key)
            if doc is None:
                return None
            new = change(_clone(doc))
            if new is None:
                return _clone(doc)
            new = _clone(new)
            self._replace(str(key), new)
            return _clone(new)

    def delete(self, key: str) -> bool:
        """Remove the document; whether it was there."""
        with self._lock:
            doc_id = self._index.get(str(key))
            if doc_id is None:
                return False
            with self._writing():
                self._table.remove(doc_ids=[doc_id])
            del self._index[str(key)]
            return True

    def delete_where(self, predicate: Predicate | None = None, /, **equals: Any) -> int:
        """Remove every matching document (in one write); how many were removed."""
        with self._lock:
            ids = self._matching_ids(predicate, equals)
            if ids:
                with self._writing():
                    self._table.remove(doc_ids=ids)
                gone = set(ids)
                self._index = {k: i for k, i in self._index.items() if i not in gone}
            return len(ids)

    def update_where(self, changes: Mapping[str, Any], predicate: Predicate | None = None, /,
                     **equals: Any) -> int:
        """Merge ``changes`` into every matching document in one write; how many changed."""
        if self.key_field in changes:
            raise ValueError(f"update_where cannot change the {self.key_field!r} of {self.name}")
        changes = _clone(changes)
        with self._lock:
            ids = self._matching_ids(predicate, equals)
            if ids:
                with self._writing():  # each document gets its own copy of nested values
                    self._table.update(lambda doc: doc.update(_clone(changes)), doc_ids=ids)
            return len(ids)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Hold the collection's lock across several calls (re-entrant) for a compound change."""
        with self._lock:
            yield

    def close(self) -> None:
        """Close the TinyDB instance."""
        with self._lock:
            self._db.close()


class TinyDBStore:
    """Collections stored as ``<data_dir>/db/<name>.json``, with ``<data_dir>/.lock`` held exclusively."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = Path(data_dir)
        self.db_dir = self.data_dir / "db"
        self.db_dir.mkdir(parents=True, exist_ok=True)
        self._lock_fd: int | None = self._acquire_lock()
        for leftover in self.db_dir.glob(f".*{_TMP_SUFFIX}"):  # temp files of a crashed writer
            leftover.unlink(missing_ok=True)
        self._collections: dict[str, TinyDBCollection] = {}
        self._guard = threading.Lock()

    def _acquire_lock(self) -> int:
        fd = os.open(self.data_dir / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            other = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise StoreLockedError(
                f"data directory {self.data_dir} is in use by another wasdi server (pid {other}); "
                "stop it or use another --data-dir"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        return fd

    def declare(self, name: str, key_field: str) -> TinyDBCollection:
        """Open (or create) the collection ``name`` whose documents are keyed by ``key_field``."""
        if not name.replace("_", "").replace("-", "").isalnum():
            raise ValueError(f"invalid collection name {name!r}")
        with self._guard:
            if self._lock_fd is None:
                raise RuntimeError("the store is closed")
            existing = self._collections.get(name)
            if existing is None:
                existing = TinyDBCollection(name, key_field, self.db_dir / f"{name}.json")
                self._collections[name] = existing
            elif existing.key_field != key_field:
                raise ValueError(f"collection {name!r} is keyed by {existing.key_field!r}, not {key_field!r}")
            return existing

    def collection(self, name: str) -> TinyDBCollection:
        """The collection ``name`` (declared with ``declare``); ``KeyError`` if it was not."""
        try:
            return self._collections[name]
        except KeyError:
            raise KeyError(f"collection {name!r} was not declared") from None

    def collections(self) -> Iterator[TinyDBCollection]:
        """Every declared collection."""
        return iter(list(self._collections.values()))

    def close(self) -> None:
        """Close every collection and release the data directory (idempotent)."""
        with self._guard:
            for coll in self._collections.values():
                coll.close()
            self._collections.clear()
            if self._lock_fd is not None:
                fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
                os.close(self._lock_fd)
                self._lock_fd = None

    def __enter__(self) -> TinyDBStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_store(data_dir: Path | str) -> TinyDBStore:
    """Open the store in ``data_dir`` (raises ``StoreLockedError`` if another server has it)."""
    return TinyDBStore(Path(data_dir))
