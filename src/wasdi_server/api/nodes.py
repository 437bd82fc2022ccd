"""/node: compute nodes and their sharing."""

from __future__ import annotations

from wasdi_sdk.models import NodeFullViewModel, NodeSharingViewModel, NodeViewModel, PrimitiveResult

from ..domains.accounts.sharing import DONE
from .framework import Call, handles


@handles("nodes.list")
def list_nodes(call: Call) -> list[NodeViewModel]:
    nodes = call.services.nodes.visible(call.caller, bool(call.params["all"]), call.base_url)
    return [NodeViewModel.model_validate(n) for n in nodes]


@handles("nodes.get")
def get_node(call: Call) -> NodeFullViewModel:
    return NodeFullViewModel.model_validate(call.services.nodes.read(call.caller, call.params["node"], call.base_url))


@handles("nodes.create")
def create_node(call: Call) -> None:
    call.services.nodes.require_admin(call.caller)  # a non-admin gets its 401 whatever the body holds
    body: NodeFullViewModel = call.body
    call.services.nodes.create(call.caller, body.to_wire())


@handles("nodes.update")
def update_node(call: Call) -> None:
    call.services.nodes.require_admin(call.caller)
    body: NodeFullViewModel = call.body
    call.services.nodes.update(call.caller, body.to_wire())


@handles("nodes.delete")
def delete_node(call: Call) -> None:
    call.services.nodes.delete(call.caller, call.params["node"])


@handles("nodes.share_add")
def share_node(call: Call) -> PrimitiveResult:
    p = call.params
    outcome = call.services.nodes.share(call.caller, p["node"], p["userId"], p["rights"])
    return PrimitiveResult(bool_value=True, int_value=200, string_value=outcome.message)


@handles("nodes.share_list")
def list_node_sharings(call: Call) -> list[NodeSharingViewModel]:
    return [NodeSharingViewModel.model_validate(s) for s in call.services.nodes.sharings(call.caller,
                                                                                      call.params["node"])]


@handles("nodes.share_delete")
def unshare_node(call: Call) -> PrimitiveResult:
    call.services.nodes.unshare(call.caller, call.params["node"], call.params["userId"])
    return PrimitiveResult(bool_value=True, int_value=200, string_value=DONE)
