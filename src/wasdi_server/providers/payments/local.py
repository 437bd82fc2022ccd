"""The ``local`` payment provider: a simulated checkout served by this server.

For self-hosting and tests.  ``create_checkout`` stores a session in the ``checkout_sessions``
collection and returns the URL of this server's checkout page
(``<base>/payments/local/checkout/<sessionId>``, see ``api/checkout.py``).  Paying there marks the
session paid with a generated payment intent id and redirects (303) to the success URL with
``{CHECKOUT_SESSION_ID}`` replaced, exactly as a real provider does; the confirmation callback
then verifies the session with ``retrieve``.  Nothing is charged: anyone who can open the page can
"pay", so this provider is meant for deployments where purchases are a formality.
"""

from __future__ import annotations

import re
import time
import uuid
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ...store import Collection
from .base import CheckoutRequest, CheckoutSession

OPEN = "open"
COMPLETE = "complete"
PAID = "paid"
UNPAID = "unpaid"
SESSION_ID = re.compile(r"^cs_local_[0-9a-f]{32}$")
PAGE_PATH = "/payments/local/checkout/"


def server_base(success_url: str) -> str:
    """This server's base URL, read from a success URL shaped like the contract's callbacks.

    ``<base>/<group>/<payprov>/confirmation/{CHECKOUT_SESSION_ID}`` gives ``<base>``; any other
    shape gives the URL's origin.
    """
    parts = urlsplit(success_url)
    segments = parts.path.split("/")
    path = "/".join(segments[:-4]) if len(segments) >= 5 and segments[-2] == "confirmation" else ""
    return urlunsplit((parts.scheme, parts.netloc, path.rstrip("/"), "", ""))


class LocalPaymentProvider:
    """Checkout sessions kept in a store collection keyed ``sessionId``."""

    code = "local"

    def __init__(self, sessions: Collection) -> None:
        self.sessions = sessions

    # -- the provider interface ----------------------------------------------------------------
    def create_checkout(self, request: CheckoutRequest) -> CheckoutSession:
        session_id = "cs_local_" + uuid.uuid4().hex
        url = server_base(request.success_url) + PAGE_PATH + session_id
        record = self.sessions.insert({
            "sessionId": session_id, "url": url, "clientReferenceId": request.client_reference_id,
            "productCode": request.product_code, "description": request.description,
            "amountCents": int(request.amount_cents), "currency": request.currency,
            "successUrl": request.success_url, "cancelUrl": request.cancel_url,
            "customerEmail": request.customer_email, "status": OPEN, "paymentStatus": UNPAID,
            "paymentIntentId": None, "created": int(time.time()), "paidAt": None,
        })
        return self.to_session(record)

    def retrieve(self, session_id: str) -> CheckoutSession | None:
        record = self.record(session_id)
        return self.to_session(record) if record else None

    # -- what the checkout page does -----------------------------------------------------------
    def record(self, session_id: str | None) -> dict[str, Any] | None:
        """The stored session, or ``None`` (also for anything that is not a local session id)."""
        if not session_id or not SESSION_ID.match(session_id):
            return None
        return self.sessions.get(session_id)

    def pay(self, session_id: str) -> dict[str, Any] | None:
        """Mark the session paid (once: paying again keeps the first payment); ``None`` if unknown."""

        def settle(doc: dict[str, Any]) -> dict[str, Any] | None:
            if doc.get("paymentStatus") == PAID:
                return None
            doc.update(status=COMPLETE, paymentStatus=PAID, paymentIntentId="pi_local_" + uuid.uuid4().hex,
                       paidAt=int(time.time()))
            return doc

        if self.record(session_id) is None:
            return None
        return self.sessions.modify(session_id, settle)

    @staticmethod
    def to_session(doc: dict[str, Any]) -> CheckoutSession:
        return CheckoutSession(
            session_id=doc["sessionId"], url=doc["url"], client_reference_id=doc["clientReferenceId"],
            paid=doc.get("paymentStatus") == PAID, payment_intent_id=doc.get("paymentIntentId"),
            amount_cents=doc.get("amountCents"), currency=(doc.get("currency") or "").lower() or None,
            customer_email=doc.get("customerEmail"), customer_name=None, invoice_id=None, invoice_pdf_url=None,
            created_seconds=doc.get("created"), description=doc.get("description"),
        )
