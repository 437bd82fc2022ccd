"""Node metrics: this node's own (sampled with psutil by a background task) and those other nodes push.

The ``metrics`` collection keeps the latest ``MetricsEntry`` per node (gaps §3), with ``receivedAt``
(epoch seconds) beside it; ``/process/nodesByScore`` and the choice of a node for new workspaces rank
nodes from these entries (domains/platform/nodes.py).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ...background import Periodic
from ...errors import BadRequest
from ...store import Collection
from .nodes import NODE_CODE

log = logging.getLogger("wasdi_server.metrics")

INSERTED = "MSG_SUCCESS_METRICS_ENTRY_INSERT"
SIZE_NAMES = ("available", "total", "used", "free")
MAX_DISKS = 64
MAX_LICENSES = 64
UNFINISHED = "unfinishedProcesses"
"""Beside a node's own entry (not part of MetricsEntry): how many of its processes were unfinished."""


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _amount(block: Mapping[str, Any] | None, group: str, name: str) -> float | None:
    item = ((block or {}).get(group) or {}).get(name)
    return _number(item.get("value")) if isinstance(item, Mapping) else None


def with_derived(block: Mapping[str, Any]) -> dict[str, Any]:
    """A disk or memory block with the derived members the original's getters add on output."""
    out = {k: v for k, v in block.items()
           if k not in ("percentageAvailable", "percentageUsed", "absoluteAvailable", "absoluteUsed", "absoluteTotal")}
    derived = {"percentageAvailable": _amount(block, "percentage", "available"),
               "percentageUsed": _amount(block, "percentage", "used"),
               "absoluteAvailable": _amount(block, "absolute", "available"),
               "absoluteUsed": _amount(block, "absolute", "used"),
               "absoluteTotal": _amount(block, "absolute", "total")}
    for name, value in derived.items():
        if value is not None:
            out[name] = int(value) if name.startswith("absolute") else value
    return out


def _sizes(total: float, used: float, available: float, free: float) -> dict[str, Any]:
    def size(value: float) -> dict[str, Any]:
        return {"unit": "bytes", "value": int(value)}

    percent_used = round(used * 100.0 / total, 2) if total else 0.0
    return {"absolute": {"available": size(available), "total": size(total), "used": size(used), "free": size(free)},
            "percentage": {"available": {"value": round(100.0 - percent_used, 2)}, "used": {"value": percent_used}}}


def sample_local(node_code: str, disk_path: Path) -> dict[str, Any]:
    """A MetricsEntry of this machine now: CPU counts, frequency and load, the data disk, memory."""
    import psutil

    now = time.time()
    logical = psutil.cpu_count(logical=True) or 0
    physical = psutil.cpu_count(logical=False) or logical
    try:
        frequency = psutil.cpu_freq()
    except (OSError, RuntimeError):  # not every platform reports it (psutil raises a subclass of RuntimeError)
        frequency = None
    mhz = float(frequency.current) if frequency else 0.0
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)

    def percent(value: float) -> float:
        return round(value * 100.0 / logical, 2) if logical else 0.0

    disk = psutil.disk_usage(str(disk_path))
    memory = psutil.virtual_memory()
    return {
        "node": node_code,
        "timestamp": {"seconds": now, "millis": now * 1000.0},
        "cpu": {"count": {"physical": physical, "logical": logical, "total": logical},
                "frequency": {"hz": int(mhz * 1e6), "mhz": int(mhz), "ghz": round(mhz / 1000.0, 3)},
                "load": {"absolute": {"load1": load[0], "load5": load[1], "load15": load[2]},
                         "percentage": {"load1": percent(load[0]), "load5": percent(load[1]),
                                        "load15": percent(load[2])}}},
        "disks": [{"mountpoint": str(disk_path), **_sizes(disk.total, disk.used, disk.free, disk.free)}],
        "memory": _sizes(memory.total, memory.total - memory.available, memory.available, memory.free),
        "licenses": [],
        "runningProcesses": len(psutil.pids()),
    }


class MetricsService:
    """The latest metrics entry of every node."""

    def __init__(self, metrics: Collection, node_code: str, disk_path: Path,
                 unfinished: Callable[[], int] | None = None) -> None:
        self.metrics = metrics
        self.node_code = node_code
        self.disk_path = disk_path
        self.unfinished = unfinished
        """Counts this node's unfinished processes, recorded with its metrics (the main node scores nodes by it)."""

    def push(self, entry: Mapping[str, Any], *, unfinished: int | None = None) -> str:
        """Store a node's entry (replacing its previous one); the success message."""
        node = entry.get("node")
        if not isinstance(node, str) or not NODE_CODE.match(node.strip()):
            raise BadRequest("the metrics entry needs the code of its node in 'node'")
        disks = entry.get("disks") or []
        licenses = entry.get("licenses") or []
        if not isinstance(disks, list) or len(disks) > MAX_DISKS or not all(isinstance(d, Mapping) for d in disks):
            raise BadRequest("'disks' must be a list of disk entries")
        if not isinstance(licenses, list) or len(licenses) > MAX_LICENSES \
                or not all(isinstance(item, Mapping) for item in licenses):
            raise BadRequest("'licenses' must be a list of {name, status}")
        for name in ("cpu", "memory", "timestamp"):
            if entry.get(name) is not None and not isinstance(entry.get(name), Mapping):
                raise BadRequest(f"'{name}' must be an object")
        now = time.time()
        record = dict(entry)
        record["node"] = node.strip()
        record["timestamp"] = entry.get("timestamp") or {"seconds": now, "millis": now * 1000.0}
        record["disks"] = [with_derived(d) for d in disks]
        if isinstance(entry.get("memory"), Mapping):
            record["memory"] = with_derived(entry["memory"])
        record["licenses"] = [{"name": str(item.get("name") or "").lower(), "status": bool(item.get("status"))}
                              for item in licenses]
        record["receivedAt"] = now
        record.pop(UNFINISHED, None)
        if unfinished is not None:
            record[UNFINISHED] = unfinished
        self.metrics.upsert(record)
        return INSERTED

    def record_local(self) -> None:
        """Sample this node and store the entry."""
        self.push(sample_local(self.node_code, self.disk_path),
                  unfinished=self.unfinished() if self.unfinished is not None else None)

    def latest(self, node_code: str | None) -> dict[str, Any] | None:
        """The latest entry of ``node_code`` (or of any node without one); ``None`` when there is none."""
        if node_code and node_code.strip():
            doc = self.metrics.get(node_code.strip())
        else:
            docs = self.metrics.all()
            doc = max(docs, key=lambda d: float(d.get("receivedAt") or 0)) if docs else None
        if doc is None:
            return None
        return {k: v for k, v in doc.items() if k not in ("receivedAt", UNFINISHED)}


class MetricsRecorder(Periodic):
    """Records this node's metrics every ``interval`` seconds in a background thread until stopped."""

    def __init__(self, service: MetricsService, interval: float) -> None:
        super().__init__("wasdi-metrics", service.record_local, interval, "this node's metrics could not be recorded")
        self.service = service
