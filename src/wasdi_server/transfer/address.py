"""Where clients reach the SFTP service: the address the account mails give."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

from ..settings import Settings


def sftp_address(settings: Settings, port: int | None = None) -> str:
    """``host:port`` of the SFTP service as clients reach it (the host of ``public_url``, else the bound one);
    empty when it is off or its port is only chosen at start (``port``: the port it was given then)."""
    port = port or settings.sftp_port
    if not settings.sftp_enabled or port <= 0:
        return ""
    host = urlsplit(settings.public_url).hostname if settings.public_url else None
    if not host:
        host = settings.host if settings.host not in ("0.0.0.0", "::", "") else socket.gethostname()
    return f"{host}:{port}"
