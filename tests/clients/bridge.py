"""An async httpx transport that serves requests with a WSGI app in worker threads.

``httpx.ASGITransport`` cannot host a WSGI app, and ``httpx.WSGITransport`` is sync only.  This bridge
hands each request to ``httpx.WSGITransport`` in a worker thread (``asyncio.to_thread``), so the async
client drives the very app object, data directory and fixtures the sync client drives in-process, with
no socket and no server of its own.  The response body comes back chunk by chunk, each chunk read from
the app's iterable in a worker thread, so downloads stream and the event loop never blocks on the app.
The request body is read (from the client's async stream, which reports upload progress as it goes)
before the app sees it: the WSGI app wants a file to read, and the tests of constant-memory streaming
run against a real server.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx

_END: Any = object()  # what next() gives at the end of the body


class _ThreadedBody(httpx.AsyncByteStream):
    """The app's response iterable, each chunk pulled in a worker thread."""

    def __init__(self, response: httpx.Response) -> None:
        self._response = response
        self._chunks: Iterator[bytes] = response.iter_raw()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            chunk = await asyncio.to_thread(next, self._chunks, _END)
            if chunk is _END:
                return
            yield chunk

    async def aclose(self) -> None:
        await asyncio.to_thread(self._response.close)


class AsyncWSGIBridge(httpx.AsyncBaseTransport):
    """``httpx.AsyncClient(transport=AsyncWSGIBridge(app))``: the async client on a WSGI app, in-process."""

    def __init__(self, app: Any) -> None:
        self._wsgi = httpx.WSGITransport(app=app)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        sync_request = httpx.Request(request.method, request.url, headers=request.headers, content=body,
                                     extensions=request.extensions)
        response = await asyncio.to_thread(self._wsgi.handle_request, sync_request)
        return httpx.Response(response.status_code, headers=response.headers, stream=_ThreadedBody(response),
                              extensions=response.extensions)
