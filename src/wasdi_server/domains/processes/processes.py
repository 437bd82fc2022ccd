"""Process workspaces: the record of every queued operation, its states and its accounting.

A record moves CREATED -> RUNNING -> DONE / ERROR / STOPPED; a running application may also move
itself RUNNING -> WAITING (waiting for children) -> READY, and the launcher moves READY -> RUNNING
when a slot is free.  Every status change stamps ``lastStateChangeTimestamp``; time spent RUNNING is
added to ``runningTime`` (milliseconds), which feeds the running-time statistics.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from wasdi_sdk.units import human_size

from ...dates import format_ms_or_none, now_ms
from ...errors import BadRequest, Forbidden
from ...store import Collection
from ..accounts.identity import User, UserService
from ..workspaces.workspaces import WorkspaceService
from .ports import MessagePublisher, ProcessPlaces

CREATED, RUNNING, WAITING, READY = "CREATED", "RUNNING", "WAITING", "READY"
DONE, ERROR, STOPPED = "DONE", "ERROR", "STOPPED"
STATUSES = (CREATED, RUNNING, WAITING, READY, DONE, ERROR, STOPPED)
ACTIVE = frozenset({CREATED, RUNNING, WAITING, READY})
TERMINAL = frozenset({DONE, ERROR, STOPPED})
LAST_LIMIT = 5
"""``lastbyws`` / ``lastbyusr`` answer this many records."""
MAX_PAYLOAD = 1_000_000
PROCESSOR_OPERATIONS = frozenset({"RUNPROCESSOR", "RUNIDL", "RUNMATLAB"})


class ProcessService:
    """The ``process_workspaces`` collection (its own file: it is the hottest data)."""

    def __init__(self, processes: Collection, messages: MessagePublisher, workspaces: WorkspaceService,
                 users: UserService, node_code: str) -> None:
        self.processes = processes
        self.messages = messages
        self.workspaces = workspaces
        self.users = users
        self.node_code = node_code
        self._listeners: list[Callable[[], None]] = []
        self._lock = threading.Lock()
        self.locator: ProcessPlaces | None = None
        """In a deployment of several nodes: the shared index of which node holds which process."""

    def on_created(self, listener: Callable[[], None]) -> None:
        """``listener`` is called after every new record (the launcher wakes up)."""
        self._listeners.append(listener)

    # -- creation -------------------------------------------------------------------------------------
    def create(self, user: User, workspace_id: str, operation_type: str, product_name: str, *,
               subtype: str = "", parameter: dict[str, Any] | None = None, parent: str | None = None,
               payload: str | None = None, process_id: str | None = None) -> dict[str, Any]:
        """A new CREATED record (with ``process_id``, when the caller chose it); the launcher picks it up."""
        stamp = now_ms()
        owner = self.users.get(user.user_id) or {}
        process_id = process_id or str(uuid.uuid4())
        if self.locator is not None:  # first, so that no process of this node is ever unknown to the others
            self.locator.record(process_id, workspace_id)
        record = self.processes.insert({
            "processObjId": process_id, "workspaceId": workspace_id, "userId": user.user_id,
            "productName": product_name, "operationType": operation_type, "operationSubType": subtype or "",
            "status": CREATED, "progressPerc": 0, "payload": payload, "pid": 0, "subPid": 0,
            "parentId": parent or None, "nodeCode": self.node_code,
            "projectId": owner.get("activeProjectId"), "subscriptionId": owner.get("activeSubscriptionId"),
            "fileSize": "", "operationTimestamp": stamp, "operationStartTimestamp": None,
            "operationEndTimestamp": None, "lastStateChangeTimestamp": stamp, "runningSince": None,
            "runningTime": 0, "parameter": parameter or {},
        })
        for listener in self._listeners:
            listener()
        return record

    # -- access ----------------------------------------------------------------------------------------
    def get(self, process_id: str | None) -> dict[str, Any] | None:
        if not process_id or len(process_id) > 200:
            return None
        return self.processes.get(process_id)

    def load(self, process_id: str | None) -> dict[str, Any]:
        record = self.get(process_id)
        if record is None:
            raise BadRequest("MSG_ERROR_INVALID_PROCESS")
        return record

    def can_read(self, user: User, record: dict[str, Any]) -> bool:
        if user.is_admin or record.get("userId") == user.user_id:
            return True
        workspace = self.workspaces.workspaces.get(record.get("workspaceId") or "")
        if workspace is None:
            return False
        return bool(workspace.get("isPublic")) or self.workspaces.sharing.can_read(user,
                                                                                  self.workspaces.resource(workspace))

    def can_write(self, user: User, record: dict[str, Any]) -> bool:
        if user.is_admin or record.get("userId") == user.user_id:
            return True
        workspace = self.workspaces.workspaces.get(record.get("workspaceId") or "")
        return workspace is not None and self.workspaces.sharing.can_write(user, self.workspaces.resource(workspace))

    def readable(self, user: User, process_id: str | None) -> dict[str, Any]:
        record = self.load(process_id)
        if not self.can_read(user, record):
            raise Forbidden("MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT_PROCESSWORKSPACE")
        return record

    def writable(self, user: User, process_id: str | None) -> dict[str, Any]:
        record = self.load(process_id)
        if not self.can_write(user, record):
            raise Forbidden("MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT_PROCESSWORKSPACE")
        return record

    def status_for(self, user: User, process_id: Any) -> str:
        """The status a client may see: ids that are already a final status are echoed (the official library
        polls with them); unknown or inaccessible ids are ``ERROR``."""
        if not isinstance(process_id, str):
            return ERROR
        if process_id in TERMINAL:
            return process_id
        record = self.get(process_id)
        if record is None or not self.can_read(user, record):
            return ERROR
        return str(record["status"])

    def payload_of(self, user: User, process_id: str | None) -> str:
        payload = self.readable(user, process_id).get("payload")
        if payload is None:
            raise BadRequest("no payload")
        return str(payload)

    def parameters_of(self, user: User, process_id: str | None) -> Any:
        """The stored parameters of a processor run."""
        record = self.readable(user, process_id)
        if record.get("operationType") not in PROCESSOR_OPERATIONS:
            raise BadRequest("the process is not a processor run")
        return record.get("parameter") or {}

    # -- changes by clients ----------------------------------------------------------------------------
    def update_status_for(self, user: User, process_id: str | None, status: str, perc: int | None,
                          notify: bool) -> dict[str, Any]:
        """``/process/updatebyid``: any move among the seven states, by someone who may write the process."""
        record = self.writable(user, process_id)
        wanted = status.strip().upper()
        if wanted not in STATUSES:
            raise BadRequest(f"unknown status {status[:30]!r}")
        return self._present(self.set_status(record["processObjId"], wanted, perc, notify=notify))

    def set_payload_for(self, user: User, process_id: str | None, payload: str | None) -> dict[str, Any]:
        record = self.writable(user, process_id)
        if payload is not None and len(payload) > MAX_PAYLOAD:
            raise BadRequest("payload too large")
        return self._present(self.update(record["processObjId"], {"payload": payload}))

    def set_sub_pid_for(self, user: User, process_id: str | None, sub_pid: int) -> dict[str, Any]:
        record = self.writable(user, process_id)
        return self._present(self.update(record["processObjId"], {"subPid": int(sub_pid)}))

    @staticmethod
    def _present(record: dict[str, Any] | None) -> dict[str, Any]:
        if record is None:  # deleted between the access check and the write
            raise BadRequest("unknown process")
        return record

    # -- changes ---------------------------------------------------------------------------------------
    def set_status(self, process_id: str, status: str, perc: int | None = None, *, notify: bool = False,
                   only_if_active: bool = False) -> dict[str, Any] | None:
        """Move a record to ``status`` with the timestamps and running-time accounting that go with it.

        With ``only_if_active`` a record already DONE/ERROR/STOPPED is left alone (``None``).
        """
        stamp = now_ms()
        skipped = False

        def change(doc: dict[str, Any]) -> dict[str, Any] | None:
            nonlocal skipped
            old = doc.get("status")
            if only_if_active and old in TERMINAL:
                skipped = True
                return None
            if old == RUNNING and status != RUNNING and doc.get("runningSince"):
                doc["runningTime"] = int(doc.get("runningTime") or 0) + int(stamp - float(doc["runningSince"]))
                doc["runningSince"] = None
            if status == RUNNING and old != RUNNING:
                doc["runningSince"] = stamp
                if not doc.get("operationStartTimestamp"):
                    doc["operationStartTimestamp"] = stamp
            if status in TERMINAL and old in ACTIVE and not doc.get("operationEndTimestamp"):
                doc["operationEndTimestamp"] = stamp
            if perc is not None and 0 <= perc <= 100:
                doc["progressPerc"] = int(perc)
            doc["status"] = status
            doc["lastStateChangeTimestamp"] = stamp
            return doc

        record = self.processes.modify(process_id, change)
        if record is None or skipped:
            return None
        if notify:
            self.notify(record)
        return record

    def notify(self, record: dict[str, Any]) -> None:
        """The UPDATEPROCESSES broker message clients follow a process with."""
        self.messages.send("UPDATEPROCESSES", f"{record['processObjId']};{record['status']};{record['progressPerc']}",
                           record.get("workspaceId"), result=None)

    def set_progress(self, process_id: str, perc: int) -> dict[str, Any] | None:
        if not 0 <= perc <= 100:
            return self.processes.get(process_id)
        return self.processes.update(process_id, {"progressPerc": int(perc)})

    def update(self, process_id: str, changes: dict[str, Any]) -> dict[str, Any] | None:
        return self.processes.update(process_id, changes)

    def set_file_size(self, process_id: str, size: int) -> None:
        self.processes.update(process_id, {"fileSize": human_size(size)})

    # -- queries ----------------------------------------------------------------------------------------
    @staticmethod
    def newest_first(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        return sorted(records, key=lambda r: float(r.get("operationTimestamp") or 0), reverse=True)

    def by_workspace(self, workspace_id: str) -> list[dict[str, Any]]:
        return self.newest_first(self.processes.find(workspaceId=workspace_id))

    def by_user(self, user_id: str) -> list[dict[str, Any]]:
        return self.newest_first(self.processes.find(userId=user_id))

    def children(self, process_id: str) -> list[dict[str, Any]]:
        return self.processes.find(parentId=process_id)

    def active_on_node(self) -> list[dict[str, Any]]:
        return self.processes.find(lambda r: r.get("status") in ACTIVE, nodeCode=self.node_code)

    def running_time(self, record: dict[str, Any], at_ms: float | None = None) -> int:
        """Milliseconds spent RUNNING, including the current stretch."""
        total = int(record.get("runningTime") or 0)
        if record.get("status") == RUNNING and record.get("runningSince"):
            total += int((at_ms or now_ms()) - float(record["runningSince"]))
        return total

    @staticmethod
    def view(record: dict[str, Any]) -> dict[str, Any]:
        """ProcessWorkspaceViewModel fields of a record."""
        start = record.get("operationStartTimestamp") or record.get("operationTimestamp")
        payload = record.get("payload")
        return {
            "productName": record.get("productName"), "operationType": record.get("operationType"),
            "operationSubType": record.get("operationSubType") or "",
            "operationDate": format_ms_or_none(record.get("operationTimestamp")),
            "operationStartDate": format_ms_or_none(start),
            "operationEndDate": format_ms_or_none(record.get("operationEndTimestamp")),
            "lastChangeDate": format_ms_or_none(record.get("lastStateChangeTimestamp")),
            "userId": record.get("userId"), "fileSize": record.get("fileSize") or "",
            "status": record.get("status"), "progressPerc": int(record.get("progressPerc") or 0),
            "processObjId": record.get("processObjId"), "pid": int(record.get("pid") or 0),
            "payload": payload if payload is None or isinstance(payload, str) else str(payload),
            "workspaceId": record.get("workspaceId"),
        }
