"""Cleaning the process queue of this node (``/admin/cleanProcessesQueue`` and ``/admin/cleanOldProcesses``).

- Draining the queue: every record of this node still CREATED becomes ERROR (it will never start).
- Stale records (docs/server.md, "Stale processes"): a record of this node still RUNNING, WAITING or
  READY is stale when no worker of this server is running it (the server restarted, crashed, or the
  worker died), or when it has not changed state for longer than ``stale_process_minutes``.  A record
  whose state changed in the last ``stale_process_grace_seconds`` is always spared: the launcher marks a
  record RUNNING an instant before its worker starts.  Stale records become ERROR, with a line saying why.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...dates import now_ms
from .ports import KO, MessagePublisher
from .processes import CREATED, ERROR, READY, RUNNING, WAITING, ProcessService

QUEUE_CLEANED = "The process was removed from the queue by an administrator."
STALE = "The process was closed by an administrator: its worker is gone or it stopped changing."


class ProcessCleaning:
    def __init__(self, processes: ProcessService, messages: MessagePublisher, is_alive: Callable[[str], bool],
                 stale_minutes: float, grace_seconds: float = 30.0) -> None:
        self.processes = processes
        self.messages = messages
        self.is_alive = is_alive
        """Whether a worker of this server runs the process now (the launcher's ``is_alive``)."""
        self.stale_minutes = stale_minutes
        self.grace_seconds = grace_seconds

    def _close(self, record: dict[str, Any], only_from: tuple[str, ...], reason: str) -> bool:
        pid = record["processObjId"]
        closed = False

        def to_error(doc: dict[str, Any]) -> dict[str, Any] | None:
            nonlocal closed
            if doc.get("status") not in only_from:
                return None  # it moved on since it was read: leave it alone
            closed = True
            stamp = now_ms()
            doc.update(status=ERROR, lastStateChangeTimestamp=stamp, payload=doc.get("payload") or reason)
            if not doc.get("operationEndTimestamp"):
                doc["operationEndTimestamp"] = stamp
            if doc.get("runningSince"):
                doc["runningTime"] = int(doc.get("runningTime") or 0) + int(stamp - float(doc["runningSince"]))
                doc["runningSince"] = None
            return doc

        changed = self.processes.processes.modify(pid, to_error)
        if changed is None or not closed:
            return False
        self.processes.notify(changed)
        self.messages.send(str(changed.get("operationType")), reason, changed.get("workspaceId"), result=KO)
        return True

    def clean_queue(self) -> int:
        """CREATED -> ERROR for this node; how many records were closed."""
        return sum(self._close(r, (CREATED,), QUEUE_CLEANED)
                   for r in self.processes.active_on_node() if r["status"] == CREATED)

    def is_stale(self, record: dict[str, Any], at_ms: float) -> bool:
        if record.get("status") not in (RUNNING, WAITING, READY):
            return False
        changed = float(record.get("lastStateChangeTimestamp") or record.get("operationTimestamp") or 0)
        if at_ms - changed < self.grace_seconds * 1000:
            return False
        if not self.is_alive(record["processObjId"]):
            return True
        return at_ms - changed > self.stale_minutes * 60_000

    def clean_stale(self) -> int:
        """Stale RUNNING/WAITING/READY records of this node -> ERROR; how many were closed."""
        at = now_ms()
        return sum(self._close(r, (RUNNING, WAITING, READY), STALE)
                   for r in self.processes.active_on_node() if self.is_stale(r, at))
