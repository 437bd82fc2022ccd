"""Generated from ``wasdi_sdk.resources.console`` by ``make async``: do not edit.

``client.console``: the notebook console of a workspace (/console, the web client's calls)."""

from __future__ import annotations

from typing import Unpack, cast

from ..._resource import RequestOptions
from ...models import PrimitiveResult
from .._resource import AsyncAPIResource


class AsyncConsoleResource(AsyncAPIResource):
    """Async twin of ``ConsoleResource``: the same methods, awaited.

    /console.  Servers without notebook consoles (this toolkit's) say so."""

    async def ready(self, workspace_id: str, **options: Unpack[RequestOptions]) -> PrimitiveResult:
        """Whether the workspace's console is ready: ``bool_value`` (with the console's URL in ``string_value``
        on servers that have consoles; a sentence saying there is none on this toolkit's)."""
        return cast(PrimitiveResult, await self._call("console.ready", query={"workspaceId": workspace_id}, **options))

    async def create(self, workspace_id: str, **options: Unpack[RequestOptions]) -> PrimitiveResult:
        """Start the workspace's console.  Servers without consoles refuse with a ``ServerError`` of status 501."""
        return cast(PrimitiveResult, await self._call("console.create", query={"workspaceId": workspace_id}, **options))
