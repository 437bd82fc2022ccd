"""The answer cache of hot, read-mostly listings (``@handles(..., cached_by=...)``).

* Keyed by the endpoint, the caller, the base URL and the *declared* parameters' typed values: junk
  parameters a client adds cannot make new entries.  The base URL is ``public_url`` when one is set,
  else the canonical spelling of a ``Host`` header already checked (``host_header``: at most 259
  characters), so the host a client sends can add entries only as any other parameter can.
* An answer remembers the versions of the collections it came from; as soon as one of them changes,
  the answers built from it are dropped (not kept until the size bound pushes them out).
* Bounded by the bytes of the answers it holds, their keys included (least recently used first out).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Mapping
from typing import Any

from ..bounded_cache import BoundedCache
from .answers import Answer

DEFAULT_MAX_BYTES = 64 * 1024 * 1024
ENTRY_OVERHEAD = 512
"""Bytes counted per entry besides the body and the key (bookkeeping), so tiny answers are not free."""

Versions = tuple[int, ...]


def frozen(value: Any) -> Hashable:
    """A hashable form of a parsed parameter value."""
    if isinstance(value, list | tuple):
        return tuple(frozen(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, frozen(v)) for k, v in value.items()))
    return value  # type: ignore[no-any-return]


def answer_key(endpoint: str, user_id: str | None, base_url: str, params: Mapping[str, Any]) -> tuple[Any, ...]:
    return endpoint, user_id, base_url, tuple(sorted((k, frozen(v)) for k, v in params.items()))


def key_bytes(key: tuple[Any, ...]) -> int:
    """What a key costs to keep: its text in UTF-8, at least the bytes its strings take in memory."""
    return len(repr(key).encode("utf-8", "surrogatepass"))


class AnswerCache:
    """Successful answers, dropped when a collection they came from changes, bounded by bytes."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES,
                 version_of: Callable[[str], int] | None = None) -> None:
        self.max_bytes = max_bytes
        self.version_of = version_of
        self._answers: BoundedCache[tuple[Any, ...], tuple[Answer, tuple[str, ...], Versions]] = BoundedCache(
            max_weight=max_bytes, on_evict=self._unindex)
        self._by_collection: dict[str, set[tuple[Any, ...]]] = {}
        self._seen: dict[str, int] = {}
        self._lock = threading.Lock()

    @property
    def size_bytes(self) -> int:
        return self._answers.total_weight

    def __len__(self) -> int:
        return len(self._answers)

    def versions(self, collections: tuple[str, ...]) -> Versions:
        assert self.version_of is not None
        return tuple(self.version_of(name) for name in collections)

    def get(self, key: tuple[Any, ...], collections: tuple[str, ...], versions: Versions) -> Answer | None:
        """The answer cached under ``key`` if its collections are still at ``versions``."""
        with self._lock:
            self._drop_changed(collections, versions)
            entry = self._answers.get(key)
            if entry is None:
                return None
            if entry[2] != versions:
                self._remove(key)
                return None
            return entry[0]

    def put(self, key: tuple[Any, ...], collections: tuple[str, ...], versions: Versions, answer: Answer) -> None:
        """Keep ``answer``, computed from ``collections`` read at ``versions`` (read before the data)."""
        size = len(answer.body or b"") + key_bytes(key) + ENTRY_OVERHEAD
        if size > self.max_bytes // 4:
            return  # one answer never takes most of the cache
        with self._lock:
            self._drop_changed(collections, versions)
            if any(self._seen.get(c, v) != v for c, v in zip(collections, versions, strict=True)):
                return  # computed from data that changed meanwhile
            self._remove(key)
            for name in collections:
                self._by_collection.setdefault(name, set()).add(key)
            self._answers.put(key, (answer, collections, versions), size)

    def _drop_changed(self, collections: tuple[str, ...], versions: Versions) -> None:
        # A newer version of a collection makes every answer built from an older one useless: drop them now.
        for name, version in zip(collections, versions, strict=True):
            seen = self._seen.get(name)
            if seen is not None and version <= seen:
                continue
            self._seen[name] = version
            if seen is None:
                continue
            for key in list(self._by_collection.get(name, ())):
                entry = self._answers.get(key)
                if entry is not None and entry[2][entry[1].index(name)] < version:
                    self._remove(key)

    def _remove(self, key: tuple[Any, ...]) -> None:
        entry = self._answers.pop(key)
        if entry is not None:
            self._unindex(key, entry)

    def _unindex(self, key: tuple[Any, ...], entry: tuple[Answer, tuple[str, ...], Versions]) -> None:
        for name in entry[1]:
            keys = self._by_collection.get(name)
            if keys is not None:
                keys.discard(key)
