"""/product: products inside workspaces.

Uploads are streamed: the multipart ``file`` part goes into a hidden temporary file of the workspace
folder (``api.images.receive_file``), which is then renamed into place; the request body is never held in
memory.  Under ``wasdi-server serve`` a big upload's file part is written while it arrives into the spool
of the files' disk (``serving.py``) and only renamed from there.
"""

from __future__ import annotations

from typing import Any

from pydantic.alias_generators import to_camel

from wasdi_sdk.models import GeorefProductViewModel, MetadataViewModel, PrimitiveResult, ProductViewModel

from ..errors import DomainError, ServerFailure
from .framework import Call, handles
from .images import receive_file


@handles("products.add_to_workspace")
def add_to_workspace(call: Call) -> PrimitiveResult:
    p = call.params
    return PrimitiveResult(bool_value=call.services.products.add_to_workspace(call.caller, p["workspace"], p["name"]))


@handles("products.get")
def get_product(call: Call) -> GeorefProductViewModel:
    products = call.services.products
    _, record = products.load(call.caller, call.params["workspace"], call.params["name"])
    return GeorefProductViewModel.model_validate(products.view(record))


@handles("products.get_metadata")
def get_metadata(call: Call) -> MetadataViewModel | None:
    tree = call.services.products.metadata(call.caller, call.params["workspace"], call.params["name"])
    return None if tree is None else MetadataViewModel.model_validate(tree)


@handles("products.list")
def list_products(call: Call) -> list[GeorefProductViewModel]:
    return [GeorefProductViewModel.model_validate(v)
            for v in call.services.products.list_views(call.caller, call.params["workspace"])]


@handles("products.list_light")
def list_products_light(call: Call) -> list[GeorefProductViewModel]:
    return [GeorefProductViewModel.model_validate(v)
            for v in call.services.products.list_views(call.caller, call.params["workspace"], light=True)]


@handles("products.list_names")
def list_names(call: Call) -> list[str]:
    return call.services.products.names(call.caller, call.params["workspace"])


@handles("products.update")
def update_product(call: Call) -> None:
    body: ProductViewModel = call.body
    wire = body.to_wire(keep_none=True)
    given = {to_camel(f) for f in body.model_fields_set if f in ProductViewModel.model_fields}
    changes: dict[str, Any] = {k: wire.get(k) for k in given}
    call.services.products.update(call.caller, call.params["workspace"], body.file_name or body.name, changes)


def _upload(call: Call, ingest: bool) -> None:
    p = call.params
    products = call.services.products
    workspace, file_name = products.upload_target(call.caller, p["workspace"], p["name"])
    folder = call.services.workspaces.folder(workspace)
    with receive_file(call, "file", call.services.settings.max_upload_bytes, folder) as received:
        products.place_upload(workspace, file_name, received.path)
    if ingest:
        products.queue_ingest(call.caller, workspace, file_name, style=p.get("style"), platform=p.get("platform"))


@handles("products.upload")
def upload(call: Call) -> None:
    _upload(call, ingest=True)


@handles("products.upload_without_ingest")
def upload_without_ingest(call: Call) -> None:
    _upload(call, ingest=False)


@handles("products.delete")
def delete_product(call: Call) -> PrimitiveResult:
    p = call.params
    call.services.products.delete(call.caller, p["workspace"], p["name"], p["deletefile"] is not False,
                                  p["deletelayer"] is not False)
    return PrimitiveResult(bool_value=True, int_value=200)


@handles("products.delete_many")
def delete_products(call: Call) -> PrimitiveResult:
    """Every failure is ``BoolValue=false, IntValue=500`` (contract); the message says what it was."""
    p = call.params
    try:
        process_id = call.services.products.queue_delete_many(
            call.caller, p["workspace"], list(call.body or []), p["deletefile"] is not False,
            p["deletelayer"] is not False)
    except DomainError as e:
        raise ServerFailure(e.message) from e
    return PrimitiveResult(bool_value=True, int_value=200, string_value=process_id or None)
