"""The server's document store: the interface services use and its durable TinyDB implementation."""

from .base import (
    Collection,
    Document,
    DuplicateKeyError,
    Predicate,
    Store,
    StoreCorruptError,
    StoreError,
    StoreLockedError,
)
from .tinydb_store import TinyDBCollection, TinyDBStore, open_store

__all__ = [
    "Collection",
    "Document",
    "DuplicateKeyError",
    "Predicate",
    "Store",
    "StoreCorruptError",
    "StoreError",
    "StoreLockedError",
    "TinyDBCollection",
    "TinyDBStore",
    "open_store",
]
