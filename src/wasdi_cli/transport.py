"""The HTTP transport of the ``wasdi`` command: a deadline for connecting, and a sentence for each way a connection
fails before the server says anything (unknown host, TLS spoken to a plain-HTTP server, no answer in time).

Each failure is remembered per server for the rest of the command, so the SDK's retries of a connection error
cost nothing more: a command that cannot connect ends within ``CONNECT_DEADLINE`` seconds (plus the retries'
short back-off), not after the minutes a server that never answers a TLS greeting would take.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Iterator

import httpx

CONNECT_DEADLINE = 10.0
"""Seconds to open a connection (TCP and TLS handshake together)."""

PROBE_SECONDS = 3.0
"""Seconds the plain-HTTP probe of a server that did not answer TLS may take."""


class ConnectionProblem(httpx.ConnectError):
    """A connection that failed for a reason the person can fix; ``sentence`` says what to do."""

    def __init__(self, sentence: str, *, request: httpx.Request | None = None) -> None:
        super().__init__(sentence, request=request)
        self.sentence = sentence


class DeadlineTransport(httpx.HTTPTransport):
    """``httpx.HTTPTransport`` that turns connection failures into ``ConnectionProblem`` sentences."""

    def __init__(self, connect_deadline: float | None = None) -> None:
        super().__init__(retries=0)
        self.connect_deadline = CONNECT_DEADLINE if connect_deadline is None else connect_deadline
        self._failed: dict[tuple[str, str, int], ConnectionProblem] = {}

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        origin = (url.scheme, url.host, url.port or (443 if url.scheme == "https" else 80))
        known = self._failed.get(origin)
        if known is not None:
            raise ConnectionProblem(known.sentence, request=request)
        timeouts = dict(request.extensions.get("timeout") or {})
        connect = timeouts.get("connect")
        timeouts["connect"] = self.connect_deadline if connect is None else min(connect, self.connect_deadline)
        request.extensions["timeout"] = timeouts
        try:
            return super().handle_request(request)
        except httpx.ConnectTimeout as e:
            problem = self._explain_timeout(request)
            self._failed[origin] = problem
            raise problem from e
        except httpx.ConnectError as e:
            explained = _explain_connect_error(request, e)
            if explained is None:
                raise
            self._failed[origin] = explained
            raise explained from e

    def _explain_timeout(self, request: httpx.Request) -> ConnectionProblem:
        url = request.url
        where = _origin(url)
        if url.scheme == "https" and speaks_plain_http(url.host, url.port or 443):
            return _plain_http(request)
        return ConnectionProblem(
            f"{where} did not answer within {self.connect_deadline:g} s: check the address (and that the server "
            "is running there), or that no firewall drops the connection", request=request)


def _origin(url: httpx.URL) -> str:
    return f"{url.scheme}://{url.netloc.decode()}"


def _plain_http(request: httpx.Request) -> ConnectionProblem:
    url = request.url
    return ConnectionProblem(
        f"{_origin(url)} speaks plain HTTP, not TLS: write the base URL with http:// instead of https://",
        request=request)


def _causes(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _explain_connect_error(request: httpx.Request, error: httpx.ConnectError) -> ConnectionProblem | None:
    url = request.url
    for cause in _causes(error):
        if isinstance(cause, socket.gaierror):
            return ConnectionProblem(
                f"the host name '{url.host}' cannot be found (DNS: {cause.strerror or cause}): check its spelling "
                "in --base-url, WASDI_BASE_URL or the profile ('wasdi auth status' shows which is used)",
                request=request)
        if isinstance(cause, ssl.SSLError) and "WRONG_VERSION_NUMBER" in str(cause).upper():
            return _plain_http(request)
    return None


def speaks_plain_http(host: str, port: int) -> bool:
    """Whether ``host:port`` answers a plain HTTP request (the probe of an address that did not answer TLS)."""
    try:
        with socket.create_connection((host, port), timeout=PROBE_SECONDS) as sock:
            sock.sendall(f"HEAD / HTTP/1.0\r\nHost: {host}\r\n\r\n".encode("ascii", "replace"))
            return sock.recv(5) == b"HTTP/"
    except OSError:
        return False
