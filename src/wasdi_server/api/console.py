"""/console: the notebook (JupyterLab) of the caller on a workspace (the web client's NOTEBOOK button)."""

from __future__ import annotations

from urllib.parse import urlsplit

from wasdi_sdk.models import PrimitiveResult

from ..consoles import STARTING_MESSAGE
from ..consoles.lab import Lab
from .framework import Call, handles
from .host_header import canonical_prefix


def lab_address(call: Call, lab: Lab) -> str:
    """What a browser opens: the lab's path under the server's own address (``public_url``'s origin when set,
    else the address the caller reached), with the lab's token."""
    configured = call.services.settings.public_url
    if configured:
        parts = urlsplit(configured)
        return lab.address(f"{parts.scheme}://{parts.netloc}")
    return lab.address(canonical_prefix(call.request).removesuffix(call.request.root_path))


@handles("console.ready")
def console_ready(call: Call) -> PrimitiveResult:
    workspace = call.services.workspaces.readable(call.caller, call.params["workspaceId"])
    lab = call.services.notebooks.find(call.caller.user_id, str(workspace["workspaceId"]))
    if lab is not None and lab.up:
        return PrimitiveResult(bool_value=True, int_value=200, string_value=lab_address(call, lab))
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
        return PrimitiveResult(bool_value=True, int_value=200, string_value=lab_address(call, lab))
    return PrimitiveResult(bool_value=True, int_value=200, string_value=STARTING_MESSAGE)


@handles("console.terminate")
def terminate_console(call: Call) -> PrimitiveResult:
    # Only one's own lab is stopped (labs are per user and workspace): reading the workspace is enough.
    workspace = call.services.workspaces.readable(call.caller, call.params["workspaceId"])
    stopped = call.services.notebooks.stop(call.caller.user_id, str(workspace["workspaceId"]))
    text = "Jupyter Notebook is terminated" if stopped else "No notebook runs on this workspace"
    return PrimitiveResult(bool_value=True, int_value=200, string_value=text)
