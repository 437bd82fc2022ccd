"""/workflows: SNAP graph workflows, their sharing, and their runs."""

from __future__ import annotations

from wasdi_sdk.models import PrimitiveResult, SnapWorkflowViewModel, WorkflowSharingViewModel

from ..domains.workflows.snap_graphs import MAX_GRAPH_BYTES
from ..errors import NotModified
from .answers import Answer, FileResult
from .framework import Call, handles
from .images import receive_file


@handles("workflows.upload")
def upload_workflow(call: Call) -> None:
    p = call.params
    workflows = call.services.workflows
    with receive_file(call, "file", MAX_GRAPH_BYTES, workflows.staging) as received:
        workflows.create(call.caller, p["name"], p["description"], p["public"], received.path)


@handles("workflows.update_file")
def update_workflow_file(call: Call) -> None:
    workflows = call.services.workflows
    workflow_id = call.params["workflowid"]
    workflows.writable(call.caller, workflow_id)
    with receive_file(call, "file", MAX_GRAPH_BYTES, workflows.staging) as received:
        workflows.replace_file(call.caller, workflow_id, received.path)


@handles("workflows.update_xml")
def update_workflow_xml(call: Call) -> None:
    workflows = call.services.workflows
    workflow_id = call.params["workflowId"]
    workflows.writable(call.caller, workflow_id)
    staged = workflows.stage(str(call.body or "").encode("utf-8"))
    try:
        workflows.replace_file(call.caller, workflow_id, staged)
    finally:
        staged.unlink(missing_ok=True)


@handles("workflows.get_xml")
def get_workflow_xml(call: Call) -> Answer:
    data, etag = call.services.workflows.xml(call.caller, call.params["workflowId"])
    if call.if_none_match(etag):
        raise NotModified("the workflow is unchanged")
    return Answer(200, body=data, media_type="application/xml", headers={"ETag": etag})


@handles("workflows.update_params")
def update_workflow_params(call: Call) -> None:
    p = call.params
    description = call.as_sent("description")  # an empty one clears it; a missing one leaves it unchanged
    call.services.workflows.update_params(call.caller, p["workflowid"], p["name"], description, p["public"])


@handles("workflows.list")
def list_workflows(call: Call) -> list[SnapWorkflowViewModel]:
    return [SnapWorkflowViewModel.model_validate(v) for v in call.services.workflows.list_for(call.caller)]


@handles("workflows.get_by_name")
def get_workflow_by_name(call: Call) -> SnapWorkflowViewModel:
    workflows = call.services.workflows
    doc = workflows.by_name(call.caller, call.params["name"])
    return SnapWorkflowViewModel.model_validate(workflows.view(call.caller, doc))


@handles("workflows.delete")
def delete_workflow(call: Call) -> None:
    call.services.workflows.delete(call.caller, call.params["workflowId"])


@handles("workflows.share_add")
def share_workflow(call: Call) -> PrimitiveResult:
    p = call.params
    outcome = call.services.workflows.share(call.caller, p["workflowId"], p["userId"], p["rights"])
    return PrimitiveResult(bool_value=True, int_value=200, string_value=outcome.message)


@handles("workflows.share_delete")
def unshare_workflow(call: Call) -> PrimitiveResult:
    call.services.workflows.unshare(call.caller, call.params["workflowId"], call.params["userId"])
    return PrimitiveResult(bool_value=True, int_value=200, string_value="Done")


@handles("workflows.share_list")
def list_workflow_sharings(call: Call) -> list[WorkflowSharingViewModel]:
    return [WorkflowSharingViewModel.model_validate(s)
            for s in call.services.workflows.sharings(call.caller, call.params["workflowId"])]


@handles("workflows.run")
def run_workflow(call: Call) -> PrimitiveResult:
    body: SnapWorkflowViewModel = call.body
    p = call.params
    process_id = call.services.workflows.queue_run(call.caller, p["workspace"], p["parent"], body.to_wire())
    return PrimitiveResult(bool_value=True, int_value=200, string_value=process_id)


@handles("workflows.download")
def download_workflow(call: Call) -> FileResult:
    graph = call.services.workflows.open_file(call.caller, call.params["workflowId"])
    return FileResult(graph.stream, filename=graph.filename, length=graph.size)
