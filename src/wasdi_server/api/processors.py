"""/processors: the apps' lifecycle (upload, update, files, deploys, delete), runs, build and run logs,
download, help, CWL and UI descriptors.  The store, payments and sharing endpoints live elsewhere."""

from __future__ import annotations

from typing import Any

from wasdi_sdk.models import PrimitiveResult, ProcessorLogViewModel, RunningProcessorViewModel

from .answers import FileResult
from .framework import Call, handles
from .images import receive_file


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


def _wire(body: Any) -> dict[str, Any]:
    if body is None:
        return {}
    if hasattr(body, "to_wire"):
        return dict(body.to_wire())
    return dict(body) if isinstance(body, dict) else {}


@handles("processors.upload")
def upload_app(call: Call) -> PrimitiveResult:
    p = call.params
    apps = call.services.apps
    apps.check_new_name(p["name"])
    staging = call.services.settings.apps_root / ".incoming"
    with receive_file(call, "file", call.services.settings.apps_max_zip_bytes, staging) as received:
        process_id = apps.upload(call.caller, received.path, name=p["name"], workspace_id=p["workspace"],
                                 version=p["version"], description=p["description"], app_type=p["type"],
                                 params_sample=p["paramsSample"], public=p["public"], timeout=p["timeout"],
                                 force=p["force"])
    return PrimitiveResult(bool_value=True, int_value=200, string_value=process_id)


@handles("processors.update")
def update_app(call: Call) -> None:
    call.services.apps.update(call.caller, call.params["processorId"], _wire(call.body))


@handles("processors.update_files")
def update_app_files(call: Call) -> None:
    p = call.params
    apps = call.services.apps
    apps.writable(call.caller, p["processorId"])
    staging = call.services.settings.apps_root / ".incoming"
    with receive_file(call, "file", call.services.settings.apps_max_zip_bytes, staging) as received:
        apps.update_files(call.caller, p["processorId"], p["workspace"], received.path, received.filename)
        call.services.propagation.app_files_updated(call.caller.user_id, p["processorId"], received.path,
                                                    received.filename)


@handles("processors.redeploy")
def redeploy_app(call: Call) -> None:
    call.services.apps.redeploy(call.caller, call.params["processorId"], call.params["workspace"])
    call.services.propagation.app_redeployed(call.caller.user_id, call.params["processorId"])


@handles("processors.update_libraries")
def update_app_library(call: Call) -> None:
    call.services.apps.update_library(call.caller, call.params["processorId"], call.params["workspace"])
    call.services.propagation.app_library_updated(call.caller.user_id, call.params["processorId"])


@handles("processors.clear_build_flag")
def clear_build_flag(call: Call) -> None:
    call.services.apps.clear_build_flag(call.caller, call.params["processorId"])


@handles("processors.delete")
def delete_app(call: Call) -> None:
    apps = call.services.apps
    doc = apps.records.get(call.params["processorId"])
    apps.delete(call.caller, call.params["processorId"], call.params["workspace"])
    if doc is not None and apps.records.get(doc["processorId"]) is None:  # the app went, not just a sharing
        call.services.propagation.app_deleted(call.caller.user_id, doc)


@handles("processors.node_delete")
def node_delete_app(call: Call) -> None:
    p = call.params
    call.services.apps.node_delete(call.caller, p["processorId"], p["processorName"], p["processorType"])


@handles("processors.help")
def app_help(call: Call) -> PrimitiveResult:
    text = call.services.apps.help_text(call.caller, call.params["name"])
    return PrimitiveResult(bool_value=True, int_value=200, string_value=text)


def _run(call: Call, encoded: str | None) -> RunningProcessorViewModel:
    p = call.params
    view = call.services.apps.run(call.caller, p["name"], p["workspace"], encoded, p["parent"], p["notify"])
    return RunningProcessorViewModel.model_validate(view)


@handles("processors.run_by_query")
def run_app_by_query(call: Call) -> RunningProcessorViewModel:
    return _run(call, call.params["encodedJson"])


@handles("processors.run")
def run_app(call: Call) -> RunningProcessorViewModel:
    return _run(call, call.body)


@handles("processors.build_logs")
def build_logs(call: Call) -> list[str]:
    return call.services.apps.build_log(call.caller, call.params["processorId"])


@handles("processors.download")
def download_app(call: Call) -> FileResult:
    stream, name = call.services.apps.download(call.caller, call.params["processorId"])
    return FileResult(stream, media_type="application/octet-stream", filename=name)


@handles("processors.get_cwl")
def app_cwl(call: Call) -> FileResult:
    path, name = call.services.apps.cwl(call.caller, call.params["processorName"])
    return FileResult(open(path, "rb"), media_type="application/octet-stream", filename=name,
                      length=path.stat().st_size)


@handles("processors.get_ui")
def app_ui(call: Call) -> Any:
    text = call.services.apps.ui(call.caller, call.params["name"])
    return call.services.apps.json_reader.read(text, "the stored UI descriptor")


@handles("processors.save_ui")
def save_app_ui(call: Call) -> None:
    call.services.apps.save_ui(call.caller, call.params["name"], call.body)
