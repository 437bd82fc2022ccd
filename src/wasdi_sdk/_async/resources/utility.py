"""Generated from ``wasdi_sdk.resources.utility`` by ``make async``: do not edit.

``client.utility``: the /wasdi health check and feedback."""

from __future__ import annotations

from typing import Unpack, cast

from ..._resource import RequestOptions
from ...models import FeedbackViewModel, PrimitiveResult, StringResult
from .._resource import AsyncAPIResource


class AsyncUtilityResource(AsyncAPIResource):
    """Async twin of ``UtilityResource``: the same methods, awaited.

    /wasdi."""

    async def hello(self, **options: Unpack[RequestOptions]) -> StringResult:
        """Health check; ``string_value`` holds the server's greeting."""
        return cast(StringResult, await self._call("utility.hello", **options))

    async def feedback(self, *, title: str, message: str, **options: Unpack[RequestOptions]) -> PrimitiveResult:
        """Send feedback to the operators by e-mail."""
        return cast(
            PrimitiveResult,
            await self._call("utility.feedback", body=FeedbackViewModel(title=title, message=message), **options),
        )
