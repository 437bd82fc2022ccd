"""Credit packages: their types, creation, totals and purchase through a payment provider.

Rules (contract, /credits, and the States table):
- the types on sale are ``Fifty`` (50 credits) and ``OneHundred`` (100 credits); the credits of a
  package follow its type; an unknown type is refused (400);
- a package is created unpaid (``buySuccess=false``, ``buyDate=0.0``) unless an admin creates it
  paid, in which case its buy date is the creation time;
- a name the user already has gets a ``(n)`` suffix; an empty name becomes the type's name;
- the total of a user counts the credits remaining in paid packages only;
- only the owner of a package gets a checkout URL for it, and not for a package already paid;
- the confirmation callback asks the provider about the checkout session; only a paid session whose
  client reference is an existing package marks it paid (buy date and payment intent recorded);
  confirming again changes nothing more.  A callback that proves no payment of a package (empty
  id, unknown provider or session, unpaid session, unknown package) is 401, the contract's code
  for a callback that does not authenticate; the provider or the store failing is 500.
"""

from __future__ import annotations

import logging
import re
import uuid
from typing import Any

from ...dates import now_ms
from ...errors import BadRequest, DomainError, Forbidden, ServerFailure
from ...naming import unique_name
from ...providers.payments import CheckoutRequest, PaymentProviders
from ...store import Collection
from ..accounts.identity import User, valid_email

log = logging.getLogger("wasdi_server.credits")

CREDIT_PACKAGE_TYPES: dict[str, tuple[str, float]] = {
    # typeId: (name and description, credits)
    "Fifty": ("Fifty credits", 50.0),
    "OneHundred": ("One hundred credits", 100.0),
}
MAX_NAME_LENGTH = 200
MAX_DESCRIPTION_LENGTH = 2000
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_PACKAGE_ID = re.compile(r"^[A-Za-z0-9_-]{1,100}$")
VIEW_FIELDS = ("creditPackageId", "name", "description", "type", "buyDate", "userId", "buySuccess",
               "creditsRemaining", "lastUpdate")


def canonical_type(type_id: str | None) -> str | None:
    """The type id as listed (matched without regard to case), or ``None`` if there is no such type."""
    wanted = (type_id or "").strip().lower()
    return next((t for t in CREDIT_PACKAGE_TYPES if t.lower() == wanted), None)


def view(doc: dict[str, Any]) -> dict[str, Any]:
    """The CreditsPackageViewModel fields of a stored package (nothing internal leaks)."""
    out = {name: doc.get(name) for name in VIEW_FIELDS}
    out["buyDate"] = float(doc.get("buyDate") or 0.0)
    out["lastUpdate"] = float(doc.get("lastUpdate") or 0.0)
    out["creditsRemaining"] = float(doc.get("creditsRemaining") or 0.0)
    out["buySuccess"] = bool(doc.get("buySuccess"))
    return out


class CreditService:
    """The ``credit_packages`` collection: ``{creditPackageId, name, description, type, buyDate, userId,
    buySuccess, creditsRemaining, lastUpdate, createdDate}`` plus, once paid through a provider,
    ``paymentProvider, checkoutSessionId, paymentIntentId, paymentAmountInCents, paymentCurrency``."""

    def __init__(self, packages: Collection, payments: PaymentProviders) -> None:
        self.packages = packages
        self.payments = payments

    def delete_all_of_user(self, user_id: str) -> None:
        """The user's credit packages."""
        self.packages.delete_where(userId=user_id)

    # -- reading ---------------------------------------------------------------------------------
    @staticmethod
    def types() -> list[dict[str, Any]]:
        """SubscriptionTypeViewModel fields of the package types on sale."""
        return [{"typeId": t, "name": name, "description": name} for t, (name, _) in CREDIT_PACKAGE_TYPES.items()]

    def total(self, user: User) -> float:
        """Credits remaining in the user's paid packages."""
        return float(sum(float(d.get("creditsRemaining") or 0.0)
                         for d in self.packages.find(userId=user.user_id) if d.get("buySuccess")))

    def list_for(self, user: User, ascending: bool = False) -> list[dict[str, Any]]:
        """The user's packages by purchase time (creation time while unpaid); newest first by default."""
        docs = self.packages.find(userId=user.user_id)
        docs.sort(key=lambda d: (float(d.get("buyDate") or 0.0) or float(d.get("createdDate") or 0.0),
                                 float(d.get("createdDate") or 0.0)), reverse=not ascending)
        return [view(d) for d in docs]

    def get(self, package_id: str | None) -> dict[str, Any] | None:
        if not package_id or not _PACKAGE_ID.match(package_id):
            return None
        return self.packages.get(package_id)

    # -- creating --------------------------------------------------------------------------------
    def add(self, caller: User, name: str | None, description: str | None, type_id: str | None,
            buy_success: bool | None) -> dict[str, Any]:
        """A new package of the caller; paid only when an admin asks for it."""
        package_type = canonical_type(type_id)
        if package_type is None:
            raise BadRequest(f"invalid credit package type {str(type_id or '')[:60]!r}")
        type_name, credits = CREDIT_PACKAGE_TYPES[package_type]
        wanted = (name or "").strip() or type_name
        if len(wanted) > MAX_NAME_LENGTH or _CONTROL.search(wanted):
            raise BadRequest("invalid credit package name")
        text = (description or "").strip() or type_name
        if len(text) > MAX_DESCRIPTION_LENGTH:
            raise BadRequest("the description is too long")
        paid = bool(buy_success) and caller.is_admin
        stamp = now_ms()
        with self.packages.transaction():
            taken = [d.get("name") or "" for d in self.packages.find(userId=caller.user_id)]
            return self.packages.insert({
                "creditPackageId": str(uuid.uuid4()), "name": unique_name(wanted, taken), "description": text,
                "type": package_type, "buyDate": stamp if paid else 0.0, "userId": caller.user_id,
                "buySuccess": paid, "creditsRemaining": credits, "lastUpdate": stamp, "createdDate": stamp,
            })

    # -- buying ----------------------------------------------------------------------------------
    def payment_url(self, caller: User, provider_code: str | None, package_id: str | None, base_url: str) -> str:
        """The checkout URL to pay for one of the caller's unpaid packages."""
        provider = self.payments.get(provider_code)
        doc = self.get(package_id)
        if doc is None:
            raise BadRequest("The credit package cannot be found.")
        if doc.get("userId") != caller.user_id:
            raise Forbidden("The user cannot access the credits package info.")
        if doc.get("buySuccess"):
            raise BadRequest("The credit package is already paid.")
        package_type = canonical_type(doc.get("type"))
        if package_type is None:
            raise BadRequest("The credit package does not have a valid type.")
        cents, currency = self.payments.price(package_type)
        success_url, cancel_url = self.payments.checkout_urls(base_url, "credits", provider.code,
                                                              doc["creditPackageId"])
        request = CheckoutRequest(
            client_reference_id=doc["creditPackageId"], product_code=package_type,
            description=f"WASDI {CREDIT_PACKAGE_TYPES[package_type][0]}: {doc.get('name') or ''}".strip(),
            amount_cents=cents, currency=currency, success_url=success_url, cancel_url=cancel_url,
            customer_email=caller.user_id if valid_email(caller.user_id) else None,
        )
        session = self.payments.start_checkout(provider, request)
        self.packages.update(doc["creditPackageId"], {"paymentProvider": provider.code,
                                                      "checkoutSessionId": session.session_id})
        return session.url

    def confirm(self, provider_code: str | None, session_id: str | None) -> dict[str, Any]:
        """Verify a checkout session with its provider and mark its package paid (once); the package."""
        provider, session = self.payments.verify(provider_code, session_id)
        package_id = session.client_reference_id
        if self.get(package_id) is None:
            raise ServerFailure("the checkout session does not pay for a credit package")
        stamp = now_ms()

        def settle(doc: dict[str, Any]) -> dict[str, Any] | None:
            if doc.get("buySuccess"):
                return None  # already paid: confirming again changes nothing
            doc.update(buySuccess=True, buyDate=stamp, lastUpdate=stamp, paymentIntentId=session.payment_intent_id,
                       paymentProvider=provider.code, checkoutSessionId=session.session_id,
                       paymentAmountInCents=session.amount_cents, paymentCurrency=session.currency)
            return doc

        try:
            updated = self.packages.modify(package_id, settle)
        except DomainError:
            raise
        except Exception as e:
            log.exception("recording the payment of credit package %s failed", package_id)
            raise ServerFailure("the payment could not be recorded") from e
        if updated is None:
            raise ServerFailure("the credit package disappeared")
        return updated
