"""The payment-provider interface, selected by the ``{payprov}`` path segment."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class CheckoutRequest:
    """What we ask a provider to sell."""

    client_reference_id: str
    """Ours: ``<creditPackageId>``, ``<subscriptionId>[_<workspaceId>]`` or ``<appPaymentId>``."""
    product_code: str
    """What is sold: a subscription type id, a credit package type, or a processor id."""
    description: str
    amount_cents: int
    currency: str
    success_url: str
    """Where the provider sends the buyer after paying; ``{CHECKOUT_SESSION_ID}`` is replaced."""
    cancel_url: str
    customer_email: str | None = None


@dataclass(frozen=True)
class CheckoutSession:
    """A provider's checkout session, as far as we need to know it."""

    session_id: str
    url: str
    client_reference_id: str
    paid: bool
    payment_intent_id: str | None = None
    amount_cents: int | None = None
    currency: str | None = None
    customer_email: str | None = None
    customer_name: str | None = None
    invoice_id: str | None = None
    invoice_pdf_url: str | None = None
    created_seconds: int | None = None
    description: str | None = None


class PaymentError(Exception):
    """The provider could not be reached or refused the request."""


class PaymentProvider(Protocol):
    """A checkout provider: create a session (its URL is given to the buyer), then verify it."""

    code: str

    def create_checkout(self, request: CheckoutRequest) -> CheckoutSession: ...

    def retrieve(self, session_id: str) -> CheckoutSession | None:
        """The session, or ``None`` when the provider does not know it.  ``PaymentError`` when unreachable."""
        ...
