"""The ``stripe`` payment provider: Stripe Checkout over its REST API (no Stripe library needed).

- create: ``POST /v1/checkout/sessions`` (form-encoded, ``mode=payment``, one line item with inline
  ``price_data``, our reference in ``client_reference_id``, the success URL carrying the literal
  ``{CHECKOUT_SESSION_ID}`` that Stripe replaces when it redirects the buyer);
- verify: ``GET /v1/checkout/sessions/{id}`` (with the invoice expanded); paid when
  ``payment_status == "paid"``.

Bearer authentication with the secret key from the settings.  Every request names the API version
its answers are read in (``Stripe-Version: API_VERSION``), so a change of the account's default version
cannot change the shapes read here.  Every create call carries an ``Idempotency-Key``, new per call and
the same on its retries: a request that reached Stripe but whose answer was lost (a timeout, a dropped
connection, a 409 or 5xx, or an answer saying ``Stripe-Should-Retry: true``) is sent again, at most
``MAX_RETRIES`` times and within the timeout, and never opens a second checkout.  Transport failures,
timeouts and every error answer become ``PaymentError`` (the key is never part of a message); an unknown
session (404) is ``None``.

Why not the official ``stripe`` library: two calls are needed, and this client is 200 lines over the
httpx the server already has, with the same outbound behaviour as every other provider; the library
would add a dependency (and its import time) for the same two requests.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import httpx

from .base import CheckoutRequest, CheckoutSession, PaymentError

DEFAULT_API_BASE = "https://api.stripe.com"
API_VERSION = "2024-06-20"
"""The Stripe API version whose ``checkout.session`` shape ``to_session`` reads (sent on every request)."""
MAX_RETRIES = 2
RETRY_STATUSES = frozenset({409, 429, 500, 502, 503, 504})
"""Answers worth sending again with the same idempotency key (Stripe's own libraries retry these)."""


def _id_of(value: Any) -> str | None:
    """A Stripe reference that may be an id or an expanded object."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, dict) and isinstance(value.get("id"), str):
        return str(value["id"])
    return None


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


class StripePaymentProvider:
    """A Stripe Checkout client."""

    code = "stripe"

    def __init__(self, api_key: str, api_base: str = DEFAULT_API_BASE, timeout_seconds: float = 30.0,
                 transport: httpx.BaseTransport | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if not api_key:
            raise ValueError("a Stripe API key is required")
        self._api_key = api_key
        self.api_base = (api_base or DEFAULT_API_BASE).rstrip("/")
        self.timeout_seconds = timeout_seconds
        self.timeout = httpx.Timeout(timeout_seconds, connect=min(10.0, timeout_seconds))
        self._transport = transport
        self._sleep = sleep

    def __repr__(self) -> str:  # never show the key
        return f"StripePaymentProvider(api_base={self.api_base!r})"

    # -- HTTP ------------------------------------------------------------------------------------
    def _request(self, method: str, path: str, *, data: dict[str, str] | None = None,
                 params: list[tuple[str, str | int | float | bool | None]] | None = None) -> httpx.Response:
        """One call, sent again (same idempotency key) while Stripe's answer says it may be, within the timeout."""
        headers = {"Authorization": f"Bearer {self._api_key}", "Accept": "application/json",
                   "Stripe-Version": API_VERSION}
        if method == "POST":
            headers["Idempotency-Key"] = str(uuid.uuid4())
        deadline = time.monotonic() + self.timeout_seconds
        with httpx.Client(base_url=self.api_base, timeout=self.timeout, transport=self._transport) as client:
            for attempt in range(MAX_RETRIES + 1):
                pause = 0.5 * 2 ** attempt
                last_try = attempt == MAX_RETRIES or time.monotonic() + pause >= deadline
                try:
                    response = client.request(method, path, data=data, params=params, headers=headers)
                except httpx.TimeoutException as e:
                    if last_try:
                        raise PaymentError(f"Stripe did not answer {method} {path} in time") from e
                except httpx.HTTPError as e:
                    if last_try:
                        raise PaymentError(f"cannot reach Stripe ({type(e).__name__})") from e
                else:
                    if last_try or not self._may_retry(response):
                        return response
                self._sleep(pause)
        raise AssertionError("unreachable: the last attempt returns or raises")

    @staticmethod
    def _may_retry(response: httpx.Response) -> bool:
        advice: str | None = response.headers.get("Stripe-Should-Retry")
        if advice is not None:
            return advice.strip().lower() == "true"
        return response.status_code in RETRY_STATUSES

    @staticmethod
    def _json(response: httpx.Response) -> dict[str, Any]:
        try:
            body = response.json()
        except ValueError as e:
            raise PaymentError(f"Stripe answered {response.status_code} with a body that is not JSON") from e
        if not isinstance(body, dict):
            raise PaymentError(f"Stripe answered {response.status_code} with unexpected JSON")
        return body

    @classmethod
    def _error(cls, response: httpx.Response) -> PaymentError:
        message = ""
        try:
            error = response.json().get("error") or {}
            message = str(error.get("message") or error.get("code") or "")
        except (ValueError, AttributeError):
            pass
        return PaymentError(f"Stripe refused the request ({response.status_code}){': ' + message if message else ''}")

    # -- the provider interface ------------------------------------------------------------------
    def create_checkout(self, request: CheckoutRequest) -> CheckoutSession:
        name = (request.description or request.product_code or "WASDI purchase")[:250]
        form = {
            "mode": "payment",
            "client_reference_id": request.client_reference_id,
            "success_url": request.success_url,
            "cancel_url": request.cancel_url,
            "line_items[0][price_data][currency]": request.currency.lower(),
            "line_items[0][price_data][unit_amount]": str(int(request.amount_cents)),
            "line_items[0][price_data][product_data][name]": name,
            "line_items[0][quantity]": "1",
            "metadata[product_code]": request.product_code,
            "metadata[description]": name,
        }
        if request.customer_email:
            form["customer_email"] = request.customer_email
        response = self._request("POST", "/v1/checkout/sessions", data=form)
        if response.status_code >= 400:
            raise self._error(response)
        session = self.to_session(self._json(response))
        if not session.url:
            raise PaymentError("Stripe created a checkout session without a URL")
        return session

    def retrieve(self, session_id: str) -> CheckoutSession | None:
        if not session_id or len(session_id) > 500:
            return None
        response = self._request("GET", "/v1/checkout/sessions/" + quote(session_id, safe=""),
                                 params=[("expand[]", "invoice")])
        if response.status_code == 404:
            return None
        if response.status_code >= 400:
            raise self._error(response)
        return self.to_session(self._json(response))

    @staticmethod
    def to_session(obj: dict[str, Any]) -> CheckoutSession:
        """Our view of a Stripe ``checkout.session`` object."""
        session_id = obj.get("id")
        if not isinstance(session_id, str) or not session_id:
            raise PaymentError("Stripe answered without a checkout session id")
        details: dict[str, Any] = obj["customer_details"] if isinstance(obj.get("customer_details"), dict) else {}
        invoice = obj.get("invoice")
        metadata: dict[str, Any] = obj["metadata"] if isinstance(obj.get("metadata"), dict) else {}
        return CheckoutSession(
            session_id=session_id,
            url=_str_or_none(obj.get("url")) or "",
            client_reference_id=_str_or_none(obj.get("client_reference_id")) or "",
            paid=obj.get("payment_status") == "paid",
            payment_intent_id=_id_of(obj.get("payment_intent")),
            amount_cents=_int_or_none(obj.get("amount_total")),
            currency=_str_or_none(obj.get("currency")),
            customer_email=_str_or_none(details.get("email")) or _str_or_none(obj.get("customer_email")),
            customer_name=_str_or_none(details.get("name")),
            invoice_id=_id_of(invoice),
            invoice_pdf_url=_str_or_none(invoice.get("invoice_pdf")) if isinstance(invoice, dict) else None,
            created_seconds=_int_or_none(obj.get("created")),
            description=_str_or_none(metadata.get("description")),
        )
