"""A disk cache of rendered map images, bounded by bytes.

Files are ``<root>/<layerId>/<key>.png``; the key is a digest of everything that shapes the image (the
layer's version, which changes on publish and restyle, the style's SLD, the CRS, box, size and
background).  ``drop(layer_id)`` removes a layer's images at once (layer republished, restyled, deleted).
The least recently used images go first when the total passes ``max_bytes``; the index is rebuilt from
the folder at start (oldest modification first), so the bound holds across restarts.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
from pathlib import Path

from wasdi_sdk.atomic_files import write_atomic

from ...bounded_cache import BoundedCache

_LAYER_ID = re.compile(r"^[A-Za-z0-9_-]{1,100}$")


def cache_key(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(repr(p) for p in parts).encode()).hexdigest()[:40]


class TileCache:
    def __init__(self, root: Path, max_bytes: int) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self._entries: BoundedCache[tuple[str, str], int] = BoundedCache(max_weight=max_bytes,
                                                                         on_evict=self._forget_file)
        self._scan()

    @property
    def total_bytes(self) -> int:
        return self._entries.total_weight

    def _scan(self) -> None:
        if not self.root.is_dir():
            return
        found = []
        for layer in os.scandir(self.root):
            if not layer.is_dir() or not _LAYER_ID.match(layer.name):
                continue
            for entry in os.scandir(layer.path):
                if entry.name.endswith(".png"):
                    stat = entry.stat()
                    found.append((stat.st_mtime, layer.name, entry.name[:-4], stat.st_size))
        for _, layer_id, key, size in sorted(found):
            if not self._entries.put((layer_id, key), size, weight=size):
                self._forget_file((layer_id, key), size)

    def _path(self, layer_id: str, key: str) -> Path:
        return self.root / layer_id / f"{key}.png"

    def _forget_file(self, entry: tuple[str, str], _size: int) -> None:
        with contextlib.suppress(OSError):
            self._path(*entry).unlink()

    def get(self, layer_id: str, key: str) -> bytes | None:
        if self._entries.get((layer_id, key)) is None:
            return None
        try:
            return self._path(layer_id, key).read_bytes()
        except OSError:
            return None

    def put(self, layer_id: str, key: str, data: bytes) -> None:
        if not self.max_bytes or len(data) > self.max_bytes or not _LAYER_ID.match(layer_id):
            return
        path = self._path(layer_id, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            write_atomic(path, data, suffix=".tmp", durable=False)  # a crash only costs the cache
        except OSError:  # so does a full disk
            return
        self._entries.put((layer_id, key), len(data), weight=len(data))

    def drop(self, layer_id: str) -> None:
        """Forget every image of a layer (a no-op when it has none)."""
        if not _LAYER_ID.match(layer_id):
            return
        self._entries.discard_where(lambda entry, _size: entry[0] == layer_id)
        shutil.rmtree(self.root / layer_id, ignore_errors=True)

    def drop_where(self, layer_ids: list[str]) -> None:
        for layer_id in layer_ids:
            self.drop(layer_id)
