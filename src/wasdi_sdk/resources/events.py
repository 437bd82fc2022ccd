"""``client.events``: the messages a server publishes about a workspace, as they happen.

Not an endpoint of the contract: WASDI servers publish on a message broker (RabbitMQ on the cloud, a
built-in one on this toolkit's server) that clients reach with STOMP over a WebSocket.  This server says
where at ``<base>/messages/address``; for another server, give the address yourself (``address=`` or the
``WASDI_WEBSTOMP_URL`` environment variable).
"""

from __future__ import annotations

import os
from collections.abc import Collection
from typing import Any, Unpack

import httpx

from .. import _exceptions as exc
from .._resource import APIResource, RequestOptions
from ..events import ADDRESS_PATH, WEBSTOMP_URL_VARIABLE
from ..events.stream import EventStream, EventsUnavailableError
from ..models.events import BrokerAddress

SESSION_HEADER = "x-session-token"


def named_address() -> BrokerAddress | None:
    """The address ``WASDI_WEBSTOMP_URL`` names, if it is set."""
    named = os.environ.get(WEBSTOMP_URL_VARIABLE, "").strip()
    return BrokerAddress(url=named) if named else None


def address_request(client: Any, options: RequestOptions) -> tuple[str, dict[str, str], dict[str, Any], Any]:
    """URL, headers, query and timeout of ``GET /messages/address`` (the sync and the async client send it)."""
    headers = {**client._default_headers, **(options.get("extra_headers") or {})}
    if client.session_token:
        headers[SESSION_HEADER] = client.session_token
    return (client.base_url + ADDRESS_PATH, headers, dict(options.get("extra_query") or {}),
            options.get("timeout", client.timeout))


def address_from(response: httpx.Response, base_url: str) -> BrokerAddress:
    """The ``BrokerAddress`` a server answered, or the exception that says why there is none."""
    if response.status_code == 401:
        raise exc.AuthenticationError("no valid session: log in first", status=401, response=response,
                                      endpoint="events")
    if response.status_code != 200:
        raise EventsUnavailableError(f"{base_url} does not say where its message broker is "
                                     f"(HTTP {response.status_code}); set {WEBSTOMP_URL_VARIABLE}")
    try:
        return BrokerAddress.model_validate(response.json())
    except ValueError as e:
        raise EventsUnavailableError(f"{base_url} answered no broker address") from e


class EventsResource(APIResource):
    """Where the server's broker is, and listening to a workspace's messages."""

    def address(self, **options: Unpack[RequestOptions]) -> BrokerAddress:
        """The broker's WebSocket address and what to log in with, as the server says.

        ``WASDI_WEBSTOMP_URL`` in the environment wins (for servers that do not say).  Raises
        ``EventsUnavailableError`` when the server names no broker.
        """
        named = named_address()
        if named is not None:
            return named
        url, headers, params, timeout = address_request(self._client, options)
        try:
            response = self._client._http.get(url, headers=headers, params=params, timeout=timeout)
        except httpx.TimeoutException as e:
            raise exc.APITimeoutError(f"asking {self._client.base_url} where its broker is timed out") from e
        except httpx.TransportError as e:
            raise exc.APIConnectionError(f"cannot reach {self._client.base_url}: {e}") from e
        return address_from(response, self._client.base_url)

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
        return EventStream(address or self.address(), workspace, session_token=self._client.session_token,
                           codes=codes, timeout=timeout, reconnect=reconnect)
