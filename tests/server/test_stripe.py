"""The Stripe provider against recorded-shape Stripe answers (respx; no network), and /credits over it."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest
import respx
from tests.conftest import Server

from wasdi_server.providers.payments import CheckoutRequest, PaymentError, StripePaymentProvider
from wasdi_server.providers.payments.stripe import API_VERSION, MAX_RETRIES

API = "https://api.stripe.com"
KEY = "sk_test_51Pwasdi0000000000000000000000000000000000"
SESSION_ID = "cs_test_a1Zq7Hn3kT0bX9vLr2eWm5Yp8Cd4Fg6Jh1Ks3Lq5Nw7Rt9Vx"
INTENT_ID = "pi_3PwQ2bLkdIwHu7ix0Xa1b2c3"
SUCCESS = "http://falconframework.org/credits/stripe/confirmation/{CHECKOUT_SESSION_ID}"
CANCEL = "http://falconframework.org/payments/stripe/canceled/pkg-1"

OPEN_SESSION: dict[str, Any] = {
    "id": SESSION_ID,
    "object": "checkout.session",
    "after_expiration": None,
    "allow_promotion_codes": None,
    "amount_subtotal": 5000,
    "amount_total": 5000,
    "automatic_tax": {"enabled": False, "liability": None, "status": None},
    "billing_address_collection": None,
    "cancel_url": CANCEL,
    "client_reference_id": "pkg-1",
    "consent": None,
    "created": 1719936000,
    "currency": "eur",
    "customer": None,
    "customer_creation": "if_required",
    "customer_details": None,
    "customer_email": "alice@example.org",
    "expires_at": 1720022400,
    "invoice": None,
    "invoice_creation": {"enabled": False, "invoice_data": {"account_tax_ids": None, "custom_fields": None,
                                                            "description": None, "footer": None,
                                                            "metadata": {}, "rendering_options": None}},
    "livemode": False,
    "locale": None,
    "metadata": {"product_code": "Fifty", "description": "WASDI Fifty credits: pack"},
    "mode": "payment",
    "payment_intent": None,
    "payment_link": None,
    "payment_method_collection": "if_required",
    "payment_method_types": ["card"],
    "payment_status": "unpaid",
    "phone_number_collection": {"enabled": False},
    "status": "open",
    "submit_type": None,
    "success_url": SUCCESS,
    "total_details": {"amount_discount": 0, "amount_shipping": 0, "amount_tax": 0},
    "ui_mode": "hosted",
    "url": f"https://checkout.stripe.com/c/pay/{SESSION_ID}#fidkdWxOYHwnPyd1blpxYHZxWjA0T2t",
}


def paid_session(invoice: Any = None) -> dict[str, Any]:
    session = copy.deepcopy(OPEN_SESSION)
    session.update(
        status="complete", payment_status="paid", payment_intent=INTENT_ID, url=None, invoice=invoice,
        customer_details={"address": {"city": None, "country": "IT", "line1": None, "line2": None,
                                      "postal_code": None, "state": None},
                          "email": "alice@example.org", "name": "Alice Liddell", "phone": None,
                          "tax_exempt": "none", "tax_ids": []},
    )
    return session


INVOICE = {"id": "in_1PwQ2cLkdIwHu7ixAbCdEf", "object": "invoice", "amount_paid": 5000, "currency": "eur",
           "invoice_pdf": "https://pay.stripe.com/invoice/acct_1Pw/test_YWNjdF8x/pdf?s=ap", "status": "paid"}


def stripe_error(status: int, message: str, code: str | None = None) -> httpx.Response:
    return httpx.Response(status, json={"error": {"code": code, "doc_url": "https://stripe.com/docs/error-codes",
                                                  "message": message, "param": None,
                                                  "request_log_url": "https://dashboard.stripe.com/test/logs/req_1",
                                                  "type": "invalid_request_error"}})


def request(**changes: Any) -> CheckoutRequest:
    values: dict[str, Any] = {"client_reference_id": "pkg-1", "product_code": "Fifty",
                              "description": "WASDI Fifty credits: pack", "amount_cents": 5000, "currency": "EUR",
                              "success_url": SUCCESS, "cancel_url": CANCEL, "customer_email": "alice@example.org"}
    values.update(changes)
    return CheckoutRequest(**values)


@pytest.fixture
def stripe_api() -> Iterator[respx.MockRouter]:
    with respx.mock(base_url=API, assert_all_called=False) as router:
        yield router


PAUSES: list[float] = []


@pytest.fixture
def provider() -> StripePaymentProvider:
    PAUSES.clear()
    return StripePaymentProvider(KEY, API, timeout_seconds=5, sleep=PAUSES.append)


# -- create ---------------------------------------------------------------------------------------------
def test_create_checkout_sends_the_form(stripe_api: respx.MockRouter, provider: StripePaymentProvider) -> None:
    route = stripe_api.post("/v1/checkout/sessions").mock(return_value=httpx.Response(200, json=OPEN_SESSION))
    session = provider.create_checkout(request())
    assert route.call_count == 1
    sent = route.calls.last.request
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.headers["content-type"] == "application/x-www-form-urlencoded"
    form = {k: v[0] for k, v in parse_qs(sent.content.decode()).items()}
    assert form == {
        "mode": "payment", "client_reference_id": "pkg-1", "success_url": SUCCESS, "cancel_url": CANCEL,
        "line_items[0][price_data][currency]": "eur", "line_items[0][price_data][unit_amount]": "5000",
        "line_items[0][price_data][product_data][name]": "WASDI Fifty credits: pack",
        "line_items[0][quantity]": "1", "customer_email": "alice@example.org",
        "metadata[product_code]": "Fifty", "metadata[description]": "WASDI Fifty credits: pack",
    }
    assert "{CHECKOUT_SESSION_ID}" in form["success_url"]
    assert session.session_id == SESSION_ID and session.url == OPEN_SESSION["url"]
    assert session.client_reference_id == "pkg-1" and session.paid is False and session.payment_intent_id is None
    assert session.amount_cents == 5000 and session.currency == "eur"


def test_create_checkout_without_email(stripe_api: respx.MockRouter, provider: StripePaymentProvider) -> None:
    route = stripe_api.post("/v1/checkout/sessions").mock(return_value=httpx.Response(200, json=OPEN_SESSION))
    provider.create_checkout(request(customer_email=None))
    assert "customer_email" not in parse_qs(route.calls.last.request.content.decode())


def test_create_checkout_errors(stripe_api: respx.MockRouter, provider: StripePaymentProvider) -> None:
    route = stripe_api.post("/v1/checkout/sessions")
    route.mock(return_value=stripe_error(400, "Amount must be at least €0.50 eur", "amount_too_small"))
    with pytest.raises(PaymentError, match=r"400.*at least") as caught:
        provider.create_checkout(request(amount_cents=1))
    assert KEY not in str(caught.value)
    route.mock(return_value=stripe_error(401, "Invalid API Key provided: sk_test_****0000"))
    with pytest.raises(PaymentError, match="401"):
        provider.create_checkout(request())
    route.mock(return_value=httpx.Response(502, text="<html>bad gateway</html>"))
    with pytest.raises(PaymentError, match="502"):
        provider.create_checkout(request())
    route.mock(return_value=httpx.Response(200, text="not json"))
    with pytest.raises(PaymentError, match="not JSON"):
        provider.create_checkout(request())
    route.mock(return_value=httpx.Response(200, json={**OPEN_SESSION, "url": None}))
    with pytest.raises(PaymentError, match="without a URL"):
        provider.create_checkout(request())
    route.mock(side_effect=httpx.ConnectTimeout("timed out"))
    with pytest.raises(PaymentError, match="in time"):
        provider.create_checkout(request())
    route.mock(side_effect=httpx.ConnectError("refused"))
    with pytest.raises(PaymentError, match="cannot reach Stripe") as caught:
        provider.create_checkout(request())
    assert KEY not in str(caught.value) and KEY not in repr(provider)


def test_every_request_names_the_pinned_api_version(stripe_api: respx.MockRouter,
                                                    provider: StripePaymentProvider) -> None:
    create = stripe_api.post("/v1/checkout/sessions").mock(return_value=httpx.Response(200, json=OPEN_SESSION))
    read = stripe_api.get(f"/v1/checkout/sessions/{SESSION_ID}").mock(return_value=httpx.Response(200,
                                                                                                  json=OPEN_SESSION))
    provider.create_checkout(request())
    provider.retrieve(SESSION_ID)
    assert create.calls.last.request.headers["stripe-version"] == API_VERSION == "2024-06-20"
    assert read.calls.last.request.headers["stripe-version"] == API_VERSION
    assert "idempotency-key" not in read.calls.last.request.headers  # a GET is idempotent by itself


def test_each_create_call_has_its_own_idempotency_key(stripe_api: respx.MockRouter,
                                                      provider: StripePaymentProvider) -> None:
    route = stripe_api.post("/v1/checkout/sessions").mock(return_value=httpx.Response(200, json=OPEN_SESSION))
    provider.create_checkout(request())
    provider.create_checkout(request())
    keys = [call.request.headers["idempotency-key"] for call in route.calls]
    assert len(set(keys)) == 2 and all(len(key) >= 32 for key in keys)


@pytest.mark.parametrize("first", [
    httpx.ConnectError("refused"),
    httpx.ReadTimeout("the answer was lost"),
    httpx.Response(503, text="busy"),
    httpx.Response(409, json={"error": {"message": "a concurrent request is in progress"}}),
    httpx.Response(400, headers={"Stripe-Should-Retry": "true"}, json={"error": {"message": "try again"}}),
], ids=["connect-error", "lost-answer", "503", "409", "should-retry"])
def test_a_create_whose_answer_was_lost_is_sent_again_with_the_same_key(
        stripe_api: respx.MockRouter, provider: StripePaymentProvider, first: Any) -> None:
    answers = [first, httpx.Response(200, json=OPEN_SESSION)]

    def answer(_: httpx.Request) -> httpx.Response:
        given = answers.pop(0)
        if isinstance(given, Exception):
            raise given
        return given

    route = stripe_api.post("/v1/checkout/sessions").mock(side_effect=answer)
    assert provider.create_checkout(request()).session_id == SESSION_ID
    keys = [call.request.headers["idempotency-key"] for call in route.calls]
    assert len(keys) == 2 and keys[0] == keys[1]  # Stripe answers the retry with the first call's session
    assert PAUSES == [0.5]


def test_retries_are_bounded_and_follow_stripes_advice(stripe_api: respx.MockRouter,
                                                       provider: StripePaymentProvider) -> None:
    route = stripe_api.post("/v1/checkout/sessions").mock(return_value=httpx.Response(503, text="busy"))
    with pytest.raises(PaymentError, match="503"):
        provider.create_checkout(request())
    assert route.call_count == 1 + MAX_RETRIES and PAUSES == [0.5, 1.0]
    assert len({call.request.headers["idempotency-key"] for call in route.calls}) == 1
    PAUSES.clear()
    route.mock(return_value=httpx.Response(500, headers={"Stripe-Should-Retry": "false"}, text="no"))
    with pytest.raises(PaymentError, match="500"):
        provider.create_checkout(request())
    assert route.call_count == 1 + MAX_RETRIES + 1 and PAUSES == []
    route.mock(return_value=stripe_error(400, "Amount must be at least €0.50 eur"))
    with pytest.raises(PaymentError, match="400"):
        provider.create_checkout(request())
    assert route.call_count == 1 + MAX_RETRIES + 2 and PAUSES == []  # a refusal is not sent again


def test_retries_stop_at_the_timeout(stripe_api: respx.MockRouter, monkeypatch: pytest.MonkeyPatch) -> None:
    from wasdi_server.providers.payments import stripe

    now = [1000.0]  # a clock that only the pauses move, so a loaded machine changes nothing
    pauses: list[float] = []

    def pause(seconds: float) -> None:
        pauses.append(seconds)
        now[0] += seconds

    monkeypatch.setattr(stripe.time, "monotonic", lambda: now[0])
    quick = StripePaymentProvider(KEY, API, timeout_seconds=1.2, sleep=pause)
    route = stripe_api.post("/v1/checkout/sessions").mock(side_effect=httpx.ConnectError("refused"))
    with pytest.raises(PaymentError, match="cannot reach Stripe"):
        quick.create_checkout(request())
    assert route.call_count == 2 and pauses == [0.5]  # a third try would end after the timeout


# -- retrieve -------------------------------------------------------------------------------------------
def test_retrieve_a_paid_session(stripe_api: respx.MockRouter, provider: StripePaymentProvider) -> None:
    route = stripe_api.get(f"/v1/checkout/sessions/{SESSION_ID}").mock(
        return_value=httpx.Response(200, json=paid_session(INVOICE)))
    session = provider.retrieve(SESSION_ID)
    assert session is not None
    sent = route.calls.last.request
    assert sent.headers["authorization"] == f"Bearer {KEY}" and sent.url.params.get_list("expand[]") == ["invoice"]
    assert session.paid is True and session.payment_intent_id == INTENT_ID
    assert session.client_reference_id == "pkg-1" and session.amount_cents == 5000 and session.currency == "eur"
    assert session.customer_email == "alice@example.org" and session.customer_name == "Alice Liddell"
    assert session.invoice_id == INVOICE["id"] and session.invoice_pdf_url == INVOICE["invoice_pdf"]
    assert session.created_seconds == 1719936000 and session.description == "WASDI Fifty credits: pack"


def test_retrieve_maps_ids_and_unpaid(stripe_api: respx.MockRouter, provider: StripePaymentProvider) -> None:
    route = stripe_api.get(f"/v1/checkout/sessions/{SESSION_ID}")
    route.mock(return_value=httpx.Response(200, json=paid_session("in_1PwQ2cLkdIwHu7ixAbCdEf")))
    session = provider.retrieve(SESSION_ID)
    assert session and session.invoice_id == "in_1PwQ2cLkdIwHu7ixAbCdEf" and session.invoice_pdf_url is None
    route.mock(return_value=httpx.Response(200, json={**paid_session(), "payment_intent": {"id": INTENT_ID}}))
    session = provider.retrieve(SESSION_ID)
    assert session and session.payment_intent_id == INTENT_ID
    route.mock(return_value=httpx.Response(200, json={**OPEN_SESSION, "status": "complete",
                                                      "payment_status": "no_payment_required"}))
    session = provider.retrieve(SESSION_ID)
    assert session is not None and session.paid is False


def test_retrieve_unknown_and_failures(stripe_api: respx.MockRouter, provider: StripePaymentProvider) -> None:
    stripe_api.get("/v1/checkout/sessions/cs_test_missing").mock(
        return_value=stripe_error(404, "No such checkout.session: 'cs_test_missing'", "resource_missing"))
    assert provider.retrieve("cs_test_missing") is None
    assert provider.retrieve("") is None
    route = stripe_api.get(f"/v1/checkout/sessions/{SESSION_ID}")
    route.mock(return_value=httpx.Response(500, json={"error": {"message": "An unknown error occurred",
                                                                "type": "api_error"}}))
    with pytest.raises(PaymentError, match="500"):
        provider.retrieve(SESSION_ID)
    route.mock(return_value=httpx.Response(200, json=["not", "a", "session"]))
    with pytest.raises(PaymentError):
        provider.retrieve(SESSION_ID)
    route.mock(return_value=httpx.Response(200, json={"object": "checkout.session"}))
    with pytest.raises(PaymentError, match="id"):
        provider.retrieve(SESSION_ID)
    route.mock(side_effect=httpx.ReadTimeout("slow"))
    with pytest.raises(PaymentError):
        provider.retrieve(SESSION_ID)


def test_retrieve_quotes_the_session_id(stripe_api: respx.MockRouter, provider: StripePaymentProvider) -> None:
    route = stripe_api.get(path__startswith="/v1/").mock(return_value=stripe_error(404, "No such", "x"))
    assert provider.retrieve("../../v1/customers") is None
    assert route.calls.last.request.url.raw_path.startswith(b"/v1/checkout/sessions/..%2F..%2Fv1%2Fcustomers")


def test_an_api_key_is_required() -> None:
    with pytest.raises(ValueError):
        StripePaymentProvider("")


# -- /credits over Stripe ---------------------------------------------------------------------------------
@pytest.fixture
def stripe_server(tmp_path: Path) -> Iterator[Server]:
    s = Server(tmp_path / "data", payments={"stripe_api_key": KEY, "stripe_api_base": "https://stripe.test/"})
    yield s
    s.close()


def test_credit_purchase_through_stripe(stripe_server: Server) -> None:
    server = stripe_server
    assert server.services.payments.codes == ["stripe"]  # a key set: the simulated checkout is off
    alice = server.add_user("alice@example.org")
    package_id = server.post("/credits/add", alice, json={"type": "Fifty", "name": "pack"}).json["message"]
    created = {**OPEN_SESSION, "client_reference_id": package_id}
    with respx.mock(base_url="https://stripe.test", assert_all_called=True) as stripe:
        create = stripe.post("/v1/checkout/sessions").mock(return_value=httpx.Response(200, json=created))
        r = server.get("/credits/stripe/paymentUrl", alice, creditPackageId=package_id)
        assert r.status_code == 200 and r.json["message"] == OPEN_SESSION["url"]
        form = parse_qs(create.calls.last.request.content.decode())
        assert form["client_reference_id"] == [package_id] and form["success_url"] == [SUCCESS]
        assert form["cancel_url"] == [f"http://falconframework.org/payments/stripe/canceled/{package_id}"]
        assert form["line_items[0][price_data][unit_amount]"] == ["5000"]
        assert server.get("/credits/local/paymentUrl", alice, creditPackageId=package_id).status_code == 400

        lookup = stripe.get(f"/v1/checkout/sessions/{SESSION_ID}")
        lookup.mock(return_value=httpx.Response(200, json={**OPEN_SESSION, "client_reference_id": package_id}))
        assert server.get(f"/credits/stripe/confirmation/{SESSION_ID}").status_code == 500
        assert server.get("/credits/totalbyuser", alice).json == 0.0

        lookup.mock(return_value=httpx.Response(200, json={**paid_session(INVOICE), "client_reference_id": package_id}))
        assert server.get(f"/credits/stripe/confirmation/{SESSION_ID}").status_code == 200
        assert server.get("/credits/totalbyuser", alice).json == 50.0
        stored = server.services.store.collection("credit_packages").get(package_id)
        assert stored["buySuccess"] is True and stored["paymentIntentId"] == INTENT_ID
        assert stored["paymentAmountInCents"] == 5000 and stored["paymentCurrency"] == "eur"

        lookup.mock(side_effect=httpx.ConnectError("down"))
        assert server.get(f"/credits/stripe/confirmation/{SESSION_ID}").status_code == 500
        stripe.get("/v1/checkout/sessions/cs_test_gone").mock(return_value=stripe_error(404, "No such", "x"))
        assert server.get("/credits/stripe/confirmation/cs_test_gone").status_code == 401  # Stripe: no such session
    assert server.get("/credits/totalbyuser", alice).json == 50.0


def test_stripe_refusing_the_checkout_is_500(stripe_server: Server) -> None:
    alice = stripe_server.add_user("alice@example.org")
    package_id = stripe_server.post("/credits/add", alice, json={"type": "Fifty"}).json["message"]
    with respx.mock(base_url="https://stripe.test") as stripe:
        stripe.post("/v1/checkout/sessions").mock(return_value=stripe_error(401, "Invalid API Key provided"))
        r = stripe_server.get("/credits/stripe/paymentUrl", alice, creditPackageId=package_id)
    assert r.status_code == 500 and KEY not in r.text
