"""The one bounded cache of the server: least recently used first out, bounded by a count of entries, by a total
weight (bytes), by age, or by any of them together; safe to share between threads.

Every in-memory cache of the server is one of these (the user behind a session, the answers of read endpoints,
the images of the map server, the STAC search cursors, the login throttle's counts, the package index's answers),
so a bound is written and tested once.  Our own small class rather than ``cachetools``: the weight, the age and
the eviction callback the map server's disk cache needs, under one lock, take fewer lines than adapting it.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class BoundedCache(Generic[K, V]):
    """Entries ``key -> value``, dropped least recently used first once a bound is passed.

    ``max_entries``: at most this many entries; ``max_weight``: the weights given to ``put`` add up to at most
    this; ``ttl``: an entry older than this many seconds (``clock``) is gone.  ``on_evict(key, value)`` is called
    for every entry the cache drops by itself (a bound or the age), outside the lock, never for one the caller
    removes or replaces.
    """

    def __init__(self, max_entries: int | None = None, *, max_weight: int | None = None, ttl: float | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 on_evict: Callable[[K, V], None] | None = None) -> None:
        if max_entries is None and max_weight is None and ttl is None:
            raise ValueError("a bounded cache needs a bound: max_entries, max_weight or ttl")
        self.max_entries = max_entries
        self.max_weight = max_weight
        self.ttl = ttl
        self.clock = clock
        self.on_evict = on_evict
        self._entries: OrderedDict[K, tuple[V, int, float]] = OrderedDict()
        self._weight = 0
        self._lock = threading.Lock()

    # -- reading -------------------------------------------------------------------------------------------
    def get(self, key: K, default: V | None = None) -> V | None:
        """The value under ``key`` (now the most recently used), or ``default`` when absent or expired."""
        evicted: list[tuple[K, V]] = []
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and self._expired(entry[2]):
                evicted.append((key, self._take(key)))
                entry = None
            if entry is not None:
                self._entries.move_to_end(key)
        self._tell(evicted)
        return default if entry is None else entry[0]

    def __contains__(self, key: object) -> bool:
        with self._lock:
            entry = self._entries.get(key)  # type: ignore[arg-type]
            return entry is not None and not self._expired(entry[2])

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    @property
    def total_weight(self) -> int:
        with self._lock:
            return self._weight

    def __iter__(self) -> Iterator[K]:
        """The keys, least recently used first (of a copy: the cache may change meanwhile)."""
        with self._lock:
            return iter(list(self._entries))

    def items(self) -> list[tuple[K, V]]:
        """The entries not expired, least recently used first (a copy)."""
        with self._lock:
            return [(k, v) for k, (v, _, stamp) in self._entries.items() if not self._expired(stamp)]

    # -- writing -------------------------------------------------------------------------------------------
    def put(self, key: K, value: V, weight: int = 1) -> bool:
        """Keep ``value`` under ``key`` (replacing what was there); False when it alone passes ``max_weight``."""
        if self.max_weight is not None and weight > self.max_weight:
            return False
        with self._lock:
            if key in self._entries:
                self._take(key)
            self._entries[key] = (value, weight, self.clock())
            self._weight += weight
            evicted = self._shrink()
        self._tell(evicted)
        return True

    def pop(self, key: K, default: V | None = None) -> V | None:
        """Remove ``key``; its value, or ``default``."""
        with self._lock:
            return self._take(key) if key in self._entries else default

    def discard_where(self, matches: Callable[[K, V], bool]) -> int:
        """Remove every entry ``matches(key, value)`` holds for; how many."""
        with self._lock:
            keys = [k for k, (v, _, _) in self._entries.items() if matches(k, v)]
            for key in keys:
                self._take(key)
        return len(keys)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._weight = 0

    # -- inside the lock -----------------------------------------------------------------------------------
    def _expired(self, stamp: float) -> bool:
        return self.ttl is not None and self.clock() - stamp >= self.ttl

    def _take(self, key: K) -> V:
        value, weight, _ = self._entries.pop(key)
        self._weight -= weight
        return value

    def _shrink(self) -> list[tuple[K, V]]:
        evicted = []
        while self._entries:
            key, (_, _, stamp) = next(iter(self._entries.items()))
            over = (self.max_entries is not None and len(self._entries) > self.max_entries) or \
                (self.max_weight is not None and self._weight > self.max_weight)
            if not over and not self._expired(stamp):
                break
            evicted.append((key, self._take(key)))
        return evicted

    def _tell(self, evicted: list[tuple[K, V]]) -> None:
        if self.on_evict is not None:
            for key, value in evicted:
                self.on_evict(key, value)
