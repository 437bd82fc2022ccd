"""Payment providers, chosen by the ``{payprov}`` path segment, and the prices they charge.

``services.payments`` is a ``PaymentProviders``:

- ``get(code)``: the provider behind ``{payprov}`` (``local`` or ``stripe``); ``BadRequest`` when
  the code is unknown or that provider is not enabled and configured;
- ``price(product_code)``: ``(amount in cents, currency)`` of a subscription type or a credit
  package type, from the ``[payments]`` settings;
- ``checkout_urls(base_url, group, code, reference)``: the success and cancel URLs a checkout for
  ``/<group>/<code>/confirmation/{CHECKOUT_SESSION_ID}`` should carry.

Which providers are enabled: ``settings.payments.providers``; unset, ``local`` alone, or ``stripe``
alone once a Stripe key is configured (the simulated ``local`` checkout lets any user mark their
own purchase paid, so it must not sit beside real payments unless an operator asks for both).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from urllib.parse import quote

from ...errors import BadRequest, ServerFailure, Unauthorized
from ...settings import PaymentSettings
from ...store import Collection
from .base import CheckoutRequest, CheckoutSession, PaymentError, PaymentProvider
from .local import LocalPaymentProvider
from .stripe import StripePaymentProvider

log = logging.getLogger("wasdi_server.payments")

SESSION_PLACEHOLDER = "{CHECKOUT_SESSION_ID}"
UNSUPPORTED = "unsupported payment provider"

__all__ = [
    "SESSION_PLACEHOLDER",
    "CheckoutRequest",
    "CheckoutSession",
    "LocalPaymentProvider",
    "PaymentError",
    "PaymentProvider",
    "PaymentProviders",
    "StripePaymentProvider",
]


class PaymentProviders:
    """The enabled payment providers by code, and the price list."""

    def __init__(self, settings: PaymentSettings, checkout_sessions: Collection,
                 providers: Mapping[str, PaymentProvider] | None = None) -> None:
        self.settings = settings
        if providers is None:
            built: dict[str, PaymentProvider] = {}
            for code in settings.enabled:
                if code == LocalPaymentProvider.code:
                    built[code] = LocalPaymentProvider(checkout_sessions)
                elif code == StripePaymentProvider.code and settings.stripe_api_key:
                    built[code] = StripePaymentProvider(settings.stripe_api_key, settings.stripe_api_base,
                                                        settings.stripe_timeout_seconds)
            providers = built
        self.providers = dict(providers)

    @property
    def codes(self) -> list[str]:
        """Codes of the usable providers."""
        return sorted(self.providers)

    def get(self, code: str | None) -> PaymentProvider:
        """The provider for ``{payprov}``; ``BadRequest`` when unknown, disabled or not configured."""
        provider = self.providers.get((code or "").strip().lower())
        if provider is None:
            raise BadRequest(UNSUPPORTED)
        return provider

    def price(self, product_code: str | None) -> tuple[int, str]:
        """``(cents, currency)`` of a subscription type or credit package type; ``BadRequest`` without one."""
        cents = self.settings.prices.get(product_code or "")
        if cents is None or int(cents) < 0:
            raise BadRequest(f"unsupported product {str(product_code)[:60]!r}")
        return int(cents), self.settings.currency.upper()

    def start_checkout(self, provider: PaymentProvider, request: CheckoutRequest) -> CheckoutSession:
        """Open a checkout with the provider; its failure (or a session without URL) is a 500."""
        try:
            session = provider.create_checkout(request)
        except PaymentError as e:
            log.warning("checkout for %s failed: %s", request.client_reference_id, e)
            raise ServerFailure(f"the payment provider could not start the checkout: {e}") from e
        if not session.url:
            raise ServerFailure("the payment provider gave no checkout URL")
        return session

    def verify(self, code: str | None, session_id: str | None) -> tuple[PaymentProvider, CheckoutSession]:
        """The paid checkout session a confirmation callback names, under the callbacks' rules.

        The contract gives the three callbacks 200, 401 and 500: 401 for a missing id, an id the provider
        does not know and a provider this server does not know (the caller's mistake: nothing vouches for
        the call, never a 500), and 500 for a checkout that fails verification with the provider (not
        paid, provider unreachable).
        """
        checkout = (session_id or "").strip()
        if not checkout or len(checkout) > 1000:
            raise Unauthorized("missing checkout session id")
        try:
            provider = self.get(code)
        except BadRequest as e:
            raise Unauthorized(e.message) from e
        try:
            session = provider.retrieve(checkout)
        except PaymentError as e:
            log.warning("verifying checkout session %s failed: %s", checkout[:100], e)
            raise ServerFailure("the payment could not be verified") from e
        if session is None:
            raise Unauthorized("unknown checkout session")
        if not session.paid:
            raise ServerFailure("the checkout session is not paid")
        return provider, session

    @staticmethod
    def checkout_urls(base_url: str, group: str, code: str, reference: str) -> tuple[str, str]:
        """Success and cancel URLs for a checkout paid through ``/<group>/<code>/...``.

        The success URL is the contract's confirmation callback with the literal
        ``{CHECKOUT_SESSION_ID}``, which the provider replaces; the cancel URL is this server's
        small "payment canceled" page.
        """
        base = base_url.rstrip("/")
        provider = quote(code, safe="")
        success = f"{base}/{group}/{provider}/confirmation/{SESSION_PLACEHOLDER}"
        cancel = f"{base}/payments/{provider}/canceled/{quote(reference, safe='')}"
        return success, cancel
