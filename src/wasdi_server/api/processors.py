"""/processors: so far the run logs (the rest of the processor lifecycle is not served yet)."""

from __future__ import annotations

from wasdi_sdk.models import ProcessorLogViewModel

from .framework import Call, handles


@handles("processors.add_log")
def add_log(call: Call) -> None:
    call.services.process_logs.add(call.caller, call.params["processworkspace"], call.body or "")


@handles("processors.count_logs")
def count_logs(call: Call) -> int:
    return call.services.process_logs.count(call.caller, call.params["processworkspace"])


@handles("processors.list_logs")
def list_logs(call: Call) -> list[ProcessorLogViewModel]:
    p = call.params
    rows = call.services.process_logs.rows(call.caller, p["processworkspace"], p["startrow"], p["endrow"])
    return [ProcessorLogViewModel.model_validate(row) for row in rows]
