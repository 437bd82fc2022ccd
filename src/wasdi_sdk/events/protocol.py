"""The client side of a STOMP conversation, with no I/O: which frames to send, what the received bytes mean.

A transport (``stream.py`` over a blocking WebSocket; an asyncio one the same way) moves the bytes and
acts on the events ``receive`` returns; the rules of the protocol live here once.
"""

from __future__ import annotations

from dataclasses import dataclass

from .stomp import Frame, FrameParser, encode, headers_of

CLIENT_VERSIONS = "1.0,1.1,1.2"


@dataclass(frozen=True, slots=True)
class Connected:
    """The broker accepted the login."""

    version: str
    server: str


@dataclass(frozen=True, slots=True)
class Receipt:
    """The broker finished the frame that asked for this receipt."""

    receipt_id: str


@dataclass(frozen=True, slots=True)
class Delivery:
    """A message for one of our subscriptions."""

    subscription: str
    destination: str
    body: bytes


@dataclass(frozen=True, slots=True)
class BrokerError:
    """The broker refused something; it closes the connection after this."""

    message: str
    details: str
    receipt_id: str | None


Event = Connected | Receipt | Delivery | BrokerError


class ClientProtocol:
    """One STOMP client connection's state."""

    def __init__(self, *, login: str = "", passcode: str = "", host: str = "/") -> None:
        self.login = login
        self.passcode = passcode
        self.host = host
        self.version = "1.2"
        self.connected = False
        self._parser = FrameParser(version="1.2")
        self._next_id = 0

    def connect(self) -> bytes:
        """The CONNECT frame (no heart-beats: the WebSocket's own pings keep the connection checked)."""
        headers = {"accept-version": CLIENT_VERSIONS, "host": self.host, "heart-beat": "0,0"}
        if self.login:
            headers["login"] = self.login
        if self.passcode:
            headers["passcode"] = self.passcode
        return encode(Frame.make("CONNECT", headers))

    def new_id(self, prefix: str) -> str:
        self._next_id += 1
        return f"{prefix}-{self._next_id}"

    def subscribe(self, destination: str, subscription_id: str, receipt_id: str | None = None) -> bytes:
        return encode(Frame.make("SUBSCRIBE", {"id": subscription_id, "destination": destination, "ack": "auto",
                                               "receipt": receipt_id}), version=self.version)

    def unsubscribe(self, subscription_id: str) -> bytes:
        return encode(Frame.make("UNSUBSCRIBE", {"id": subscription_id}), version=self.version)

    def disconnect(self, receipt_id: str | None = None) -> bytes:
        return encode(Frame.make("DISCONNECT", {"receipt": receipt_id}), version=self.version)

    def receive(self, data: bytes | str) -> list[Event]:
        """The events in ``data`` (heart-beats and frames a client ignores are dropped)."""
        events: list[Event] = []
        for frame in self._parser.feed(data):
            if frame is None:
                continue
            headers = headers_of(frame.headers)
            if frame.command == "CONNECTED":
                self.version = headers.get("version", "1.0")
                self._parser.version = self.version
                self.connected = True
                events.append(Connected(self.version, headers.get("server", "")))
            elif frame.command == "RECEIPT":
                events.append(Receipt(headers.get("receipt-id", "")))
            elif frame.command == "MESSAGE":
                events.append(Delivery(headers.get("subscription", headers.get("destination", "")),
                                       headers.get("destination", ""), frame.body))
            elif frame.command == "ERROR":
                events.append(BrokerError(headers.get("message", "the broker refused"),
                                          frame.body.decode("utf-8", "replace").strip(), headers.get("receipt-id")))
        return events
