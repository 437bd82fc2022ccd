"""/filebuffer: importing remote files into a workspace, publishing bands, sharing products between workspaces."""

from __future__ import annotations

from typing import Any

from wasdi_sdk.models import ImageImportViewModel, PrimitiveResult, RabbitMessageViewModel, StyleViewModel

from ..errors import MSG_INVALID_WORKSPACE, DomainError, Forbidden, ServerFailure
from .framework import Call, handles

IMPORT_STATUSES = (401, 403, 500)
"""The failure codes the contract gives /filebuffer/download; anything else is answered as 500."""


@handles("file_buffer.share")
def share(call: Call) -> PrimitiveResult:
    p = call.params
    outcome = call.services.products.queue_share(call.caller, p["originWorkspaceId"], p["destinationWorkspaceId"],
                                                 p["productName"], p["parent"])
    # PRODUCT_ALREADY_PRESENT is a success like a process id (contract; gaps.md's first section).
    return PrimitiveResult(bool_value=True, int_value=200, string_value=outcome)


def _import(call: Call, data: dict[str, Any]) -> PrimitiveResult:
    try:
        outcome = call.services.products.queue_import(call.caller, data)
    except DomainError as e:
        if e.status in IMPORT_STATUSES:
            raise
        if e.message == MSG_INVALID_WORKSPACE:
            # The contract has no 400 here: a workspace that does not exist is one the caller cannot write.
            raise Forbidden(MSG_INVALID_WORKSPACE) from e
        raise ServerFailure(e.message) from e
    return PrimitiveResult(bool_value=True, int_value=200, string_value=outcome)


@handles("file_buffer.import_product")
def import_product(call: Call) -> PrimitiveResult:
    body: ImageImportViewModel = call.body
    return _import(call, body.to_wire())


@handles("file_buffer.import_product_by_query")
def import_product_by_query(call: Call) -> PrimitiveResult:
    return _import(call, {k: v for k, v in call.params.items() if v is not None})


@handles("file_buffer.publish_band")
def publish_band(call: Call) -> RabbitMessageViewModel:
    p = call.params
    message = call.services.products.publish_band(call.caller, p["workspace"], p["fileUrl"], p["band"], p["style"],
                                                  p["parent"], call.base_url)
    return RabbitMessageViewModel.model_validate(message)


@handles("file_buffer.styles")
def styles(call: Call) -> list[StyleViewModel]:
    """The styles a user may apply: the same list as /styles/getbyuser (own, public, shared)."""
    views = call.services.styles.list_for(call.caller, call.session_id, call.base_url)
    return [StyleViewModel.model_validate(v) for v in views]
