"""Generated from ``wasdi_sdk.resources.processes`` by ``make async``: do not edit.

``client.processes``: process workspaces (runs): listing, status, payload, running time, queues (/process)."""

from __future__ import annotations

import builtins
import time
from collections.abc import Callable
from typing import Any, Unpack, cast

from ..._resource import RequestOptions
from ..._waiting import FINAL_STATES, AsyncSleep, ProcessFailedError, ProcessTimeoutError
from ...models import (
    AppStatsViewModel,
    ComputingTimeViewModel,
    NodeScoreByProcessWorkspaceViewModel,
    ProcessHistoryViewModel,
    ProcessWorkspaceAggregatedViewModel,
    ProcessWorkspaceSummaryViewModel,
    ProcessWorkspaceViewModel,
)
from ...resources.processes import Processes
from .._resource import AsyncAPIResource


class AsyncProcessesResource(AsyncAPIResource):
    """Async twin of ``ProcessesResource``: the same methods, awaited.

    /process.  Read calls answer an empty list (or a default model) when access fails."""

    async def list_by_workspace(
        self,
        workspace: str,
        *,
        status: str | None = None,
        operation_type: str | None = None,
        name_pattern: str | None = None,
        date_from: str | None = None,
        date_to: str | None = None,
        startindex: int | None = None,
        endindex: int | None = None,
        **options: Unpack[RequestOptions],
    ) -> Processes:
        """Processes of a workspace, newest first, optionally filtered and paged (``startindex``..``endindex``)."""
        return cast(
            Processes,
            await self._call(
                "processes.list_by_workspace",
                query={
                    "workspace": workspace,
                    "status": status,
                    "operationType": operation_type,
                    "namePattern": name_pattern,
                    "dateFrom": date_from,
                    "dateTo": date_to,
                    "startindex": startindex,
                    "endindex": endindex,
                },
                **options,
            ),
        )

    async def list_by_user(self, *, ogc: bool | None = None, **options: Unpack[RequestOptions]) -> Processes:
        """The user's processes, newest first."""
        return cast(Processes, await self._call("processes.list_by_user", query={"ogc": ogc}, **options))

    async def list_by_app(
        self, processor_name: str, **options: Unpack[RequestOptions]
    ) -> builtins.list[ProcessHistoryViewModel]:
        """Run history of an application."""
        return cast(
            builtins.list[ProcessHistoryViewModel],
            await self._call("processes.list_by_app", query={"processorName": processor_name}, **options),
        )

    async def app_stats(self, processor_name: str, **options: Unpack[RequestOptions]) -> AppStatsViewModel:
        """Run statistics of an application (``medium_time`` in seconds)."""
        return cast(
            AppStatsViewModel,
            await self._call("processes.app_stats", query={"processorName": processor_name}, **options),
        )

    async def last_by_workspace(self, workspace: str, **options: Unpack[RequestOptions]) -> Processes:
        """The five newest processes of a workspace."""
        return cast(
            Processes, await self._call("processes.last_by_workspace", query={"workspace": workspace}, **options)
        )

    async def last_by_user(self, **options: Unpack[RequestOptions]) -> Processes:
        """The user's five newest processes."""
        return cast(Processes, await self._call("processes.last_by_user", **options))

    async def summary(
        self, *, workspace: str | None = None, **options: Unpack[RequestOptions]
    ) -> ProcessWorkspaceSummaryViewModel:
        """Waiting and running counts: the user's, and everyone else's."""
        return cast(
            ProcessWorkspaceSummaryViewModel,
            await self._call("processes.summary", query={"workspace": workspace}, **options),
        )

    async def stop(self, procws: str, *, tree_kill: bool | None = None, **options: Unpack[RequestOptions]) -> None:
        """Stop a process; its children too unless ``tree_kill=False``."""
        await self._call("processes.stop", query={"procws": procws, "treeKill": tree_kill}, **options)

    async def get(self, procws: str, **options: Unpack[RequestOptions]) -> ProcessWorkspaceViewModel:
        """One process.  ``EmptyResultError`` when it is unknown or not accessible."""
        return cast(ProcessWorkspaceViewModel, await self._call("processes.get", query={"procws": procws}, **options))

    async def get_statuses(self, ids: builtins.list[str], **options: Unpack[RequestOptions]) -> builtins.list[str]:
        """Statuses in the order of ``ids``; unknown or inaccessible ids give ``ERROR``."""
        return cast(builtins.list[str], await self._call("processes.get_statuses", body=ids, **options))

    async def get_status(self, procws: str, **options: Unpack[RequestOptions]) -> str:
        """The status of a process (``ERROR`` also when it is unknown or not accessible)."""
        return cast(str, await self._call("processes.get_status", query={"procws": procws}, **options))

    async def update_status(
        self,
        procws: str,
        status: str,
        *,
        perc: int | None = None,
        sendrabbit: str | None = None,
        **options: Unpack[RequestOptions],
    ) -> ProcessWorkspaceViewModel:
        """Set the status (and progress 0-100); ``sendrabbit="1"`` notifies the workspace's clients."""
        return cast(
            ProcessWorkspaceViewModel,
            await self._call(
                "processes.update_status",
                query={"procws": procws, "status": status, "perc": perc, "sendrabbit": sendrabbit},
                **options,
            ),
        )

    async def set_payload_by_query(
        self, procws: str, payload: str, **options: Unpack[RequestOptions]
    ) -> ProcessWorkspaceViewModel:
        """Set the payload through a query parameter (short payloads)."""
        return cast(
            ProcessWorkspaceViewModel,
            await self._call("processes.set_payload_by_query", query={"procws": procws, "payload": payload}, **options),
        )

    async def set_payload(
        self, procws: str, payload: str, **options: Unpack[RequestOptions]
    ) -> ProcessWorkspaceViewModel:
        """Set the payload (any string, usually JSON) through the request body."""
        return cast(
            ProcessWorkspaceViewModel,
            await self._call("processes.set_payload", query={"procws": procws}, body=payload, **options),
        )

    async def set_sub_pid(
        self, procws: str, subpid: int, **options: Unpack[RequestOptions]
    ) -> ProcessWorkspaceViewModel:
        """Record the pid of the process's subprocess."""
        return cast(
            ProcessWorkspaceViewModel,
            await self._call("processes.set_sub_pid", query={"procws": procws, "subpid": subpid}, **options),
        )

    async def get_payload(self, procws: str, **options: Unpack[RequestOptions]) -> str:
        """The payload string.  ``EmptyResultError`` when there is none or it is not accessible."""
        return cast(str, await self._call("processes.get_payload", query={"procws": procws}, **options))

    async def running_time_by_user(
        self,
        user_id: str,
        *,
        date_from: str | None = None,
        date_to: str | None = None,
        **options: Unpack[RequestOptions],
    ) -> int:
        """Milliseconds a user's processes ran in an interval (ISO instants); admins may ask for others."""
        return cast(
            int,
            await self._call(
                "processes.running_time_by_user",
                query={"userId": user_id, "dateFrom": date_from, "dateTo": date_to},
                **options,
            ),
        )

    async def running_time_by_subscription(self, **options: Unpack[RequestOptions]) -> dict[str, dict[str, int]]:
        """Milliseconds by subscription id, then project id, over the user's subscriptions."""
        return cast(dict[str, dict[str, int]], await self._call("processes.running_time_by_subscription", **options))

    async def running_time_by_project(self, **options: Unpack[RequestOptions]) -> builtins.list[ComputingTimeViewModel]:
        """Computing time of every user of the projects of the user's subscriptions."""
        return cast(
            builtins.list[ComputingTimeViewModel], await self._call("processes.running_time_by_project", **options)
        )

    async def my_running_time_by_project(
        self, **options: Unpack[RequestOptions]
    ) -> builtins.list[ComputingTimeViewModel]:
        """The user's own computing time by subscription and project."""
        return cast(
            builtins.list[ComputingTimeViewModel], await self._call("processes.my_running_time_by_project", **options)
        )

    async def get_params(self, procws: str, **options: Unpack[RequestOptions]) -> Any:
        """The stored parameters of a processor run."""
        return await self._call("processes.get_params", query={"procws": procws}, **options)

    async def queues_status(
        self,
        *,
        node_code: str | None = None,
        statuses: builtins.list[str] | None = None,
        **options: Unpack[RequestOptions],
    ) -> builtins.list[ProcessWorkspaceAggregatedViewModel]:
        """Unfinished process counts by queue and state."""
        return cast(
            builtins.list[ProcessWorkspaceAggregatedViewModel],
            await self._call("processes.queues_status", query={"nodeCode": node_code, "statuses": statuses}, **options),
        )

    async def nodes_by_score(
        self, **options: Unpack[RequestOptions]
    ) -> builtins.list[NodeScoreByProcessWorkspaceViewModel]:
        """Nodes, best first (admins; others get an empty list)."""
        return cast(
            builtins.list[NodeScoreByProcessWorkspaceViewModel], await self._call("processes.nodes_by_score", **options)
        )

    async def wait(
        self,
        process_id: str,
        *,
        timeout: float | None = None,
        poll_interval: float = 1.0,
        max_interval: float = 10.0,
        raise_on_failure: bool = True,
        on_update: Callable[[ProcessWorkspaceViewModel], None] | None = None,
        sleep: AsyncSleep | None = None,
    ) -> ProcessWorkspaceViewModel:
        """Wait until a process is DONE, ERROR or STOPPED; its final state.

        Between reads the wait listens to the workspace's messages (``client.events``) and reads the process again
        as soon as one says it changed.  Where there are none to hear (no broker, broker down, another server) it
        polls; either way a pause lasts at most ``poll_interval`` seconds, growing by half up to ``max_interval``.
        A ``sleep`` given (tests pass a recorder) makes the pauses plain calls to it, without messages.

        ``on_update`` sees every state read (for progress bars).  Raises ``ProcessFailedError`` on ERROR or
        STOPPED (unless ``raise_on_failure=False``) and ``ProcessTimeoutError`` after ``timeout`` seconds.
        """
        from ..events import AsyncProcessUpdates

        started = time.monotonic()
        interval = poll_interval
        updates: AsyncProcessUpdates | None = None
        try:
            while True:
                process = await self.get(process_id)
                if on_update is not None:
                    on_update(process)
                if process.status in FINAL_STATES:
                    if raise_on_failure and process.status != "DONE":
                        raise ProcessFailedError(process)
                    return process
                if timeout is not None and time.monotonic() - started + interval > timeout:
                    raise ProcessTimeoutError(process, timeout)
                if sleep is not None:
                    await sleep(interval)
                else:
                    if updates is None:
                        updates = AsyncProcessUpdates(self._client, process.workspace_id)
                        await updates.open()
                        if updates.live:
                            continue
                    await updates.sleep(interval, process_id)
                interval = min(max_interval, interval * 1.5)
        finally:
            if updates is not None:
                await updates.close()
