"""``client.events``: the messages a server publishes about a workspace, as they happen.

Not an endpoint of the contract: WASDI servers publish on a message broker (RabbitMQ on the cloud, a
built-in one on this toolkit's server) that clients reach with STOMP over a WebSocket.  This server says
where at ``<base>/messages/address``; for another server, give the address yourself (``address=`` or the
``WASDI_WEBSTOMP_URL`` environment variable).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Unpack

from .._resource import APIResource, RequestOptions
from ..events.broker import SESSION_HEADER, address_from, address_request, broker_address, named_address, open_stream
from ..events.stream import EventStream
from ..models.events import BrokerAddress

# Where they were first defined: the async client's events and callers of earlier versions import them from here.
__all__ = ["SESSION_HEADER", "EventsResource", "address_from", "address_request", "named_address"]


class EventsResource(APIResource):
    """Where the server's broker is, and listening to a workspace's messages."""

    def address(self, **options: Unpack[RequestOptions]) -> BrokerAddress:
        """The broker's WebSocket address and what to log in with, as the server says.

        ``WASDI_WEBSTOMP_URL`` in the environment wins (for servers that do not say).  Raises
        ``EventsUnavailableError`` when the server names no broker.
        """
        return broker_address(self._client, options)

    def listen(self, workspace: str, *, codes: Collection[str] | None = None, timeout: float | None = None,
               reconnect: bool = True, address: BrokerAddress | None = None) -> EventStream:
        """The messages of workspace ``workspace`` (its id) from now on, as typed models
        (``wasdi_sdk.models.events``: ``ProcessUpdateMessage``, ``ProductMessage`` ...; unknown codes as
        ``UnknownMessage``, payload as sent).

        Connected and subscribed on return, so what you start next is heard::

            with client.events.listen(ws_id, timeout=600) as events:
                run = client.processors.run(name="hello", workspace=ws_id, params="{}")
                for message in events:
                    print(message.message_code, message.text())

        ``codes`` keeps only those message codes; ``timeout`` ends the iteration after that many seconds
        (``get(timeout)`` waits for one message); a dropped connection is opened again with backoff unless
        ``reconnect=False``.  ``PermissionDeniedError`` if you may not read the workspace,
        ``AuthenticationError`` for a refused login, ``EventsUnavailableError`` when there is no broker to
        reach.
        """
        return open_stream(self._client, workspace, codes=codes, timeout=timeout, reconnect=reconnect,
                           address=address or self.address())
