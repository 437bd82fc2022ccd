"""The base of the per-group resource classes (``client.workspaces``, ``client.auth`` ...)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypedDict, Unpack

import httpx

from ._base_client import BaseClient


class RequestOptions(TypedDict, total=False):
    """Escape hatches every method accepts."""

    extra_headers: Mapping[str, str]
    """Headers added to the request."""
    extra_query: Mapping[str, Any]
    """Query parameters added to the request (e.g. ones a newer server understands)."""
    timeout: float | httpx.Timeout
    """Overrides the client's timeout for this call."""


class APIResource:
    """One group of endpoints.  Methods are thin: they name an endpoint and pass arguments."""

    def __init__(self, client: BaseClient, *, raw: bool = False) -> None:
        self._client = client
        self._raw = raw

    @property
    def with_raw_response(self) -> Self:
        """The same methods, returning a ``RawResponse`` (status, headers, ``parse()``) instead of the result."""
        return type(self)(self._client, raw=True)

    def _call(self, name: str, *, query: Mapping[str, Any] | None = None, body: Any = None,
              path: Mapping[str, str] | None = None, files: Mapping[str, Any] | None = None,
              **options: Unpack[RequestOptions]) -> Any:
        return self._client.call(name, query=query, body=body, path=path, files=files, raw=self._raw, **options)
