"""/console: the notebook console of a workspace, which this server does not offer (the web client asks)."""

from __future__ import annotations

from wasdi_sdk.models import PrimitiveResult

from ..errors import NotAvailable
from .framework import Call, handles

NO_CONSOLE = ("No notebook console is available on this server: run your code with the wasdi library on your "
              "own machine, or as an app.")


@handles("console.ready")
def console_ready(call: Call) -> PrimitiveResult:
    call.services.workspaces.readable(call.caller, call.params["workspaceId"])
    return PrimitiveResult(bool_value=False, int_value=200, string_value=NO_CONSOLE)


@handles("console.create")
def create_console(call: Call) -> PrimitiveResult:
    call.services.workspaces.readable(call.caller, call.params["workspaceId"])
    raise NotAvailable(NO_CONSOLE)
