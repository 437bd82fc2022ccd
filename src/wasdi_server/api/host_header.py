"""The ``Host`` header, checked before a request reaches anything else.

Without a configured ``public_url`` the server builds the links it answers (``apiUrl``, image links,
checkout pages, the WMS address) from the host the client reached, and the answer cache keys on it; so a
host is taken only when it is one a client could really have connected to: a DNS name or an IPv4
address (letters, digits, ``-``, ``.``, and ``_`` for container names), or a bracketed IPv6 address,
each with an optional port, at most ``MAX_HOST_LENGTH`` characters.  Anything else is a 400
``ErrorResponse`` (the header is not echoed back).  ``canonical_host`` is the one spelling of a valid
host: lower case, no trailing dot, no default port.
"""

from __future__ import annotations

import functools
import re

import falcon

from .answers import to_json_bytes

MAX_HOST_LENGTH = 253 + len(":65535")
"""The longest DNS name, and a port."""
_NAME = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}"
                   r"[A-Za-z0-9_])?)*\.?")
_IPV6 = re.compile(r"\[[0-9A-Fa-f:.]{2,45}\]")
_PORT = re.compile(r"[0-9]{1,5}")
DEFAULT_PORTS = {"http": "80", "https": "443"}


HOSTS_REMEMBERED = 1024
"""Host values whose parsing is remembered: a server is reached under a few names, and every request names one
(two regular expressions per request cost the API a few per cent of its requests per second)."""


def split_host(value: str) -> tuple[str, str] | None:
    """``(host, port)`` of a valid ``Host`` value (port "" when absent), or ``None``."""
    if not value or len(value) > MAX_HOST_LENGTH:
        return None
    return _split_host(value)


@functools.lru_cache(maxsize=HOSTS_REMEMBERED)
def _split_host(value: str) -> tuple[str, str] | None:
    if not value.isascii():
        return None
    host, port = value, ""
    if value.startswith("["):
        end = value.find("]")
        host, rest = value[:end + 1], value[end + 1:]
        if rest:
            if not rest.startswith(":"):
                return None
            port = rest[1:]
        if not _IPV6.fullmatch(host):
            return None
    else:
        if ":" in value:
            host, port = value.rsplit(":", 1)
        if not _NAME.fullmatch(host):
            return None
    if port and (not _PORT.fullmatch(port) or not 0 < int(port) < 65536):
        return None
    return host, port


def canonical_host(value: str, scheme: str) -> str:
    """The one spelling of a valid ``Host`` value: lower case, no trailing dot, no default port."""
    parts = split_host(value)
    if parts is None:
        raise ValueError("invalid Host header")
    host, port = parts
    host = host.lower().rstrip(".") or host
    return host if not port or port == DEFAULT_PORTS.get(scheme) else f"{host}:{port}"


class HostHeaderGuard:
    """Falcon middleware: a request whose ``Host`` header is not a valid host is answered 400 at once."""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        value = req.get_header("Host")
        if value is None or split_host(value) is not None:
            return
        resp.status = falcon.HTTP_400
        resp.content_type = "application/json"
        resp.data = to_json_bytes({"message": f"invalid Host header: a host name or address and an optional "
                                              f"port, at most {MAX_HOST_LENGTH} characters"})
        resp.set_header("Cache-Control", "no-store")
        resp.complete = True


def canonical_prefix(req: falcon.Request) -> str:
    """``scheme://host[:port]`` and the app's mount path as the client reached them, in the canonical spelling
    (a request without a ``Host`` header: the address the WSGI server was reached at)."""
    value = req.get_header("Host")
    if value is None or split_host(value) is None:
        return req.prefix
    return f"{req.scheme}://{canonical_host(value, req.scheme)}{req.root_path}"
