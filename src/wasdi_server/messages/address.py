"""Where clients listen (``webstompUrl``) and what they log in with, for either backend.

The same answer goes to WASDI's web client (in the ``environment.js`` the server writes for it) and to the
SDK and the CLI (``GET /messages/address``), so all three listen at one address.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from wasdi_sdk.models.events import BrokerAddress

from ..settings import Settings

WEB_STOMP_PORT = 15674
"""RabbitMQ Web-STOMP's default port (its path is ``/ws``)."""
BUILTIN_PATH = "/rabbit-stomp/ws"
"""The path written for the built-in broker (it answers on any path): the one wasdi.net's client uses."""
WEB_CLIENT_LOGIN = "wasdi-web-client"
"""What the web client sends as login to the built-in broker, which knows it by its session cookie."""


def builtin_port(settings: Settings) -> int:
    return settings.broker_port or settings.port + 1


def _host_of(netloc: str) -> str:
    """``host`` of ``host:port`` (IPv6 literals keep their brackets)."""
    parsed = urlsplit("//" + netloc)
    host = parsed.hostname or "127.0.0.1"
    return f"[{host}]" if ":" in host else host


def broker_address(settings: Settings, scheme: str, netloc: str) -> BrokerAddress:
    """The address for a client that reached the API at ``scheme://netloc``."""
    prefix = f"/exchange/{settings.broker_exchange}/"
    if settings.broker_url:
        url = settings.webstomp_url
        if not url:
            host = _host_of(urlsplit(settings.broker_url).netloc.rpartition("@")[2])
            url = f"{'wss' if scheme == 'https' else 'ws'}://{host}:{WEB_STOMP_PORT}/ws"
        return BrokerAddress(url=url, login=settings.webstomp_login, passcode=settings.webstomp_passcode,
                             session_as_passcode=False, destination_prefix=prefix)
    url = settings.webstomp_url or \
        f"{'wss' if scheme == 'https' else 'ws'}://{_host_of(netloc)}:{builtin_port(settings)}{BUILTIN_PATH}"
    return BrokerAddress(url=url, login=WEB_CLIENT_LOGIN, passcode="", session_as_passcode=True,
                         destination_prefix=prefix)
