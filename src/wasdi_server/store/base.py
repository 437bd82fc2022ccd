"""The store interface the services use.  Nothing above this layer knows about TinyDB or files.

A store holds named collections of JSON documents.  Each collection has one key field whose
value is unique.  Documents returned are copies: changing one never changes the store.
Every write is durable when the call returns.
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


class DuplicateKeyError(StoreError):
    """An insert used a key that is already present."""


class Collection(Protocol):
    """One collection of documents, keyed by ``key_field``."""

    name: str
    key_field: str
    version: int
    """Changes on every write, so a reader can tell that what it derived from the collection is stale."""

    def get(self, key: str) -> Document | None:
        """The document with this key, or ``None``."""

    def find(self, predicate: Predicate | None = None, /, **equals: Any) -> list[Document]:
        """Documents whose fields equal ``equals`` and for which ``predicate`` is true."""

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
        """Read-modify-write under the collection's lock.

        ``change`` gets a copy of the document and returns the new one (or ``None`` to leave it
        unchanged).  Returns the stored document, or ``None`` if the key is absent.
        """

    def delete(self, key: str) -> bool:
        """Remove the document; whether it was there."""

    def delete_where(self, predicate: Predicate | None = None, /, **equals: Any) -> int:
        """Remove every matching document; how many were removed."""

    def update_where(self, changes: Mapping[str, Any], predicate: Predicate | None = None, /,
                     **equals: Any) -> int:
        """Merge ``changes`` into every matching document in one write; how many changed."""

    def transaction(self) -> AbstractContextManager[None]:
        """Hold the collection's lock across several calls (re-entrant) for a compound change."""


class Store(Protocol):
    """A set of collections under one data directory."""

    def collection(self, name: str) -> Collection:
        """The collection ``name`` (declared with ``declare``)."""

    def declare(self, name: str, key_field: str) -> Collection:
        """Open (or create) the collection ``name`` whose documents are keyed by ``key_field``."""

    def collections(self) -> Iterator[Collection]:
        """Every declared collection."""

    def close(self) -> None:
        """Release the data directory."""


def matches(document: Mapping[str, Any], predicate: Predicate | None, equals: Mapping[str, Any]) -> bool:
    """Whether ``document`` satisfies both filters of ``find``."""
    for field_name, expected in equals.items():
        if document.get(field_name) != expected:
            return False
    return predicate is None or bool(predicate(document))


def keys_of(documents: Iterable[Mapping[str, Any]], key_field: str) -> list[str]:
    return [str(d[key_field]) for d in documents]
