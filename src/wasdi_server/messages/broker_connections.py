"""The built-in broker's connections as a budget, and its handshake's one rule about repeated headers.

Each TCP connection is counted by ``connection_budget.ConnectionBudget`` the moment it is accepted (before any
byte of the handshake): connections not logged in are shed first, then logged-in ones with no subscription;
one that listens to a workspace is never shed.  The WebSocket handshake itself must end within the broker's
``open_timeout`` (``broker_handshake_seconds``).

``refuse_repeated_headers`` answers 400 to a handshake naming ``Host``, ``Origin`` or ``Cookie`` twice:
which of two values counts would be a guess, and the cookie and the origin decide who is listening.
"""

from __future__ import annotations

import asyncio
import http
import time
from collections.abc import Mapping
from typing import Protocol

from websockets.asyncio.server import ServerConnection
from websockets.http11 import Request, Response

from ..connection_budget import IDLE, STARTED, ConnectionBudget

SINGLE_HEADERS = ("Host", "Origin", "Cookie")


class Listening(Protocol):
    """What the budget reads of a connection's STOMP session (``broker.Session``) to choose whom to shed."""

    @property
    def user(self) -> object:
        """Who logged in (``None``: nobody yet)."""

    @property
    def subscriptions(self) -> Mapping[str, object]:
        """What they listen to."""


class BudgetedConnection(ServerConnection):
    """A broker connection counted by the listener's budget from its accept to its end."""

    budget: ConnectionBudget
    session: Listening | None = None
    """The STOMP session on this connection, once the handshake is done."""
    accepted_at = 0.0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self.accepted_at = time.time()
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else "?"
        if not self.budget.admit(address, self):
            self.transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        self.budget.release(self)
        super().connection_lost(exc)

    def shed_rank(self) -> tuple[int, float] | None:
        session = self.session
        if session is None or session.user is None:
            return IDLE, self.accepted_at
        if not session.subscriptions:
            return STARTED, self.accepted_at
        return None

    def shed(self) -> None:
        self.transport.abort()


def connection_class(budget: ConnectionBudget) -> type[BudgetedConnection]:
    """``BudgetedConnection`` counted by ``budget`` (what ``websockets.serve`` takes as ``create_connection``)."""
    return type("BudgetedConnection", (BudgetedConnection,), {"budget": budget})


def refuse_repeated_headers(connection: ServerConnection, request: Request) -> Response | None:
    """A 400 for a handshake that repeats a header the broker decides by (``process_request`` of websockets)."""
    for name in SINGLE_HEADERS:
        if len(request.headers.get_all(name)) > 1:
            return connection.respond(http.HTTPStatus.BAD_REQUEST, f"the {name} header is repeated\n")
    return None

