"""/console: the notebook (JupyterLab) of the caller on a workspace (the web client's calls, not in the contract)."""

from ._types import B_PRIMITIVE, PRIMITIVE, A, Endpoint, Style, qreq

ENDPOINTS = (
    Endpoint("console.ready", "GET", "/console/ready", Style.STATUS, A, query=(qreq("workspaceId"),),
             response=PRIMITIVE, statuses=(200, 400, 401, 403), contract=False,
             summary="Whether the caller's notebook on the workspace is up: boolValue true with its address "
                     "(<server>/notebook/<workspaceId>/lab?token=..., under the server's own) in stringValue; "
                     "else false, with a sentence (starting, none, or why the "
                     "last one ended)."),
    Endpoint("console.create", "POST", "/console/create", Style.MARKER, B_PRIMITIVE, query=(qreq("workspaceId"),),
             response=PRIMITIVE, mutates=True, statuses=(200, 400, 401, 403, 501), contract=False,
             summary="Start (or find) the caller's JupyterLab on the workspace: boolValue true with its address "
                     "(<server>/notebook/<workspaceId>/lab?token=...) in stringValue once it is up, a sentence "
                     "while it starts (LAUNCHJUPYTERNOTEBOOK is "
                     "published when it is); intValue 501 and what to install where the server cannot run "
                     "notebooks."),
    Endpoint("console.terminate", "POST", "/console/terminate", Style.MARKER, B_PRIMITIVE,
             query=(qreq("workspaceId"),), response=PRIMITIVE, mutates=True, statuses=(200, 400, 401, 403),
             contract=False,
             summary="Stop the caller's JupyterLab on the workspace (its kernels end with it; the files it wrote "
                     "stay): boolValue true, and a sentence in stringValue saying whether one was running."),
)
