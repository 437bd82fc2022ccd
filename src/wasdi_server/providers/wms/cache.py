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
import threading
import uuid
from collections import OrderedDict
from pathlib import Path

_LAYER_ID = re.compile(r"^[A-Za-z0-9_-]{1,100}$")


def cache_key(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(repr(p) for p in parts).encode()).hexdigest()[:40]


class TileCache:
    def __init__(self, root: Path, max_bytes: int) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[str, str], int] = OrderedDict()
        self._total = 0
        self._scan()

    @property
    def total_bytes(self) -> int:
        return self._total

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
            self._entries[(layer_id, key)] = size
            self._total += size
        self._evict()

    def _path(self, layer_id: str, key: str) -> Path:
        return self.root / layer_id / f"{key}.png"

    def get(self, layer_id: str, key: str) -> bytes | None:
        with self._lock:
            if (layer_id, key) not in self._entries:
                return None
            self._entries.move_to_end((layer_id, key))
        try:
            return self._path(layer_id, key).read_bytes()
        except OSError:
            return None

    def put(self, layer_id: str, key: str, data: bytes) -> None:
        if not self.max_bytes or len(data) > self.max_bytes or not _LAYER_ID.match(layer_id):
            return
        path = self._path(layer_id, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f".{key}.{uuid.uuid4().hex}.tmp")
        try:
            temp.write_bytes(data)
            os.replace(temp, path)
        except OSError:  # a full disk only costs the cache
            temp.unlink(missing_ok=True)
            return
        with self._lock:
            self._total -= self._entries.pop((layer_id, key), 0)
            self._entries[(layer_id, key)] = len(data)
            self._total += len(data)
            self._evict()

    def _evict(self) -> None:
        while self._total > self.max_bytes and self._entries:
            (layer_id, key), size = self._entries.popitem(last=False)
            self._total -= size
            with contextlib.suppress(OSError):
                self._path(layer_id, key).unlink()

    def drop(self, layer_id: str) -> None:
        """Forget every image of a layer (a no-op when it has none)."""
        if not _LAYER_ID.match(layer_id):
            return
        with self._lock:
            for entry in [e for e in self._entries if e[0] == layer_id]:
                self._total -= self._entries.pop(entry)
            shutil.rmtree(self.root / layer_id, ignore_errors=True)

    def drop_where(self, layer_ids: list[str]) -> None:
        for layer_id in layer_ids:
            self.drop(layer_id)
