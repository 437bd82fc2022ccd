"""The built-in broker's listener: STOMP 1.0-1.2 over WebSocket, beside the WSGI server, in the same process.

Waitress cannot upgrade a connection to a WebSocket, so the broker listens on a port of its own (any path:
WASDI's web client writes ``/rabbit-stomp/ws``), in one thread running an asyncio loop with the
``websockets`` library.  ``wasdi-server serve`` starts it before the API and stops it after.

- CONNECT (or STOMP): the connection is somebody's (``access.Gatekeeper``) or it gets an ERROR frame and is
  closed.  Heart-beats are negotiated as the protocol says (this end offers ``10000,10000``).
- SUBSCRIBE ``/exchange/<exchange>/<workspaceId>`` (or ``/topic/<workspaceId>``): allowed when the user may
  read the workspace; else an ERROR frame, and the connection closes, as STOMP wants after an ERROR.
- MESSAGE: each message of the workspace, to each subscription, as the server publishes it.
- UNSUBSCRIBE, DISCONNECT, ACK/NACK (acknowledgement is automatic), receipts on any frame.  SEND and
  transactions are refused: only the server publishes here.

A message is encoded once per group of subscriptions that get the same frame (the same subscription id
and destination: every web client's first subscription is ``sub-0``) and written to all of them at once
(``websockets.broadcast``), so a thousand subscribers cost a thousand socket writes, not a thousand tasks.
Connections are a budget (``broker_connections``: in all and per address, the ones not logged in shed first),
the WebSocket handshake and then the CONNECT frame each must come within ``handshake_seconds``, and a
handshake repeating ``Host``, ``Origin`` or ``Cookie`` is a 400 (``broker_connections.py``).
Nothing is kept for a workspace nobody listens to.  A subscriber that does not read is cut once more than
``buffer_limit`` bytes wait in its connection's buffer, so memory stays bounded whatever a client does.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wasdi_sdk.events.stomp import (
    Frame,
    FrameError,
    FrameParser,
    encode,
    headers_of,
    heartbeat_periods,
    negotiate_version,
    parse_heartbeat,
)

from ..connection_budget import LISTEN_BACKLOG, ConnectionBudget
from .access import Gatekeeper, Handshake
from .exchange import Exchange
from .publisher import Message

if TYPE_CHECKING:
    from ..domains.accounts.identity import User

log = logging.getLogger("wasdi_server.messages")

SERVER_NAME = "wasdi-server"
OFFERED_HEARTBEAT = (10_000, 10_000)
CONNECT_TIMEOUT = 10.0
RECHECK_SECONDS = 30.0
MAX_SUBSCRIPTIONS = 64
MAX_FRAME_BYTES = 64 * 1024
SUBPROTOCOLS = ("v12.stomp", "v11.stomp", "v10.stomp")


class Refused(Exception):
    """Ends a connection with an ERROR frame carrying this message (and ``details`` as its body)."""

    def __init__(self, message: str, details: str = "", receipt: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details
        self.receipt = receipt


@dataclass(eq=False)
class Subscription:
    session: Session
    subscription_id: str
    workspace_id: str
    destination: str
    prefix: bytes = b""
    """The MESSAGE frame up to its message-id, encoded once for this subscription."""


@dataclass(eq=False)
class Session:
    """One WebSocket connection."""

    broker: StompBroker
    websocket: Any
    handshake: Handshake
    version: str = "1.0"
    user: User | None = None
    token: str = ""
    subscriptions: dict[str, Subscription] = field(default_factory=dict)
    outbox: asyncio.Queue[bytes | None] = field(default_factory=asyncio.Queue)
    send_every: float = 0.0
    expect_every: float = 0.0
    closing: bool = False
    writer: asyncio.Task[None] | None = None

    def cut(self) -> None:
        """End a connection whose socket takes nothing more (not even an ERROR frame would go out)."""
        self.closing = True
        if self.writer is not None:
            self.writer.cancel()
        transport = getattr(self.websocket, "transport", None)
        if transport is not None:
            transport.abort()

    def error_frame(self, message: str, details: str = "", receipt: str | None = None) -> bytes:
        return encode(Frame.make("ERROR", {"message": message, "receipt-id": receipt,
                                           "content-type": "text/plain" if details else None},
                                 details.encode("utf-8")), version=self.version)


class StompBroker:
    """Listens for STOMP clients and delivers the exchange's messages to them."""

    def __init__(self, exchange: Exchange, gatekeeper: Gatekeeper, *, host: str = "127.0.0.1", port: int = 0,
                 exchange_name: str = "amq.topic", buffer_limit: int = 8 << 20,
                 recheck_seconds: float = RECHECK_SECONDS, heartbeat: tuple[int, int] = OFFERED_HEARTBEAT,
                 connections: int = 4096, connections_per_address: int = 256,
                 handshake_seconds: float = CONNECT_TIMEOUT) -> None:
        self.exchange = exchange
        self.gatekeeper = gatekeeper
        self.host = host
        self.port = port
        self.exchange_name = exchange_name
        self.buffer_limit = max(1, buffer_limit)
        self.recheck_seconds = recheck_seconds
        self.heartbeat = heartbeat
        """What this end offers in CONNECTED's ``heart-beat``: (can send every, wants to receive every) ms."""
        self.budget = ConnectionBudget("the built-in broker", connections, connections_per_address)
        self.handshake_seconds = handshake_seconds
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stopping: asyncio.Event | None = None
        self._started = threading.Event()
        self._failure: BaseException | None = None
        self._topics: dict[str, set[Subscription]] = {}
        self._sessions: set[Session] = set()
        self._ids = itertools.count(1)

    # -- lifecycle (any thread) ------------------------------------------------------------------------
    def start(self, timeout: float = 10.0) -> None:
        """Listen (``OSError`` if the port cannot be had); ``port`` is then the port listened on."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="wasdi-broker", daemon=True)
        self._thread.start()
        if not self._started.wait(timeout):
            raise OSError(f"the built-in broker did not start listening on {self.host}:{self.port}")
        failure = self._failure
        if failure is not None:
            self._thread.join(timeout)
            self._thread = None
            if isinstance(failure, OSError):  # its errno says why (a busy port)
                raise failure
            raise OSError(f"the built-in broker cannot listen on {self.host}:{self.port}: {failure}")

    def stop(self, timeout: float = 10.0) -> None:
        loop, stopping = self._loop, self._stopping
        if loop is not None and stopping is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop ended meanwhile
                loop.call_soon_threadsafe(stopping.set)
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    @property
    def connections(self) -> int:
        return len(self._sessions)

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as e:  # reported to start(), or logged if it happens later
            if not self._started.is_set():
                self._failure = e
                self._started.set()
            else:
                log.exception("the built-in broker stopped")

    async def _main(self) -> None:
        from websockets.asyncio.server import serve

        from .broker_connections import connection_class, refuse_repeated_headers

        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        async with serve(self._connection, self.host, self.port, select_subprotocol=_select_subprotocol,
                         max_size=MAX_FRAME_BYTES, max_queue=16, ping_interval=20, ping_timeout=20,
                         close_timeout=2, compression=None, server_header=SERVER_NAME,
                         open_timeout=self.handshake_seconds, process_request=refuse_repeated_headers,
                         create_connection=connection_class(self.budget), backlog=LISTEN_BACKLOG) as server:
            sockets = list(server.sockets)
            if sockets:
                self.port = int(sockets[0].getsockname()[1])
            self._started.set()
            await self._stopping.wait()
            for session in list(self._sessions):
                session.closing = True
                session.outbox.put_nowait(None)
            server.close(close_connections=True)
            await server.wait_closed()
        for key in list(self._topics):
            self.exchange.unbind(key, self._offer)
        self._topics.clear()

    # -- routing (the exchange calls _offer from any thread) --------------------------------------------
    def _offer(self, message: Message) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop is closing
                loop.call_soon_threadsafe(self._fanout, message)

    def _fanout(self, message: Message) -> None:
        from websockets.asyncio.server import broadcast

        subscribers = self._topics.get(message.workspace_id)
        if not subscribers:
            return
        groups: dict[bytes, list[Any]] = {}
        for subscription in subscribers:
            session = subscription.session
            if session.closing:
                continue
            transport = getattr(session.websocket, "transport", None)
            if transport is not None and transport.get_write_buffer_size() > self.buffer_limit:
                log.warning("disconnected a subscriber of workspace %s that does not read (%d bytes waiting)",
                            subscription.workspace_id, transport.get_write_buffer_size())
                session.cut()
                continue
            groups.setdefault(subscription.prefix, []).append(session.websocket)
        body = message.body
        tail = f"message-id:{next(self._ids)}\ncontent-length:{len(body)}\n\n".encode("ascii") + body + b"\x00"
        for prefix, websockets in groups.items():
            broadcast(websockets, (prefix + tail).decode("utf-8"))

    def _bind(self, subscription: Subscription) -> None:
        subscribers = self._topics.setdefault(subscription.workspace_id, set())
        if not subscribers:
            self.exchange.bind(subscription.workspace_id, self._offer)
        subscribers.add(subscription)

    def _unbind(self, subscription: Subscription) -> None:
        subscribers = self._topics.get(subscription.workspace_id)
        if subscribers is None:
            return
        subscribers.discard(subscription)
        if not subscribers:
            del self._topics[subscription.workspace_id]
            self.exchange.unbind(subscription.workspace_id, self._offer)

    # -- one connection ---------------------------------------------------------------------------------
    async def _connection(self, websocket: Any) -> None:
        request = websocket.request
        headers = request.headers if request is not None else {}
        handshake = Handshake(host=headers.get("Host", ""), origin=headers.get("Origin"),
                              cookie=headers.get("Cookie"))
        session = Session(self, websocket, handshake)
        websocket.session = session  # what the budget reads: logged in, subscribed
        self._sessions.add(session)
        writer = session.writer = asyncio.create_task(self._write(session))
        try:
            await self._read(session)
        except Refused as refused:
            session.closing = True
            session.outbox.put_nowait(session.error_frame(refused.message, refused.details, refused.receipt))
        except FrameError as e:
            session.closing = True
            session.outbox.put_nowait(session.error_frame("malformed frame", str(e)))
        except Exception as e:
            if not _is_closed(e):
                log.exception("a broker connection failed")
        finally:
            for subscription in list(session.subscriptions.values()):
                self._unbind(subscription)
            session.subscriptions.clear()
            session.outbox.put_nowait(None)
            await asyncio.wait({writer}, timeout=5)  # sends what is queued (an ERROR frame), then closes
            writer.cancel()
            self._sessions.discard(session)
            with contextlib.suppress(Exception):
                await websocket.close()

    async def _write(self, session: Session) -> None:
        """Send what is queued, and heart-beats when nothing else went for a while."""
        websocket = session.websocket
        while True:
            try:
                if session.send_every > 0:
                    data = await asyncio.wait_for(session.outbox.get(), session.send_every)
                else:
                    data = await session.outbox.get()
            except TimeoutError:
                data = b"\n"
            if data is None:
                await websocket.close()
                return
            try:
                await websocket.send(data.decode("utf-8", "replace"))
            except Exception:
                return

    async def _receive(self, session: Session, timeout: float | None) -> Any:
        try:
            return await asyncio.wait_for(session.websocket.recv(), timeout)
        except TimeoutError:
            return None

    async def _read(self, session: Session) -> None:
        loop = asyncio.get_running_loop()
        parser = FrameParser(version="1.2", max_frame_bytes=MAX_FRAME_BYTES)
        silent_since = loop.time()
        last_check = loop.time()
        connect_by = loop.time() + self.handshake_seconds
        while not session.closing:
            now = loop.time()
            if session.user is None:
                timeout = connect_by - now
                if timeout <= 0:
                    raise Refused("no CONNECT frame in time")
            else:
                timeout = self.recheck_seconds - (now - last_check)
                if session.expect_every > 0:
                    allowed = 2 * session.expect_every - (now - silent_since)
                    if allowed <= 0:
                        log.info("closed a broker connection whose client went silent")
                        return
                    timeout = min(timeout, allowed)
                if timeout <= 0:
                    await self._recheck(session)
                    last_check = loop.time()
                    continue
            data = await self._receive(session, max(timeout, 0.01))
            if data is None:
                continue
            silent_since = loop.time()
            for frame in parser.feed(data):
                if frame is not None:
                    await self._handle(session, frame, parser)
                    if session.closing:
                        return

    async def _handle(self, session: Session, frame: Frame, parser: FrameParser) -> None:
        headers = headers_of(frame.headers)
        receipt = headers.get("receipt")
        command = frame.command
        if command in ("CONNECT", "STOMP"):
            await self._connect(session, headers, parser)
            return
        if session.user is None:
            raise Refused("send CONNECT first")
        if command == "SUBSCRIBE":
            await self._subscribe(session, headers, receipt)
        elif command == "UNSUBSCRIBE":
            key = headers.get("id") or (headers.get("destination") if session.version == "1.0" else None)
            if not key or key not in session.subscriptions:
                raise Refused("no such subscription", f"UNSUBSCRIBE names {key!r}", receipt)
            self._unbind(session.subscriptions.pop(key))
        elif command == "DISCONNECT":
            if receipt:
                session.outbox.put_nowait(encode(Frame.make("RECEIPT", {"receipt-id": receipt}),
                                                 version=session.version))
            session.closing = True
            return
        elif command in ("ACK", "NACK"):
            pass  # every subscription acknowledges automatically
        elif command == "SEND":
            raise Refused("SEND is refused", "only the server publishes on this broker", receipt)
        elif command in ("BEGIN", "COMMIT", "ABORT"):
            raise Refused("transactions are not supported", "", receipt)
        else:
            raise Refused("unknown command", f"{command[:40]!r} is not a STOMP client frame", receipt)
        if receipt:
            session.outbox.put_nowait(encode(Frame.make("RECEIPT", {"receipt-id": receipt}), version=session.version))

    async def _connect(self, session: Session, headers: dict[str, str], parser: FrameParser) -> None:
        if session.user is not None:
            raise Refused("already connected")
        version = negotiate_version(headers.get("accept-version"))
        if version is None:
            raise Refused("unsupported protocol version", "this broker speaks STOMP 1.0, 1.1 and 1.2")
        session.version = version
        parser.version = version
        loop = asyncio.get_running_loop()
        found = await loop.run_in_executor(None, self.gatekeeper.identify, headers.get("passcode"),
                                           session.handshake)
        if found is None:
            raise Refused("access refused", "log in first: send a session token as passcode, or connect from "
                                            "a page of this server after logging in there")
        session.user, session.token = found
        send, expect = heartbeat_periods(self.heartbeat, parse_heartbeat(headers.get("heart-beat")))
        session.send_every, session.expect_every = send / 1000, expect / 1000
        session.outbox.put_nowait(encode(Frame.make("CONNECTED", {
            "version": version, "server": SERVER_NAME, "session": f"session-{next(self._ids)}",
            "heart-beat": f"{self.heartbeat[0]},{self.heartbeat[1]}" if version != "1.0" else None})))
        if version == "1.0":
            session.send_every = session.expect_every = 0.0

    def _workspace_of(self, destination: str) -> str | None:
        for prefix in (f"/exchange/{self.exchange_name}/", "/topic/"):
            if destination.startswith(prefix):
                key = destination[len(prefix):]
                if key and not any(ch in key for ch in "*#/") and len(key) <= 128:
                    return key
        return None

    async def _subscribe(self, session: Session, headers: dict[str, str], receipt: str | None) -> None:
        destination = headers.get("destination", "")
        subscription_id = headers.get("id") or (destination if session.version == "1.0" else "")
        if not subscription_id:
            raise Refused("SUBSCRIBE needs an id", "", receipt)
        if subscription_id in session.subscriptions:
            raise Refused("subscription id already in use", subscription_id, receipt)
        if len(session.subscriptions) >= MAX_SUBSCRIPTIONS:
            raise Refused("too many subscriptions", f"at most {MAX_SUBSCRIPTIONS} on one connection", receipt)
        workspace_id = self._workspace_of(destination)
        if workspace_id is None:
            raise Refused("unknown destination", f"subscribe to /exchange/{self.exchange_name}/<workspaceId>",
                          receipt)
        loop = asyncio.get_running_loop()
        assert session.user is not None
        if not await loop.run_in_executor(None, self.gatekeeper.may_read, session.user, workspace_id):
            raise Refused("access refused", f"you may not read workspace {workspace_id}", receipt)
        subscription = Subscription(session, subscription_id, workspace_id, destination)
        head = Frame.make("MESSAGE", {"subscription": subscription_id, "destination": destination,
                                      "content-type": "application/json"})
        subscription.prefix = encode(head, version=session.version)[:-3]  # without the blank line and NUL
        subscription.prefix += b"\n"
        session.subscriptions[subscription_id] = subscription
        self._bind(subscription)

    async def _recheck(self, session: Session) -> None:
        """A session that ended, or a workspace no longer readable, ends what it allowed."""
        loop = asyncio.get_running_loop()
        check: Callable[[str], Any] = self.gatekeeper.still_valid
        user = await loop.run_in_executor(None, check, session.token)
        if user is None:
            raise Refused("session ended", "log in again")
        session.user = user
        for subscription in list(session.subscriptions.values()):
            if not await loop.run_in_executor(None, self.gatekeeper.may_read, user, subscription.workspace_id):
                raise Refused("access refused", f"you may no longer read workspace {subscription.workspace_id}")


def _select_subprotocol(connection: Any, offered: Any) -> Any:
    # A STOMP subprotocol when the client offers one; none when it offers none (WASDI's web client opens
    # its WebSocket without any, and RabbitMQ accepts that too).
    return next((p for p in offered if p in SUBPROTOCOLS), None)


def _is_closed(error: BaseException) -> bool:
    from websockets.exceptions import ConnectionClosed

    return isinstance(error, ConnectionClosed | ConnectionError | asyncio.CancelledError)
