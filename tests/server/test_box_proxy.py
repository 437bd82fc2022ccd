"""The box's proxy door (launcher/box/proxy.py) spoken to as a boxed run would: over a socket pair, ``serve`` on a
thread, the HTTP proxy protocol (``CONNECT host:port``, absolute-URI requests), against echo and HTTP servers the
test starts on loopback."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from wasdi_server.launcher.box.doors import RunIdentity
from wasdi_server.launcher.box.proxy import OutboundProxy, ProxyRules, index_hosts
from wasdi_server.providers.outbound import OutboundPolicy
from wasdi_server.settings import Settings


def a_run(user_id: str = "alice") -> RunIdentity:
    """A run as the box's doors name it, its log kept in a list (``run.log.__self__``)."""
    lines: list[str] = []
    return RunIdentity(user_id, "ws-1", "proc-1", lines.append)


def lines_of(run: RunIdentity) -> list[str]:
    lines: list[str] = run.log.__self__  # type: ignore[attr-defined]
    return lines


class Listener:
    """A loopback TCP server: ``echo`` sends back what it reads; ``http`` answers one request, keeping it."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.socket.getsockname()[1]
        self.requests: list[bytes] = []
        self.accepted = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket) -> None:
        with connection:
            if self.mode == "echo":
                while data := connection.recv(65536):
                    connection.sendall(data)
                return
            data = b""
            while b"\r\n\r\n" not in data and (chunk := connection.recv(65536)):
                data += chunk
            self.requests.append(data)
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello")

    def close(self) -> None:
        self.socket.close()


@pytest.fixture
def echo() -> Iterator[Listener]:
    listener = Listener("echo")
    yield listener
    listener.close()


@pytest.fixture
def web() -> Iterator[Listener]:
    listener = Listener("http")
    yield listener
    listener.close()


class Door:
    """One connection of a run to the proxy: the run's end of a socket pair, the proxy serving the other."""

    def __init__(self, proxy: OutboundProxy, run: RunIdentity) -> None:
        self.run = run
        self.mine, theirs = socket.socketpair()
        self.mine.settimeout(10)
        self.thread = threading.Thread(target=proxy.serve, args=(theirs, run), daemon=True)
        self.thread.start()

    def send(self, data: bytes) -> None:
        self.mine.sendall(data)

    def head(self) -> bytes:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = self.mine.recv(1)
            if not chunk:
                break
            data += chunk
        return data

    def rest(self) -> bytes:
        data = b""
        while chunk := self.mine.recv(65536):
            data += chunk
        return data

    def finish(self) -> list[str]:
        self.mine.close()
        self.thread.join(10)
        assert not self.thread.is_alive(), "serve did not return"
        return lines_of(self.run)


def proxy_for(ports: set[int], allowed: tuple[str, ...] = (), denied: tuple[str, ...] = (),
              index: tuple[str, ...] = (), **options: float) -> OutboundProxy:
    rules = ProxyRules(frozenset(ports), OutboundPolicy.from_hosts(allowed), OutboundPolicy.from_hosts(denied),
                       frozenset(index), frozenset(ports))
    return OutboundProxy(rules, **options)  # type: ignore[arg-type]


def tunnel(proxy: OutboundProxy, authority: str, run: RunIdentity | None = None) -> tuple[Door, bytes]:
    door = Door(proxy, run or a_run())
    door.send(f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n".encode())
    return door, door.head()


def test_connect_to_an_allowed_echo_server_passes_and_logs_the_bytes(echo: Listener) -> None:
    door, head = tunnel(proxy_for({echo.port}, allowed=("127.0.0.1/32",)), f"127.0.0.1:{echo.port}")
    assert head.startswith(b"HTTP/1.1 200 "), head
    door.send(b"hello, echo")
    assert door.mine.recv(100) == b"hello, echo"
    door.mine.shutdown(socket.SHUT_WR)
    assert door.rest() == b""
    lines = door.finish()
    assert len(lines) == 1, lines
    assert f"CONNECT 127.0.0.1:{echo.port} (127.0.0.1) allowed, allowed by the operator" in lines[0]
    assert "11 bytes out, 11 bytes in" in lines[0]


def test_an_allowed_name_passes(echo: Listener) -> None:
    door, head = tunnel(proxy_for({echo.port}, allowed=("localhost",)), f"localhost:{echo.port}")
    assert head.startswith(b"HTTP/1.1 200 "), head
    door.send(b"x")
    assert door.mine.recv(10) == b"x"
    assert "allowed" in door.finish()[0]


@pytest.mark.parametrize(("authority", "reason"), [
    ("127.0.0.1", "a loopback address"), ("10.0.0.1", "a private address"),
    ("169.254.169.254", "a link-local address"), ("[::1]", "a loopback address"),
    ("localhost", "a loopback address"), ("0.0.0.0", "an unspecified address"),
    ("224.0.0.1", "a multicast address"), ("240.0.0.1", "address (240.0.0.1)"),
])
def test_non_public_addresses_are_refused_with_403(authority: str, reason: str) -> None:
    door, head = tunnel(proxy_for({443}), f"{authority}:443")
    assert head.startswith(b"HTTP/1.1 403 Forbidden"), head
    body = door.rest().decode()
    assert reason in body and "proxy_allowed_hosts" in body and body.count("\n") == 1, body
    (line,) = door.finish()
    assert f"CONNECT {authority}:443 refused (403)" in line and reason in line, line


def test_a_plain_request_to_the_metadata_address_is_refused_and_its_secrets_never_logged() -> None:
    door = Door(proxy_for({80}), a_run())
    door.send(b"GET http://user:pw@169.254.169.254/latest/meta-data/iam?token=s3cret HTTP/1.1\r\n"
              b"Host: 169.254.169.254\r\nProxy-Authorization: Basic c2VjcmV0\r\n\r\n")
    assert door.head().startswith(b"HTTP/1.1 403 ")
    assert "link-local" in door.rest().decode()
    (line,) = door.finish()
    assert "GET 169.254.169.254:80 refused" in line
    for secret in ("s3cret", "meta-data", "c2VjcmV0", "pw", "user"):
        assert secret not in line, line


def test_the_deny_list_wins_over_the_allow_list(echo: Listener) -> None:
    by_name = proxy_for({echo.port}, allowed=("127.0.0.0/8", "localhost"), denied=("localhost",))
    door, head = tunnel(by_name, f"localhost:{echo.port}")
    assert head.startswith(b"HTTP/1.1 403 ") and "deny list" in door.rest().decode()
    door.finish()
    by_network = proxy_for({echo.port}, allowed=("127.0.0.0/8",), denied=("127.0.0.1/32",))
    door, head = tunnel(by_network, f"localhost:{echo.port}")
    assert head.startswith(b"HTTP/1.1 403 ") and "127.0.0.1 is on the operator's deny list" in door.rest().decode()
    door.finish()
    assert echo.accepted == 0


def test_a_denied_name_covers_its_subdomains() -> None:
    rules = ProxyRules(frozenset({443}), denied=OutboundPolicy.from_hosts(["example.org"]))
    door = Door(OutboundProxy(rules), a_run())
    door.send(b"CONNECT files.EXAMPLE.org.:443 HTTP/1.1\r\n\r\n")
    assert door.head().startswith(b"HTTP/1.1 403 ")
    assert "files.example.org is on the operator's deny list" in door.rest().decode()
    door.finish()


def test_the_package_index_is_always_let_through(echo: Listener) -> None:
    door, head = tunnel(proxy_for({echo.port}, denied=("localhost",), index=("localhost",)), f"localhost:{echo.port}")
    assert head.startswith(b"HTTP/1.1 200 "), head
    door.send(b"simple")
    assert door.mine.recv(10) == b"simple"
    assert "allowed, the package index" in door.finish()[0]


def test_a_port_runs_may_not_use_is_refused(echo: Listener) -> None:
    door, head = tunnel(proxy_for({443}, allowed=("127.0.0.1",)), f"127.0.0.1:{echo.port}")
    assert head.startswith(b"HTTP/1.1 403 ") and "app_outbound_ports" in door.rest().decode()
    door.finish()
    assert echo.accepted == 0


def test_a_plain_http_request_is_forwarded_in_origin_form_without_the_proxy_s_headers(web: Listener) -> None:
    door = Door(proxy_for({web.port}, allowed=("127.0.0.1",)), a_run())
    door.send(f"GET http://127.0.0.1:{web.port}/data?key=s3cret HTTP/1.1\r\nHost: 127.0.0.1:{web.port}\r\n"
              "Proxy-Authorization: Basic c2VjcmV0\r\nProxy-Connection: keep-alive\r\nAccept: */*\r\n\r\n".encode())
    assert door.head().startswith(b"HTTP/1.1 200 OK")
    assert door.rest() == b"hello"
    (line,) = door.finish()
    (request,) = web.requests
    assert request.startswith(b"GET /data?key=s3cret HTTP/1.1\r\n")
    assert b"Accept: */*" in request and b"Connection: close" in request
    assert b"Proxy-" not in request and b"c2VjcmV0" not in request
    assert f"GET 127.0.0.1:{web.port} (127.0.0.1) allowed" in line and "s3cret" not in line and "/data" not in line


@pytest.mark.parametrize("request_bytes", [
    b"NONSENSE\r\n\r\n", b"CONNECT pypi.org HTTP/1.1\r\n\r\n", b"GET /relative HTTP/1.1\r\n\r\n",
    b"GET https://pypi.org/ HTTP/1.1\r\n\r\n", b"CONNECT bad_host!:443 HTTP/1.1\r\n\r\n",
    b"CONNECT pypi.org:99999 HTTP/1.1\r\n\r\n",
])
def test_a_malformed_request_is_answered_400(request_bytes: bytes) -> None:
    door = Door(proxy_for({443}), a_run())
    door.send(request_bytes)
    assert door.head().startswith(b"HTTP/1.1 400 Bad Request")
    assert "refused (400)" in door.finish()[0]


def test_a_run_has_at_most_its_connections_open_at_once_and_as_many_waiting(echo: Listener) -> None:
    proxy = proxy_for({echo.port}, allowed=("127.0.0.1",), max_connections=1)
    run = a_run()
    first, head = tunnel(proxy, f"127.0.0.1:{echo.port}", run)
    assert head.startswith(b"HTTP/1.1 200 ")
    waiting = Door(proxy, run)
    waiting.send(f"CONNECT 127.0.0.1:{echo.port} HTTP/1.1\r\n\r\n".encode())
    waiting.mine.settimeout(0.5)
    with pytest.raises(TimeoutError):
        waiting.mine.recv(1)
    third = Door(proxy, run)
    assert third.head().startswith(b"HTTP/1.1 429 ")
    assert "proxy_max_connections" in third.rest().decode()
    other_run, head = tunnel(proxy, f"127.0.0.1:{echo.port}", a_run(user_id="bob"))
    assert head.startswith(b"HTTP/1.1 200 "), "another run's connections are counted apart"
    first.finish()
    waiting.mine.settimeout(10)
    assert waiting.head().startswith(b"HTTP/1.1 200 "), "a closed connection frees its slot for a waiting one"
    for door in (waiting, third, other_run):
        door.finish()
    assert any("refused (429)" in line for line in lines_of(run))


def test_a_silent_request_and_an_idle_tunnel_are_closed(echo: Listener) -> None:
    proxy = proxy_for({echo.port}, allowed=("127.0.0.1",), idle_seconds=0.3)
    silent = Door(proxy, a_run())
    silent.send(b"CONNECT 127.0.0.1:")
    assert silent.head().startswith(b"HTTP/1.1 408 ")
    silent.finish()
    started = time.monotonic()
    idle, head = tunnel(proxy, f"127.0.0.1:{echo.port}")
    assert head.startswith(b"HTTP/1.1 200 ")
    assert idle.rest() == b"" and time.monotonic() - started < 5
    assert "closed after 0.3 s idle" in idle.finish()[0]


def test_the_index_hosts_come_from_the_settings_and_the_installers_variables() -> None:
    environ = {"UV_INDEX_URL": "https://mirror.internal.example/simple", "UV_INDEX": "extra=http://10.1.2.3:8080/s",
               "PIP_EXTRA_INDEX_URL": "file:///opt/pypi/simple https://other.example/simple"}
    assert index_hosts("https://pypi.org/simple/", environ) == {
        "pypi.org", "files.pythonhosted.org", "mirror.internal.example", "10.1.2.3", "other.example"}
    settings = Settings(package_index_url="http://devpi.lan:3141/root/pypi/+simple/", app_outbound_ports=[443],
                        proxy_allowed_hosts=["10.0.0.0/8"], proxy_denied_hosts=["evil.example"])
    rules = ProxyRules.from_settings(settings, {})
    assert rules.index == {"devpi.lan"} and 3141 in rules.index_ports and rules.ports == {443}
    assert rules.allowed.allowed_networks and rules.denied.allowed_names == {"evil.example"}
