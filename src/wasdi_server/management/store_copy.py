"""Moving a one-machine data directory into a deployment of several nodes (``wasdi-server store copy``).

Everything the nodes of a deployment share (users, sessions, workspaces, products, apps, sharings ...) is
copied from the data directory's embedded store into the PostgreSQL database, in each collection's order,
one transaction per collection; what stays a node's own (process workspaces, messages, pending intents,
the outbox) stays in the data directory, which the machine keeps as the main node's.  The server must be
stopped (the data directory's lock says so otherwise), and the database must hold none of these
collections yet: a copy never mixes two deployments' data.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..composition import COLLECTION_INDEXES, COLLECTIONS, NODE_LOCAL_COLLECTIONS
from ..settings import Settings
from ..store import open_shared_store, open_store

BATCH = 1000


class CopyRefused(Exception):
    """The copy cannot be made (the message says why and what to do)."""


@dataclass
class Copied:
    collection: str
    documents: int


def shared_collections() -> list[str]:
    return [name for name in COLLECTIONS if name not in NODE_LOCAL_COLLECTIONS]


def copy_to_database(settings: Settings, url: str, progress: Callable[[Copied], None] | None = None) -> list[Copied]:
    """Copy the shared collections of ``settings.data_dir`` into the database at ``url``."""
    source = open_store(settings.data_dir, settings.store_engine)
    try:
        target = open_shared_store(url, timeout_seconds=settings.store_timeout_seconds)
        try:
            names = shared_collections()
            for name in names:
                target.declare(name, COLLECTIONS[name], COLLECTION_INDEXES.get(name, ()))
            taken = [name for name in names if target.collection(name).count() > 0]
            if taken:
                raise CopyRefused(f"the database already holds {', '.join(taken[:5])}{' ...' if len(taken) > 5 else ''}"
                                  ": copy into a new, empty database")
            done = []
            for name in names:
                documents = source.declare(name, COLLECTIONS[name], COLLECTION_INDEXES.get(name, ())).all()
                collection = target.collection(name)
                with target.atomic():  # one transaction: a collection is copied whole or not at all
                    for document in documents:
                        collection.insert(document)
                done.append(Copied(name, len(documents)))
                if progress is not None:
                    progress(done[-1])
            return done
        finally:
            target.close()
    finally:
        source.close()
