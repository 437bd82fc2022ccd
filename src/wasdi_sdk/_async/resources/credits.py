"""Generated from ``wasdi_sdk.resources.credits`` by ``make async``: do not edit.

``client.credits``: credit packages and their purchase (/credits)."""

from __future__ import annotations

import builtins
from typing import Unpack, cast

from ..._resource import RequestOptions
from ...models import CreditsPackageViewModel, SubscriptionTypeViewModel, SuccessResponse
from .._resource import AsyncAPIResource


class AsyncCreditsResource(AsyncAPIResource):
    """Async twin of ``CreditsResource``: the same methods, awaited.

    /credits.

    Buying credits takes three calls: ``create`` a package (unpaid), ask ``payment_url`` for the
    checkout of a payment provider (``payprov``: ``stripe`` on the WASDI cloud; a self-hosted
    server may offer ``local``), and open that URL in a browser.  The provider then calls
    ``confirm_payment`` and the package counts in ``total``."""

    async def list_types(self, **options: Unpack[RequestOptions]) -> builtins.list[SubscriptionTypeViewModel]:
        """The credit package types on sale (``Fifty``, ``OneHundred``); needs no session."""
        return cast(builtins.list[SubscriptionTypeViewModel], await self._call("credits.list_types", **options))

    async def total(self, **options: Unpack[RequestOptions]) -> float:
        """Credits remaining in the user's paid packages."""
        return float(cast(float, await self._call("credits.total", **options)))

    async def list(
        self, *, ascending_order: bool | None = None, **options: Unpack[RequestOptions]
    ) -> builtins.list[CreditsPackageViewModel]:
        """The user's credit packages, newest first unless ``ascending_order`` (an empty list is a valid answer)."""
        return cast(
            builtins.list[CreditsPackageViewModel],
            await self._call("credits.list", query={"ascendingOrder": ascending_order}, **options),
        )

    async def create(
        self,
        package: CreditsPackageViewModel | None = None,
        *,
        type: str | None = None,
        name: str | None = None,
        description: str | None = None,
        **options: Unpack[RequestOptions],
    ) -> SuccessResponse:
        """Create a credit package; ``message`` is its id.

        Pass a ``CreditsPackageViewModel``, or ``type`` (``Fifty`` or ``OneHundred``) with an optional
        ``name`` and ``description``.  The package is unpaid (only an admin may create it paid with
        ``buy_success=True``); a name the user already has gets a ``(n)`` suffix.
        ``BadRequestError`` for an unknown type.
        """
        if package is None:
            package = CreditsPackageViewModel(type=type, name=name, description=description)
        return cast(SuccessResponse, await self._call("credits.create", body=package, **options))

    async def payment_url(
        self, credit_package_id: str, *, payprov: str, **options: Unpack[RequestOptions]
    ) -> SuccessResponse:
        """The checkout URL (in ``message``) to pay for one of the user's packages through ``payprov``.

        ``BadRequestError`` for an unknown or paid package or an unsupported provider,
        ``PermissionDeniedError`` for another user's package.
        """
        return cast(
            SuccessResponse,
            await self._call(
                "credits.payment_url",
                path={"payprov": payprov},
                query={"creditPackageId": credit_package_id},
                **options,
            ),
        )

    async def confirm_payment(
        self, checkout_session_id: str, *, payprov: str, **options: Unpack[RequestOptions]
    ) -> None:
        """The payment provider's callback: verify the checkout session and mark its package paid.

        Browsers reach it by the provider's redirect; call it yourself only to re-check a session.
        Confirming again changes nothing.  ``AuthenticationError`` when the session proves no payment.
        """
        await self._call(
            "credits.confirm_payment", path={"payprov": payprov, "CHECKOUT_SESSION_ID": checkout_session_id}, **options
        )
