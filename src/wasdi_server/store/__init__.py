"""The server's document store: the interface services use and its two durable engines."""

from __future__ import annotations

from pathlib import Path

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
from .engine import EngineStore
from .memory import MemoryCollection
from .sqlite_store import SQLiteStore
from .tinydb_store import TinyDBStore

ENGINES: dict[str, type[EngineStore]] = {"tinydb": TinyDBStore, "sqlite": SQLiteStore}
"""The ``store_engine`` setting: engine name -> class."""


def open_store(data_dir: Path | str, engine: str = "tinydb") -> EngineStore:
    """Open the store in ``data_dir`` (raises ``StoreLockedError`` if another server has it)."""
    try:
        kind = ENGINES[engine]
    except KeyError:
        raise ValueError(f"unknown store engine {engine!r}; use one of: {', '.join(ENGINES)}") from None
    return kind(Path(data_dir))


__all__ = [
    "ENGINES",
    "Collection",
    "Document",
    "DuplicateKeyError",
    "EngineStore",
    "MemoryCollection",
    "Predicate",
    "SQLiteStore",
    "Store",
    "StoreCorruptError",
    "StoreError",
    "StoreLockedError",
    "TinyDBStore",
    "open_store",
]
