"""A node's store in a deployment of several nodes: the shared database, and a store of the node's own.

The original service splits its database the same way (gaps §8): what work a node runs (process
workspaces, with their parameters) and what it says about it (logs, messages, pending intents) stays in
the node's local store, in its data directory; everything else (users, sessions, workspaces, products,
apps, sharings...) is in the database every node shares.  Services see one ``Store``: each collection
name goes to one of the two.

``atomic()`` is atomic in each store, not across both: a change that spans them is written as a durable
intent (``services.intents``, kept in the local store) whose idempotent steps are finished at the next
start, as deletions already are.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from .base import Collection, Store


class SplitStore:
    """``local_names`` in ``local``, every other collection in ``shared``."""

    def __init__(self, shared: Store, local: Store, local_names: Iterable[str]) -> None:
        self.shared = shared
        self.local = local
        self.local_names = frozenset(local_names)

    def store_of(self, name: str) -> Store:
        return self.local if name in self.local_names else self.shared

    def declare(self, name: str, key_field: str, indexes: Iterable[str] = ()) -> Collection:
        return self.store_of(name).declare(name, key_field, indexes)

    def collection(self, name: str) -> Collection:
        return self.store_of(name).collection(name)

    def collections(self) -> Iterator[Collection]:
        yield from self.shared.collections()
        yield from self.local.collections()

    @contextmanager
    def atomic(self) -> Iterator[None]:
        """Atomic in each store (the shared database's transaction and the local store's block)."""
        with self.shared.atomic(), self.local.atomic():
            yield

    def close(self) -> None:
        try:
            self.local.close()
        finally:
            self.shared.close()

    def __enter__(self) -> SplitStore:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
