"""``EventStream``: the messages of one workspace, read from a STOMP broker over a blocking WebSocket.

The stream is connected and subscribed when it is made (so whatever the caller starts afterwards is heard),
then hands out messages with ``get(timeout)`` or by iteration.  A dropped connection is opened again with
backoff (messages published meanwhile are not replayed: a broker keeps nothing for absent listeners), and
``reconnects`` counts how often that happened.  A refused login or subscription is never retried.
"""

from __future__ import annotations

import contextlib
import time
from collections import deque
from collections.abc import Callable, Collection, Iterator
from types import TracebackType
from typing import Any, Self

from .. import _exceptions as exc
from .._base_client import LOG_IN_FIRST
from ..models.events import BrokerAddress, WorkspaceMessage, parse_message
from .protocol import BrokerError, ClientProtocol, Connected, Delivery, Event, Receipt

CONNECT_TIMEOUT = 10.0
FIRST_RETRY = 0.2
MAX_BACKOFF = 10.0
MAX_MESSAGE_BYTES = 4 << 20


class EventsUnavailableError(exc.APIConnectionError):
    """Messages cannot be listened to: the server names no broker, or the broker cannot be reached."""


# -- what the sync stream and its async twin share ---------------------------------------------------------
def credentials(address: BrokerAddress, session_token: str | None) -> tuple[str, str]:
    """The login and passcode to send: the session on this server's broker, the configured user on RabbitMQ."""
    if address.session_as_passcode:
        if not session_token:
            raise exc.NotLoggedInError(f"not logged in: listening to a workspace needs a session; {LOG_IN_FIRST}")
        return address.login or "wasdi", session_token
    return address.login, address.passcode


def refusal(event: BrokerError, refused: type[exc.APIError]) -> exc.APIError:
    """The SDK's exception for an ERROR frame (a refused login or subscription)."""
    text = event.message + (f": {event.details}" if event.details else "")
    return refused(text, status=401 if refused is exc.AuthenticationError else 403, endpoint="events")


def message_of(event: Event, codes: frozenset[str] | None) -> WorkspaceMessage | None:
    """The message a delivery carries, when it is one of the server's and of the codes wanted."""
    if not isinstance(event, Delivery):
        return None
    try:
        message = parse_message(event.body)
    except ValueError:
        return None  # not one of the server's messages
    return message if codes is None or message.message_code in codes else None


def retry_delay(failures: int) -> float:
    """How long to wait before the next attempt after ``failures`` failed ones."""
    return float(min(MAX_BACKOFF, FIRST_RETRY * 2 ** min(failures, 6)))


def _default_opener(url: str, headers: dict[str, str], timeout: float) -> Any:
    from websockets.sync.client import connect

    # Entered at once (websockets 17 made connect() a context manager); the stream closes the connection.
    return connect(url, additional_headers=headers or None, open_timeout=timeout, close_timeout=2,
                   max_size=MAX_MESSAGE_BYTES, ping_interval=20, ping_timeout=20, compression=None).__enter__()


class WorkspaceStreamState:
    """What ``EventStream`` and its async twin share: what they listen to, the connection's state and the
    messages read ahead (the reading itself is blocking in one and awaited in the other)."""

    def __init__(self, address: BrokerAddress, workspace_id: str, *, session_token: str | None,
                 codes: Collection[str] | None, reconnect: bool, headers: dict[str, str] | None) -> None:
        if not workspace_id:
            raise ValueError("a workspace id is needed to listen to its messages")
        self.address = address
        self.workspace_id = workspace_id
        self.codes = frozenset(codes) if codes else None
        self.reconnect = reconnect
        self.reconnects = 0
        """How many times the connection was lost and opened again."""
        self._failures = 0
        self._retry_at = 0.0
        self._session_token = session_token
        self._headers = dict(headers or {})
        self._deadline: float | None = None
        self._socket: Any = None
        self._protocol: ClientProtocol | None = None
        self._pending: deque[WorkspaceMessage] = deque()
        self._closed = False

    def _keep(self, event: Event) -> None:
        message = message_of(event, self.codes)
        if message is not None:
            self._pending.append(message)


class EventStream(WorkspaceStreamState):
    """The messages of one workspace, in the order the broker delivers them."""

    def __init__(self, address: BrokerAddress, workspace_id: str, *, session_token: str | None = None,
                 codes: Collection[str] | None = None, timeout: float | None = None, reconnect: bool = True,
                 headers: dict[str, str] | None = None,
                 opener: Callable[[str, dict[str, str], float], Any] = _default_opener) -> None:
        super().__init__(address, workspace_id, session_token=session_token, codes=codes, reconnect=reconnect,
                         headers=headers)
        self._opener = opener
        self._deadline = None if timeout is None else time.monotonic() + timeout
        self._open()

    # -- lifecycle ---------------------------------------------------------------------------------------
    def _open(self) -> None:
        login, passcode = credentials(self.address, self._session_token)
        try:
            socket = self._opener(self.address.url, self._headers, CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as e:
            raise EventsUnavailableError(f"cannot reach the message broker at {self.address.url}: {e}") from e
        except Exception as e:  # the WebSocket library's handshake failures
            raise EventsUnavailableError(f"the message broker at {self.address.url} refused the connection: "
                                         f"{e}") from e
        protocol = ClientProtocol(login=login, passcode=passcode)
        self._socket, self._protocol = socket, protocol
        try:
            socket.send(protocol.connect())
            self._await(lambda ev: isinstance(ev, Connected), exc.AuthenticationError)
            receipt = protocol.new_id("subscribed")
            socket.send(protocol.subscribe(self.address.destination_prefix + self.workspace_id,
                                           protocol.new_id("sub"), receipt))
            self._await(lambda ev: isinstance(ev, Receipt) and ev.receipt_id == receipt,
                        exc.PermissionDeniedError)
        except BaseException:
            self._drop()
            raise

    def _await(self, wanted: Callable[[Event], bool], refused: type[exc.APIError]) -> None:
        deadline = time.monotonic() + CONNECT_TIMEOUT
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise EventsUnavailableError(f"the message broker at {self.address.url} did not answer")
            for event in self._read(remaining):
                if isinstance(event, BrokerError):
                    raise refusal(event, refused)
                if wanted(event):
                    return
                self._keep(event)

    def _read(self, timeout: float) -> list[Event]:
        """The events of the next WebSocket message ([] on timeout); ``EventsUnavailableError`` once it closed."""
        from websockets.exceptions import ConnectionClosed

        assert self._socket is not None and self._protocol is not None
        try:
            data = self._socket.recv(timeout=timeout)
        except TimeoutError:
            return []
        except (ConnectionClosed, OSError, EOFError) as e:
            raise EventsUnavailableError(f"the connection to the message broker closed: {e}") from e
        return self._protocol.receive(data)

    def _drop(self) -> None:
        socket, self._socket = self._socket, None
        if socket is not None:
            # Closing a broken connection may fail in many ways; it is gone either way.
            with contextlib.suppress(Exception):
                socket.close()

    def close(self) -> None:
        """Say goodbye to the broker and close the connection."""
        if self._closed:
            return
        self._closed = True
        if self._socket is not None and self._protocol is not None:
            with contextlib.suppress(Exception):  # already gone
                self._socket.send(self._protocol.disconnect())
        self._drop()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc_value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # -- reading -----------------------------------------------------------------------------------------
    def _remaining(self, timeout: float | None) -> float | None:
        limits = [t for t in (timeout, None if self._deadline is None else self._deadline - time.monotonic())
                  if t is not None]
        return max(0.0, min(limits)) if limits else None

    def get(self, timeout: float | None = None) -> WorkspaceMessage | None:
        """The next message, waiting at most ``timeout`` seconds (and never past the stream's own timeout);
        ``None`` when none came in time.  ``EventsUnavailableError`` if the connection is lost and cannot
        be opened again (or ``reconnect=False``)."""
        started = time.monotonic()
        while not self._pending:
            if self._closed:
                return None
            remaining = self._remaining(None if timeout is None else timeout - (time.monotonic() - started))
            if remaining is not None and remaining <= 0:
                return None
            try:
                if self._socket is None:
                    self._reopen(remaining)
                    continue
                for event in self._read(1.0 if remaining is None else min(remaining, 1.0)):
                    if isinstance(event, BrokerError):
                        raise refusal(event, exc.PermissionDeniedError)
                    self._keep(event)
            except EventsUnavailableError:
                self._drop()
                if not self.reconnect:
                    raise
                self._retry_at = time.monotonic() + FIRST_RETRY
        return self._pending.popleft()

    def _reopen(self, remaining: float | None) -> None:
        """One step of reconnecting: wait for the next attempt (never past ``remaining``), or make it."""
        wait = self._retry_at - time.monotonic()
        if wait > 0:
            time.sleep(wait if remaining is None else min(wait, remaining))
            return
        try:
            self._open()
        except EventsUnavailableError:
            self._drop()
            self._failures += 1
            self._retry_at = time.monotonic() + retry_delay(self._failures)
            return
        self._failures = 0
        self.reconnects += 1

    def __iter__(self) -> Iterator[WorkspaceMessage]:
        """Messages until the stream's timeout (forever without one) or ``close()``."""
        while True:
            message = self.get()
            if message is None:
                return
            yield message
