"""The workspaces' messages (gaps §7): one publisher, two backends, and the built-in broker's listener.

- ``publisher``: ``Message`` and ``Messages``, the one place that sends (``services.messages.send``);
- ``exchange``: the built-in backend (the default): routing in memory, to the listener's subscribers;
- ``broker``: the built-in broker's listener, STOMP over WebSocket beside the API (``wasdi-server serve``);
- ``access``: who is connecting, and whether they may hear a workspace;
- ``rabbitmq``: the RabbitMQ backend (``broker_url``), sending from a thread of its own (``queued``);
- ``relay``: with the built-in broker, a compute node's messages handed to the main node's broker;
- ``address``: where clients listen, and with what credentials.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from .address import broker_address, builtin_port
from .exchange import Exchange
from .publisher import KO, OK, Message, Messages, Publisher

if TYPE_CHECKING:
    from ..domains.accounts.sessions import SessionService
    from ..domains.workspaces.workspaces import WorkspaceService
    from ..settings import Settings
    from .broker import StompBroker


class ListenerParts(Protocol):
    """What the built-in broker's listener is built from: the publisher it serves, and who may hear what."""

    @property
    def settings(self) -> Settings:
        """Where to listen, the origins allowed, the connection budgets."""

    @property
    def messages(self) -> Messages:
        """The publisher whose built-in backend the listener serves."""

    @property
    def sessions(self) -> SessionService:
        """Who is connecting."""

    @property
    def workspaces(self) -> WorkspaceService:
        """Whether they may hear a workspace."""


def build_messages(settings: Settings) -> Messages:
    """The publisher the settings ask for: RabbitMQ with ``broker_url``, else the built-in exchange."""
    if settings.broker_url:
        from .rabbitmq import RabbitPublisher

        return Messages(RabbitPublisher(settings.broker_url, settings.broker_exchange,
                                        settings.broker_queue_messages,
                                        min_backoff=min(0.5, settings.broker_retry_seconds),
                                        max_backoff=settings.broker_retry_seconds))
    return Messages(Exchange())


def local_exchange(backend: Publisher) -> Exchange | None:
    """The built-in exchange among the backends (a compute node also hands its messages to the main node)."""
    from .relay import Fanout

    if isinstance(backend, Exchange):
        return backend
    if isinstance(backend, Fanout):
        return next((b for b in backend.backends if isinstance(b, Exchange)), None)
    return None


def start_listener(parts: ListenerParts, *, host: str | None = None, port: int | None = None) -> StompBroker | None:
    """Start the built-in broker's listener when the built-in backend is in use (``None`` with RabbitMQ)."""
    backend = local_exchange(parts.messages.backend)
    if backend is None:
        return None
    from .access import Gatekeeper
    from .broker import StompBroker

    settings = parts.settings
    gatekeeper = Gatekeeper(parts.sessions, parts.workspaces, settings.cors_allow_origins,
                            public_url=settings.public_url, api_port=settings.port)
    broker = StompBroker(backend, gatekeeper,
                         host=host or settings.host, port=builtin_port(settings) if port is None else port,
                         exchange_name=settings.broker_exchange, buffer_limit=settings.subscriber_buffer_bytes,
                         connections=settings.broker_connections,
                         connections_per_address=settings.broker_connections_per_address,
                         handshake_seconds=settings.broker_handshake_seconds)
    broker.start()
    return broker


__all__ = ["KO", "OK", "Exchange", "ListenerParts", "Message", "Messages", "Publisher", "broker_address",
           "build_messages", "builtin_port", "local_exchange", "start_listener"]
