"""The store interface the services use.  Nothing above this layer knows about engines or files.

A store holds named collections of JSON documents.  Each collection has one key field whose
value is unique, and may declare indexed fields (the fields services filter on with ``**equals``).
Documents returned are copies: changing one never changes the store.  Every write is durable when
the call returns.

Several writes, in one collection or several, commit as one with ``Store.atomic``::

    with store.atomic():
        workspaces.delete(workspace_id)
        sharings.delete_where(resourceId=workspace_id)
        processes.delete_where(workspaceId=workspace_id)

After a crash at any instant either all of them are on disk or none is.  Inside the block the
writes show at once (to this thread and to readers) and each collection written is held by this
thread until the block ends, so no other writer builds on a change that may yet be undone; if the
block raises, or the commit fails, every change of the block is undone and the error propagates.
Touch collections in the same order in every atomic block (as with any set of locks).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from typing import Any, Protocol

Document = dict[str, Any]
Predicate = Callable[[Mapping[str, Any]], bool]


class StoreError(Exception):
    """Base of the store's own failures."""


class StoreLockedError(StoreError):
    """Another server process holds the data directory."""


class StoreCorruptError(StoreError):
    """A data file cannot be parsed; the server must not start (and must never reset it)."""


class TextWithNulError(StoreError):
    """Text with a NUL character reached an engine that cannot keep it (PostgreSQL's ``text`` and ``jsonb``
    cannot): the last guard behind the API, which refuses such text before any store sees it."""


class DuplicateKeyError(StoreError):
    """An insert used a key that is already present."""


class Collection(Protocol):
    """One collection of documents, keyed by ``key_field``."""

    name: str
    key_field: str

    @property
    def version(self) -> int:
        """Changes on every write, so a reader can tell that what it derived from the collection is stale."""

    def get(self, key: str) -> Document | None:
        """The document with this key, or ``None``."""

    def find(self, predicate: Predicate | None = None, /, **equals: Any) -> list[Document]:
        """Documents whose fields equal ``equals`` and for which ``predicate`` is true (insertion order)."""

    def find_one(self, predicate: Predicate | None = None, /, **equals: Any) -> Document | None:
        """The first document ``find`` would return, or ``None``."""

    def count(self, predicate: Predicate | None = None, /, **equals: Any) -> int:
        """How many documents ``find`` would return."""

    def all(self) -> list[Document]:
        """Every document, in insertion order."""

    def insert(self, document: Mapping[str, Any]) -> Document:
        """Add a document; raises ``DuplicateKeyError`` if its key is taken."""

    def upsert(self, document: Mapping[str, Any]) -> Document:
        """Add the document, or replace the one with the same key."""

    def update(self, key: str, changes: Mapping[str, Any]) -> Document | None:
        """Merge ``changes`` into the document; the new document, or ``None`` if absent."""

    def modify(self, key: str, change: Callable[[Document], Document | None]) -> Document | None:
        """Read-modify-write of one document, excluding other writers of it.

        ``change`` gets a copy of the document and returns the new one (or ``None`` to leave it
        unchanged).  Returns the stored document, or ``None`` if the key is absent.
        """

    def delete(self, key: str) -> bool:
        """Remove the document; whether it was there."""

    def delete_where(self, predicate: Predicate | None = None, /, **equals: Any) -> int:
        """Remove every matching document in one write; how many were removed."""

    def update_where(self, changes: Mapping[str, Any], predicate: Predicate | None = None, /,
                     **equals: Any) -> int:
        """Merge ``changes`` into every matching document in one write; how many changed."""

    def transaction(self) -> AbstractContextManager[None]:
        """Exclude every other writer of the collection across several calls (re-entrant).

        Each write inside still commits on its own; use ``Store.atomic`` for all-or-none.
        """


class Store(Protocol):
    """A set of collections under one data directory."""

    def collection(self, name: str) -> Collection:
        """The collection ``name`` (declared with ``declare``)."""

    def declare(self, name: str, key_field: str, indexes: Iterable[str] = ()) -> Collection:
        """Open (or create) the collection ``name`` keyed by ``key_field``, indexing ``indexes``."""

    def collections(self) -> Iterator[Collection]:
        """Every declared collection."""

    def atomic(self) -> AbstractContextManager[None]:
        """Commit every write of the block, in any collections, as one (see the module docstring)."""

    def close(self) -> None:
        """Release the data directory."""


def matches(document: Mapping[str, Any], predicate: Predicate | None, equals: Mapping[str, Any]) -> bool:
    """Whether ``document`` satisfies both filters of ``find``."""
    for field_name, expected in equals.items():
        if document.get(field_name) != expected:
            return False
    return predicate is None or bool(predicate(document))


def key_of(document: Mapping[str, Any], key_field: str, collection: str) -> str:
    """The key of a document to store; ``ValueError`` when it has none."""
    if document.get(key_field) is None:
        raise ValueError(f"{collection} document has no {key_field!r}")
    return str(document[key_field])


def keys_of(documents: Iterable[Mapping[str, Any]], key_field: str) -> list[str]:
    return [str(d[key_field]) for d in documents]
