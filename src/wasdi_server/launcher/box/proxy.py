"""The box's HTTP(S) proxy door: the server's outbound guard (``providers/outbound.py``) made a service.

A boxed run has no network but loopback, where the box puts a door whose connections the server answers with
``OutboundProxy.serve``.  The run asks for a host by name (``CONNECT host:port`` for HTTPS, an absolute-URI
request for plain HTTP) and the server resolves the name itself, so a boxed build needs no resolver, then judges
every address the name stands for with the one guard: loopback, private, link-local (the cloud metadata address
``169.254.169.254``), multicast, unspecified and reserved addresses are refused unless the operator allows the
host by name or network (``proxy_allowed_hosts``); the operator's deny list (``proxy_denied_hosts``) wins over
everything but the package index the server is configured with, which builds always reach.  Only the ports runs
may use (``app_outbound_ports``) and the index's are reached.

A refusal is answered ``403`` with a one-line reason.  Each connection is one line of the run's own log: the host
and port asked for, the address reached, the bytes each way, allowed or refused and why.  Never a path, a
query, a header or a credential: those can carry secrets.  Bounded: at most ``max_connections`` open at once
per run (as many more wait up to ``idle_seconds`` for a slot, any further one is answered 429), and a
connection idle ``idle_seconds`` (headers not finished, nothing moving either way) is closed.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import re
import selectors
import socket
import threading
import time
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ...providers.outbound import OutboundPolicy, OutboundRefused, judge, lookup
from .doors import RunIdentity

if TYPE_CHECKING:
    from ...settings import Settings

MAX_HEAD_BYTES = 64 * 1024
"""Longest request line and headers a run may send before its request is answered 431."""
CHUNK = 64 * 1024
HOST_NAME = re.compile(r"^[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,251}[A-Za-z0-9_.])?$")
INDEX_VARIABLES = ("UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX", "PIP_INDEX_URL",
                   "PIP_EXTRA_INDEX_URL")
"""The installers' variables that name package indexes (the builds are given them: engines/python_env.py)."""
FILE_HOSTS = {"pypi.org": ("files.pythonhosted.org",)}
"""Where an index's pages send the installer for the files themselves."""
HOP_HEADERS = frozenset({b"proxy-connection", b"proxy-authorization", b"connection", b"keep-alive"})
"""Headers meant for the proxy, not the host: dropped from a forwarded plain HTTP request."""


class ProxyError(Exception):
    """A request answered by the proxy itself: ``status`` and a one-line reason (also the log's)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


REASONS = {400: "Bad Request", 403: "Forbidden", 408: "Request Timeout", 429: "Too Many Requests",
           431: "Request Header Fields Too Large", 502: "Bad Gateway", 504: "Gateway Timeout"}


def index_hosts(index_url: str, environ: Mapping[str, str] | None = None) -> frozenset[str]:
    """The hosts of the package indexes builds use: the server's ``package_index_url``, the indexes the
    installers' variables name, and the hosts those indexes serve their files from."""
    environ = os.environ if environ is None else environ
    urls = [index_url, *(word for name in INDEX_VARIABLES for word in environ.get(name, "").split())]
    hosts: set[str] = set()
    for url in urls:
        # uv's UV_INDEX entries may be named: ``name=https://...``
        url = url.split("=", 1)[1] if "=" in url.split("://", 1)[0] else url
        try:
            parts = urlsplit(url)
        except ValueError:
            continue
        if parts.scheme in ("http", "https") and parts.hostname:
            host = parts.hostname.lower().rstrip(".")
            hosts.add(host)
            hosts.update(FILE_HOSTS.get(host, ()))
    return frozenset(hosts)


@dataclass(frozen=True)
class ProxyRules:
    """Which hosts and ports a run may reach through the proxy (everything public on ``ports`` by default)."""

    ports: frozenset[int]
    allowed: OutboundPolicy = field(default_factory=OutboundPolicy)
    denied: OutboundPolicy = field(default_factory=OutboundPolicy)
    index: frozenset[str] = frozenset()
    """Hosts of the package index: always let through (any address, the deny list notwithstanding)."""
    index_ports: frozenset[int] = frozenset({443})

    @classmethod
    def from_settings(cls, settings: Settings, environ: Mapping[str, str] | None = None) -> ProxyRules:
        index = index_hosts(settings.package_index_url, environ)
        return cls(frozenset(int(p) for p in settings.app_outbound_ports),
                   OutboundPolicy.from_hosts(settings.proxy_allowed_hosts),
                   OutboundPolicy.from_hosts(settings.proxy_denied_hosts), index,
                   frozenset({80, 443} | _index_ports(settings.package_index_url)))

    def _denied_name(self, host: str) -> bool:
        # A denied name covers its subdomains: denying example.org denies files.example.org.
        labels = host.split(".")
        return any(self.denied.allows_name(".".join(labels[i:])) for i in range(len(labels)))

    def address(self, host: str, port: int) -> tuple[str, str]:
        """The address to connect to for ``host:port`` and why it is allowed; ``ProxyError`` 403 when refused."""
        if host in self.index:
            if port not in self.index_ports:
                raise ProxyError(403, f"port {port} of the package index {host} is refused")
            return str(self._lookup(host, port)[0]), "the package index"
        if port not in self.ports:
            raise ProxyError(403, f"port {port} is refused: runs may connect to ports "
                                  f"{', '.join(map(str, sorted(self.ports)))} (app_outbound_ports)")
        if self._denied_name(host):
            raise ProxyError(403, f"{host} is on the operator's deny list (proxy_denied_hosts)")
        candidates = self._lookup(host, port)
        for candidate in candidates:
            if self.denied.allows_address(candidate):
                raise ProxyError(403, f"{host} is refused: {candidate} is on the operator's deny list "
                                      "(proxy_denied_hosts)")
        try:
            address = judge(host, candidates, self.allowed, what="connections to", setting="proxy_allowed_hosts")
        except OutboundRefused as e:
            raise ProxyError(403, str(e)) from e
        allowed = self.allowed.allows_name(host) or any(self.allowed.allows_address(c) for c in candidates)
        return address, "allowed by the operator" if allowed else "a public address"

    @staticmethod
    def _lookup(host: str, port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
        try:
            return lookup(host, port)
        except OutboundRefused as e:
            raise ProxyError(502, str(e)) from e


def _index_ports(url: str) -> set[int]:
    try:
        parts = urlsplit(url)
        return {parts.port} if parts.port else set()
    except ValueError:
        return set()


@dataclass
class _Request:
    method: str
    host: str
    port: int
    head: bytes
    """What to send the host before relaying: a plain HTTP request's rewritten head (empty for CONNECT)."""
    rest: bytes
    """Bytes the run sent after its head (the start of a body, or of the TLS handshake)."""


def _authority(text: str, default_port: int | None) -> tuple[str, int]:
    if text.startswith("["):
        host, _, tail = text[1:].partition("]")
        port_text = tail[1:] if tail.startswith(":") else ""
    else:
        host, _, port_text = text.rpartition(":") if ":" in text else (text, "", "")
    if not port_text and default_port is None:
        raise ProxyError(400, "CONNECT needs a host and a port (host:port)")
    try:
        port = int(port_text) if port_text else int(default_port or 0)
    except ValueError:
        raise ProxyError(400, "the port is not a number") from None
    if not 0 < port < 65536:
        raise ProxyError(400, "the port is out of range")
    host = host.lower().rstrip(".")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        if not HOST_NAME.match(host):
            raise ProxyError(400, "the host is not a host name or an address") from None
    return host, port


def _parse(head: bytes, rest: bytes) -> _Request:
    lines = head.split(b"\r\n")
    try:
        method, target, version = lines[0].decode("ascii").split(" ")
    except (UnicodeDecodeError, ValueError):
        raise ProxyError(400, "the request line is not 'METHOD target HTTP/1.x'") from None
    if not version.startswith("HTTP/1.") or not method.isalpha():
        raise ProxyError(400, "the request line is not 'METHOD target HTTP/1.x'")
    if method == "CONNECT":
        host, port = _authority(target, None)
        return _Request(method, host, port, b"", rest)
    parts = urlsplit(target)
    if parts.scheme != "http" or not parts.netloc:
        raise ProxyError(400, "a proxy request names an absolute http:// URL; use CONNECT for https")
    host, port = _authority(parts.netloc.rsplit("@", 1)[-1], 80)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    headers = [line for line in lines[1:] if line and line.split(b":", 1)[0].strip().lower() not in HOP_HEADERS]
    forwarded = [f"{method} {path} {version}".encode("ascii"), *headers, b"Connection: close", b"", b""]
    return _Request(method, host, port, b"\r\n".join(forwarded), rest)


def _answer(connection: socket.socket, status: int, reason: str) -> None:
    body = (reason + "\n").encode("utf-8", "replace")
    head = (f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}\r\nContent-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode("ascii")
    with contextlib.suppress(OSError):
        connection.sendall(head + body)


class OutboundProxy:
    """The proxy a boxed run reaches the network through (a ``doors.DoorService``); one serves every run."""

    def __init__(self, rules: ProxyRules, *, max_connections: int = 16, idle_seconds: float = 60.0) -> None:
        self.rules = rules
        self.max_connections = max_connections
        self.idle_seconds = idle_seconds
        self._open: dict[Hashable, int] = {}
        self._waiting: dict[Hashable, int] = {}
        self._slots = threading.Condition()

    @classmethod
    def from_settings(cls, settings: Settings) -> OutboundProxy:
        return cls(ProxyRules.from_settings(settings), max_connections=settings.proxy_max_connections,
                   idle_seconds=settings.proxy_idle_seconds)

    def serve(self, connection: socket.socket, run: RunIdentity) -> None:
        """Answer one connection ``run`` made through the proxy door; blocking; returns when done; closes it."""
        key: Hashable = run  # one RunIdentity per run: its log callable tells two runs of one user apart
        try:
            if not self._admit(key):
                reason = (f"this run already has {self.max_connections} connections open through the proxy and as "
                          "many waiting (proxy_max_connections)")
                run.log(f"proxy: a connection refused (429): {reason}")
                _answer(connection, 429, reason)
                return
            try:
                self._serve(connection, run)
            finally:
                with self._slots:
                    left = self._open.pop(key, 1) - 1
                    if left:
                        self._open[key] = left
                    self._slots.notify_all()
        finally:
            connection.close()

    def _admit(self, key: Hashable) -> bool:
        """Take one of the run's connection slots, waiting up to ``idle_seconds`` for one (installers open many
        connections at once, and retry a refusal only after a pause); False when none came, or when as many
        connections are already waiting as may be open."""
        deadline = time.monotonic() + self.idle_seconds
        with self._slots:
            while self._open.get(key, 0) >= self.max_connections:
                left = deadline - time.monotonic()
                if left <= 0 or self._waiting.get(key, 0) >= self.max_connections:
                    return False
                self._waiting[key] = self._waiting.get(key, 0) + 1
                try:
                    self._slots.wait(left)
                finally:
                    waiting = self._waiting.pop(key, 1) - 1
                    if waiting:
                        self._waiting[key] = waiting
            self._open[key] = self._open.get(key, 0) + 1
            return True

    def _serve(self, connection: socket.socket, run: RunIdentity) -> None:
        connection.settimeout(self.idle_seconds)
        request: _Request | None = None
        try:
            request = _parse(*self._read_head(connection))
            address, why = self.rules.address(request.host, request.port)
            upstream = self._connect(address, request.port)
        except ProxyError as e:
            what = f"{request.method} {_shown(request.host)}:{request.port}" if request else "a request"
            run.log(f"proxy: {what} refused ({e.status}): {e.reason}")
            _answer(connection, e.status, e.reason)
            return
        started = time.monotonic()
        with upstream:
            if request.method == "CONNECT":
                connection.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            sent, received, idle = self._relay(connection, upstream, request.head + request.rest)
        run.log(f"proxy: {request.method} {_shown(request.host)}:{request.port} ({address}) allowed, {why}: "
                f"{sent} bytes out, {received} bytes in, {time.monotonic() - started:.1f} s"
                + (f", closed after {self.idle_seconds:g} s idle (proxy_idle_seconds)" if idle else ""))

    def _read_head(self, connection: socket.socket) -> tuple[bytes, bytes]:
        data = b""
        deadline = time.monotonic() + self.idle_seconds
        while b"\r\n\r\n" not in data:
            if len(data) > MAX_HEAD_BYTES:
                raise ProxyError(431, f"the request's head is longer than {MAX_HEAD_BYTES} bytes")
            left = deadline - time.monotonic()
            if left <= 0:
                raise ProxyError(408, f"the request's head did not arrive within {self.idle_seconds:g} s")
            connection.settimeout(left)
            try:
                chunk = connection.recv(CHUNK)
            except TimeoutError:
                raise ProxyError(408, f"the request's head did not arrive within {self.idle_seconds:g} s") from None
            except OSError as e:
                raise ProxyError(400, f"the connection failed: {e.strerror or e}") from None
            if not chunk:
                raise ProxyError(400, "the connection closed before the request's head ended")
            data += chunk
        connection.settimeout(self.idle_seconds)
        head, _, rest = data.partition(b"\r\n\r\n")
        return head, rest

    def _connect(self, address: str, port: int) -> socket.socket:
        try:
            return socket.create_connection((address, port), timeout=self.idle_seconds)
        except TimeoutError:
            raise ProxyError(504, f"{address} port {port} did not answer within {self.idle_seconds:g} s") from None
        except OSError as e:
            raise ProxyError(502, f"cannot connect to {address} port {port}: {e.strerror or e}") from None

    def _relay(self, client: socket.socket, upstream: socket.socket, first: bytes) -> tuple[int, int, bool]:
        """Move bytes both ways until both sides are done or nothing moved for ``idle_seconds``: (bytes out,
        bytes in, whether it ended idle)."""
        upstream.settimeout(self.idle_seconds)
        sent = received = 0
        try:
            if first:
                upstream.sendall(first)
                sent += len(first)
            peers = {client: upstream, upstream: client}
            open_reads = {client, upstream}
            with selectors.DefaultSelector() as selector:
                for end in open_reads:
                    selector.register(end, selectors.EVENT_READ, end)
                while open_reads:
                    ready = selector.select(self.idle_seconds)
                    if not ready:
                        return sent, received, True
                    for key, _ in ready:
                        side: socket.socket = key.data
                        data = side.recv(CHUNK)
                        if not data:
                            # One side is done sending: tell the other, and keep reading what it still says.
                            selector.unregister(side)
                            open_reads.discard(side)
                            _shutdown_write(peers[side])
                            continue
                        peers[side].sendall(data)
                        if side is client:
                            sent += len(data)
                        else:
                            received += len(data)
        except TimeoutError:
            return sent, received, True
        except OSError:
            pass
        return sent, received, False


def _shutdown_write(side: socket.socket) -> None:
    with contextlib.suppress(OSError):
        side.shutdown(socket.SHUT_WR)


def _shown(host: str) -> str:
    return f"[{host}]" if ":" in host else host

