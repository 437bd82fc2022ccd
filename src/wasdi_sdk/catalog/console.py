"""/console: the notebook console of a workspace (the web client's calls, not in the contract)."""

from ._types import B_PRIMITIVE, PRIMITIVE, A, Endpoint, Style, qreq

ENDPOINTS = (
    Endpoint("console.ready", "GET", "/console/ready", Style.STATUS, A, query=(qreq("workspaceId"),),
             response=PRIMITIVE, statuses=(200, 400, 401, 403), contract=False,
             summary="Whether the workspace's notebook console is ready: never on this server (boolValue false, "
                     "and a sentence saying no console is available)."),
    Endpoint("console.create", "POST", "/console/create", Style.MARKER, B_PRIMITIVE, query=(qreq("workspaceId"),),
             response=PRIMITIVE, mutates=True, statuses=(200, 400, 401, 403, 501), contract=False,
             summary="Start a notebook console on the workspace: not available on this server (boolValue false, "
                     "intValue 501, and a sentence saying so)."),
)
