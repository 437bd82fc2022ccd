"""Models of /subscriptions: subscriptions, their types, sharing and payment records."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator

from ._base import WasdiModel


def _date_text(value: Any) -> Any:
    """Dates are ISO strings on the wire; epoch milliseconds (a JSON number) are accepted on input."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return value


DateText = Annotated[str | None, BeforeValidator(_date_text)]
"""``yyyy-MM-ddTHH:mm:ss.SSSZ``; a number (epoch milliseconds) is accepted and kept as its text."""


class SubscriptionTypeViewModel(WasdiModel):
    """A subscription (or credit package) type on sale."""

    type_id: str | None = None
    name: str | None = None
    description: str | None = None


class SubscriptionViewModel(WasdiModel):
    """One subscription; dates are ISO-8601 strings (``yyyy-MM-ddTHH:mm:ss.SSSZ``)."""

    subscription_id: str | None = None
    name: str | None = None
    description: str | None = None
    type_id: str | None = None
    type_name: str | None = None
    buy_date: DateText = None
    start_date: DateText = None
    end_date: DateText = None
    duration_days: int | None = None
    user_id: str | None = None
    organization_id: str | None = None
    organization_name: str | None = None
    buy_success: bool | None = None
    read_only: bool | None = None


class SubscriptionListViewModel(WasdiModel):
    """A subscription as listed for the user, with why they have it."""

    subscription_id: str | None = None
    owner_user_id: str | None = None
    name: str | None = None
    type_id: str | None = None
    type_name: str | None = None
    start_date: DateText = None
    end_date: DateText = None
    organization_name: str | None = None
    organization_id: str | None = None
    reason: str | None = None
    """owner, shared by <organization name>, or shared by user."""
    buy_success: bool | None = None
    running_time: int | None = None
    read_only: bool | None = None


class SubscriptionSharingViewModel(WasdiModel):
    """A sharing of a subscription with a user."""

    subscription_id: str | None = None
    user_id: str | None = None
    owner_id: str | None = None
    permissions: str | None = None


class PaymentDetail(WasdiModel):
    """The payment provider's record of a checkout."""

    client_reference_id: str | None = None
    customer_name: str | None = None
    customer_email: str | None = None
    payment_intent_id: str | None = None
    payment_status: str | None = None
    payment_currency: str | None = None
    payment_amount_in_cents: int | None = None
    invoice_id: str | None = None
    product_description: str | None = None
    payment_date_in_seconds: int | None = None
    date: int | None = None
    """Epoch milliseconds."""
    invoice_pdf_url: str | None = None
