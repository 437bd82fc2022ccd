"""Paying for a subscription through a payment provider.

The checkout's client reference is ``<subscriptionId>`` or ``<subscriptionId>_<workspaceId>``.  Only a paid
session (verified with the provider) whose reference names an existing subscription sets ``buySuccess`` and
``buyDate`` (a missing session id: 401; any failed verification: 500, like the other confirmation callbacks);
a period that would already have started is moved to start at the payment (same length), so the buyer gets
what they paid for.  A repeated confirmation changes nothing.
"""

from __future__ import annotations

import logging
from typing import Any

from ...dates import now_ms
from ...errors import BadRequest, ServerFailure
from ...providers.payments import PaymentProviders
from ...providers.payments.base import CheckoutRequest, CheckoutSession
from ..accounts.identity import User, valid_email
from .subscription_records import SubscriptionRecords
from .subscription_terms import MAX_EPOCH_MS, SUBSCRIPTION_TYPES, duration_days, type_end, type_name

log = logging.getLogger("wasdi_server.subscriptions")

PAYMENT_MESSAGE_CODE = "SUBSCRIPTION"


class SubscriptionPayments(SubscriptionRecords):
    """The checkout of an unpaid subscription and the confirmation that marks it paid."""

    def payment_url(self, caller: User, subscription_id: str | None, workspace_id: str | None,
                    payments: PaymentProviders, payprov: str, base_url: str) -> str:
        """The provider's checkout URL for an unpaid subscription the caller can read.

        The client reference is ``<subscriptionId>`` or ``<subscriptionId>_<workspaceId>``; the price is
        the type's price (a type that costs nothing is not sold: 400)."""
        provider = payments.get(payprov)
        doc = self.readable(caller, subscription_id)
        if doc.get("buySuccess"):
            raise BadRequest("The subscription is already paid.")
        type_id = doc.get("typeId")
        if not type_id or type_id not in SUBSCRIPTION_TYPES:
            raise BadRequest("The subscription does not have a valid type.")
        amount, currency = payments.price(type_id)
        if amount <= 0:
            raise BadRequest(f"The subscription type {type_id} is not sold.")
        sid = str(doc["subscriptionId"])
        reference = f"{sid}_{workspace_id}" if workspace_id else sid
        success_url, cancel_url = PaymentProviders.checkout_urls(base_url, "subscriptions", provider.code, reference)
        request = CheckoutRequest(
            client_reference_id=reference, product_code=type_id,
            description=f"WASDI subscription {doc.get('name') or sid} ({type_name(type_id)})",
            amount_cents=amount, currency=currency, success_url=success_url, cancel_url=cancel_url,
            customer_email=caller.user_id if valid_email(caller.user_id) else None)
        return payments.start_checkout(provider, request).url

    def confirm_payment(self, payments: PaymentProviders, provider_code: str | None,
                        session_id: str | None) -> dict[str, Any]:
        """Verify a checkout session with the provider and mark its subscription paid (once); the record.

        Verification follows the callbacks' rules (``PaymentProviders.verify``); a paid session whose
        reference names no subscription is a failed verification too (500).
        """
        _, session = payments.verify(provider_code, session_id)
        subscription_id, _, workspace_id = (session.client_reference_id or "").partition("_")
        if not subscription_id or self.subscriptions.get(subscription_id) is None:
            raise ServerFailure("the checkout session does not pay for a subscription")
        paid_at = int(now_ms())
        settled = False

        def settle(doc: dict[str, Any]) -> dict[str, Any] | None:
            nonlocal settled
            if doc.get("buySuccess"):
                return None  # already paid: confirming again changes nothing
            settled = True
            doc.update(buySuccess=True, buyDate=paid_at)
            start, end = int(doc.get("startDate") or 0), int(doc.get("endDate") or 0)
            if start < paid_at:
                length = max(0, end - start) or type_end(doc.get("typeId") or "Free", paid_at) - paid_at
                doc.update(startDate=paid_at, endDate=min(MAX_EPOCH_MS, paid_at + length))
                doc["durationDays"] = duration_days(paid_at, doc["endDate"])
            return doc

        with self.atomic():  # the payment and the owner's first choice of the subscription: both or neither
            try:
                updated = self.subscriptions.modify(subscription_id, settle)
            except Exception as e:
                log.exception("recording the payment of subscription %s failed", subscription_id)
                raise ServerFailure("the payment could not be recorded") from e
            if updated is None:
                raise ServerFailure("the subscription disappeared")
            if not settled:
                return updated
            owner = self.users.get(updated["userId"]) or {}
            if not owner.get("activeProjectId"):
                first = self.projects.find_one(subscriptionId=subscription_id)
                if first is not None:
                    self.users.set_active_project(updated["userId"], first["projectId"], subscription_id)
        if workspace_id and self.messages is not None:
            self.messages.send(PAYMENT_MESSAGE_CODE, payment_detail(session, paid_at), workspace_id)
        return updated


def payment_detail(session: CheckoutSession, paid_at_ms: int) -> dict[str, Any]:
    """The PaymentDetail record of a paid checkout (the broker message payload)."""
    from wasdi_sdk.models import PaymentDetail

    seconds = session.created_seconds if session.created_seconds is not None else paid_at_ms // 1000
    return PaymentDetail(
        client_reference_id=session.client_reference_id, customer_name=session.customer_name,
        customer_email=session.customer_email, payment_intent_id=session.payment_intent_id,
        payment_status="paid", payment_currency=session.currency, payment_amount_in_cents=session.amount_cents,
        invoice_id=session.invoice_id, product_description=session.description,
        payment_date_in_seconds=seconds, date=paid_at_ms, invoice_pdf_url=session.invoice_pdf_url,
    ).to_wire()
