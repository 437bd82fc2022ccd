"""Generated from ``wasdi_sdk._resource`` by ``make async``: do not edit.

The base of the per-group resource classes (``client.workspaces``, ``client.auth`` ...)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, Unpack

from .._resource import RequestOptions
from ._base_client import AsyncBaseClient


class AsyncAPIResource:
    """Async twin of ``APIResource``: the same methods, awaited.

    One group of endpoints.  Methods are thin: they name an endpoint and pass arguments."""

    def __init__(self, client: AsyncBaseClient, *, raw: bool = False) -> None:
        self._client = client
        self._raw = raw

    @property
    def with_raw_response(self) -> Self:
        """The same methods, returning a ``RawResponse`` (status, headers, ``parse()``) instead of the result."""
        return type(self)(self._client, raw=True)

    async def _call(
        self,
        name: str,
        *,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        path: Mapping[str, str] | None = None,
        files: Mapping[str, Any] | None = None,
        **options: Unpack[RequestOptions],
    ) -> Any:
        return await self._client.call(name, query=query, body=body, path=path, files=files, raw=self._raw, **options)
