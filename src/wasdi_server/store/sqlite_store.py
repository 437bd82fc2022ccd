"""The second engine: one SQLite database (standard library ``sqlite3``, WAL, ``synchronous=FULL``).

``<data_dir>/db/store.sqlite3`` holds a table per collection, ``"c_<name>"``: ``id`` (insertion
order), ``key`` (unique), ``doc`` (the document as JSON text) and one indexed column ``"f_<field>"``
per declared index field, so the data can be queried with any SQLite client.  Reads are served from
the collection's image in memory (``memory.py``), as with the TinyDB engine; a batch of commits from
concurrent writers is one SQLite transaction, so they share its fsync, and an atomic block is all in
one transaction.
"""

from __future__ import annotations

import errno
import json
import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from wasdi_sdk.atomic_files import write_atomic

from .base import Document, StoreCorruptError
from .engine import Commit, EngineStore
from .memory import MemoryCollection

FILE_NAME = "store.sqlite3"


def _column_value(value: Any) -> Any:
    """How a field is kept in its index column (scalars as they are, lists and objects as JSON)."""
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True)
    return value


WRITTEN_MARKER = "store.sqlite3.written"
"""Present once the database has been created: its absence tells a new data directory from a lost file."""


class SQLiteStore(EngineStore):
    """Collections stored as tables of ``<data_dir>/db/store.sqlite3``."""

    def __init__(self, data_dir: Path) -> None:
        super().__init__(data_dir)
        self.path = self.db_dir / FILE_NAME
        marker = self.db_dir / WRITTEN_MARKER
        problem = ("it is empty: zero bytes" if self.path.exists() and self.path.stat().st_size == 0 else
                   "it is missing, although this data directory had it" if not self.path.exists() and marker.exists()
                   else None)
        if problem:
            self.release_data_dir()
            raise StoreCorruptError(f"database {self.path} cannot be opened ({problem}); restore it from a backup, "
                                    "or move the data directory away")
        self._db_lock = threading.Lock()
        self._columns: dict[str, tuple[str, ...]] = {}
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            if not marker.exists():  # from now on a vanished database is a loss, not a new data directory
                write_atomic(marker, b"")
        except sqlite3.DatabaseError as exc:
            self.release_data_dir()
            raise StoreCorruptError(f"database {self.path} cannot be opened ({exc}); it was left untouched: "
                                    "repair it or move it away") from exc

    @staticmethod
    def _table(name: str) -> str:
        return f'"c_{name}"'

    def load(self, name: str, key_field: str, indexes: tuple[str, ...]) -> tuple[Iterable[tuple[int, Document]], str]:
        table = self._table(name)
        source = f"table {table} of {self.path}"
        with self._db_lock:
            self._db.execute(f"CREATE TABLE IF NOT EXISTS {table} "
                             "(id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, doc TEXT NOT NULL)")
            ids, texts = [], []
            for doc_id, text in self._db.execute(f"SELECT id, doc FROM {table} ORDER BY id"):
                ids.append(doc_id)
                texts.append(text)
            try:  # one json.loads for all: its documents then share one string per field name
                docs = json.loads("[" + ",".join(texts) + "]")
            except (TypeError, ValueError) as exc:
                raise StoreCorruptError(f"{source} is corrupt (a document is not JSON: {exc}); "
                                        "it was left untouched") from exc
            del texts
            if len(docs) != len(ids) or not all(isinstance(doc, dict) for doc in docs):
                raise StoreCorruptError(f"{source} is corrupt (a document is not an object); it was left untouched")
            rows = list(zip(ids, docs, strict=False))
            self._columns[name] = ()
            self._index_columns(name, indexes, rows)
        return rows, source

    def add_indexes(self, collection: MemoryCollection, indexes: tuple[str, ...]) -> None:
        super().add_indexes(collection, indexes)
        with self._db_lock:
            self._index_columns(collection.name, indexes, collection.rows())

    def _index_columns(self, name: str, fields: tuple[str, ...], rows: Iterable[tuple[int, Document]]) -> None:
        """Add (and fill) an indexed column for each field not yet one (under ``_db_lock``)."""
        table = self._table(name)
        existing = {row[1] for row in self._db.execute(f"PRAGMA table_info({table})")}
        rows = list(rows)
        columns = list(self._columns.get(name, ()))
        for field_name in fields:
            if field_name in columns:
                continue
            column = f"f_{field_name}"
            quoted = '"' + column.replace('"', '""') + '"'
            if column not in existing:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    self._db.execute(f"ALTER TABLE {table} ADD COLUMN {quoted}")
                    self._db.executemany(f"UPDATE {table} SET {quoted} = ? WHERE id = ?",
                                         [(_column_value(doc.get(field_name)), doc_id) for doc_id, doc in rows])
                    self._db.execute("COMMIT")
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
            index = '"' + f"i_{name}_{field_name}".replace('"', '""') + '"'
            self._db.execute(f"CREATE INDEX IF NOT EXISTS {index} ON {table} ({quoted})")
            columns.append(field_name)
        self._columns[name] = tuple(columns)

    def persist(self, batch: list[Commit]) -> None:
        with self._db_lock:
            db = self._db
            try:
                db.execute("BEGIN IMMEDIATE")
                for commit in batch:
                    for collection, changes in commit.parts:
                        table = self._table(collection.name)
                        fields = self._columns.get(collection.name, ())
                        put = (f"INSERT OR REPLACE INTO {table} (id, key, doc"
                               + "".join(f', "f_{f}"' for f in fields) + ") VALUES (?, ?, ?"
                               + ", ?" * len(fields) + ")")
                        for key, doc_id, doc in changes:
                            if doc is None:
                                db.execute(f"DELETE FROM {table} WHERE id = ?", (doc_id,))
                            else:
                                db.execute(put, (doc_id, key, json.dumps(doc, ensure_ascii=False),
                                                 *(_column_value(doc.get(f)) for f in fields)))
                db.execute("COMMIT")
            except BaseException as exc:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                if isinstance(exc, sqlite3.OperationalError) and "full" in str(exc):
                    raise OSError(errno.ENOSPC, f"the store's disk is full ({exc})") from exc
                raise

    def close_engine(self) -> None:
        with self._db_lock:
            self._db.close()
