"""/subscriptions: subscriptions, sharing and purchase."""

from __future__ import annotations

from wasdi_sdk.models import (
    PrimitiveResult,
    SubscriptionListViewModel,
    SubscriptionSharingViewModel,
    SubscriptionTypeViewModel,
    SubscriptionViewModel,
    SuccessResponse,
)

from ..domains.accounts.sharing import DONE
from ..errors import Forbidden
from .framework import Call, handles
from .organizations import sent

ADMIN_ONLY = "MSG_ERROR_NO_ACCESS_RIGHTS_ADMIN_DASHBOARD"


def require_admin(call: Call) -> None:
    if not call.caller.is_admin:
        raise Forbidden(ADMIN_ONLY)


@handles("subscriptions.get_active")
def active_subscription(call: Call) -> SubscriptionListViewModel:
    return SubscriptionListViewModel.model_validate(call.services.subscriptions.active_for(call.caller))


@handles("subscriptions.list")
def list_subscriptions(call: Call) -> list[SubscriptionListViewModel]:
    return [SubscriptionListViewModel.model_validate(d)
            for d in call.services.subscriptions.list_for(call.caller, bool(call.params["valid"]))]


@handles("subscriptions.count")
def count_subscriptions(call: Call) -> PrimitiveResult:
    require_admin(call)
    return PrimitiveResult(int_value=call.services.subscriptions.count())


@handles("subscriptions.get")
def get_subscription(call: Call) -> SubscriptionViewModel:
    return SubscriptionViewModel.model_validate(
        call.services.subscriptions.view(call.caller, call.params["subscription"]))


@handles("subscriptions.create")
def create_subscription(call: Call) -> SuccessResponse:
    doc = call.services.subscriptions.create(call.caller, sent(call.body))
    return SuccessResponse(message=doc["subscriptionId"])


@handles("subscriptions.update")
def update_subscription(call: Call) -> SuccessResponse:
    return SuccessResponse(message=call.services.subscriptions.update(call.caller, sent(call.body)))


@handles("subscriptions.delete")
def delete_subscription(call: Call) -> SuccessResponse:
    return SuccessResponse(message=call.services.subscriptions.delete(call.caller, call.params["subscription"]))


@handles("subscriptions.list_types")
def subscription_types(call: Call) -> list[SubscriptionTypeViewModel]:
    return [SubscriptionTypeViewModel.model_validate(t) for t in call.services.subscriptions.types()]


@handles("subscriptions.share_add")
def share_subscription(call: Call) -> SuccessResponse:
    p = call.params
    return SuccessResponse(message=call.services.subscriptions.share(call.caller, p["subscription"], p["userId"],
                                                                     p["rights"]))


@handles("subscriptions.share_list")
def list_subscription_sharings(call: Call) -> list[SubscriptionSharingViewModel]:
    return [SubscriptionSharingViewModel.model_validate(s)
            for s in call.services.subscriptions.sharings(call.caller, call.params["subscription"])]


@handles("subscriptions.share_delete")
def unshare_subscription(call: Call) -> SuccessResponse:
    call.services.subscriptions.unshare(call.caller, call.params["subscription"], call.params["userId"])
    return SuccessResponse(message=DONE)


@handles("subscriptions.payment_url")
def subscription_payment_url(call: Call) -> SuccessResponse:
    workspace = call.params["workspace"]
    if workspace:
        # The workspace only routes the payment's broker message: it must be one the caller can read.
        workspace = call.services.workspaces.readable(call.caller, workspace)["workspaceId"]
    url = call.services.subscriptions.payment_url(call.caller, call.params["subscription"], workspace,
                                                  call.services.payments, call.path.get("payprov") or "",
                                                  call.base_url)
    return SuccessResponse(message=url)


@handles("subscriptions.confirm_payment")
def confirm_subscription_payment(call: Call) -> None:
    call.services.subscriptions.confirm_payment(call.services.payments, call.path.get("payprov"),
                                                call.path.get("CHECKOUT_SESSION_ID"))


@handles("subscriptions.list_all")
def list_all_subscriptions(call: Call) -> list[SubscriptionListViewModel]:
    require_admin(call)
    p = call.params
    found = call.services.subscriptions.list_all(p["userfilter"], p["idfilter"], p["namefilter"], p["statusfilter"],
                                                 p["offset"], p["limit"], p["sortby"], p["order"])
    return [SubscriptionListViewModel.model_validate(d) for d in found]
