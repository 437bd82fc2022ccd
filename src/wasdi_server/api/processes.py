"""/process: process workspaces (runs): listing, status, payload, running time, queues."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

from wasdi_sdk.models import (
    AppStatsViewModel,
    ComputingTimeViewModel,
    NodeScoreByProcessWorkspaceViewModel,
    ProcessHistoryViewModel,
    ProcessWorkspaceAggregatedViewModel,
    ProcessWorkspaceSummaryViewModel,
    ProcessWorkspaceViewModel,
)

from ..errors import BadRequest, Forbidden
from ..services.processes import (
    ACTIVE,
    CREATED,
    LAST_LIMIT,
    READY,
    RUNNING,
    STATUSES,
    TERMINAL,
    WAITING,
    ProcessService,
    format_date,
)
from .framework import Call, handles

MAX_IDS = 1000
PROCESSOR_OPERATIONS = frozenset({"RUNPROCESSOR", "RUNIDL", "RUNMATLAB"})
DEFAULT_FROM = "2020-01-01T00:00:00.000Z"
DEFAULT_TO = "2099-12-31T23:59:59.999Z"


def views(records: list[dict[str, Any]]) -> list[ProcessWorkspaceViewModel]:
    return [ProcessWorkspaceViewModel.model_validate(ProcessService.view(r)) for r in records]


def view(record: dict[str, Any]) -> ProcessWorkspaceViewModel:
    return ProcessWorkspaceViewModel.model_validate(ProcessService.view(record))


def parse_instant(text: str | None) -> float | None:
    """Epoch ms of an ISO-8601 instant (``2024-01-01T00:00:00Z``); ``None`` if absent or invalid."""
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.strip().replace("Z", "+00:00")).timestamp() * 1000
    except ValueError:
        return None


def lenient_int(text: str | None) -> int | None:
    try:
        return int(text) if text not in (None, "") else None
    except ValueError:
        return None


# -- listings ----------------------------------------------------------------------------------------
@handles("processes.list_by_workspace")
def list_by_workspace(call: Call) -> list[ProcessWorkspaceViewModel]:
    p = call.params
    call.services.workspaces.readable(call.caller, p["workspace"])
    records = call.services.processes.by_workspace(p["workspace"])
    # Invalid filters are ignored (contract): an unknown status or a bad date filters nothing.
    status = (p["status"] or "").upper()
    if status in STATUSES:
        records = [r for r in records if r.get("status") == status]
    if p["operationType"]:
        records = [r for r in records if r.get("operationType") == p["operationType"].upper()]
    if p["namePattern"]:
        records = [r for r in records if p["namePattern"] in (r.get("productName") or "")]
    start, end = parse_instant(p["dateFrom"]), parse_instant(p["dateTo"])
    if start is not None:
        records = [r for r in records if float(r.get("operationTimestamp") or 0) >= start]
    if end is not None:
        records = [r for r in records if float(r.get("operationTimestamp") or 0) <= end]
    first, last = lenient_int(p["startindex"]), lenient_int(p["endindex"])
    if first is not None and first >= 0:
        records = records[first:]
        if last is not None and last > first:
            records = records[:last - first]
    elif last is not None and last > 0:
        records = records[:last]
    return views(records)


@handles("processes.list_by_user")
def list_by_user(call: Call) -> list[ProcessWorkspaceViewModel]:
    records = call.services.processes.by_user(call.caller.user_id)
    if call.params["ogc"]:
        records = [r for r in records if r.get("ogc")]
    return views(records)


@handles("processes.last_by_workspace")
def last_by_workspace(call: Call) -> list[ProcessWorkspaceViewModel]:
    call.services.workspaces.readable(call.caller, call.params["workspace"])
    return views(call.services.processes.by_workspace(call.params["workspace"])[:LAST_LIMIT])


@handles("processes.last_by_user")
def last_by_user(call: Call) -> list[ProcessWorkspaceViewModel]:
    return views(call.services.processes.by_user(call.caller.user_id)[:LAST_LIMIT])


def app_runs(call: Call, processor_name: str) -> list[dict[str, Any]]:
    return call.services.processes.processes.find(
        lambda r: r.get("operationType") in PROCESSOR_OPERATIONS, productName=processor_name)


@handles("processes.list_by_app")
def list_by_app(call: Call) -> list[ProcessHistoryViewModel]:
    """The caller's runs of an application (every user's for an admin), newest first."""
    user = call.caller
    runs = [r for r in app_runs(call, call.params["processorName"]) if user.is_admin or r["userId"] == user.user_id]
    workspaces = call.services.workspaces.workspaces
    out = []
    for r in ProcessService.newest_first(runs):
        workspace = workspaces.get(r.get("workspaceId") or "") or {}
        out.append(ProcessHistoryViewModel(
            processor_name=r.get("productName"), operation_date=format_date(r.get("operationTimestamp")),
            operation_start_date=format_date(r.get("operationStartTimestamp") or r.get("operationTimestamp")),
            operation_end_date=format_date(r.get("operationEndTimestamp")), status=r.get("status"),
            workspace_name=workspace.get("name"), workspace_id=r.get("workspaceId")))
    return out


@handles("processes.app_stats")
def app_stats(call: Call) -> AppStatsViewModel:
    """Run statistics over every user's runs; ``mediumTime`` is the mean running time in seconds."""
    name = call.params["processorName"]
    runs = app_runs(call, name)
    finished = [r for r in runs if r.get("status") in TERMINAL]
    processes = call.services.processes
    total_ms = sum(processes.running_time(r) for r in finished)
    users = sorted({r["userId"] for r in runs})
    return AppStatsViewModel(
        application_name=name, runs=len(runs), error=sum(r["status"] == "ERROR" for r in runs),
        done=sum(r["status"] == "DONE" for r in runs), stopped=sum(r["status"] == "STOPPED" for r in runs),
        medium_time=int(total_ms / len(finished) / 1000) if finished else 0, unique_users=len(users), users=users)


@handles("processes.summary")
def summary(call: Call) -> ProcessWorkspaceSummaryViewModel:
    """The caller's waiting (CREATED) and running processes, and everyone else's, optionally in one workspace."""
    workspace = call.params["workspace"]
    if workspace:
        call.services.workspaces.readable(call.caller, workspace)
    equals = {"workspaceId": workspace} if workspace else {}
    records = call.services.processes.processes.find(lambda r: r.get("status") in (CREATED, RUNNING), **equals)
    mine = [r for r in records if r["userId"] == call.caller.user_id]
    others = [r for r in records if r["userId"] != call.caller.user_id]
    return ProcessWorkspaceSummaryViewModel(
        user_process_waiting=sum(r["status"] == CREATED for r in mine),
        user_process_running=sum(r["status"] == RUNNING for r in mine),
        all_process_waiting=sum(r["status"] == CREATED for r in others),
        all_process_running=sum(r["status"] == RUNNING for r in others))


# -- one process -------------------------------------------------------------------------------------
@handles("processes.stop")
def stop(call: Call) -> None:
    p = call.params
    record = call.services.processes.writable(call.caller, p["procws"])
    call.services.launcher.kill(record["processObjId"], tree=p["treeKill"] is not False)


@handles("processes.get")
def get_process(call: Call) -> ProcessWorkspaceViewModel:
    return view(call.services.processes.readable(call.caller, call.params["procws"]))


def status_of(call: Call, process_id: Any) -> str:
    if not isinstance(process_id, str):
        return "ERROR"
    if process_id in TERMINAL:
        return process_id
    processes = call.services.processes
    record = processes.get(process_id)
    if record is None or not processes.can_read(call.caller, record):
        return "ERROR"
    return str(record["status"])


@handles("processes.get_statuses")
def get_statuses(call: Call) -> list[str]:
    ids = call.body or []
    if len(ids) > MAX_IDS:
        raise BadRequest(f"at most {MAX_IDS} ids")
    return [status_of(call, process_id) for process_id in ids]


@handles("processes.get_status")
def get_status(call: Call) -> str:
    status = status_of(call, call.params["procws"])
    if status == "ERROR" and call.services.processes.get(call.params["procws"]) is None:
        raise BadRequest("unknown process")
    return status


@handles("processes.update_status")
def update_status(call: Call) -> ProcessWorkspaceViewModel:
    p = call.params
    processes = call.services.processes
    record = processes.writable(call.caller, p["procws"])
    status = p["status"].strip().upper()
    if status not in STATUSES:
        raise BadRequest(f"unknown status {p['status'][:30]!r}")
    notify = (p["sendrabbit"] or "").strip().lower() in ("1", "true")
    updated = processes.set_status(record["processObjId"], status, p["perc"], notify=notify)
    if updated is None:
        raise BadRequest("unknown process")
    return view(updated)


def set_payload_to(call: Call, payload: str | None) -> ProcessWorkspaceViewModel:
    processes = call.services.processes
    record = processes.writable(call.caller, call.params["procws"])
    if payload is not None and len(payload) > 1_000_000:
        raise BadRequest("payload too large")
    updated = processes.update(record["processObjId"], {"payload": payload})
    if updated is None:
        raise BadRequest("unknown process")
    return view(updated)


@handles("processes.set_payload_by_query")
def set_payload_by_query(call: Call) -> ProcessWorkspaceViewModel:
    return set_payload_to(call, call.params["payload"])


@handles("processes.set_payload")
def set_payload(call: Call) -> ProcessWorkspaceViewModel:
    return set_payload_to(call, call.body)


@handles("processes.set_sub_pid")
def set_sub_pid(call: Call) -> ProcessWorkspaceViewModel:
    processes = call.services.processes
    record = processes.writable(call.caller, call.params["procws"])
    updated = processes.update(record["processObjId"], {"subPid": int(call.params["subpid"])})
    if updated is None:
        raise BadRequest("unknown process")
    return view(updated)


@handles("processes.get_payload")
def get_payload(call: Call) -> str:
    payload = call.services.processes.readable(call.caller, call.params["procws"]).get("payload")
    if payload is None:
        raise BadRequest("no payload")
    return str(payload)


@handles("processes.get_params")
def get_params(call: Call) -> Any:
    record = call.services.processes.readable(call.caller, call.params["procws"])
    if record.get("operationType") not in PROCESSOR_OPERATIONS:
        raise BadRequest("the process is not a processor run")
    return record.get("parameter") or {}


# -- running time ------------------------------------------------------------------------------------
@handles("processes.running_time_by_user")
def running_time_by_user(call: Call) -> int:
    p = call.params
    user = call.caller
    target = (p["userId"] or "").strip().lower()
    if target != user.user_id and not user.is_admin:
        raise Forbidden("only admins may read another user's running time")
    start = parse_instant(p["dateFrom"] or DEFAULT_FROM)
    end = parse_instant(p["dateTo"] or DEFAULT_TO)
    if start is None or end is None:
        raise BadRequest("invalid date")
    processes = call.services.processes
    records = processes.processes.find(
        lambda r: start <= float(r.get("operationTimestamp") or 0) <= end, userId=target)
    return sum(processes.running_time(r) for r in records)


def caller_subscriptions(call: Call) -> set[str]:
    user = call.caller
    owned = {s["subscriptionId"] for s in call.services.subscriptions.subscriptions.find(userId=user.user_id)}
    return owned | set(call.services.sharing.shared_with(user.user_id, "subscription"))


@handles("processes.running_time_by_subscription")
def running_time_by_subscription(call: Call) -> dict[str, dict[str, int]]:
    """Milliseconds by subscription, then project, over every process charged to the caller's subscriptions."""
    subscriptions = caller_subscriptions(call)
    processes = call.services.processes
    out: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for r in processes.processes.find(lambda r: r.get("subscriptionId") in subscriptions):
        out[r["subscriptionId"]][r.get("projectId") or ""] += processes.running_time(r)
    return {sub: dict(projects) for sub, projects in out.items()}


def computing_times(call: Call, only_caller: bool) -> list[ComputingTimeViewModel]:
    subscriptions = caller_subscriptions(call)
    processes = call.services.processes
    totals: dict[tuple[str, str, str], int] = defaultdict(int)
    for r in processes.processes.find(lambda r: r.get("subscriptionId") in subscriptions):
        if only_caller and r["userId"] != call.caller.user_id:
            continue
        totals[(r["subscriptionId"], r.get("projectId") or "", r["userId"])] += processes.running_time(r)
    return [ComputingTimeViewModel(subscription_id=s, project_id=p, user_id=u, computing_time=t)
            for (s, p, u), t in sorted(totals.items())]


@handles("processes.running_time_by_project")
def running_time_by_project(call: Call) -> list[ComputingTimeViewModel]:
    return computing_times(call, only_caller=False)


@handles("processes.my_running_time_by_project")
def my_running_time_by_project(call: Call) -> list[ComputingTimeViewModel]:
    return computing_times(call, only_caller=True)


# -- queues and nodes --------------------------------------------------------------------------------
@handles("processes.queues_status")
def queues_status(call: Call) -> list[ProcessWorkspaceAggregatedViewModel]:
    """One row per operation type with unfinished work, then the DEFAULT/OTHERS total row."""
    node = call.params["nodeCode"]
    services = call.services
    if node and node != services.settings.node_code:
        raise BadRequest("only this node's queues are known here")
    wanted = {s.upper() for s in call.params["statuses"] or []} or set(ACTIVE)
    rows: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for r in services.processes.active_on_node():
        if r["status"] in wanted:
            rows[(r["operationType"], r.get("operationSubType") or "")][r["status"]] += 1
    rows[("OTHERS", "")]
    totals: dict[str, int] = defaultdict(int)
    for key, counts in list(rows.items()):
        if key != ("OTHERS", ""):
            for status, count in counts.items():
                totals[status] += count
    rows[("OTHERS", "")] = totals

    def row(op: str, sub: str, counts: dict[str, int]) -> ProcessWorkspaceAggregatedViewModel:
        return ProcessWorkspaceAggregatedViewModel(
            scheduler_name="DEFAULT", operation_type=op, operation_sub_type=sub,
            proc_created=counts.get(CREATED, 0), proc_running=counts.get(RUNNING, 0),
            proc_waiting=counts.get(WAITING, 0), proc_ready=counts.get(READY, 0),
            number_of_unfinished_processes=sum(counts.get(s, 0) for s in ACTIVE))

    return [row(op, sub, counts) for (op, sub), counts in sorted(rows.items(), key=lambda kv: kv[0] == ("OTHERS", ""))]


@handles("processes.nodes_by_score")
def nodes_by_score(call: Call) -> list[NodeScoreByProcessWorkspaceViewModel]:
    user = call.caller
    if not user.is_admin:
        return []
    services = call.services
    codes = services.nodes.scored_nodes(user, set(services.sharing.shared_with(user.user_id, "node")))
    if not codes:
        codes = [user.default_node if services.nodes.is_usable(user.default_node) else services.settings.node_code]
    return [node_score(call, code) for code in codes]


def node_score(call: Call, code: str) -> NodeScoreByProcessWorkspaceViewModel:
    """The score record of a node from its latest metrics (first disk) and its unfinished processes."""
    services = call.services
    latest = services.nodes.metrics.get(code) or {}
    disk = (latest.get("disks") or [{}])[0]
    memory = latest.get("memory") or {}
    licenses = ", ".join(sorted(str(item.get("name")) for item in latest.get("licenses") or [] if item.get("status")))
    received = latest.get("receivedAt")
    return NodeScoreByProcessWorkspaceViewModel(
        node_code=code,
        number_of_processes=services.processes.processes.count(lambda r: r.get("status") in ACTIVE, nodeCode=code),
        disk_percentage_used=disk.get("percentageUsed"), disk_percentage_available=disk.get("percentageAvailable"),
        disk_absolute_total=disk.get("absoluteTotal"), disk_absolute_used=disk.get("absoluteUsed"),
        disk_absolute_available=disk.get("absoluteAvailable"),
        memory_percentage_used=memory.get("percentageUsed"),
        memory_percentage_available=memory.get("percentageAvailable"),
        memory_absolute_total=memory.get("absoluteTotal"), memory_absolute_used=memory.get("absoluteUsed"),
        memory_absolute_available=memory.get("absoluteAvailable"), licenses=licenses,
        timestamp_as_string=format_date(float(received) * 1000) if received else None)
