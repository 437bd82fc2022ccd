"""What the session of an app run may reach: its own workspace, and nothing else of its caller's account.

An app runs as the user who started it, with a session of that user (``WASDI_SESSION_ID``), because the
official library calls the API with it.  Left whole, that session would let any app (a public one
written by a stranger) do everything its caller may: share the caller's workspaces with its author,
read the other workspaces, delete them.  So a run's session carries a scope, ``{"workspaceId",
"processId"}``, and a request made with it must pass ``check``:

- the endpoints the official library uses for its own work are open, each only on the run's workspace:
  the workspace itself, its products and files, imports and band publishing into it, running apps and
  workflows in it, its process list; search; the workflows the caller may run; the session check;
- a process record it names must belong to the run's workspace, and one it changes (status, payload,
  log lines, stop) must be the run's own process or one of its descendants;
- ``/ws/byuser`` lists the run's workspace alone (the library finds its workspace's owner there);
- every other endpoint is refused (403 in the endpoint's failure style).

An operator lists the apps that legitimately open other workspaces in ``app_account_scope_apps``: their
runs get a plain session of their caller.  Places that resolve sessions without going through ``check``
(``SessionService.resolve``) refuse scoped sessions altogether.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from ...errors import Forbidden
from .processes import ProcessService


class ProcessRecords(Protocol):
    """What ``check`` reads: the process records (the server's services hold them)."""

    @property
    def processes(self) -> ProcessService: ...

WORKSPACE = "workspace"
ACCOUNT = "account"

OPEN = frozenset({
    "auth.check_session", "search.count", "search.query", "search.list_providers", "search.count_list",
    "search.query_list", "workflows.list", "file_buffer.styles", "workspaces.list", "processes.get_statuses",
})
"""Endpoints that touch no workspace (``workspaces.list`` is narrowed to the run's workspace by its handler;
``processes.get_statuses`` answers only the statuses of ids the caller already holds)."""
ON_WORKSPACE = {
    "workspaces.get": "workspace", "products.add_to_workspace": "workspace", "products.get": "workspace",
    "products.get_metadata": "workspace", "products.list": "workspace", "products.list_light": "workspace",
    "products.list_names": "workspace", "products.update": "workspace", "products.upload": "workspace",
    "products.upload_without_ingest": "workspace", "products.delete": "workspace",
    "products.delete_many": "workspace", "files.check_available": "workspace", "files.download": "workspace",
    "files.on_node": "workspace", "files.properties": "workspace", "files.ingest": "workspace",
    "files.ingest_upload": "workspace", "file_buffer.import_product_by_query": "workspace",
    "file_buffer.publish_band": "workspace", "processes.list_by_workspace": "workspace",
    "processes.last_by_workspace": "workspace", "processes.summary": "workspace",
    "processors.run": "workspace", "processors.run_by_query": "workspace", "workflows.run": "workspace",
}
"""Endpoints allowed on the run's workspace only: the query parameter that names it."""
READS_PROCESS = {"processes.get": "procws", "processes.get_status": "procws", "processes.get_payload": "procws",
                 "processes.get_params": "procws"}
CHANGES_PROCESS = {"processes.update_status": "procws", "processes.set_payload": "procws",
                   "processes.set_payload_by_query": "procws", "processes.set_sub_pid": "procws",
                   "processes.stop": "procws", "processors.add_log": "processworkspace"}
BODY_WORKSPACE = {"file_buffer.import_product": "workspace"}
"""Endpoints whose JSON body names the workspace."""
MAX_DEPTH = 100


def scope_name(account_scope_apps: Iterable[str], app_name: str) -> str:
    """``account`` for the apps the operator listed in ``app_account_scope_apps``, else ``workspace``: what
    the app's store page shows as its ``runScope``."""
    return ACCOUNT if app_name in set(account_scope_apps) else WORKSPACE


def run_scope(account_scope_apps: Iterable[str], app: Mapping[str, Any], workspace_id: str,
              process_id: str) -> dict[str, str] | None:
    """The scope of the session the run ``process_id`` of ``app`` in ``workspace_id`` gets (``None``: its
    caller's whole account, for the apps in ``account_scope_apps``)."""
    if scope_name(account_scope_apps, str(app.get("name") or "")) == ACCOUNT:
        return None
    return {"workspaceId": workspace_id, "processId": process_id}


def refused(what: str) -> Forbidden:
    return Forbidden(f"an app run's session reaches only its own workspace: {what} is out of its reach "
                     "(an operator can widen it with app_account_scope_apps)")


def check(services: ProcessRecords, endpoint: str, params: Mapping[str, Any], body: Any,
          scope: Mapping[str, Any]) -> None:
    """Refuse (``Forbidden``) a request a run's session may not make."""
    workspace = str(scope.get("workspaceId") or "")
    if endpoint in OPEN:
        return
    if endpoint in ON_WORKSPACE:
        if str(params.get(ON_WORKSPACE[endpoint]) or "") != workspace:
            raise refused("another workspace")
        return
    if endpoint in BODY_WORKSPACE:
        named = body.get(BODY_WORKSPACE[endpoint]) if isinstance(body, Mapping) else None
        if str(named or "") != workspace:
            raise refused("another workspace")
        return
    if endpoint in READS_PROCESS or endpoint in CHANGES_PROCESS:
        name = READS_PROCESS.get(endpoint) or CHANGES_PROCESS[endpoint]
        record = services.processes.get(str(params.get(name) or ""))
        if record is None:
            return  # the endpoint answers an unknown process in its own way
        if str(record.get("workspaceId") or "") != workspace:
            raise refused("a process of another workspace")
        if endpoint in CHANGES_PROCESS and not _descends(services.processes, record, str(scope.get("processId") or "")):
            raise refused("a process this run did not start")
        return
    raise refused("this endpoint")


def _descends(processes: ProcessService, record: Mapping[str, Any], root: str) -> bool:
    """Whether ``record`` is ``root`` or was started (directly or not) by it."""
    current: Mapping[str, Any] | None = record
    for _ in range(MAX_DEPTH):
        if current is None:
            return False
        if str(current.get("processObjId")) == root:
            return True
        parent = current.get("parentId")
        current = processes.get(str(parent)) if parent else None
    return False
