"""/ws: workspaces and their sharing."""

from __future__ import annotations

from wasdi_sdk.models import (
    PrimitiveResult,
    WorkspaceEditorViewModel,
    WorkspaceListInfoViewModel,
    WorkspaceSharingViewModel,
)

from ..errors import BadRequest
from .framework import Call, handles


@handles("workspaces.list", cached_by=("workspaces", "sharings", "nodes"))
def list_workspaces(call: Call) -> list[WorkspaceListInfoViewModel]:
    # An app run's session sees its own workspace only (services.run_scope).
    only = call.scope.get("workspaceId") if call.scope is not None else None
    return [WorkspaceListInfoViewModel.model_validate(d) for d in call.services.workspaces.list_for(call.caller)
            if only is None or d.get("workspaceId") == only]


@handles("workspaces.get")
def get_workspace(call: Call) -> WorkspaceEditorViewModel:
    data = call.services.workspaces.editor(call.caller, call.params["workspace"], call.base_url)
    return WorkspaceEditorViewModel.model_validate(data)


@handles("workspaces.create")
def create_workspace(call: Call) -> PrimitiveResult:
    doc = call.services.workspaces.create(call.caller, call.params["name"], call.params["node"])
    return PrimitiveResult(string_value=doc["workspaceId"])


@handles("workspaces.update")
def update_workspace(call: Call) -> WorkspaceEditorViewModel:
    body: WorkspaceEditorViewModel = call.body
    if not body.workspace_id:
        raise BadRequest("workspaceId is required")
    service = call.services.workspaces
    workspace_id = service.update(call.caller, body.workspace_id, body.name, body.is_public)
    return WorkspaceEditorViewModel.model_validate(service.editor(call.caller, workspace_id, call.base_url))


@handles("workspaces.delete")
def delete_workspace(call: Call) -> None:
    p = call.params
    call.services.workspaces.delete(call.caller, p["workspace"], p["deletefile"], p["deletelayer"])


@handles("workspaces.share_add")
def share_workspace(call: Call) -> PrimitiveResult:
    p = call.params
    outcome = call.services.workspaces.share(call.caller, p["workspace"], p["userId"], p["rights"])
    return PrimitiveResult(bool_value=True, int_value=200, string_value=outcome.message)


@handles("workspaces.share_list")
def list_workspace_sharings(call: Call) -> list[WorkspaceSharingViewModel]:
    return [WorkspaceSharingViewModel.model_validate(s)
            for s in call.services.workspaces.sharings(call.caller, call.params["workspace"])]


@handles("workspaces.share_delete")
def unshare_workspace(call: Call) -> PrimitiveResult:
    call.services.workspaces.unshare(call.caller, call.params["workspace"], call.params["userId"])
    return PrimitiveResult(bool_value=True, int_value=200, string_value="Done")


@handles("workspaces.name_by_id")
def workspace_name(call: Call) -> str:
    return str(call.services.workspaces.readable(call.caller, call.params["workspace"])["name"])
