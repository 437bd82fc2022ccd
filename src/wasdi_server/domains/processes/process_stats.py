"""What clients ask about many processes at once: filtered listings, app statistics, running time,
queues and node scores.  Answers are plain dicts with the contract's wire names."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from ...dates import format_ms_or_none, parse_epoch_ms
from ...errors import BadRequest, Forbidden
from ...store import Collection
from ..accounts.identity import User
from ..accounts.sharing import SharingService
from ..platform.nodes import NodeService
from ..workspaces.workspaces import WorkspaceService
from .processes import (
    ACTIVE,
    CREATED,
    PROCESSOR_OPERATIONS,
    READY,
    RUNNING,
    STATUSES,
    TERMINAL,
    WAITING,
    ProcessService,
)

DEFAULT_FROM = "2020-01-01T00:00:00.000Z"
DEFAULT_TO = "2099-12-31T23:59:59.999Z"
OTHERS = ("OTHERS", "")


def parse_instant(text: str | None) -> float | None:
    """Epoch ms of an ISO-8601 instant (``2024-01-01T00:00:00Z``; no zone means UTC); ``None`` if absent
    or invalid."""
    if not text:
        return None
    try:
        return parse_epoch_ms(text)
    except ValueError:
        return None


def lenient_int(text: str | None) -> int | None:
    try:
        return int(text) if text not in (None, "") else None
    except ValueError:
        return None


def filtered(records: list[dict[str, Any]], *, status: str | None = None, operation_type: str | None = None,
             name_pattern: str | None = None, date_from: str | None = None, date_to: str | None = None,
             start_index: str | None = None, end_index: str | None = None) -> list[dict[str, Any]]:
    """``/process/byws`` filters and paging.  Invalid filters are ignored (contract): an unknown status, a bad
    date or index filters nothing.  ``start_index``..``end_index`` are a skip and an end position."""
    wanted_status = (status or "").upper()
    if wanted_status in STATUSES:
        records = [r for r in records if r.get("status") == wanted_status]
    if operation_type:
        records = [r for r in records if r.get("operationType") == operation_type.upper()]
    if name_pattern:
        records = [r for r in records if name_pattern in (r.get("productName") or "")]
    start, end = parse_instant(date_from), parse_instant(date_to)
    if start is not None:
        records = [r for r in records if float(r.get("operationTimestamp") or 0) >= start]
    if end is not None:
        records = [r for r in records if float(r.get("operationTimestamp") or 0) <= end]
    first, last = lenient_int(start_index), lenient_int(end_index)
    if first is not None and first >= 0:
        records = records[first:]
        if last is not None and last > first:
            records = records[:last - first]
    elif last is not None and last > 0:
        records = records[:last]
    return records


class ProcessStatistics:
    """Aggregates over the ``process_workspaces`` collection."""

    def __init__(self, processes: ProcessService, workspaces: WorkspaceService, subscriptions: Collection,
                 sharing: SharingService, nodes: NodeService, node_code: str) -> None:
        self.processes = processes
        self.workspaces = workspaces
        self.subscriptions = subscriptions
        self.sharing = sharing
        self.nodes = nodes
        self.node_code = node_code

    # -- applications --------------------------------------------------------------------------------
    def app_runs(self, processor_name: str) -> list[dict[str, Any]]:
        return self.processes.processes.find(lambda r: r.get("operationType") in PROCESSOR_OPERATIONS,
                                             productName=processor_name)

    def history(self, user: User, processor_name: str) -> list[dict[str, Any]]:
        """ProcessHistoryViewModel fields of the user's runs of an app (everyone's for an admin), newest first."""
        runs = [r for r in self.app_runs(processor_name) if user.is_admin or r["userId"] == user.user_id]
        out = []
        for r in ProcessService.newest_first(runs):
            workspace = self.workspaces.workspaces.get(r.get("workspaceId") or "") or {}
            out.append({
                "processorName": r.get("productName"), "operationDate": format_ms_or_none(r.get("operationTimestamp")),
                "operationStartDate": format_ms_or_none(r.get("operationStartTimestamp")
                                                        or r.get("operationTimestamp")),
                "operationEndDate": format_ms_or_none(r.get("operationEndTimestamp")), "status": r.get("status"),
                "workspaceName": workspace.get("name"), "workspaceId": r.get("workspaceId")})
        return out

    def app_stats(self, processor_name: str) -> dict[str, Any]:
        """AppStatsViewModel over every user's runs; ``mediumTime`` is the mean running time in seconds."""
        runs = self.app_runs(processor_name)
        finished = [r for r in runs if r.get("status") in TERMINAL]
        total_ms = sum(self.processes.running_time(r) for r in finished)
        users = sorted({r["userId"] for r in runs})
        return {"applicationName": processor_name, "runs": len(runs),
                "error": sum(r["status"] == "ERROR" for r in runs), "done": sum(r["status"] == "DONE" for r in runs),
                "stopped": sum(r["status"] == "STOPPED" for r in runs),
                "mediumTime": int(total_ms / len(finished) / 1000) if finished else 0,
                "uniqueUsers": len(users), "users": users}

    def summary(self, user: User, workspace_id: str | None) -> dict[str, int]:
        """The user's waiting (CREATED) and running processes, and everyone else's, optionally in one workspace."""
        equals = {"workspaceId": workspace_id} if workspace_id else {}
        records = self.processes.processes.find(lambda r: r.get("status") in (CREATED, RUNNING), **equals)
        mine = [r for r in records if r["userId"] == user.user_id]
        others = [r for r in records if r["userId"] != user.user_id]
        return {"userProcessWaiting": sum(r["status"] == CREATED for r in mine),
                "userProcessRunning": sum(r["status"] == RUNNING for r in mine),
                "allProcessWaiting": sum(r["status"] == CREATED for r in others),
                "allProcessRunning": sum(r["status"] == RUNNING for r in others)}

    # -- running time --------------------------------------------------------------------------------
    def running_time_of(self, caller: User, user_id: str, date_from: str | None, date_to: str | None) -> int:
        """Milliseconds a user's processes ran, over those created in the interval; others need admin."""
        target = user_id.strip().lower()
        if target != caller.user_id and not caller.is_admin:
            raise Forbidden("only admins may read another user's running time")
        start, end = parse_instant(date_from or DEFAULT_FROM), parse_instant(date_to or DEFAULT_TO)
        if start is None or end is None:
            raise BadRequest("invalid date")
        records = self.processes.processes.find(lambda r: start <= float(r.get("operationTimestamp") or 0) <= end,
                                                userId=target)
        return sum(self.processes.running_time(r) for r in records)

    def _charged_to_callers_subscriptions(self, caller: User) -> Iterable[dict[str, Any]]:
        owned = {s["subscriptionId"] for s in self.subscriptions.find(userId=caller.user_id)}
        mine = owned | set(self.sharing.shared_with(caller.user_id, "subscription"))
        return self.processes.processes.find(lambda r: r.get("subscriptionId") in mine)

    def by_subscription(self, caller: User) -> dict[str, dict[str, int]]:
        """Milliseconds by subscription, then project, over every process charged to the caller's subscriptions."""
        out: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        for r in self._charged_to_callers_subscriptions(caller):
            out[r["subscriptionId"]][r.get("projectId") or ""] += self.processes.running_time(r)
        return {sub: dict(projects) for sub, projects in out.items()}

    def computing_times(self, caller: User, *, only_caller: bool) -> list[dict[str, Any]]:
        """ComputingTimeViewModel fields by (subscription, project, user)."""
        totals: dict[tuple[str, str, str], int] = defaultdict(int)
        for r in self._charged_to_callers_subscriptions(caller):
            if only_caller and r["userId"] != caller.user_id:
                continue
            totals[(r["subscriptionId"], r.get("projectId") or "", r["userId"])] += self.processes.running_time(r)
        return [{"subscriptionId": s, "projectId": p, "userId": u, "computingTime": t}
                for (s, p, u), t in sorted(totals.items())]

    # -- queues and nodes ------------------------------------------------------------------------------
    def queues(self, node_code: str | None, statuses: list[str] | None) -> list[dict[str, Any]]:
        """One row per operation type with unfinished work, then the DEFAULT/OTHERS total row."""
        if node_code and node_code != self.node_code:
            raise BadRequest("only this node's queues are known here")
        wanted = {s.upper() for s in statuses or []} or set(ACTIVE)
        rows: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
        totals: dict[str, int] = defaultdict(int)
        for r in self.processes.active_on_node():
            if r["status"] in wanted:
                rows[(r["operationType"], r.get("operationSubType") or "")][r["status"]] += 1
                totals[r["status"]] += 1

        def row(key: tuple[str, str], counts: dict[str, int]) -> dict[str, Any]:
            return {"schedulerName": "DEFAULT", "operationType": key[0], "operationSubType": key[1],
                    "procCreated": counts.get(CREATED, 0), "procRunning": counts.get(RUNNING, 0),
                    "procWaiting": counts.get(WAITING, 0), "procReady": counts.get(READY, 0),
                    "numberOfUnfinishedProcesses": sum(counts.get(s, 0) for s in ACTIVE)}

        return [row(key, counts) for key, counts in sorted(rows.items())] + [row(OTHERS, totals)]

    def node_scores(self, caller: User) -> list[dict[str, Any]]:
        """NodeScoreByProcessWorkspaceViewModel fields, best node first (admins only; others get none)."""
        if not caller.is_admin:
            return []
        codes = self.nodes.scored_nodes(caller, set(self.sharing.shared_with(caller.user_id, "node")),
                                        include_local=True)
        if not codes:
            codes = [caller.default_node if self.nodes.is_usable(caller.default_node) else self.node_code]
        return [self.node_score(code) for code in codes]

    def node_score(self, code: str) -> dict[str, Any]:
        """A node's score record from its latest metrics (first disk) and its unfinished processes."""
        latest = self.nodes.metrics.get(code) or {}
        disk = (latest.get("disks") or [{}])[0]
        memory = latest.get("memory") or {}
        licenses = ", ".join(sorted(str(item.get("name")) for item in latest.get("licenses") or []
                                    if item.get("status")))
        received = latest.get("receivedAt")
        return {
            "nodeCode": code,
            "numberOfProcesses": self.nodes.busy(code, latest),
            "diskPercentageUsed": disk.get("percentageUsed"),
            "diskPercentageAvailable": disk.get("percentageAvailable"),
            "diskAbsoluteTotal": disk.get("absoluteTotal"), "diskAbsoluteUsed": disk.get("absoluteUsed"),
            "diskAbsoluteAvailable": disk.get("absoluteAvailable"),
            "memoryPercentageUsed": memory.get("percentageUsed"),
            "memoryPercentageAvailable": memory.get("percentageAvailable"),
            "memoryAbsoluteTotal": memory.get("absoluteTotal"), "memoryAbsoluteUsed": memory.get("absoluteUsed"),
            "memoryAbsoluteAvailable": memory.get("absoluteAvailable"), "licenses": licenses,
            "timestampAsString": format_ms_or_none(float(received) * 1000) if received else None,
        }
