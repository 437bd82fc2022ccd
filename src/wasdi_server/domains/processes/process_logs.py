"""Run logs: the lines a processor (or an operation) writes while it runs, read back by clients."""

from __future__ import annotations

from typing import Any

from ...dates import format_ms_or_none, now_ms
from ...store.logs import RunLogs
from ..accounts.identity import User
from .processes import ProcessService

MAX_LINE = 64 * 1024
"""Longer lines are cut: a log line is for people, and one runaway print must not fill the disk."""


class ProcessLogService:
    """Log lines per process, with the process's own access rules (write to add, read to see)."""

    def __init__(self, logs: RunLogs, processes: ProcessService) -> None:
        self.logs = logs
        self.processes = processes

    def add(self, user: User, process_id: str | None, text: str) -> int:
        record = self.processes.writable(user, process_id)
        return self.logs.append(record["processObjId"], text.rstrip("\r\n")[:MAX_LINE], now_ms())

    def write(self, process_id: str, text: str) -> int:
        """A line the server itself adds (an operation's note, an app's output): no caller, no access check."""
        return self.logs.append(process_id, text.rstrip("\r\n")[:MAX_LINE], now_ms())

    def count(self, user: User, process_id: str | None) -> int:
        return self.logs.count(self.processes.readable(user, process_id)["processObjId"])

    def rows(self, user: User, process_id: str | None, first: int | None, last: int | None) -> list[dict[str, Any]]:
        """ProcessorLogViewModel fields of rows ``first`` to ``last`` (both included)."""
        pid = self.processes.readable(user, process_id)["processObjId"]
        return [{"processWorkspaceId": pid, "logDate": format_ms_or_none(row.get("logDate")),
                 "logRow": row.get("logRow"), "rowNumber": row["rowNumber"]}
                for row in self.logs.read(pid, max(first or 0, 0), last if last is not None and last >= 0 else None)]

    def delete_all_of_user(self, user_id: str) -> None:
        """The process records the user started in other users' workspaces, with their logs."""
        for record in self.processes.by_user(user_id):
            self.logs.remove(record["processObjId"])
            self.processes.processes.delete(record["processObjId"])
            if self.processes.locator is not None:
                self.processes.locator.forget(record["processObjId"])

    def remove_for_workspace(self, workspace: dict[str, Any], delete_files: bool, delete_layers: bool) -> None:
        """Workspace delete hook: the logs go with the process records."""
        for record in self.processes.by_workspace(workspace["workspaceId"]):
            self.logs.remove(record["processObjId"])
