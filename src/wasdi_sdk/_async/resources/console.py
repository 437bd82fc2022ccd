"""Generated from ``wasdi_sdk.resources.console`` by ``make async``: do not edit.

``client.console``: the caller's notebook (JupyterLab) on a workspace (/console, the web client's calls)."""

from __future__ import annotations

from typing import Unpack, cast

from ..._resource import RequestOptions
from ...models import PrimitiveResult
from .._resource import AsyncAPIResource


class AsyncConsoleResource(AsyncAPIResource):
    """Async twin of ``ConsoleResource``: the same methods, awaited.

    /console: a JupyterLab of the caller on a workspace, with the official library set up for it."""

    async def ready(self, workspace_id: str, **options: Unpack[RequestOptions]) -> PrimitiveResult:
        """Whether the caller's notebook on the workspace is up: ``bool_value``, with its address (under the
        server's own, ``<server>/notebook/<workspaceId>/lab?token=…``) in ``string_value``; when it is not, a
        sentence saying why."""
        return cast(PrimitiveResult, await self._call("console.ready", query={"workspaceId": workspace_id}, **options))

    async def create(self, workspace_id: str, **options: Unpack[RequestOptions]) -> PrimitiveResult:
        """Start (or find) the caller's notebook on the workspace: ``bool_value`` true, and in ``string_value``
        its address once it is up, else a sentence (it is starting: ask ``ready`` until it is).  A server that
        cannot run notebooks refuses with a ``ServerError`` of status 501 saying what to install."""
        return cast(PrimitiveResult, await self._call("console.create", query={"workspaceId": workspace_id}, **options))

    async def terminate(self, workspace_id: str, **options: Unpack[RequestOptions]) -> PrimitiveResult:
        """Stop the caller's notebook on the workspace (its kernels end with it; the files it wrote stay):
        ``bool_value`` true, with a sentence in ``string_value`` saying whether one was running."""
        return cast(
            PrimitiveResult, await self._call("console.terminate", query={"workspaceId": workspace_id}, **options)
        )
