"""Models of /process: process workspaces (runs), their statistics, queues and node scores."""

from __future__ import annotations

from ._base import WasdiModel, alias


class ProcessWorkspaceViewModel(WasdiModel):
    """One process (run) of an operation in a workspace; its dates are ``yyyy-MM-dd HH:mm:ss`` strings."""

    product_name: str | None = None
    operation_type: str | None = None
    operation_sub_type: str | None = None
    operation_date: str | None = None
    """``yyyy-MM-dd HH:mm:ss`` (UTC); left out when unset, like the other dates."""
    operation_start_date: str | None = None
    operation_end_date: str | None = None
    last_change_date: str | None = None
    user_id: str | None = None
    file_size: str | None = None
    status: str
    """CREATED, RUNNING, WAITING, READY, DONE, ERROR or STOPPED."""
    progress_perc: int | None = None
    process_id: str = alias("processObjId", required=True)
    """The process id (wire ``processObjId``)."""
    pid: int | None = None
    payload: str | None = None
    workspace_id: str | None = None


class ProcessWorkspaceSummaryViewModel(WasdiModel):
    """Counts of waiting and running processes, the user's and everyone's."""

    user_process_waiting: int | None = None
    user_process_running: int | None = None
    all_process_waiting: int | None = None
    all_process_running: int | None = None


class ProcessHistoryViewModel(WasdiModel):
    """One run of an application, for its history."""

    processor_name: str | None = None
    operation_date: str | None = None
    operation_start_date: str | None = None
    operation_end_date: str | None = None
    status: str | None = None
    workspace_name: str | None = None
    workspace_id: str | None = None


class AppStatsViewModel(WasdiModel):
    """Run statistics of an application."""

    application_name: str | None = None
    runs: int | None = None
    error: int | None = None
    done: int | None = None
    stopped: int | None = None
    medium_time: int | None = None
    unique_users: int | None = None
    users: list[str] | None = None


class ComputingTimeViewModel(WasdiModel):
    """Computing time of a user in a project of a subscription, in milliseconds."""

    subscription_id: str | None = None
    project_id: str | None = None
    user_id: str | None = None
    computing_time: int | None = None


class ProcessWorkspaceAggregatedViewModel(WasdiModel):
    """Process counts of one scheduler queue, by state."""

    scheduler_name: str | None = None
    operation_type: str | None = None
    operation_sub_type: str | None = None
    proc_created: int | None = None
    proc_running: int | None = None
    proc_waiting: int | None = None
    proc_ready: int | None = None
    number_of_unfinished_processes: int | None = None
    """created + running + waiting + ready."""


class NodeScoreByProcessWorkspaceViewModel(WasdiModel):
    """A compute node with the load figures it is ranked by."""

    node_code: str | None = None
    number_of_processes: int | None = None
    disk_percentage_used: float | None = None
    disk_percentage_available: float | None = None
    disk_absolute_total: int | None = None
    disk_absolute_used: int | None = None
    disk_absolute_available: int | None = None
    memory_percentage_used: float | None = None
    memory_percentage_available: float | None = None
    memory_absolute_total: int | None = None
    memory_absolute_used: int | None = None
    memory_absolute_available: int | None = None
    licenses: str | None = None
    """Names of the active licences, sorted, joined by ``", "``."""
    timestamp_as_string: str | None = None
