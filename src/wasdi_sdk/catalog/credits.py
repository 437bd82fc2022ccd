"""/credits: credit packages and their purchase."""

from ._types import (
    EMPTY,
    FLOAT,
    SUCCESS,
    A,
    Auth,
    Endpoint,
    Style,
    json_body,
    models,
    qbool,
    qreq,
)

ENDPOINTS = (
    Endpoint("credits.list_types", "GET", "/credits/types", Style.STATUS, A, auth=Auth.PUBLIC,
             response=models("SubscriptionTypeViewModel"), statuses=(200, 500),
             summary="The credit package types on sale."),
    Endpoint("credits.total", "GET", "/credits/totalbyuser", Style.STATUS, A, response=FLOAT,
             statuses=(200, 401, 500), summary="Total credits remaining to the user."),
    Endpoint("credits.list", "GET", "/credits/listbyuser", Style.STATUS, A,
             query=(qbool("ascendingOrder", False, doc="False lists the newest first."),),
             response=models("CreditsPackageViewModel"), statuses=(200, 401, 500),
             summary="The user's credit packages."),
    Endpoint("credits.create", "POST", "/credits/add", Style.STATUS, A, body=json_body("CreditsPackageViewModel"),
             response=SUCCESS, mutates=True, statuses=(200, 400, 401, 500),
             summary="Create a credit package (unpaid unless an admin says otherwise); message is its id."),
    Endpoint("credits.payment_url", "GET", "/credits/{payprov}/paymentUrl", Style.STATUS, A,
             query=(qreq("creditPackageId"),), response=SUCCESS, statuses=(200, 400, 401, 403, 500),
             summary="The checkout URL to pay for a credit package; message is the URL."),
    Endpoint("credits.confirm_payment", "GET", "/credits/{payprov}/confirmation/{CHECKOUT_SESSION_ID}",
             Style.STATUS, A, auth=Auth.PUBLIC, response=EMPTY, mutates=True, statuses=(200, 401, 500),
             summary="Payment provider callback: verify the checkout and mark the package paid."),
)
