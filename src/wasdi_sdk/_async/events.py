"""The async twins of ``client.events`` and of ``ProcessUpdates`` (what wakes ``await client.processes.wait``),
written by hand (``HAND_WRITTEN`` in ``tools/gen_async.py``).

The same codec (``events.stomp``), conversation (``events.protocol``), models and rules (``events.stream``,
``resources.events``) as the sync one; only the transport differs: ``websockets``' asyncio client.

    async with await client.events.listen(ws_id, timeout=600) as events:
        async for message in events:
            print(message.message_code, message.text())
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Collection
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, Unpack

import httpx

from .. import _exceptions as exc
from .._resource import RequestOptions
from ..events.broker import address_from, address_request, named_address
from ..events.protocol import BrokerError, ClientProtocol, Connected, Event, Receipt
from ..events.stream import (
    CONNECT_TIMEOUT,
    FIRST_RETRY,
    MAX_MESSAGE_BYTES,
    EventsUnavailableError,
    WorkspaceStreamState,
    credentials,
    refusal,
    retry_delay,
)
from ..events.updates import PROCESS_UPDATES
from ..models.events import BrokerAddress, ProcessUpdateMessage, WorkspaceMessage
from ._resource import AsyncAPIResource

if TYPE_CHECKING:
    from ._base_client import AsyncBaseClient

log = logging.getLogger("wasdi_sdk")


class AsyncEventStream(WorkspaceStreamState):
    """Async twin of ``EventStream``: ``await get(timeout)``, ``async for``, ``async with``."""

    def __init__(self, address: BrokerAddress, workspace_id: str, *, session_token: str | None = None,
                 codes: Collection[str] | None = None, timeout: float | None = None, reconnect: bool = True,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(address, workspace_id, session_token=session_token, codes=codes, reconnect=reconnect,
                         headers=headers)
        self._timeout = timeout  # the deadline is taken on the event loop's clock, at open

    async def open(self) -> Self:
        """Connect and subscribe (``listen`` does it before handing the stream over)."""
        loop = asyncio.get_running_loop()
        if self._timeout is not None and self._deadline is None:
            self._deadline = loop.time() + self._timeout
        await self._open()
        return self

    async def _open(self) -> None:
        from websockets.asyncio.client import connect

        login, passcode = credentials(self.address, self._session_token)
        try:
            socket = await connect(self.address.url, additional_headers=self._headers or None,
                                   open_timeout=CONNECT_TIMEOUT, close_timeout=2, max_size=MAX_MESSAGE_BYTES,
                                   ping_interval=20, ping_timeout=20, compression=None)
        except (OSError, TimeoutError) as e:
            raise EventsUnavailableError(f"cannot reach the message broker at {self.address.url}: {e}") from e
        except Exception as e:  # the WebSocket library's handshake failures
            raise EventsUnavailableError(f"the message broker at {self.address.url} refused the connection: "
                                         f"{e}") from e
        protocol = ClientProtocol(login=login, passcode=passcode)
        self._socket, self._protocol = socket, protocol
        try:
            await socket.send(protocol.connect())
            await self._await(lambda ev: isinstance(ev, Connected), exc.AuthenticationError)
            receipt = protocol.new_id("subscribed")
            await socket.send(protocol.subscribe(self.address.destination_prefix + self.workspace_id,
                                                 protocol.new_id("sub"), receipt))
            await self._await(lambda ev: isinstance(ev, Receipt) and ev.receipt_id == receipt,
                              exc.PermissionDeniedError)
        except BaseException:
            await self._drop()
            raise

    async def _await(self, wanted: Any, refused: type[exc.APIError]) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + CONNECT_TIMEOUT
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise EventsUnavailableError(f"the message broker at {self.address.url} did not answer")
            for event in await self._read(remaining):
                if isinstance(event, BrokerError):
                    raise refusal(event, refused)
                if wanted(event):
                    return
                self._keep(event)

    async def _read(self, timeout: float) -> list[Event]:
        from websockets.exceptions import ConnectionClosed

        assert self._socket is not None and self._protocol is not None
        try:
            data = await asyncio.wait_for(self._socket.recv(), timeout)
        except TimeoutError:
            return []
        except (ConnectionClosed, OSError, EOFError) as e:
            raise EventsUnavailableError(f"the connection to the message broker closed: {e}") from e
        return self._protocol.receive(data)

    async def _drop(self) -> None:
        socket, self._socket = self._socket, None
        if socket is not None:
            with contextlib.suppress(Exception):  # a broken connection may fail to close; it is gone either way
                await socket.close()

    async def aclose(self) -> None:
        """Say goodbye to the broker and close the connection."""
        if self._closed:
            return
        self._closed = True
        if self._socket is not None and self._protocol is not None:
            with contextlib.suppress(Exception):  # already gone
                await self._socket.send(self._protocol.disconnect())
        await self._drop()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc_value: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()

    async def get(self, timeout: float | None = None) -> WorkspaceMessage | None:
        """The next message within ``timeout`` seconds (and the stream's own timeout); ``None`` if none came."""
        loop = asyncio.get_running_loop()
        until = [t for t in (None if timeout is None else loop.time() + timeout, self._deadline) if t is not None]
        end = min(until) if until else None
        while not self._pending:
            if self._closed:
                return None
            remaining = None if end is None else end - loop.time()
            if remaining is not None and remaining <= 0:
                return None
            try:
                if self._socket is None:
                    await self._reopen(remaining)
                    continue
                for event in await self._read(1.0 if remaining is None else min(remaining, 1.0)):
                    if isinstance(event, BrokerError):
                        raise refusal(event, exc.PermissionDeniedError)
                    self._keep(event)
            except EventsUnavailableError:
                await self._drop()
                if not self.reconnect:
                    raise
                self._retry_at = loop.time() + FIRST_RETRY
        return self._pending.popleft()

    async def _reopen(self, remaining: float | None) -> None:
        loop = asyncio.get_running_loop()
        wait = self._retry_at - loop.time()
        if wait > 0:
            await asyncio.sleep(wait if remaining is None else min(wait, remaining))
            return
        try:
            await self._open()
        except EventsUnavailableError:
            await self._drop()
            self._failures += 1
            self._retry_at = loop.time() + retry_delay(self._failures)
            return
        self._failures = 0
        self.reconnects += 1

    def __aiter__(self) -> AsyncIterator[WorkspaceMessage]:
        return self._messages()

    async def _messages(self) -> AsyncIterator[WorkspaceMessage]:
        while True:
            message = await self.get()
            if message is None:
                return
            yield message


class AsyncEventsResource(AsyncAPIResource):
    """Async twin of ``EventsResource``: where the server's broker is, and listening to a workspace."""

    async def address(self, **options: Unpack[RequestOptions]) -> BrokerAddress:
        """The broker's WebSocket address and what to log in with (see ``EventsResource.address``)."""
        named = named_address()
        if named is not None:
            return named
        url, headers, params, timeout = address_request(self._client, options)
        try:
            response = await self._client._http.get(url, headers=headers, params=params, timeout=timeout)
        except httpx.TimeoutException as e:
            raise exc.APITimeoutError(f"asking {self._client.base_url} where its broker is timed out") from e
        except httpx.TransportError as e:
            raise exc.APIConnectionError(f"cannot reach {self._client.base_url}: {e}") from e
        return address_from(response, self._client.base_url)

    async def listen(self, workspace: str, *, codes: Collection[str] | None = None, timeout: float | None = None,
                     reconnect: bool = True, address: BrokerAddress | None = None) -> AsyncEventStream:
        """The messages of workspace ``workspace`` from now on (see ``EventsResource.listen``), connected and
        subscribed on return."""
        stream = AsyncEventStream(address or await self.address(), workspace,
                                  session_token=self._client.session_token, codes=codes, timeout=timeout,
                                  reconnect=reconnect)
        return await stream.open()


class AsyncProcessUpdates:
    """Async twin of ``ProcessUpdates``: one workspace's process updates while open, so that a wait wakes when a
    process changes; where messages cannot be had, ``sleep`` is a plain ``asyncio.sleep``."""

    def __init__(self, client: AsyncBaseClient, workspace_id: str | None) -> None:
        self.client = client
        self.workspace_id = workspace_id
        self.stream: AsyncEventStream | None = None
        self.unavailable: str | None = None
        """Why messages are not used (``None`` while they are)."""

    @property
    def live(self) -> bool:
        """Whether updates arrive as messages (else ``sleep`` only sleeps)."""
        return self.stream is not None

    async def open(self) -> Self:
        """Subscribe to the workspace's process updates, or note why messages cannot be had (never raises)."""
        if not self.workspace_id:
            self.unavailable = "no workspace to listen to"
            return self
        try:
            self.stream = await AsyncEventsResource(self.client).listen(self.workspace_id, codes=PROCESS_UPDATES)
        except exc.WasdiError as e:
            self.unavailable = str(e)
            log.debug("waiting by polling: %s", e)
        return self

    async def close(self) -> None:
        """Stop listening."""
        if self.stream is not None:
            stream, self.stream = self.stream, None
            await stream.aclose()

    async def __aenter__(self) -> Self:
        return await self.open()

    async def __aexit__(self, exc_type: type[BaseException] | None, exc_value: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.close()

    async def sleep(self, seconds: float, process_id: str | None = None) -> ProcessUpdateMessage | None:
        """Wait up to ``seconds``; return early with the update when ``process_id`` (any process if ``None``)
        changes.  A broker lost for good meanwhile turns this into plain sleeping for the rest of the wait."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return None
            if self.stream is None:
                await asyncio.sleep(remaining)
                return None
            try:
                message = await self.stream.get(timeout=remaining)
            except exc.WasdiError as e:
                self.unavailable = str(e)
                log.debug("messages stopped, waiting by polling: %s", e)
                await self.close()
                continue
            if isinstance(message, ProcessUpdateMessage) and (process_id is None or message.process_id == process_id):
                return message
