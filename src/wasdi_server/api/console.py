"""/console: the notebook (JupyterLab) of the caller on a workspace (the web client's NOTEBOOK button)."""

from __future__ import annotations

from wasdi_sdk.models import PrimitiveResult

from ..consoles import STARTING_MESSAGE
from .framework import Call, handles


@handles("console.ready")
def console_ready(call: Call) -> PrimitiveResult:
    workspace = call.services.workspaces.readable(call.caller, call.params["workspaceId"])
    lab = call.services.notebooks.find(call.caller.user_id, str(workspace["workspaceId"]))
    if lab is not None and lab.up:
        return PrimitiveResult(bool_value=True, int_value=200, string_value=lab.address)
    if lab is not None and lab.running:
        return PrimitiveResult(bool_value=False, int_value=200, string_value=STARTING_MESSAGE)
    why = lab.failure if lab is not None and lab.failure else "No notebook runs on this workspace: create one."
    return PrimitiveResult(bool_value=False, int_value=200, string_value=why)


@handles("console.create")
def create_console(call: Call) -> PrimitiveResult:
    # The lab writes the workspace's folder: only those who may write the workspace get one.
    workspace = call.services.workspaces.writable(call.caller, call.params["workspaceId"])
    lab = call.services.notebooks.open(call.caller, workspace)
    if lab.up:
        return PrimitiveResult(bool_value=True, int_value=200, string_value=lab.address)
    return PrimitiveResult(bool_value=True, int_value=200, string_value=STARTING_MESSAGE)


@handles("console.terminate")
def terminate_console(call: Call) -> PrimitiveResult:
    # Only one's own lab is stopped (labs are per user and workspace): reading the workspace is enough.
    workspace = call.services.workspaces.readable(call.caller, call.params["workspaceId"])
    stopped = call.services.notebooks.stop(call.caller.user_id, str(workspace["workspaceId"]))
    text = "Jupyter Notebook is terminated" if stopped else "No notebook runs on this workspace"
    return PrimitiveResult(bool_value=True, int_value=200, string_value=text)
