"""/process: process workspaces (runs): listing, status, payload, running time, queues."""

from __future__ import annotations

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

from ..domains.processes.process_stats import filtered
from ..domains.processes.processes import LAST_LIMIT, ProcessService
from ..errors import BadRequest
from .framework import Call, handles

MAX_IDS = 1000


def views(records: list[dict[str, Any]]) -> list[ProcessWorkspaceViewModel]:
    return [ProcessWorkspaceViewModel.model_validate(ProcessService.view(r)) for r in records]


def view(record: dict[str, Any]) -> ProcessWorkspaceViewModel:
    return ProcessWorkspaceViewModel.model_validate(ProcessService.view(record))


# -- listings ----------------------------------------------------------------------------------------
@handles("processes.list_by_workspace")
def list_by_workspace(call: Call) -> list[ProcessWorkspaceViewModel]:
    p = call.params
    call.services.workspaces.readable(call.caller, p["workspace"])
    records = call.services.processes.by_workspace(p["workspace"])
    return views(filtered(records, status=p["status"], operation_type=p["operationType"],
                          name_pattern=p["namePattern"], date_from=p["dateFrom"], date_to=p["dateTo"],
                          start_index=p["startindex"], end_index=p["endindex"]))


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


@handles("processes.list_by_app")
def list_by_app(call: Call) -> list[ProcessHistoryViewModel]:
    rows = call.services.process_stats.history(call.caller, call.params["processorName"])
    return [ProcessHistoryViewModel.model_validate(row) for row in call.services.merges.history(call, rows)]


@handles("processes.app_stats")
def app_stats(call: Call) -> AppStatsViewModel:
    # the statistics of an app are for those who may read it (deny by default: a private app's are not public)
    name = str(call.services.apps.readable_by_name(call.caller, call.params["processorName"])["name"])
    stats = call.services.merges.app_stats(call, call.services.process_stats.app_stats(name))
    return AppStatsViewModel.model_validate(stats)


@handles("processes.summary")
def summary(call: Call) -> ProcessWorkspaceSummaryViewModel:
    workspace = call.params["workspace"]
    if workspace:
        call.services.workspaces.readable(call.caller, workspace)
    return ProcessWorkspaceSummaryViewModel.model_validate(call.services.process_stats.summary(call.caller, workspace))


# -- one process -------------------------------------------------------------------------------------
@handles("processes.stop")
def stop(call: Call) -> None:
    record = call.services.processes.writable(call.caller, call.params["procws"])
    call.services.launcher.kill(record["processObjId"], tree=call.params["treeKill"] is not False)


@handles("processes.get")
def get_process(call: Call) -> ProcessWorkspaceViewModel:
    return view(call.services.processes.readable(call.caller, call.params["procws"]))


@handles("processes.get_statuses")
def get_statuses(call: Call) -> list[str]:
    ids = call.body or []
    if len(ids) > MAX_IDS:
        raise BadRequest(f"at most {MAX_IDS} ids")
    processes = call.services.processes
    return call.services.merges.statuses(call, ids, lambda process_id: processes.status_for(call.caller, process_id),
                                         lambda process_id: processes.get(process_id) is not None)


@handles("processes.get_status")
def get_status(call: Call) -> str:
    return call.services.processes.status_for(call.caller, call.params["procws"])


@handles("processes.update_status")
def update_status(call: Call) -> ProcessWorkspaceViewModel:
    p = call.params
    notify = (p["sendrabbit"] or "").strip().lower() in ("1", "true")
    return view(call.services.processes.update_status_for(call.caller, p["procws"], p["status"], p["perc"], notify))


@handles("processes.set_payload_by_query")
def set_payload_by_query(call: Call) -> ProcessWorkspaceViewModel:
    return view(call.services.processes.set_payload_for(call.caller, call.params["procws"], call.params["payload"]))


@handles("processes.set_payload")
def set_payload(call: Call) -> ProcessWorkspaceViewModel:
    return view(call.services.processes.set_payload_for(call.caller, call.params["procws"], call.body))


@handles("processes.set_sub_pid")
def set_sub_pid(call: Call) -> ProcessWorkspaceViewModel:
    return view(call.services.processes.set_sub_pid_for(call.caller, call.params["procws"], call.params["subpid"]))


@handles("processes.get_payload")
def get_payload(call: Call) -> str:
    return call.services.processes.payload_of(call.caller, call.params["procws"])


@handles("processes.get_params")
def get_params(call: Call) -> Any:
    return call.services.processes.parameters_of(call.caller, call.params["procws"])


# -- running time ------------------------------------------------------------------------------------
@handles("processes.running_time_by_user")
def running_time_by_user(call: Call) -> int:
    p = call.params
    local = call.services.process_stats.running_time_of(call.caller, p["userId"], p["dateFrom"], p["dateTo"])
    return call.services.merges.total(call, local)


@handles("processes.running_time_by_subscription")
def running_time_by_subscription(call: Call) -> dict[str, dict[str, int]]:
    return call.services.merges.by_subscription(call, call.services.process_stats.by_subscription(call.caller))


@handles("processes.running_time_by_project")
def running_time_by_project(call: Call) -> list[ComputingTimeViewModel]:
    rows = call.services.process_stats.computing_times(call.caller, only_caller=False)
    return [ComputingTimeViewModel.model_validate(row) for row in call.services.merges.computing_times(call, rows)]


@handles("processes.my_running_time_by_project")
def my_running_time_by_project(call: Call) -> list[ComputingTimeViewModel]:
    rows = call.services.process_stats.computing_times(call.caller, only_caller=True)
    return [ComputingTimeViewModel.model_validate(row) for row in call.services.merges.computing_times(call, rows)]


# -- queues and nodes --------------------------------------------------------------------------------
@handles("processes.queues_status")
def queues_status(call: Call) -> list[ProcessWorkspaceAggregatedViewModel]:
    code = call.params["nodeCode"]
    if code and code != call.services.identity.code and call.services.identity.in_deployment:
        return [ProcessWorkspaceAggregatedViewModel.model_validate(row)
                for row in call.services.merges.from_node(call, code) or []]
    rows = call.services.process_stats.queues(code, call.params["statuses"])
    return [ProcessWorkspaceAggregatedViewModel.model_validate(row) for row in rows]


@handles("processes.nodes_by_score")
def nodes_by_score(call: Call) -> list[NodeScoreByProcessWorkspaceViewModel]:
    return [NodeScoreByProcessWorkspaceViewModel.model_validate(row)
            for row in call.services.process_stats.node_scores(call.caller)]
