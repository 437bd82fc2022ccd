"""The way to a lab from the server's own address: HTTP requests and WebSockets carried to the lab's Unix
socket (``lab.Lab.socket_path``), after the HTTP face (``api/notebook_proxy.py``) has checked who asks.

What reaches the lab carries the lab's token (``Authorization: token``) in place of whatever credential the
caller used; the caller's WASDI session (header or cookie) and the proxy's own cookie never reach it.
Requests and answers are streamed in chunks, each read bounded by a deadline; a lab holds at most
``MAX_WEBSOCKETS`` proxied WebSockets at once (kernels' channels, the lab's events), each carried on a thread
of its own.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from http.cookies import CookieError, SimpleCookie

import httpx

from ..domains.accounts.sessions import SESSION_COOKIE
from ..launcher.box.doors import splice
from .lab import Lab

LAB_COOKIE = "wasdi_lab"
"""The proxy's cookie: the lab's token, set for the lab's path after a request that carried it in the
address, so the browser's later requests (the lab's scripts, its WebSockets) carry it."""
SESSION_HEADER = "x-session-token"
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                        "trailers", "transfer-encoding", "upgrade", "host", "content-length"})
"""Headers of one connection, not of the request (``host`` and ``content-length`` are set again)."""
WITHHELD = frozenset({SESSION_HEADER, "authorization", "cookie"})
"""What the caller sends that the lab never sees as sent (the cookie goes on without the server's own)."""
SERVER_COOKIES = frozenset({LAB_COOKIE, SESSION_COOKIE})
CHUNK = 65536
READ_SECONDS = 120.0
"""Longest wait for the lab's next bytes of an answer (or the next chunk of a request's body)."""
CONNECT_SECONDS = 10.0
MAX_REQUESTS = 16
"""HTTP requests carried to one lab at once (more wait for one of them, up to ``READ_SECONDS``)."""
MAX_WEBSOCKETS = 32
"""WebSockets proxied to one lab at once."""


class LabUnreachable(Exception):
    """The lab did not take the connection or did not answer (it is stopping, or overwhelmed)."""


class TooManyWebSockets(Exception):
    """The lab has ``MAX_WEBSOCKETS`` proxied WebSockets open already."""


def split_cookies(header: str | None) -> tuple[dict[str, str], str]:
    """(the server's own cookies by name, the rest of the ``Cookie`` header as sent) — the lab gets the rest."""
    if not header:
        return {}, ""
    own: dict[str, str] = {}
    rest = []
    for part in header.split(";"):
        name, _, value = part.strip().partition("=")
        if name in SERVER_COOKIES:
            with contextlib.suppress(CookieError):
                parsed = SimpleCookie(f"{name}={value}")
                own[name] = parsed[name].value
            continue
        if part.strip():
            rest.append(part.strip())
    return own, "; ".join(rest)


def lab_headers(lab: Lab, headers: Iterable[tuple[str, str]], host: str) -> list[tuple[str, str]]:
    """The headers a request carries to ``lab``: the caller's, less hop-by-hop ones and its credentials, plus
    the lab's token and the ``Host`` the caller reached (the lab compares a WebSocket's ``Origin`` to it)."""
    sent = []
    for name, value in headers:
        lower = name.lower()
        if lower in HOP_BY_HOP or lower in WITHHELD:
            if lower == "cookie":
                rest = split_cookies(value)[1]
                if rest:
                    sent.append(("Cookie", rest))
            continue
        sent.append((name, value))
    sent += [("Host", host), ("Authorization", f"token {lab.token}")]
    return sent


@dataclass(frozen=True)
class LabAnswer:
    """A lab's answer, its body still to be read (``body`` yields it and closes the exchange at its end)."""

    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: Iterator[bytes]


class LabProxy:
    """Carries requests to labs over their sockets."""

    def __init__(self, max_websockets: int = MAX_WEBSOCKETS) -> None:
        self.max_websockets = max_websockets
        self._open: dict[int, int] = {}
        self._clients: dict[str, httpx.Client] = {}
        self._lock = threading.Lock()

    def request(self, lab: Lab, method: str, target: str, headers: list[tuple[str, str]],
                body: Iterator[bytes] | None, length: int | None) -> LabAnswer:
        """Send one HTTP request to ``lab`` (``target``: path and query as the caller sent them; ``headers``
        from ``lab_headers``) and answer its reply, streamed."""
        if length is not None:
            headers = [*headers, ("Content-Length", str(length))]
        client = self._client(lab)
        try:
            outgoing = client.build_request(method, "http://lab" + target, headers=headers,
                                            content=body if length else None)
            reply = client.send(outgoing, stream=True)
        except httpx.HTTPError as e:
            raise LabUnreachable(str(e) or type(e).__name__) from e

        def chunks() -> Iterator[bytes]:
            try:
                yield from reply.iter_raw(CHUNK)
            except httpx.HTTPError:
                return  # the lab ended mid-answer: the caller sees the answer cut short
            finally:
                reply.close()

        kept = [(k, v) for k, v in reply.headers.multi_items() if k.lower() not in HOP_BY_HOP]
        if "content-length" in reply.headers and "content-encoding" not in reply.headers:
            kept.append(("Content-Length", reply.headers["content-length"]))
        return LabAnswer(reply.status_code, reply.reason_phrase, kept, chunks())

    def _client(self, lab: Lab) -> httpx.Client:
        """The lab's HTTP client: its connections to the lab's socket kept between requests (making a client
        costs more than a request), at most ``MAX_REQUESTS`` at once.  Those of ended labs (their socket gone
        with their scratch folder) are closed as new ones are made."""
        path = str(lab.socket_path)
        with self._lock:
            client = self._clients.get(path)
            if client is not None:
                return client
            for gone in [p for p in self._clients if not os.path.exists(p)]:
                self._clients.pop(gone).close()
            # verify=False: plain HTTP on a Unix socket, no certificate to check (and none loaded, which costs)
            client = httpx.Client(transport=httpx.HTTPTransport(uds=path, verify=False, limits=httpx.Limits(
                max_connections=MAX_REQUESTS, max_keepalive_connections=MAX_REQUESTS)), trust_env=False,
                timeout=httpx.Timeout(READ_SECONDS, connect=CONNECT_SECONDS, pool=READ_SECONDS))
            self._clients[path] = client
            return client

    def websocket(self, lab: Lab, caller: socket.socket, target: str, headers: list[tuple[str, str]],
                  on_refused: Callable[[socket.socket, int, str], None]) -> None:
        """Carry a WebSocket on a thread of its own (the request's thread, one of the API's few, is freed at
        once): send the caller's handshake (``headers`` from ``lab_headers``, the ``Upgrade`` and
        ``Connection`` headers added again) to ``lab``, then copy bytes both ways until either side ends, and
        close ``caller``.  ``TooManyWebSockets`` (nothing started) past ``max_websockets`` for this lab; a lab
        that does not take the connection is told to the caller through ``on_refused`` (status, sentence)."""
        key = id(lab)
        with self._lock:
            if self._open.get(key, 0) >= self.max_websockets:
                raise TooManyWebSockets(f"the notebook has {self.max_websockets} connections open already")
            self._open[key] = self._open.get(key, 0) + 1
        try:
            threading.Thread(target=self._carry, args=(lab, caller, target, headers, on_refused), daemon=True,
                             name=f"notebook-websocket-{lab.plan.workspace_id}").start()
        except BaseException:
            self._release(key)
            raise

    def _carry(self, lab: Lab, caller: socket.socket, target: str, headers: list[tuple[str, str]],
               on_refused: Callable[[socket.socket, int, str], None]) -> None:
        try:
            with caller, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as inward:
                inward.settimeout(CONNECT_SECONDS)
                try:
                    inward.connect(str(lab.socket_path))
                except OSError:
                    on_refused(caller, 502, "The notebook does not answer: it may be stopping; ask for it again.")
                    return
                head = [f"GET {target} HTTP/1.1", "Upgrade: websocket", "Connection: Upgrade",
                        *(f"{name}: {value}" for name, value in headers)]
                inward.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
                inward.settimeout(None)
                caller.settimeout(None)
                splice(caller, inward)
        except OSError:
            pass  # either side went away: the WebSocket is over
        finally:
            self._release(id(lab))

    def _release(self, key: int) -> None:
        with self._lock:
            self._open[key] -= 1
            if not self._open[key]:
                del self._open[key]

    def open_websockets(self, lab: Lab) -> int:
        """How many WebSockets are proxied to ``lab`` now."""
        with self._lock:
            return self._open.get(id(lab), 0)
