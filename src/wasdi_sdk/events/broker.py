"""Where a server's message broker is, and a stream opened on it: what ``client.events`` and the waits' process
updates share, so that the waits reach the broker without the resource groups above them."""

from __future__ import annotations

import os
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

import httpx

from .. import _exceptions as exc
from ..models.events import BrokerAddress
from . import ADDRESS_PATH, WEBSTOMP_URL_VARIABLE
from .stream import EventStream, EventsUnavailableError

if TYPE_CHECKING:
    from .._base_client import BaseClient
    from .._resource import RequestOptions

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


def broker_address(client: BaseClient, options: RequestOptions) -> BrokerAddress:
    """The broker's address: ``WASDI_WEBSTOMP_URL`` if set, else what the server says (``client.events.address``)."""
    named = named_address()
    if named is not None:
        return named
    url, headers, params, timeout = address_request(client, options)
    try:
        response = client._http.get(url, headers=headers, params=params, timeout=timeout)
    except httpx.TimeoutException as e:
        raise exc.APITimeoutError(f"asking {client.base_url} where its broker is timed out") from e
    except httpx.TransportError as e:
        raise exc.APIConnectionError(f"cannot reach {client.base_url}: {e}") from e
    return address_from(response, client.base_url)


def open_stream(client: BaseClient, workspace: str, *, codes: Collection[str] | None = None,
                timeout: float | None = None, reconnect: bool = True,
                address: BrokerAddress | None = None) -> EventStream:
    """A workspace's messages from now on, connected and subscribed (``client.events.listen``)."""
    return EventStream(address or broker_address(client, {}), workspace, session_token=client.session_token,
                       codes=codes, timeout=timeout, reconnect=reconnect)
