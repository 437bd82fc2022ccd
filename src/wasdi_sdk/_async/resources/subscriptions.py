"""Generated from ``wasdi_sdk.resources.subscriptions`` by ``make async``: do not edit.

``client.subscriptions``: subscriptions, their sharing and purchase (/subscriptions)."""

from __future__ import annotations

import builtins
from typing import Unpack, cast

from ..._resource import RequestOptions
from ...models import (
    PrimitiveResult,
    SubscriptionListViewModel,
    SubscriptionSharingViewModel,
    SubscriptionTypeViewModel,
    SubscriptionViewModel,
    SuccessResponse,
)
from ...resources.subscriptions import DateInput, date_text
from .._resource import AsyncAPIResource


class AsyncSubscriptionsResource(AsyncAPIResource):
    """Async twin of ``SubscriptionsResource``: the same methods, awaited.

    /subscriptions.

    Buying a subscription: ``create`` it (unpaid unless an admin says otherwise), get the checkout
    URL of a payment provider with ``payment_url`` (``payprov``: ``stripe`` on the WASDI cloud, a
    self-hosted server may offer ``local``) and open it in a browser; the provider calls
    ``confirm_payment`` and the subscription becomes valid.  Dates are ISO-8601 strings
    (``yyyy-MM-ddTHH:mm:ss.SSSZ``)."""

    async def get_active(self, **options: Unpack[RequestOptions]) -> SubscriptionListViewModel:
        """The user's active subscription, or else their best valid one; ``NotFoundError`` without one."""
        return cast(SubscriptionListViewModel, await self._call("subscriptions.get_active", **options))

    async def list(
        self, *, valid: bool | None = None, **options: Unpack[RequestOptions]
    ) -> builtins.list[SubscriptionListViewModel]:
        """Subscriptions the user owns, has through an organization, or that are shared with them
        (``reason`` says which); ``valid=True`` keeps the paid, current ones."""
        return cast(
            builtins.list[SubscriptionListViewModel],
            await self._call("subscriptions.list", query={"valid": valid}, **options),
        )

    async def count(self, **options: Unpack[RequestOptions]) -> PrimitiveResult:
        """The number of subscriptions, in ``int_value`` (admin only)."""
        return cast(PrimitiveResult, await self._call("subscriptions.count", **options))

    async def get(self, subscription: str, **options: Unpack[RequestOptions]) -> SubscriptionViewModel:
        """One subscription, with ``read_only`` for the caller."""
        return cast(
            SubscriptionViewModel,
            await self._call("subscriptions.get", query={"subscription": subscription}, **options),
        )

    async def create(
        self,
        subscription: SubscriptionViewModel | None = None,
        *,
        type_id: str | None = None,
        name: str | None = None,
        description: str | None = None,
        start_date: DateInput | None = None,
        end_date: DateInput | None = None,
        duration_days: int | None = None,
        user_id: str | None = None,
        organization_id: str | None = None,
        buy_success: bool | None = None,
        buy_date: DateInput | None = None,
        **options: Unpack[RequestOptions],
    ) -> SuccessResponse:
        """Create a subscription (and a project of the same name); ``message`` is its id.

        ``type_id`` is one of ``list_types()``.  A missing start is now and the end follows the type.
        For non-admins the subscription is theirs, unpaid, and its end always follows the type;
        admins may set ``user_id``, dates, ``duration_days``, ``buy_success`` and ``buy_date``.  A name
        the owner already uses gets a ``(n)`` suffix.
        """
        if subscription is None:
            subscription = SubscriptionViewModel(
                type_id=type_id,
                name=name,
                description=description,
                start_date=date_text(start_date),
                end_date=date_text(end_date),
                duration_days=duration_days,
                user_id=user_id,
                organization_id=organization_id,
                buy_success=buy_success,
                buy_date=date_text(buy_date),
            )
        return cast(SuccessResponse, await self._call("subscriptions.create", body=subscription, **options))

    async def update(
        self,
        subscription: SubscriptionViewModel | None = None,
        *,
        subscription_id: str | None = None,
        name: str | None = None,
        description: str | None = None,
        type_id: str | None = None,
        start_date: DateInput | None = None,
        end_date: DateInput | None = None,
        duration_days: int | None = None,
        organization_id: str | None = None,
        buy_success: bool | None = None,
        buy_date: DateInput | None = None,
        **options: Unpack[RequestOptions],
    ) -> SuccessResponse:
        """Change a subscription (write permission); fields left ``None`` keep their value
        (``organization_id=""`` detaches it).  Non-admins cannot change ``buy_success``, nor the type
        or dates of a paid subscription."""
        if subscription is None:
            subscription = SubscriptionViewModel(
                subscription_id=subscription_id,
                name=name,
                description=description,
                type_id=type_id,
                start_date=date_text(start_date),
                end_date=date_text(end_date),
                duration_days=duration_days,
                organization_id=organization_id,
                buy_success=buy_success,
                buy_date=date_text(buy_date),
            )
        return cast(SuccessResponse, await self._call("subscriptions.update", body=subscription, **options))

    async def delete(self, subscription: str, **options: Unpack[RequestOptions]) -> SuccessResponse:
        """Delete a subscription with its sharings and projects (owner or admin: ``Done``), or remove
        your own sharing of it (``Sharing removed``)."""
        return cast(
            SuccessResponse, await self._call("subscriptions.delete", query={"subscription": subscription}, **options)
        )

    async def list_types(self, **options: Unpack[RequestOptions]) -> builtins.list[SubscriptionTypeViewModel]:
        """The subscription types on sale."""
        return cast(builtins.list[SubscriptionTypeViewModel], await self._call("subscriptions.list_types", **options))

    async def share_add(
        self, *, subscription: str, user_id: str, rights: str | None = None, **options: Unpack[RequestOptions]
    ) -> SuccessResponse:
        """Share with a user (``rights``: ``read``, the default, or ``write``); ``message`` is ``Done``
        or ``Already Shared``."""
        return cast(
            SuccessResponse,
            await self._call(
                "subscriptions.share_add",
                query={"subscription": subscription, "userId": user_id, "rights": rights},
                **options,
            ),
        )

    async def share_list(
        self, subscription: str, **options: Unpack[RequestOptions]
    ) -> builtins.list[SubscriptionSharingViewModel]:
        """Users a subscription is shared with (an empty list is a valid answer)."""
        return cast(
            builtins.list[SubscriptionSharingViewModel],
            await self._call("subscriptions.share_list", query={"subscription": subscription}, **options),
        )

    async def share_delete(
        self, *, subscription: str, user_id: str, **options: Unpack[RequestOptions]
    ) -> SuccessResponse:
        """Remove a user's sharing (owner, writers, admins; anyone may remove their own).  The owner
        cannot be removed."""
        return cast(
            SuccessResponse,
            await self._call(
                "subscriptions.share_delete", query={"subscription": subscription, "userId": user_id}, **options
            ),
        )

    async def payment_url(
        self, subscription: str, *, payprov: str, workspace: str | None = None, **options: Unpack[RequestOptions]
    ) -> SuccessResponse:
        """The checkout URL (in ``message``) to pay for an unpaid subscription through ``payprov``.

        With ``workspace``, the confirmation is also announced to that workspace's message channel.
        """
        return cast(
            SuccessResponse,
            await self._call(
                "subscriptions.payment_url",
                path={"payprov": payprov},
                query={"subscription": subscription, "workspace": workspace},
                **options,
            ),
        )

    async def confirm_payment(
        self, checkout_session_id: str, *, payprov: str, **options: Unpack[RequestOptions]
    ) -> None:
        """The payment provider's callback (needs no session): verify the checkout and mark the
        subscription paid."""
        await self._call(
            "subscriptions.confirm_payment",
            path={"payprov": payprov, "CHECKOUT_SESSION_ID": checkout_session_id},
            **options,
        )

    async def list_all(
        self,
        *,
        userfilter: str | None = None,
        idfilter: str | None = None,
        namefilter: str | None = None,
        statusfilter: str | None = None,
        offset: int | None = None,
        limit: int | None = None,
        sortby: str | None = None,
        order: str | None = None,
        **options: Unpack[RequestOptions],
    ) -> builtins.list[SubscriptionListViewModel]:
        """Every subscription, filtered, sorted and paged (admin only).

        Filters are case-insensitive substrings of the owner, id and name; ``statusfilter`` is
        ``valid``, ``expired``, ``future``, ``paid`` or ``unpaid``; ``sortby`` ``name`` (default),
        ``userId``, ``startDate``, ``endDate``, ``buyDate``, ``typeId`` or ``subscriptionId``;
        ``order`` ``asc`` (default) or ``desc``; ``offset`` 0 and ``limit`` 10 by default.
        """
        query = {
            "userfilter": userfilter,
            "idfilter": idfilter,
            "namefilter": namefilter,
            "statusfilter": statusfilter,
            "offset": offset,
            "limit": limit,
            "sortby": sortby,
            "order": order,
        }
        return cast(
            builtins.list[SubscriptionListViewModel], await self._call("subscriptions.list_all", query=query, **options)
        )
