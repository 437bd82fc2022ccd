"""Generated from ``wasdi_sdk._base_client`` by ``make async``: do not edit.

Transport, retries and the mapping of the three failure styles to exceptions.

Resource modules stay declarative: they name a catalogue endpoint and pass its arguments;
everything about building the request and reading the answer happens here, once."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import httpx

from .. import _exceptions as exc
from .._base_client import (
    DEFAULT_BASE_URL,
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT,
    LOG_IN_FIRST,
    MAIN_NODE,
    MAX_REMEMBERED,
    RETRY_STATUSES,
    SESSION_HEADER,
    FileInput,
    RawResponse,
    describe_call,
    encode_query_value,
    parse_response,
)
from ..catalog import Auth, BodyKind, Endpoint, ParamType, endpoint
from ..catalog.placement import PROCESS_NODE, WORKSPACE_NODE


class AsyncBaseClient:
    """Async twin of ``BaseClient``: the same methods, awaited.

    Holds the HTTP client and the session; turns catalogue calls into requests and results."""

    def __init__(
        self,
        *,
        base_url: str | None = None,
        session_token: str | None = None,
        timeout: float | httpx.Timeout | None = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
        http_client: httpx.AsyncClient | None = None,
        default_headers: Mapping[str, str] | None = None,
    ) -> None:
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.session_token = session_token
        self.timeout: float | httpx.Timeout = DEFAULT_TIMEOUT if timeout is None else timeout
        self.max_retries = max(0, max_retries)
        self._owns_http_client = http_client is None
        self._http = http_client or httpx.AsyncClient(timeout=self.timeout)
        self._default_headers = dict(default_headers or {})
        self._workspace_urls: dict[str, str] = {}
        self._process_urls: dict[str, str] = {}

    async def workspace_url(self, workspace_id: str) -> str:
        """The base URL of the node that holds ``workspace_id`` (its ``apiUrl``; the configured base URL for the
        main node's workspaces, or when it cannot be read), asked once per workspace."""
        known = self._workspace_urls.get(workspace_id)
        if known is not None:
            return known
        url = self.base_url
        try:
            editor = await self.call("workspaces.get", query={"workspace": workspace_id})
        except exc.WasdiError:
            return url
        api_url = str(getattr(editor, "api_url", "") or "").rstrip("/")
        if api_url and getattr(editor, "node_code", None) not in (None, "", MAIN_NODE):
            url = api_url
        return self._remember(self._workspace_urls, workspace_id, url)

    @staticmethod
    def _remember(memory: dict[str, str], key: str, url: str) -> str:
        memory[key] = url
        if len(memory) > MAX_REMEMBERED:
            memory.pop(next(iter(memory)))
        return url

    async def _base_for(self, ep: Endpoint, query: Mapping[str, Any], body: Any) -> str:
        """Where ``ep`` runs: the node of the workspace or process it names (``catalog.placement``), else the
        configured base URL, as the official library and the web client send them."""
        places = WORKSPACE_NODE.get(ep.name)
        for place in places or ():
            if place.startswith("body:"):
                from ..models import WasdiModel

                wire = body.to_wire() if isinstance(body, WasdiModel) else body
                value = wire.get(place.removeprefix("body:")) if isinstance(wire, dict) else None
            else:
                value = query.get(place)
            if value:
                return await self.workspace_url(str(value))
        process_param = PROCESS_NODE.get(ep.name)
        if process_param and query.get(process_param):
            return self._process_urls.get(str(query[process_param]), self.base_url)
        return self.base_url

    def _learn(self, ep: Endpoint, base: str, result: Any) -> None:
        """Remember the node of the processes a node's answer names, for the calls about them that follow."""
        if base == self.base_url or ep.name not in WORKSPACE_NODE:
            return
        for item in result if isinstance(result, list) else [result]:
            for name in ("process_id", "string_value"):
                value = getattr(item, name, None)
                if isinstance(value, str) and value and (value not in ("DONE", "ERROR")):
                    self._remember(self._process_urls, value, base)

    async def close(self) -> None:
        """Close the HTTP client if this client created it."""
        if self._owns_http_client:
            await self._http.aclose()

    async def build_request(
        self,
        ep: Endpoint,
        *,
        query: Mapping[str, Any] | None = None,
        path: Mapping[str, str] | None = None,
        body: Any = None,
        files: Mapping[str, FileInput] | None = None,
        extra_headers: Mapping[str, str] | None = None,
        extra_query: Mapping[str, Any] | None = None,
        timeout: float | httpx.Timeout | None = None,
        base: str | None = None,
    ) -> httpx.Request:
        """The ``httpx.Request`` for calling ``ep`` with these arguments (at ``base``: where ``ep`` runs)."""
        url_path = ep.path
        for name in ep.path_params:
            value = (path or {}).get(name)
            if not value:
                raise exc.BadRequestError(f"missing path parameter {name}", endpoint=ep.name)
            url_path = url_path.replace("{" + name + "}", quote(str(value), safe=""))
        params: list[tuple[str, str | int | float | bool | None]] = []
        given = dict(query or {})
        for p in ep.query:
            value = given.pop(p.name, None)
            if value is None:
                if p.required:
                    raise exc.BadRequestError(f"missing required parameter {p.name}", endpoint=ep.name)
                continue
            params.append((p.name, encode_query_value(p.type, value)))
        for name, value in {**given, **(extra_query or {})}.items():
            if value is not None:
                params.append((name, encode_query_value(ParamType.STR, value)))
        headers = dict(self._default_headers)
        if self.session_token and ep.auth is not Auth.PUBLIC:
            headers[SESSION_HEADER] = self.session_token
        elif ep.auth is not Auth.PUBLIC and (not self._has_credentials(headers, extra_headers, extra_query)):
            raise exc.NotLoggedInError(
                f"not logged in: {describe_call(ep, dict(query or {}))} needs a session; {LOG_IN_FIRST}",
                endpoint=ep.name,
            )
        content: bytes | None = None
        data: dict[str, str] | None = None
        send_files: dict[str, Any] | None = None
        kind = ep.body.kind
        if kind is BodyKind.JSON or kind is BodyKind.JSON_LIST:
            if body is not None or ep.body.required:
                from ..models import WasdiModel

                payload = body.to_wire() if isinstance(body, WasdiModel) else body
                content = json.dumps(payload).encode()
                headers["Content-Type"] = "application/json"
        elif kind is BodyKind.TEXT:
            if body is not None:
                content = body.encode() if isinstance(body, str) else bytes(body)
                headers["Content-Type"] = "text/plain; charset=utf-8"
        elif kind is BodyKind.FORM:
            data = {str(k): str(v) for k, v in (body or {}).items()}
        elif kind is BodyKind.MULTIPART:
            send_files = dict(files or {})
        headers.update(extra_headers or {})
        base = base or await self._base_for(ep, dict(query or {}), body)
        return self._http.build_request(
            ep.method,
            base + url_path,
            params=params,
            headers=headers,
            content=content,
            data=data,
            files=send_files,
            timeout=self.timeout if timeout is None else timeout,
        )

    def _has_credentials(
        self, headers: Mapping[str, str], extra_headers: Mapping[str, str] | None, extra_query: Mapping[str, Any] | None
    ) -> bool:
        """Whether a request carries a session some other way than ``session_token``: a header the caller set
        (here or on their own ``http_client``), a ``token`` query parameter, or the HTTP client's cookies."""
        given = {name.lower() for name in [*headers, *(extra_headers or {}), *self._http.headers]}
        return SESSION_HEADER in given or bool((extra_query or {}).get("token")) or bool(self._http.cookies)

    async def send(self, ep: Endpoint, request: httpx.Request, *, stream: bool = False) -> httpx.Response:
        """Send with retries where that is safe: connection errors, 408/429/5xx, idempotent calls."""
        attempts = 1 + (
            self.max_retries if ep.retry_safe and request.headers.get("content-type", "").find("multipart") < 0 else 0
        )
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                response = await self._http.send(request, stream=stream)
            except httpx.TimeoutException as e:
                if last:
                    raise exc.APITimeoutError(f"{ep.method} {ep.path} timed out") from e
            except httpx.TransportError as e:
                if last:
                    where = f"{request.url.scheme}://{request.url.netloc.decode()}"
                    raise exc.APIConnectionError(f"cannot reach {where}: {e}") from e
            else:
                if response.status_code not in RETRY_STATUSES or last:
                    return response
                await response.aclose()
            await asyncio.sleep(self._backoff(attempt))
        raise AssertionError("unreachable")

    @staticmethod
    def _backoff(attempt: int) -> float:
        return float(min(8.0, 0.5 * 2**attempt) * (0.75 + random.random() / 2))

    async def call(
        self,
        name: str,
        *,
        query: Mapping[str, Any] | None = None,
        path: Mapping[str, str] | None = None,
        body: Any = None,
        files: Mapping[str, FileInput] | None = None,
        raw: bool = False,
        extra_headers: Mapping[str, str] | None = None,
        extra_query: Mapping[str, Any] | None = None,
        timeout: float | httpx.Timeout | None = None,
    ) -> Any:
        """Call the catalogue endpoint ``name`` and return its parsed result (or raise)."""
        ep = endpoint(name)
        base = await self._base_for(ep, dict(query or {}), body)
        request = await self.build_request(
            ep,
            query=query,
            path=path,
            body=body,
            files=files,
            extra_headers=extra_headers,
            extra_query=extra_query,
            timeout=timeout,
            base=base,
        )
        response = await self.send(ep, request)
        if raw:
            return RawResponse(response, lambda: parse_response(ep, response))
        result = parse_response(ep, response)
        self._learn(ep, base, result)
        return result

    async def stream(
        self,
        name: str,
        *,
        query: Mapping[str, Any] | None = None,
        extra_headers: Mapping[str, str] | None = None,
        extra_query: Mapping[str, Any] | None = None,
        timeout: float | httpx.Timeout | None = None,
    ) -> httpx.Response:
        """Open a streamed download; the caller must close the response.  Failures raise."""
        ep = endpoint(name)
        request = await self.build_request(
            ep, query=query, extra_headers=extra_headers, extra_query=extra_query, timeout=timeout
        )
        response = await self.send(ep, request, stream=True)
        if response.status_code != 200:
            await response.aread()
            await response.aclose()
            parse_response(ep, response)
        return response
