"""/credits: credit packages and their purchase."""

from __future__ import annotations

from wasdi_sdk.models import CreditsPackageViewModel, SubscriptionTypeViewModel, SuccessResponse

from .framework import Call, handles


@handles("credits.list_types")
def list_types(call: Call) -> list[SubscriptionTypeViewModel]:
    return [SubscriptionTypeViewModel.model_validate(t) for t in call.services.credits.types()]


@handles("credits.total")
def total(call: Call) -> float:
    return call.services.credits.total(call.caller)


@handles("credits.list")
def list_packages(call: Call) -> list[CreditsPackageViewModel]:
    ascending = bool(call.params["ascendingOrder"])
    return [CreditsPackageViewModel.model_validate(d) for d in call.services.credits.list_for(call.caller, ascending)]


@handles("credits.create")
def create(call: Call) -> SuccessResponse:
    body: CreditsPackageViewModel = call.body
    doc = call.services.credits.add(call.caller, body.name, body.description, body.type, body.buy_success)
    return SuccessResponse(message=doc["creditPackageId"])


@handles("credits.payment_url")
def payment_url(call: Call) -> SuccessResponse:
    url = call.services.credits.payment_url(call.caller, call.path.get("payprov"), call.params["creditPackageId"],
                                            call.base_url)
    return SuccessResponse(message=url)


@handles("credits.confirm_payment")
def confirm_payment(call: Call) -> None:
    call.services.credits.confirm(call.path.get("payprov"), call.path.get("CHECKOUT_SESSION_ID"))
