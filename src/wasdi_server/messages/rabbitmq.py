"""The RabbitMQ backend (``broker_url``): each message published to the exchange with the workspace id as
routing key, as the original server does, from the sender thread of ``QueuedSender``.

Publisher confirms are on, so a message leaves the queue only once RabbitMQ took it.  Clients then listen
through RabbitMQ itself (its Web-STOMP plugin for browsers, the SDK and the CLI).
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit

from .publisher import Message
from .queued import QueuedSender

SOCKET_TIMEOUT = 5.0


def describe_url(url: str) -> str:
    """The broker's address for logs: scheme, host, port and vhost, never the credentials."""
    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port else ""
    return f"RabbitMQ at {parts.scheme}://{parts.hostname or ''}{port}{parts.path or '/'}"


class RabbitPublisher(QueuedSender):
    def __init__(self, url: str, exchange: str = "amq.topic", limit: int = 10_000, **options: Any) -> None:
        super().__init__(limit, **options)
        # pika logs each failed attempt as an error; QueuedSender says once per outage what matters.
        logging.getLogger("pika").setLevel(logging.CRITICAL)
        self.url = url
        self.exchange = exchange
        self.description = describe_url(url)
        self._connection: Any = None
        self._channel: Any = None

    def connect(self) -> None:
        import pika

        parameters = pika.URLParameters(self.url)
        parameters.socket_timeout = SOCKET_TIMEOUT
        parameters.stack_timeout = 2 * SOCKET_TIMEOUT
        parameters.blocked_connection_timeout = 2 * SOCKET_TIMEOUT
        parameters.connection_attempts = 1
        connection = pika.BlockingConnection(parameters)
        try:
            channel = connection.channel()
            channel.confirm_delivery()
            if not self.exchange.startswith("amq."):  # amq.* exchanges exist and may not be declared
                channel.exchange_declare(self.exchange, exchange_type="topic", durable=True)
        except Exception:
            connection.close()
            raise
        self._connection, self._channel = connection, channel

    def send(self, message: Message) -> None:
        import pika

        self._channel.basic_publish(self.exchange, message.workspace_id, message.body,
                                    pika.BasicProperties(content_type="application/json"))

    def idle(self) -> None:
        # Lets pika answer RabbitMQ's heart-beats while nothing is published.
        self._connection.process_data_events(time_limit=0)

    def disconnect(self) -> None:
        connection, self._connection, self._channel = self._connection, None, None
        if connection is not None and connection.is_open:
            connection.close()
