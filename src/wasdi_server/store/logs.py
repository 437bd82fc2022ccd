"""Append-only run logs: one JSON-lines file per process, written durably line by line.

Processors log a lot and never change a line once written, so rewriting a collection file per line
(as a TinyDB collection would) is the wrong shape: an append costs one small write and an fsync here.
"""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path
from typing import Any

from ..bounded_cache import BoundedCache

_PROCESS_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$")


COUNTS_KEPT = 10_000


class RunLogs:
    """``<root>/<processObjId>.jsonl``: one ``{"logDate": ms, "logRow": text}`` object a line."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._counts: BoundedCache[str, int] = BoundedCache(COUNTS_KEPT)
        """Line counts of the logs written or read lately: an append need not count the file again."""

    def _path(self, process_id: str) -> Path:
        if not _PROCESS_ID.match(process_id) or ".." in process_id:
            raise ValueError(f"not a process id: {process_id[:60]!r}")
        return self.root / f"{process_id}.jsonl"

    def append(self, process_id: str, text: str, at_ms: float) -> int:
        """Add a line (durable when this returns); its row number, counting from 0."""
        line = json.dumps({"logDate": at_ms, "logRow": text}, ensure_ascii=False) + "\n"
        with self._lock:
            row = self.count(process_id)
            with open(self._path(process_id), "a", encoding="utf-8") as handle:
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())
            self._counts.put(process_id, row + 1)
        return row

    def count(self, process_id: str) -> int:
        cached = self._counts.get(process_id)
        if cached is not None:
            return cached
        path = self._path(process_id)
        if not path.exists():
            return 0
        with open(path, encoding="utf-8") as handle:
            total = sum(1 for _ in handle)
        self._counts.put(process_id, total)
        return total

    def read(self, process_id: str, first: int = 0, last: int | None = None) -> list[dict[str, Any]]:
        """Rows ``first`` to ``last`` (both included; ``None``: to the end) with their row numbers."""
        path = self._path(process_id)
        if not path.exists():
            return []
        rows = []
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle):
                if number < first:
                    continue
                if last is not None and number > last:
                    break
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue  # a line torn by a crash mid-append
                rows.append({"rowNumber": number, **entry})
        return rows

    def remove(self, process_id: str) -> None:
        with self._lock:
            self._counts.pop(process_id, None)
            self._path(process_id).unlink(missing_ok=True)
