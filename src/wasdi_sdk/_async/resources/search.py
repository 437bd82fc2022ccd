"""Generated from ``wasdi_sdk.resources.search`` by ``make async``: do not edit.

``client.search``: queries against the data providers (/search).

Every /search endpoint fails in style C: a count of -1 and a null list both raise
``EmptyResultError`` (a malformed query, no access to the query's mission, or every provider
failing).  An empty list is a legitimate answer (nothing found) and is returned.  Query strings
are built with ``wasdi_sdk.search_query.build_query`` (the official library's format)."""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Unpack, cast

from ..._resource import RequestOptions
from ...models import DataProviderViewModel, QueryResultViewModel
from ...resources.search import _providers
from ...search_query import BoundingBox, build_query
from .._resource import AsyncAPIResource


class AsyncSearchResource(AsyncAPIResource):
    """Async twin of ``SearchResource``: the same methods, awaited.

    /search."""

    async def count(
        self, query: str, *, providers: str | Sequence[str] | None = None, **options: Unpack[RequestOptions]
    ) -> int:
        """How many products match ``query`` (``providers``: a code, several, or ``AUTO``, the default)."""
        return cast(
            int, await self._call("search.count", query={"query": query, "providers": _providers(providers)}, **options)
        )

    async def query(
        self,
        query: str,
        *,
        providers: str | Sequence[str] | None = None,
        offset: int | str | None = None,
        limit: int | str | None = None,
        sortedby: str | None = None,
        order: str | None = None,
        **options: Unpack[RequestOptions],
    ) -> builtins.list[QueryResultViewModel]:
        """One page of the products matching ``query`` (server defaults: offset 0, limit 25,
        sorted by ``ingestiondate``, ``asc``); each is tagged with the query's platform."""
        return cast(
            builtins.list[QueryResultViewModel],
            await self._call(
                "search.query",
                query={
                    "query": query,
                    "providers": _providers(providers),
                    "offset": offset,
                    "limit": limit,
                    "sortedby": sortedby,
                    "order": order,
                },
                **options,
            ),
        )

    async def list_providers(self, **options: Unpack[RequestOptions]) -> builtins.list[DataProviderViewModel]:
        """The data providers the server is configured with."""
        return cast(builtins.list[DataProviderViewModel], await self._call("search.list_providers", **options))

    async def count_list(
        self, queries: Sequence[str], *, providers: str | Sequence[str] | None = None, **options: Unpack[RequestOptions]
    ) -> int:
        """The summed count of several queries (``EmptyResultError`` for an empty list)."""
        return cast(
            int,
            await self._call(
                "search.count_list", query={"providers": _providers(providers)}, body=list(queries), **options
            ),
        )

    async def query_list(
        self, queries: Sequence[str], *, providers: str | Sequence[str] | None = None, **options: Unpack[RequestOptions]
    ) -> builtins.list[QueryResultViewModel]:
        """Every product matching any of ``queries``: all pages, merged, without duplicates; each
        result's ``provider`` is the requested value (``AUTO`` by default)."""
        return cast(
            builtins.list[QueryResultViewModel],
            await self._call(
                "search.query_list", query={"providers": _providers(providers)}, body=list(queries), **options
            ),
        )

    async def eo_images(
        self,
        platform: str,
        date_from: str | date | datetime | None = None,
        date_to: str | date | datetime | None = None,
        *,
        bbox: BoundingBox | None = None,
        product_type: str | None = None,
        orbit: int | str | None = None,
        sensor_mode: str | None = None,
        cloud_coverage: str | tuple[float, float] | None = None,
        params: Mapping[str, str] | None = None,
        file_name: str | None = None,
        provider: str | None = None,
        **options: Unpack[RequestOptions],
    ) -> builtins.list[QueryResultViewModel]:
        """What the official library's ``searchEOImages`` returns: every product of one query built
        from these arguments (see ``wasdi_sdk.search_query.build_query``), from ``provider`` (AUTO)."""
        text = build_query(
            platform,
            date_from,
            date_to,
            bbox=bbox,
            product_type=product_type,
            orbit=orbit,
            sensor_mode=sensor_mode,
            cloud_coverage=cloud_coverage,
            params=params,
            file_name=file_name,
        )
        return await self.query_list([text], providers=provider or "AUTO", **options)
