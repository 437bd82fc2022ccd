"""Generated from ``wasdi_sdk.resources.processor_store`` by ``make async``: do not edit.

The app-store, sharing and payment methods of ``client.processors`` (/processors)."""

from __future__ import annotations

import builtins
from typing import Any, Unpack, cast

from ..._lookup import find_one
from ..._resource import RequestOptions
from ...models import (
    AppDetailViewModel,
    AppFilterViewModel,
    AppListViewModel,
    AppPaymentViewModel,
    DeployedProcessorViewModel,
    PrimitiveResult,
    ProcessorSharingViewModel,
    SuccessResponse,
)
from ...resources.processor_store import encode_params
from .._resource import AsyncAPIResource


class AsyncProcessorStoreMethods(AsyncAPIResource):
    """Async twin of ``ProcessorStoreMethods``: the same methods, awaited.

    Listing apps, the store, store details, sharing and paying for apps."""

    async def find(self, name: str, **options: Unpack[RequestOptions]) -> DeployedProcessorViewModel:
        """The app named ``name`` among those the user may run (``NotFoundError`` naming it when there is none)."""
        listed = await self.list(**options)
        return find_one(
            listed,
            name,
            name_of=lambda a: a.processor_name,
            id_of=lambda a: a.processor_id,
            noun="app",
            call=f"client.apps.find({name!r})",
        )

    async def list(self, **options: Unpack[RequestOptions]) -> builtins.list[DeployedProcessorViewModel]:
        """Apps the user owns, that are shared with them, or that are public (an empty list is a valid answer)."""
        return cast(builtins.list[DeployedProcessorViewModel], await self._call("processors.list", **options))

    async def get(
        self, *, processor_id: str | None = None, name: str | None = None, **options: Unpack[RequestOptions]
    ) -> DeployedProcessorViewModel:
        """One app by id or name.  ``EmptyResultError`` when it is unknown or not visible to the user."""
        return cast(
            DeployedProcessorViewModel,
            await self._call("processors.get", query={"processorId": processor_id, "name": name}, **options),
        )

    async def market_list(
        self,
        filter: AppFilterViewModel | None = None,
        *,
        categories: builtins.list[str] | None = None,
        publishers: builtins.list[str] | None = None,
        name: str | None = None,
        score: int | None = None,
        min_price: int | None = None,
        max_price: int | None = None,
        items_per_page: int | None = None,
        page: int | None = None,
        order_by: str | None = None,
        order_direction: int | None = None,
        **options: Unpack[RequestOptions],
    ) -> builtins.list[AppListViewModel]:
        """A page of the apps in the store, filtered and sorted.

        Pass an ``AppFilterViewModel`` or its members: ``categories`` (ids, any of), ``publishers``
        (user ids), ``name`` (part of the name), ``score`` (minimum average vote), ``min_price`` /
        ``max_price`` (on-demand price; negative is no bound), ``order_by`` (``name``: the title; ``friendlyName``,
        ``score``, ``votes``, ``price``, ``date``), ``order_direction`` (1 or -1), ``page`` and
        ``items_per_page``.  An empty list is a valid answer (also for a filter the server refuses).
        """
        if filter is None:
            filter = AppFilterViewModel(
                categories=categories,
                publishers=publishers,
                name=name,
                score=score,
                min_price=min_price,
                max_price=max_price,
                items_per_page=items_per_page,
                page=page,
                order_by=order_by,
                order_direction=order_direction,
            )
        return cast(builtins.list[AppListViewModel], await self._call("processors.market_list", body=filter, **options))

    async def market_detail(self, processorname: str, **options: Unpack[RequestOptions]) -> AppDetailViewModel:
        """The store page of an app (by name): pricing, categories, gallery, score and counts."""
        return cast(
            AppDetailViewModel,
            await self._call("processors.market_detail", query={"processorname": processorname}, **options),
        )

    async def update_details(
        self, details: AppDetailViewModel, *, processor_id: str, **options: Unpack[RequestOptions]
    ) -> None:
        """Change an app's store page (write rights): friendly name, links, long description, prices,
        area parameter, categories, ``show_in_store``.  What ``details`` leaves ``None`` stays."""
        await self._call("processors.update_details", query={"processorId": processor_id}, body=details, **options)

    async def share_add(
        self, *, processor_id: str, user_id: str, rights: str | None = None, **options: Unpack[RequestOptions]
    ) -> PrimitiveResult:
        """Share an app; ``rights`` is ``read`` (default) or ``write``.

        Sharing twice is an error (``BadRequestError`` "Already shared").
        """
        return cast(
            PrimitiveResult,
            await self._call(
                "processors.share_add",
                query={"processorId": processor_id, "userId": user_id, "rights": rights},
                **options,
            ),
        )

    async def share_list(
        self, processor_id: str, **options: Unpack[RequestOptions]
    ) -> builtins.list[ProcessorSharingViewModel]:
        """Users an app is shared with.  ``EmptyResultError`` (null) when it is unknown or not accessible."""
        return cast(
            builtins.list[ProcessorSharingViewModel],
            await self._call("processors.share_list", query={"processorId": processor_id}, **options),
        )

    async def share_delete(
        self, *, processor_id: str, user_id: str, **options: Unpack[RequestOptions]
    ) -> PrimitiveResult:
        """Remove a user's sharing of an app (the user themself, a writer, the owner or an admin)."""
        return cast(
            PrimitiveResult,
            await self._call(
                "processors.share_delete", query={"processorId": processor_id, "userId": user_id}, **options
            ),
        )

    async def add_app_payment(
        self,
        payment: AppPaymentViewModel | None = None,
        *,
        processor_id: str | None = None,
        payment_name: str | None = None,
        buy_date: str | None = None,
        **options: Unpack[RequestOptions],
    ) -> SuccessResponse:
        """Record an unpaid purchase of one run of an on-demand priced app; ``message`` is its id.

        ``buy_date`` is ISO text (``2026-01-31T10:00:00.000Z``).  ``NotFoundError`` for an unknown app,
        ``BadRequestError`` for a free one.
        """
        if payment is None:
            payment = AppPaymentViewModel(processor_id=processor_id, payment_name=payment_name, buy_date=buy_date)
        return cast(SuccessResponse, await self._call("processors.add_app_payment", body=payment, **options))

    async def payment_url(
        self, *, processor: str, app_payment: str, payprov: str, **options: Unpack[RequestOptions]
    ) -> SuccessResponse:
        """The checkout URL (in ``message``) to pay for one of the user's app payments through ``payprov``."""
        return cast(
            SuccessResponse,
            await self._call(
                "processors.payment_url",
                path={"payprov": payprov},
                query={"processor": processor, "appPayment": app_payment},
                **options,
            ),
        )

    async def confirm_payment(
        self, checkout_session_id: str, *, payprov: str, **options: Unpack[RequestOptions]
    ) -> str:
        """The payment provider's callback: mark the app payment paid; a page that closes the window.

        ``EmptyResultError`` when the checkout session proves no payment.
        """
        return cast(
            str,
            await self._call(
                "processors.confirm_payment",
                path={"payprov": payprov, "CHECKOUT_SESSION_ID": checkout_session_id},
                **options,
            ),
        )

    async def is_app_purchased(self, processor: str, **options: Unpack[RequestOptions]) -> bool:
        """Whether the user can run the app now: free, owner, shared, or paid and not yet used."""
        return bool(await self._call("processors.is_app_purchased", query={"processor": processor}, **options))

    async def get_app_payment(self, app_payment: str, **options: Unpack[RequestOptions]) -> AppPaymentViewModel:
        """One of the user's app payments.  ``NotFoundError`` when unknown (or another user's)."""
        return cast(
            AppPaymentViewModel,
            await self._call("processors.get_app_payment", query={"appPayment": app_payment}, **options),
        )

    async def credits_for_run(
        self, params: str | dict[str, Any], *, processor_id: str, **options: Unpack[RequestOptions]
    ) -> float:
        """Credits a run of an area-priced app with ``params`` (a dict, or encoded JSON) would cost the user."""
        return float(
            cast(
                float,
                await self._call(
                    "processors.credits_for_run",
                    query={"processorId": processor_id},
                    body=encode_params(params),
                    **options,
                ),
            )
        )
