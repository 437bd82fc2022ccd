"""A collection's image in memory, shared by every engine: documents, indexes, and who may write.

Reads are served from memory; the engine only makes writes durable.  A write computes its changes
from the current documents, hands them to the engine, and they reach memory only once they are on
disk (``Change``-s applied by the engine's committer), so a reader never sees a write that a failed
commit took back, and memory holds exactly what disk does.

Who may write at once:

* writers of one document hold the collection's gate *shared* and that document's stripe lock, so
  writers of different documents overlap and share the engine's fsyncs (group commit), while two
  writers of one document take turns (no lost update);
* whole-collection writers (``update_where``, ``delete_where``, ``transaction``, an atomic block)
  hold the gate *exclusive*: they wait for the single-document writers in flight and exclude the rest.

Stored documents are never changed in place (a write stores a new dict), so a reader copies the
candidates out under the short memory lock and filters them without holding anything.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Protocol

from .base import Document, DuplicateKeyError, Predicate, StoreCorruptError, TextWithNulError, key_of, matches

Change = tuple[str, int, Document | None]
"""(key, document id, new document or ``None`` for a delete)."""


class Committer(Protocol):
    """What a collection asks of its engine (``engine.EngineStore``): make its changes durable."""

    def hold_in_atomic_block(self, collection: MemoryCollection) -> bool:
        """Inside an atomic block: hold ``collection`` until the block ends (and say so)."""

    def commit(self, collection: MemoryCollection, changes: list[Change]) -> None:
        """Make ``changes`` durable then visible (inside an atomic block: visible now, durable at its end)."""

_STRIPES = 64


_NUL_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")
"""A NUL character as ``json.dumps`` writes it: backslash, ``u0000``, after an even run of other backslashes."""


def clone(value: Any) -> Any:
    """An independent copy of JSON data (also rejects what JSON cannot store): for data coming in.

    Text with a NUL character is refused here, on every engine (``TextWithNulError``): the API refuses it
    before, this is the last guard (PostgreSQL cannot keep such text; no engine is given it, so all agree)."""
    text = json.dumps(value)
    if "\\u0000" in text and _NUL_ESCAPE.search(text):
        raise TextWithNulError("text with a NUL character cannot be stored")
    return json.loads(text)


def copy(value: Any) -> Any:
    """An independent copy of stored (already JSON) data: for data going out.

    Documents are mostly flat, so copying only the nested dicts and lists is several times faster than
    a JSON round trip, and reads are the hot path.
    """
    if isinstance(value, dict):
        return copy_document(value)
    if isinstance(value, list):
        return [copy(v) if isinstance(v, dict | list) else v for v in value]
    return value


def copy_document(document: Document) -> Document:
    """``copy`` of one document."""
    return {k: copy(v) if isinstance(v, dict | list) else v for k, v in document.items()}


def _interned(document: Document) -> Document:
    """The document with its field names interned: 100,000 records then share one string per name."""
    return {sys.intern(k): v for k, v in document.items()}


def index_key(value: Any) -> Any:
    """How a field value is looked up in an index (lists and dicts by their canonical JSON)."""
    if isinstance(value, dict | list):
        return ("\0json", json.dumps(value, sort_keys=True))
    return value


class Gate:
    """Many single-document writers at once, or one whole-collection writer (re-entrant per thread)."""

    def __init__(self) -> None:
        self._cv = threading.Condition(threading.Lock())
        self._owner: int | None = None
        self._depth = 0
        self._shared = 0
        self._waiting = 0
        self._mine = threading.local()

    @contextmanager
    def shared(self) -> Iterator[None]:
        me = threading.get_ident()
        held = getattr(self._mine, "shared", 0)
        if self._owner == me or held:  # the exclusive owner, or nested in our own shared hold
            self._mine.shared = held + 1
            try:
                yield
            finally:
                self._mine.shared = held
            return
        with self._cv:
            while self._owner is not None or self._waiting:
                self._cv.wait()
            self._shared += 1
        self._mine.shared = 1
        try:
            yield
        finally:
            self._mine.shared = 0
            with self._cv:
                self._shared -= 1
                if not self._shared:
                    self._cv.notify_all()

    def acquire(self) -> None:
        """Hold the gate exclusive (re-entrant)."""
        me = threading.get_ident()
        with self._cv:
            if self._owner == me:
                self._depth += 1
                return
            self._waiting += 1
            try:
                while self._owner is not None or self._shared:
                    self._cv.wait()
            finally:
                self._waiting -= 1
            self._owner, self._depth = me, 1

    def release(self) -> None:
        with self._cv:
            self._depth -= 1
            if not self._depth:
                self._owner = None
                self._cv.notify_all()

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        self.acquire()
        try:
            yield
        finally:
            self.release()


class MemoryCollection:
    """A collection of documents keyed by ``key_field``, indexed on ``indexes``, made durable by ``engine``."""

    def __init__(self, engine: Committer, name: str, key_field: str, indexes: Iterable[str],
                 rows: Iterable[tuple[int, Document]], source: str) -> None:
        self.name = name
        self.key_field = key_field
        self.version = 0
        """Goes up on every write (attempted or done): readers cache by it."""
        self._engine = engine
        self._mem = threading.Lock()
        self._gate = Gate()
        self._stripes = [threading.RLock() for _ in range(_STRIPES)]
        self._docs: dict[str, Document] = {}
        self._ids: dict[str, int] = {}
        self._next_id = 1
        self._indexes: dict[str, dict[Any, dict[str, None]]] = {}
        # What ``_put`` does, inlined: no index exists yet, and a call per row is a tenth of opening
        # 100,000 records.  One json.loads per source shares the field names already.
        docs, ids = self._docs, self._ids
        for doc_id, doc in rows:
            key = doc.get(key_field) if isinstance(doc, dict) else None
            if key is None or (key := str(key)) in docs:
                raise StoreCorruptError(
                    f"{source} has a document with a missing or duplicate {key_field!r} ({key!r}); "
                    "it was left untouched"
                )
            docs[key] = doc
            ids[key] = doc_id
        self._next_id = max(ids.values(), default=0) + 1
        self.add_indexes(indexes)

    # -- memory (always under self._mem) -------------------------------------------------------------
    def _put(self, key: str, doc_id: int, doc: Document) -> None:
        old = self._docs.get(key)
        for field_name, index in self._indexes.items():
            if old is not None:
                self._unindex(index, old.get(field_name), key)
            index.setdefault(index_key(doc.get(field_name)), {})[key] = None
        self._docs[key] = doc
        self._ids[key] = doc_id
        if doc_id >= self._next_id:
            self._next_id = doc_id + 1

    def _remove(self, key: str) -> None:
        old = self._docs.pop(key, None)
        self._ids.pop(key, None)
        if old is not None:
            for field_name, index in self._indexes.items():
                self._unindex(index, old.get(field_name), key)

    @staticmethod
    def _unindex(index: dict[Any, dict[str, None]], value: Any, key: str) -> None:
        bucket = index.get(index_key(value))
        if bucket is not None:
            bucket.pop(key, None)
            if not bucket:
                del index[index_key(value)]

    def add_indexes(self, fields: Iterable[str]) -> None:
        """Index these fields too (for ``find``/``find_one``/``count``/``*_where`` by equality)."""
        with self._mem:
            for field_name in fields:
                if field_name in self._indexes or field_name == self.key_field:
                    continue
                self._indexes[field_name] = self._build_index(field_name)

    def _build_index(self, field_name: str) -> dict[Any, dict[str, None]]:
        # Opening 100,000 records builds five of these: this loop avoids a call per document
        # (``index_key`` only for the rare list or dict value) and a new bucket dict per lookup.
        index: dict[Any, dict[str, None]] = {}
        lookup = index.get
        for key, doc in self._docs.items():
            value = doc.get(field_name)
            if isinstance(value, dict | list):
                value = index_key(value)
            bucket = lookup(value)
            if bucket is None:
                index[value] = {key: None}
            else:
                bucket[key] = None
        return index

    @property
    def indexed_fields(self) -> tuple[str, ...]:
        return tuple(self._indexes)

    def apply(self, changes: Iterable[Change], undoing: bool = False) -> list[Change]:
        """Put ``changes`` in memory (they are durable, or part of an open atomic block); the undo."""
        undo: list[Change] = []
        restored = False
        with self._mem:
            for key, doc_id, doc in changes:
                old = self._docs.get(key)
                undo.append((key, self._ids.get(key, doc_id), old))
                if doc is None:
                    self._remove(key)
                else:
                    restored = restored or (undoing and old is None)
                    self._put(key, doc_id, _interned(doc))
            if restored:  # an undone delete: keep insertion (id) order, as a reopened store would
                ids = self._ids
                self._docs = dict(sorted(self._docs.items(), key=lambda item: ids[item[0]]))
            self.version += 1
        undo.reverse()
        return undo

    def rows(self) -> list[tuple[int, Document]]:
        """(id, document) of every document, in id order: what a snapshot holds (not copies)."""
        with self._mem:
            ids = self._ids
            return [(ids[key], doc) for key, doc in self._docs.items()]

    def _new_id(self) -> int:
        with self._mem:
            doc_id = self._next_id
            self._next_id += 1
            return doc_id

    def _candidates(self, equals: Mapping[str, Any], ordered: bool = True) -> list[Document]:
        """Stored documents that may match ``equals`` (narrowed by the smallest index bucket)."""
        with self._mem:
            if self.key_field in equals:
                doc = self._docs.get(str(equals[self.key_field]))
                return [] if doc is None else [doc]
            best: dict[str, None] | None = None
            for field_name, expected in equals.items():
                index = self._indexes.get(field_name)
                if index is None:
                    continue
                bucket = index.get(index_key(expected))
                if bucket is None:
                    return []
                if best is None or len(bucket) < len(best):
                    best = bucket
            if best is None or len(best) * 4 > len(self._docs):
                return list(self._docs.values())
            docs = self._docs
            if not ordered:
                return [docs[key] for key in best]
            ids = self._ids
            return [docs[key] for key in sorted(best, key=ids.__getitem__)]

    # -- reads -----------------------------------------------------------------------------------------
    def get(self, key: str) -> Document | None:
        """The document with this key, or ``None``."""
        doc = self._docs.get(str(key))
        return None if doc is None else copy_document(doc)

    def find(self, predicate: Predicate | None = None, /, **equals: Any) -> list[Document]:
        """Documents whose fields equal ``equals`` and for which ``predicate`` is true (insertion order)."""
        return [copy_document(doc) for doc in self._candidates(equals) if matches(doc, predicate, equals)]

    def find_one(self, predicate: Predicate | None = None, /, **equals: Any) -> Document | None:
        """The first document ``find`` would return, or ``None``."""
        doc = next((d for d in self._candidates(equals) if matches(d, predicate, equals)), None)
        return None if doc is None else copy_document(doc)

    def count(self, predicate: Predicate | None = None, /, **equals: Any) -> int:
        """How many documents ``find`` would return."""
        if predicate is None and not equals:
            return len(self._docs)
        return sum(1 for d in self._candidates(equals, ordered=False) if matches(d, predicate, equals))

    def all(self) -> list[Document]:
        """Every document, in insertion order."""
        return self.find()

    # -- writes ----------------------------------------------------------------------------------------
    @contextmanager
    def _writing_one(self, key: str) -> Iterator[None]:
        if self._engine.hold_in_atomic_block(self):
            yield
            return
        with self._gate.shared(), self._stripes[hash(key) % _STRIPES]:
            yield

    @contextmanager
    def _writing_all(self) -> Iterator[None]:
        if self._engine.hold_in_atomic_block(self):
            yield
            return
        with self._gate.exclusive():
            yield

    def _commit(self, changes: list[Change]) -> None:
        if changes:
            try:
                self._engine.commit(self, changes)
            finally:
                self.version += 1

    def _key_of(self, document: Mapping[str, Any]) -> str:
        return key_of(document, self.key_field, self.name)

    def insert(self, document: Mapping[str, Any]) -> Document:
        """Add a document; raises ``DuplicateKeyError`` if its key is taken."""
        doc: Document = clone(document)
        key = self._key_of(doc)
        with self._writing_one(key):
            if key in self._docs:
                raise DuplicateKeyError(f"{self.name} already has {self.key_field}={key!r}")
            self._commit([(key, self._new_id(), doc)])
        return copy_document(doc)

    def upsert(self, document: Mapping[str, Any]) -> Document:
        """Add the document, or replace the one with the same key."""
        doc: Document = clone(document)
        key = self._key_of(doc)
        with self._writing_one(key):
            doc_id = self._ids.get(key)
            self._commit([(key, self._new_id() if doc_id is None else doc_id, doc)])
        return copy_document(doc)

    def update(self, key: str, changes: Mapping[str, Any]) -> Document | None:
        """Merge ``changes`` into the document; the new document, or ``None`` if absent."""
        changes = clone(changes)
        return self.modify(key, lambda doc: {**doc, **changes})

    def modify(self, key: str, change: Callable[[Document], Document | None]) -> Document | None:
        """Read-modify-write of one document, excluding other writers of it.

        ``change`` gets a copy of the document and returns the new one (or ``None`` to leave it
        unchanged).  Returns the stored document, or ``None`` if the key is absent.
        """
        key = str(key)
        with self._writing_one(key):
            doc = self._docs.get(key)
            if doc is None:
                return None
            changed = change(copy_document(doc))
            if changed is None:
                return copy_document(doc)
            new: Document = clone(changed)
            if self._key_of(new) != key:
                raise ValueError(f"cannot change the {self.key_field!r} of {self.name} document {key!r}")
            self._commit([(key, self._ids[key], new)])
            return copy_document(new)

    def delete(self, key: str) -> bool:
        """Remove the document; whether it was there."""
        key = str(key)
        with self._writing_one(key):
            doc_id = self._ids.get(key)
            if doc_id is None:
                return False
            self._commit([(key, doc_id, None)])
            return True

    def delete_where(self, predicate: Predicate | None = None, /, **equals: Any) -> int:
        """Remove every matching document (in one write); how many were removed."""
        with self._writing_all():
            keys = [self._key_of(d) for d in self._candidates(equals) if matches(d, predicate, equals)]
            self._commit([(key, self._ids[key], None) for key in keys])
            return len(keys)

    def update_where(self, changes: Mapping[str, Any], predicate: Predicate | None = None, /,
                     **equals: Any) -> int:
        """Merge ``changes`` into every matching document in one write; how many changed."""
        if self.key_field in changes:
            raise ValueError(f"update_where cannot change the {self.key_field!r} of {self.name}")
        changes = clone(changes)
        with self._writing_all():
            hits = [d for d in self._candidates(equals) if matches(d, predicate, equals)]
            # each document gets its own copy of nested values
            self._commit([(self._key_of(d), self._ids[self._key_of(d)], {**d, **clone(changes)}) for d in hits])
            return len(hits)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Exclude every other writer of the collection across several calls (re-entrant)."""
        with self._gate.exclusive():
            yield

    def hold(self) -> None:
        """Take the collection for an atomic block (released by ``let_go``)."""
        self._gate.acquire()

    def let_go(self) -> None:
        self._gate.release()
