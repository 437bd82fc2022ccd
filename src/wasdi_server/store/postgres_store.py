"""The shared engine: collections in a PostgreSQL database that several server processes use at once.

Nothing is kept in memory: every read asks the database, so what one node wrote is what the next read
on any node returns.  One table per collection, ``"c_<name>"``: ``id`` (insertion order), ``key``
(unique), ``doc`` (the document, ``jsonb``), with an expression index ``(doc -> '<field>')`` per
declared index field; ``find(**equals)`` is one ``WHERE`` on those, and only a ``predicate`` (a Python
callable) is applied here, to rows streamed from the database in batches, so a collection of a million
documents never sits in a node's memory.

Who may write at once, across every process on the database (the same rules as ``memory.py``):

* a write of one document takes the collection's advisory lock *shared* for its transaction, and the
  row's own lock (``modify`` reads ``FOR UPDATE``): writers of different documents overlap, two writers
  of one document take turns;
* ``transaction()``, ``update_where``/``delete_where`` and an ``atomic()`` block take it *exclusive*:
  ``transaction()`` for its duration (a session lock on a connection this thread keeps meanwhile, so
  its own writes go through the lock), an atomic block until it commits.

``version`` is a counter per collection in ``wasdi_store_versions``, raised in the same transaction as
every write, so a reader that reads the version before the data never keeps an answer older than the
version says, whichever node wrote (the answer cache relies on it).

Every write is durable when the call returns (PostgreSQL's ``synchronous_commit``, on by default): a
node killed at any instant loses nothing it acknowledged.  While the database cannot be reached, calls
raise ``StoreUnavailableError`` (after the pool's timeout); the pool reconnects by itself when it is back.
"""

from __future__ import annotations

import errno
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from .base import Document, DuplicateKeyError, Predicate, StoreError, TextWithNulError, key_of, matches
from .memory import clone

if TYPE_CHECKING:
    import psycopg
    from psycopg import errors as pg_errors
    from psycopg.types.json import Jsonb
    from psycopg_pool import ConnectionPool, PoolTimeout


def _load_driver() -> bool:
    """Import psycopg and its pool when the first PostgreSQL store opens: a server on another engine never
    loads them (25 MiB of its memory budget, bench/transfer.py).  False when the extra is not installed."""
    global psycopg, pg_errors, Jsonb, ConnectionPool, PoolTimeout
    if "ConnectionPool" in globals():
        return True
    try:
        import psycopg
        from psycopg import errors as pg_errors
        from psycopg.types.json import Jsonb
        from psycopg_pool import ConnectionPool, PoolTimeout
    except ImportError:  # the [postgresql] extra is not installed
        return False
    return True

VERSIONS_TABLE = "wasdi_store_versions"
LOCK_SPACE = 0x57415344
"""First key of the collections' advisory locks ("WASD"); the second is a hash of the collection name."""
BATCH = 2000
"""Rows fetched at a time when a predicate filters a collection here."""


class StoreUnavailableError(StoreError):
    """The database cannot be reached now (down, restarting, or the network in between)."""


def redacted(url: str) -> str:
    """``url`` without its password: what may be shown in a log or an error."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<an invalid URL>"
    host = parts.netloc.rsplit("@", 1)[-1]
    user = parts.netloc.rsplit("@", 1)[0].split(":", 1)[0] if "@" in parts.netloc else ""
    return urlunsplit((parts.scheme, f"{user}@{host}" if user else host, parts.path, "", ""))


def _lock_key(name: str) -> int:
    value = zlib.crc32(name.encode())
    return value - (1 << 32) if value >= 1 << 31 else value


def _json(value: Any) -> Any:
    return Jsonb(value)


@dataclass
class _Pin:
    """The connection a thread keeps while it is inside ``atomic()`` or a collection's ``transaction()``."""

    conn: Any
    release: Callable[[], None]
    atomic_depth: int = 0
    transactions: dict[str, int] = field(default_factory=dict)
    """Collections whose exclusive session lock this thread holds, and how deep."""
    held: set[str] = field(default_factory=set)
    """Collections the open atomic block has locked exclusive (until it ends)."""
    touched: set[str] = field(default_factory=set)
    """Collections the open atomic block wrote (their versions are raised at its commit)."""


class PostgresStore:
    """A ``Store`` over a PostgreSQL database (``postgresql://user@host:port/dbname``)."""

    def __init__(self, url: str, *, max_connections: int = 16, timeout_seconds: float = 10.0,
                 application_name: str = "wasdi-server") -> None:
        if not _load_driver():
            raise StoreError("the PostgreSQL store needs psycopg: pip install 'wasdi-toolkit[postgresql]'")
        self.url = url
        self.shown_url = redacted(url)
        self.timeout_seconds = timeout_seconds
        self._pool = ConnectionPool(
            url, min_size=1, max_size=max(2, max_connections), timeout=timeout_seconds, open=False,
            kwargs={"autocommit": True, "application_name": application_name},
            check=ConnectionPool.check_connection, reconnect_timeout=max(timeout_seconds, 60.0),
            name="wasdi-store")
        try:
            self._pool.open(wait=True, timeout=timeout_seconds)
        except PoolTimeout as e:
            self._pool.close()
            raise StoreUnavailableError(f"the database {self.shown_url} cannot be reached: {e}") from None
        self._collections: dict[str, PostgresCollection] = {}
        self._guard = threading.Lock()
        self._pins = threading.local()
        self._closed = False
        with self.connection() as conn, conn.transaction():
            conn.execute(f"CREATE TABLE IF NOT EXISTS {VERSIONS_TABLE} "
                         "(name text PRIMARY KEY, version bigint NOT NULL DEFAULT 0)")

    # -- connections -------------------------------------------------------------------------------------
    def _pin(self) -> _Pin | None:
        return getattr(self._pins, "pin", None)

    @contextmanager
    def connection(self) -> Iterator[Any]:
        """This thread's pinned connection, or one from the pool (a lost database: ``StoreUnavailableError``)."""
        pin = self._pin()
        if pin is not None:
            with self._translated():
                yield pin.conn
            return
        with self._translated(), self._pool.connection() as conn:
            yield conn

    @contextmanager
    def _translated(self) -> Iterator[None]:
        try:
            yield
        except PoolTimeout as e:
            raise StoreUnavailableError(f"the database {self.shown_url} cannot be reached: {e}") from None
        except psycopg.DataError as e:
            text = str(e)
            if "NUL" in text or "\\u0000" in text:  # psycopg refusing a str, or PostgreSQL a jsonb string
                raise TextWithNulError("text with a NUL character cannot be stored") from None
            raise
        except psycopg.OperationalError as e:
            if isinstance(e, pg_errors.DiskFull):
                raise OSError(errno.ENOSPC, f"the database's disk is full ({e})") from e
            if isinstance(e, pg_errors.DeadlockDetected | pg_errors.LockNotAvailable | pg_errors.QueryCanceled):
                raise StoreError(str(e).strip()) from e
            raise StoreUnavailableError(f"the database {self.shown_url} is not reachable: {str(e).strip()}") from None

    @contextmanager
    def _pinned(self) -> Iterator[_Pin]:
        """Keep one connection for this thread until the outermost pinned block ends."""
        pin = self._pin()
        if pin is not None:
            yield pin
            return
        with self._translated():
            conn = self._pool.getconn()
        pin = _Pin(conn, lambda: self._pool.putconn(conn))
        self._pins.pin = pin
        try:
            yield pin
        finally:
            self._pins.pin = None
            pin.release()

    # -- collections ---------------------------------------------------------------------------------------
    def declare(self, name: str, key_field: str, indexes: Iterable[str] = ()) -> PostgresCollection:
        """Open (or create) the collection ``name`` keyed by ``key_field``, indexing ``indexes``."""
        if not name.replace("_", "").replace("-", "").isalnum():
            raise ValueError(f"invalid collection name {name!r}")
        with self._guard:
            if self._closed:
                raise RuntimeError("the store is closed")
            existing = self._collections.get(name)
            if existing is None:
                existing = PostgresCollection(self, name, key_field)
                existing.create()
                self._collections[name] = existing
            elif existing.key_field != key_field:
                raise ValueError(f"collection {name!r} is keyed by {existing.key_field!r}, not {key_field!r}")
            existing.add_indexes(tuple(indexes))
            return existing

    def collection(self, name: str) -> PostgresCollection:
        """The collection ``name`` (declared with ``declare``); ``KeyError`` if it was not."""
        try:
            return self._collections[name]
        except KeyError:
            raise KeyError(f"collection {name!r} was not declared") from None

    def collections(self) -> Iterator[PostgresCollection]:
        return iter(list(self._collections.values()))

    # -- writes ------------------------------------------------------------------------------------------
    def write(self, collection: PostgresCollection, work: Callable[[Any], Any], *, exclusive: bool = False) -> Any:
        """Run ``work(connection)`` as one durable write of ``collection``, under the collection's lock."""
        name = collection.name
        pin = self._pin()
        if pin is not None and pin.atomic_depth:
            with self._translated():
                if name not in pin.held:  # held until the block ends, as the interface says
                    pin.conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_SPACE, _lock_key(name)))
                    pin.held.add(name)
                result = work(pin.conn)
            pin.touched.add(name)
            return result
        with self.connection() as conn, conn.transaction():
            if pin is None or name not in pin.transactions:
                lock = "pg_advisory_xact_lock" if exclusive else "pg_advisory_xact_lock_shared"
                conn.execute(f"SELECT {lock}(%s, %s)", (LOCK_SPACE, _lock_key(name)))
            result = work(conn)
            self._raise_versions(conn, [name])
        return result

    @staticmethod
    def _raise_versions(conn: Any, names: Iterable[str]) -> None:
        # Last in the transaction (and in one order), so the row lock it takes is held only for the commit.
        for name in sorted(set(names)):
            conn.execute(f"UPDATE {VERSIONS_TABLE} SET version = version + 1 WHERE name = %s", (name,))

    @contextmanager
    def atomic(self) -> Iterator[None]:
        """Commit every write of the block, in any collections, as one transaction (see ``base``)."""
        with self._pinned() as pin:
            if pin.atomic_depth:
                pin.atomic_depth += 1
                try:
                    yield
                finally:
                    pin.atomic_depth -= 1
                return
            with self._translated(), pin.conn.transaction():
                pin.atomic_depth = 1
                try:
                    yield
                    if pin.touched:
                        self._raise_versions(pin.conn, pin.touched)
                finally:
                    pin.atomic_depth = 0
                    pin.held.clear()
                    pin.touched.clear()

    @contextmanager
    def exclusive(self, name: str) -> Iterator[None]:
        """Hold ``name``'s lock exclusive across several calls of this thread (``Collection.transaction``)."""
        with self._pinned() as pin:
            depth = pin.transactions.get(name, 0)
            if not depth:
                with self._translated():
                    pin.conn.execute("SELECT pg_advisory_lock(%s, %s)", (LOCK_SPACE, _lock_key(name)))
            pin.transactions[name] = depth + 1
            try:
                yield
            finally:
                pin.transactions[name] = depth
                if not depth:
                    del pin.transactions[name]
                    with self._translated():
                        pin.conn.execute("SELECT pg_advisory_unlock(%s, %s)", (LOCK_SPACE, _lock_key(name)))

    def versions(self, names: Iterable[str]) -> dict[str, int]:
        """The current version of each collection named (one query)."""
        wanted = list(names)
        with self.connection() as conn:
            rows = conn.execute(f"SELECT name, version FROM {VERSIONS_TABLE} WHERE name = ANY(%s)",
                                (wanted,)).fetchall()
        found = dict(rows)
        return {name: int(found.get(name, 0)) for name in wanted}

    # -- lifetime ----------------------------------------------------------------------------------------
    def close(self) -> None:
        """Close every connection (idempotent)."""
        with self._guard:
            if self._closed:
                return
            self._closed = True
            self._collections.clear()
        self._pool.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _where(equals: Mapping[str, Any], key_field: str) -> tuple[str, list[Any]]:
    """SQL conditions (and their values) for ``find(**equals)``; a missing field equals ``None``, as in memory."""
    clauses: list[str] = []
    values: list[Any] = []
    for field_name, expected in equals.items():
        if field_name == key_field:
            if expected is None:
                clauses.append("FALSE")
            else:
                clauses.append("key = %s")
                values.append(str(expected))
        elif expected is None:
            clauses.append("(doc -> %s IS NULL OR doc -> %s = 'null'::jsonb)")
            values += [field_name, field_name]
        else:
            clauses.append("doc -> %s = %s")
            values += [field_name, _json(expected)]
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", values


class PostgresCollection:
    """One collection: a table of the shared database."""

    def __init__(self, store: PostgresStore, name: str, key_field: str) -> None:
        self.store = store
        self.name = name
        self.key_field = key_field
        self.table = f'"c_{name}"'
        self._indexed: set[str] = set()

    def create(self) -> None:
        with self.store.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_SPACE, _lock_key("declare")))
            conn.execute(f"CREATE TABLE IF NOT EXISTS {self.table} (id bigint GENERATED ALWAYS AS IDENTITY "
                         "PRIMARY KEY, key text NOT NULL UNIQUE, doc jsonb NOT NULL)")
            conn.execute(f"INSERT INTO {VERSIONS_TABLE} (name) VALUES (%s) ON CONFLICT DO NOTHING", (self.name,))

    def add_indexes(self, fields: tuple[str, ...]) -> None:
        """An expression index ``(doc -> field)`` per field not indexed yet."""
        new = [f for f in fields if f not in self._indexed and f != self.key_field]
        if not new:
            return
        with self.store.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_SPACE, _lock_key("declare")))
            for field_name in new:
                index = '"' + f"i_{self.name}_{field_name}".replace('"', '""')[:60] + '"'
                conn.execute(f"CREATE INDEX IF NOT EXISTS {index} ON {self.table} "
                             f"((doc -> {_literal(field_name)}))")
        self._indexed.update(new)

    @property
    def indexed_fields(self) -> tuple[str, ...]:
        return tuple(sorted(self._indexed))

    @property
    def version(self) -> int:
        """Raised by every write on any node (read from the database each time)."""
        return self.store.versions([self.name])[self.name]

    # -- reads -------------------------------------------------------------------------------------------
    def _select(self, columns: str, equals: Mapping[str, Any], suffix: str = "") -> tuple[str, list[Any]]:
        where, values = _where(equals, self.key_field)
        return f"SELECT {columns} FROM {self.table}{where}{suffix}", values

    def _scan(self, equals: Mapping[str, Any], predicate: Predicate | None, conn: Any, *, lock: bool = False,
              limit: int | None = None, keep: bool = True) -> tuple[list[Document], int]:
        """The matching documents in insertion order (up to ``limit``; none kept without ``keep``) and how many
        matched.  With a predicate the rows come through a server-side cursor, a batch at a time, so a scan of
        a big collection holds one batch in memory, not the collection."""
        sql, values = self._select("doc", equals, " ORDER BY id" + (" FOR UPDATE" if lock else ""))
        if predicate is None:
            docs = [row[0] for row in conn.execute(sql + (f" LIMIT {int(limit)}" if limit else ""), values)]
            return (docs if keep else []), len(docs)
        found: list[Document] = []
        matched = 0
        with conn.transaction(), conn.cursor(name=f"scan_{self.name}") as cursor:
            cursor.execute(sql, values)
            while rows := cursor.fetchmany(BATCH):
                for (doc,) in rows:
                    if matches(doc, predicate, equals):
                        matched += 1
                        if keep:
                            found.append(doc)
                        if limit is not None and matched >= limit:
                            return found, matched
        return found, matched

    def get(self, key: str) -> Document | None:
        """The document with this key, or ``None``."""
        with self.store.connection() as conn:
            row = conn.execute(f"SELECT doc FROM {self.table} WHERE key = %s", (str(key),)).fetchone()
        if row is None:
            return None
        doc: Document = row[0]
        return doc

    def find(self, predicate: Predicate | None = None, /, **equals: Any) -> list[Document]:
        """Documents whose fields equal ``equals`` and for which ``predicate`` is true (insertion order)."""
        with self.store.connection() as conn:
            return self._scan(equals, predicate, conn)[0]

    def find_one(self, predicate: Predicate | None = None, /, **equals: Any) -> Document | None:
        """The first document ``find`` would return, or ``None``."""
        with self.store.connection() as conn:
            found = self._scan(equals, predicate, conn, limit=1)[0]
        return found[0] if found else None

    def count(self, predicate: Predicate | None = None, /, **equals: Any) -> int:
        """How many documents ``find`` would return."""
        with self.store.connection() as conn:
            if predicate is None:
                sql, values = self._select("count(*)", equals)
                return int(conn.execute(sql, values).fetchone()[0])
            return self._scan(equals, predicate, conn, keep=False)[1]

    def all(self) -> list[Document]:
        """Every document, in insertion order."""
        return self.find()

    # -- writes --------------------------------------------------------------------------------------------
    def _key_of(self, document: Mapping[str, Any]) -> str:
        return key_of(document, self.key_field, self.name)

    def insert(self, document: Mapping[str, Any]) -> Document:
        """Add a document; raises ``DuplicateKeyError`` if its key is taken."""
        doc = clone(document)
        key = self._key_of(doc)

        def work(conn: Any) -> bool:
            row = conn.execute(f"INSERT INTO {self.table} (key, doc) VALUES (%s, %s) ON CONFLICT (key) DO NOTHING "
                               "RETURNING id", (key, _json(doc))).fetchone()
            return row is not None

        if not self.store.write(self, work):
            raise DuplicateKeyError(f"{self.name} already has {self.key_field}={key!r}")
        stored: Document = clone(doc)
        return stored

    def upsert(self, document: Mapping[str, Any]) -> Document:
        """Add the document, or replace the one with the same key (keeping its place in insertion order)."""
        doc = clone(document)
        key = self._key_of(doc)
        self.store.write(self, lambda conn: conn.execute(
            f"INSERT INTO {self.table} (key, doc) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET doc = EXCLUDED.doc",
            (key, _json(doc))))
        stored: Document = clone(doc)
        return stored

    def update(self, key: str, changes: Mapping[str, Any]) -> Document | None:
        """Merge ``changes`` into the document; the new document, or ``None`` if absent."""
        changes = clone(changes)
        if self.key_field in changes and str(changes[self.key_field]) != str(key):
            raise ValueError(f"cannot change the {self.key_field!r} of {self.name} document {key!r}")

        def work(conn: Any) -> Document | None:
            row = conn.execute(f"UPDATE {self.table} SET doc = doc || %s WHERE key = %s RETURNING doc",
                               (_json(changes), str(key))).fetchone()
            if row is None:
                return None
            doc: Document = row[0]
            return doc

        result: Document | None = self.store.write(self, work)
        return result

    def modify(self, key: str, change: Callable[[Document], Document | None]) -> Document | None:
        """Read-modify-write of one document, excluding other writers of it on every node.

        ``change`` gets a copy of the document and returns the new one (or ``None`` to leave it
        unchanged).  Returns the stored document, or ``None`` if the key is absent.
        """
        key = str(key)

        def work(conn: Any) -> Document | None:
            row = conn.execute(f"SELECT doc FROM {self.table} WHERE key = %s FOR UPDATE", (key,)).fetchone()
            if row is None:
                return None
            current: Document = row[0]
            changed = change(clone(current))
            if changed is None:
                return current
            new: Document = clone(changed)
            if self._key_of(new) != key:
                raise ValueError(f"cannot change the {self.key_field!r} of {self.name} document {key!r}")
            conn.execute(f"UPDATE {self.table} SET doc = %s WHERE key = %s", (_json(new), key))
            return new

        result: Document | None = self.store.write(self, work)
        return result

    def delete(self, key: str) -> bool:
        """Remove the document; whether it was there."""
        return bool(self.store.write(self, lambda conn: conn.execute(
            f"DELETE FROM {self.table} WHERE key = %s", (str(key),)).rowcount))

    def delete_where(self, predicate: Predicate | None = None, /, **equals: Any) -> int:
        """Remove every matching document in one write; how many were removed."""
        def work(conn: Any) -> int:
            if predicate is None:
                where, values = _where(equals, self.key_field)
                return int(conn.execute(f"DELETE FROM {self.table}{where}", values).rowcount)
            keys = [self._key_of(d) for d in self._scan(equals, predicate, conn, lock=True)[0]]
            if keys:
                conn.execute(f"DELETE FROM {self.table} WHERE key = ANY(%s)", (keys,))
            return len(keys)

        return int(self.store.write(self, work, exclusive=True))

    def update_where(self, changes: Mapping[str, Any], predicate: Predicate | None = None, /,
                     **equals: Any) -> int:
        """Merge ``changes`` into every matching document in one write; how many changed."""
        if self.key_field in changes:
            raise ValueError(f"update_where cannot change the {self.key_field!r} of {self.name}")
        changes = clone(changes)

        def work(conn: Any) -> int:
            if predicate is None:
                where, values = _where(equals, self.key_field)
                return int(conn.execute(f"UPDATE {self.table} SET doc = doc || %s{where}",
                                        [_json(changes), *values]).rowcount)
            keys = [self._key_of(d) for d in self._scan(equals, predicate, conn, lock=True)[0]]
            if keys:
                conn.execute(f"UPDATE {self.table} SET doc = doc || %s WHERE key = ANY(%s)", (_json(changes), keys))
            return len(keys)

        return int(self.store.write(self, work, exclusive=True))

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Exclude every other writer of the collection, on every node, across several calls (re-entrant)."""
        with self.store.exclusive(self.name):
            yield


def _literal(text: str) -> str:
    """``text`` as an SQL string literal (for index expressions, which take no parameters)."""
    return "'" + text.replace("'", "''") + "'"

