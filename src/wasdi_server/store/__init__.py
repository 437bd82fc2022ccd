"""The server's document store: the interface services use, its two embedded engines and the shared one."""

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
    TextWithNulError,
)
from .engine import EngineStore
from .memory import MemoryCollection
from .postgres_store import PostgresStore, StoreUnavailableError
from .split import SplitStore
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


def open_shared_store(url: str, *, max_connections: int = 16, timeout_seconds: float = 10.0) -> PostgresStore:
    """The store every node of a deployment shares (``store_url``: ``postgresql://...``)."""
    if not url.startswith(("postgresql://", "postgres://")):
        raise ValueError(f"store_url must be a postgresql:// URL, not {url.split(':', 1)[0]!r}")
    return PostgresStore(url, max_connections=max_connections, timeout_seconds=timeout_seconds)


__all__ = [
    "ENGINES",
    "Collection",
    "Document",
    "DuplicateKeyError",
    "EngineStore",
    "MemoryCollection",
    "PostgresStore",
    "Predicate",
    "SQLiteStore",
    "SplitStore",
    "Store",
    "StoreCorruptError",
    "StoreError",
    "StoreLockedError",
    "StoreUnavailableError",
    "TextWithNulError",
    "TinyDBStore",
    "open_shared_store",
    "open_store",
]
