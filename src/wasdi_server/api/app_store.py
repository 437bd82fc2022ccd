"""/processors: the app store (lists, store page, store details), app sharing and app payments."""

from __future__ import annotations

from wasdi_sdk.models import (
    AppDetailViewModel,
    AppListViewModel,
    AppPaymentViewModel,
    DeployedProcessorViewModel,
    PrimitiveResult,
    ProcessorSharingViewModel,
    SuccessResponse,
)

from ..nodes.merges import active_run
from .framework import Call, handles


@handles("processors.list")
def list_deployed(call: Call) -> list[DeployedProcessorViewModel]:
    return [DeployedProcessorViewModel.model_validate(v) for v in call.services.app_store.deployed(call.caller)]


@handles("processors.get")
def get_processor(call: Call) -> DeployedProcessorViewModel:
    view = call.services.app_store.get(call.caller, call.params["processorId"], call.params["name"])
    return DeployedProcessorViewModel.model_validate(view)


@handles("processors.market_list")
def market_list(call: Call) -> list[AppListViewModel]:
    views = call.services.app_store.market_list(call.caller, call.body.to_wire())
    return [AppListViewModel.model_validate(v) for v in views]


@handles("processors.market_detail")
def market_detail(call: Call) -> AppDetailViewModel:
    view = call.services.app_store.market_detail(call.caller, call.params["processorname"], call.base_url)
    return AppDetailViewModel.model_validate(view)


@handles("processors.update_details")
def update_details(call: Call) -> None:
    call.services.app_store.update_details(call.caller, call.params["processorId"], call.body.to_wire())


# -- sharing ---------------------------------------------------------------------------------------
@handles("processors.share_add")
def share_processor(call: Call) -> PrimitiveResult:
    p = call.params
    outcome = call.services.app_store.share(call.caller, p["processorId"], p["userId"], p["rights"])
    return PrimitiveResult(bool_value=True, int_value=200, string_value=outcome.message)


@handles("processors.share_delete")
def unshare_processor(call: Call) -> PrimitiveResult:
    call.services.app_store.unshare(call.caller, call.params["processorId"], call.params["userId"])
    return PrimitiveResult(bool_value=True, int_value=200, string_value="Done")


@handles("processors.share_list")
def list_processor_sharings(call: Call) -> list[ProcessorSharingViewModel]:
    return [ProcessorSharingViewModel.model_validate(s)
            for s in call.services.app_store.sharings(call.caller, call.params["processorId"])]


# -- payments --------------------------------------------------------------------------------------
@handles("processors.add_app_payment")
def add_app_payment(call: Call) -> SuccessResponse:
    doc = call.services.app_payments.add(call.caller, call.body.to_wire())
    return SuccessResponse(message=doc["appPaymentId"])


@handles("processors.payment_url")
def app_payment_url(call: Call) -> SuccessResponse:
    url = call.services.app_payments.payment_url(call.caller, call.path.get("payprov"), call.params["processor"],
                                                 call.params["appPayment"], call.base_url)
    return SuccessResponse(message=url)


@handles("processors.confirm_payment")
def confirm_app_payment(call: Call) -> str:
    return call.services.app_payments.confirm(call.path.get("payprov"), call.path.get("CHECKOUT_SESSION_ID"))


@handles("processors.is_app_purchased")
def is_app_purchased(call: Call) -> bool:
    purchased = call.services.app_payments.is_purchased(call.caller, call.params["processor"])
    # A paid run may be waiting to start on a compute node: then the payment is taken (gaps §9).
    return purchased and not (call.services.app_payments.has_unused_payment(call.caller, call.params["processor"])
                              and call.services.merges.user_runs_elsewhere(call, active_run))


@handles("processors.get_app_payment")
def get_app_payment(call: Call) -> AppPaymentViewModel:
    return AppPaymentViewModel.model_validate(call.services.app_payments.get(call.caller, call.params["appPayment"]))


@handles("processors.credits_for_run")
def credits_for_run(call: Call) -> float:
    return call.services.app_payments.credits_for(call.caller, call.params["processorId"], call.body)
