"""Connections as a budget (``connection_budget.py``) and each listener's use of it: the API's waitress server,
the built-in broker and SFTP shed the idlest connection to make room, never one in use, and close what has not
finished its headers or handshake in time.  (The storms against a real ``serve`` are in
tests/e2e/test_connection_storm.py.)"""

from __future__ import annotations

import contextlib
import json
import resource
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import falcon
import pytest
from tests.conftest import Person, Server
from tests.messages_support import LiveServer, live_server  # noqa: F401 (the server fixture)
from tests.server.transfer_support import connect, create_account, run
from websockets.sync.client import connect as ws_connect

from wasdi_server import descriptor_limit
from wasdi_server.connection_budget import IDLE, STARTED, ConnectionBudget, address_key
from wasdi_server.domains.accounts.login_throttle import LoginThrottle
from wasdi_server.messages.access import Gatekeeper
from wasdi_server.messages.broker import StompBroker
from wasdi_server.serving import make_server
from wasdi_server.transfer.sftp_server import SftpService


class Fake:
    def __init__(self, rank: tuple[int, float] | None) -> None:
        self.rank = rank
        self.closed = False

    def shed_rank(self) -> tuple[int, float] | None:
        return self.rank

    def shed(self) -> None:
        self.closed = True


# -- the budget itself ------------------------------------------------------------------------------------
def test_an_address_past_its_budget_loses_its_idlest_connection_first() -> None:
    budget = ConnectionBudget("test", total=100, per_address=3)
    started, idle_new, idle_old = Fake((STARTED, 1.0)), Fake((IDLE, 50.0)), Fake((IDLE, 10.0))
    for held in (started, idle_new, idle_old):
        assert budget.admit("10.0.0.1", held)
    newcomer = Fake((IDLE, 99.0))
    assert budget.admit("10.0.0.1", newcomer)
    assert idle_old.closed and not idle_new.closed and not started.closed
    assert budget.admit("10.0.0.1", Fake(None))
    assert idle_new.closed and not newcomer.closed  # then the next idlest
    assert budget.admit("10.0.0.1", Fake(None))
    assert newcomer.closed and not started.closed
    assert budget.admit("10.0.0.1", Fake(None))
    assert started.closed  # then the one part-way through its headers
    assert budget.held_by("10.0.0.1") == 3 and len(budget) == 3
    assert not budget.admit("10.0.0.1", Fake((IDLE, 0.0)))  # three in use: the newcomer is refused


def test_connections_in_use_are_never_shed_and_the_newcomer_is_refused() -> None:
    budget = ConnectionBudget("test", total=100, per_address=2)
    busy = [Fake(None), Fake(None)]
    for held in busy:
        assert budget.admit("10.0.0.1", held)
    assert not budget.admit("10.0.0.1", Fake((IDLE, 0.0)))
    assert not any(held.closed for held in busy) and budget.refused_count == 1
    assert budget.admit("10.0.0.2", Fake((IDLE, 0.0)))  # another address is not concerned
    budget.release(busy[0])
    budget.release(busy[0])  # again is fine
    assert budget.admit("10.0.0.1", Fake((IDLE, 0.0)))


def test_a_full_listener_takes_room_from_the_address_holding_the_most() -> None:
    budget = ConnectionBudget("test", total=5, per_address=4)
    crowd = [Fake((IDLE, 100.0 + n)) for n in range(4)]
    for held in crowd:
        assert budget.admit("10.0.0.9", held)
    light = Fake((IDLE, 1.0))  # the longest idle, but its address holds one connection
    assert budget.admit("10.0.0.1", light)
    assert budget.admit("10.0.0.2", Fake(None))
    assert crowd[0].closed and not light.closed and len(budget) == 5


def test_addresses_count_as_ipv4_or_ipv6_64_networks() -> None:
    assert address_key("192.0.2.7") == "192.0.2.7"
    assert address_key("::ffff:192.0.2.7") == "192.0.2.7"
    assert address_key("2001:db8:1:2:aaaa::1") == address_key("2001:db8:1:2:bbbb::9") == "2001:db8:1:2::/64"
    assert address_key("2001:db8:1:3::1") != address_key("2001:db8:1:2::1")
    budget = ConnectionBudget("test", total=10, per_address=1)
    first = Fake((IDLE, 0.0))
    assert budget.admit("2001:db8::1", first)
    assert budget.admit("2001:db8::2", Fake((IDLE, 1.0)))
    assert first.closed


def test_the_budgets_are_cut_to_fit_a_low_hard_limit() -> None:
    budgets = {"http_connections": 4096, "broker_connections": 4096, "sftp_connections": 256}
    roomy = descriptor_limit.DescriptorLimit(1024, 20000, 20000, descriptor_limit.needed(budgets))
    assert roomy.enough and descriptor_limit.fitted(budgets, roomy) == budgets
    tight = descriptor_limit.DescriptorLimit(1024, 2048, 2048, descriptor_limit.needed(budgets))
    cut = descriptor_limit.fitted(budgets, tight)
    assert not tight.enough and "NOT enough" in tight.describe()
    assert sum(cut.values()) + descriptor_limit.RESERVE <= 2048
    assert cut["http_connections"] == cut["broker_connections"] > cut["sftp_connections"] >= 16
    unlimited = descriptor_limit.DescriptorLimit(resource.RLIM_INFINITY, resource.RLIM_INFINITY,
                                                 resource.RLIM_INFINITY, descriptor_limit.needed(budgets))
    assert unlimited.enough and descriptor_limit.fitted(budgets, unlimited) == budgets
    assert "soft limit unlimited" in unlimited.describe()


def test_the_soft_limit_is_raised_within_the_hard_one() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
        limit = descriptor_limit.raise_to_fit({"http_connections": 300})
        assert limit.found == 256 and limit.needed == 300 + descriptor_limit.RESERVE
        expected = limit.needed if hard == resource.RLIM_INFINITY else min(limit.needed, hard)
        assert limit.soft == expected == resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        again = descriptor_limit.raise_to_fit({"http_connections": 1})  # never lowered
        assert again.soft == expected
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


# -- each listener -------------------------------------------------------------------------------------------
def closed_by_peer(client: socket.socket, within: float = 5.0) -> bool:
    """Whether the server closed ``client`` (reading whatever it sent first, e.g. an SSH banner)."""
    client.settimeout(within)
    deadline = time.monotonic() + within
    try:
        while time.monotonic() < deadline:
            if client.recv(4096) == b"":
                return True
    except TimeoutError:
        return False
    except OSError:
        return True
    return False


def still_open(client: socket.socket) -> bool:
    client.setblocking(False)
    try:
        return client.recv(4096) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        client.setblocking(True)


@contextlib.contextmanager
def raw_connections(port: int, count: int, first: bytes = b"") -> Iterator[list[socket.socket]]:
    clients = []
    try:
        for _ in range(count):
            client = socket.create_connection(("127.0.0.1", port), timeout=5)
            if first:
                client.sendall(first)
            clients.append(client)
            time.sleep(0.02)  # in order: the oldest is the idlest
        yield clients
    finally:
        for client in clients:
            client.close()


@pytest.fixture
def api() -> Iterator[tuple[Any, int]]:
    class Hello:
        def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
            resp.media = {"stringValue": "Hello"}

    app = falcon.App()
    app.add_route("/wasdi/hello", Hello())
    server = make_server(app, host="127.0.0.1", port=0, threads=2, connections=50, connections_per_address=4,
                         header_seconds=1.0)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        yield server, server.effective_port
    finally:
        server.close()
        thread.join(5)


def hello(port: int) -> int:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as client:
        client.sendall(b"GET /wasdi/hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        answer = b""
        while chunk := client.recv(4096):
            answer += chunk
    return int(answer.split(b" ", 2)[1])


def test_the_api_sheds_its_idlest_connections_and_ends_late_headers(api: tuple[Any, int]) -> None:
    server, port = api
    with raw_connections(port, 3) as idle, raw_connections(port, 3, b"GET /wasdi/hello HTTP/1.1\r\nHost: x\r\n") \
            as half_sent:
        time.sleep(0.2)
        # 6 connections for a budget of 4 per address: the two oldest idle ones went
        assert closed_by_peer(idle[0], 2) and closed_by_peer(idle[1], 2)
        assert still_open(idle[2]) and all(still_open(c) for c in half_sent)
        assert server.budget.held_by("127.0.0.1") == 4
        assert hello(port) == 200  # a new connection still gets in (and sheds the last idle one)
        assert closed_by_peer(idle[2], 2)
        # the half-sent requests are closed once their headers are 1 s late
        started = time.monotonic()
        assert all(closed_by_peer(c, 5) for c in half_sent)
        assert 0.5 < time.monotonic() - started < 4
    assert hello(port) == 200


def test_the_broker_sheds_connections_not_logged_in_and_keeps_a_listening_one(server: LiveServer,
                                                                              alice: Person) -> None:
    services = server.services
    broker = StompBroker(server.broker.exchange, Gatekeeper(services.sessions, services.workspaces),
                         host="127.0.0.1", port=0, connections=50, connections_per_address=3,
                         handshake_seconds=1.0)
    broker.start()
    try:
        ws = str(server.get("/ws/create", alice, name="w").json["stringValue"])
        with ws_connect(f"ws://127.0.0.1:{broker.port}/") as listening:
            listening.send(f"CONNECT\naccept-version:1.2\npasscode:{alice.token}\n\n\x00")
            assert str(listening.recv(timeout=5)).startswith("CONNECTED")
            listening.send(f"SUBSCRIBE\nid:0\ndestination:/exchange/amq.topic/{ws}\nreceipt:r\n\n\x00")
            assert str(listening.recv(timeout=5)).startswith("RECEIPT")
            with raw_connections(broker.port, 4) as strangers:
                # the budget of 3 holds the subscriber and the 2 newest; nothing of it is the subscriber's
                assert closed_by_peer(strangers[0], 2) and closed_by_peer(strangers[1], 2)
                started = time.monotonic()
                assert closed_by_peer(strangers[3], 5)  # no handshake within 1 s
                assert time.monotonic() - started < 3
            services.messages.send("INFO", "still here", ws)
            assert "still here" in str(listening.recv(timeout=5))
    finally:
        broker.stop()


def test_sftp_sheds_connections_not_logged_in_and_keeps_a_session(tmp_path: Path) -> None:
    app_server = Server(tmp_path / "data")
    try:
        who = app_server.add_user("alice@example.org")
        password = create_account(app_server, who)
        service = SftpService(app_server.services.uploads, host="127.0.0.1", port=0,
                              host_key_path=app_server.settings.sftp_host_key_path, quota_bytes=0,
                              throttle=LoginThrottle(), connections=50, connections_per_address=3,
                              handshake_seconds=1.5)
        service.start()
        try:
            async def scenario() -> None:
                async with connect(service, who.user_id, password) as conn, conn.start_sftp_client() as sftp:
                    with raw_connections(service.port, 4) as strangers:
                        assert closed_by_peer(strangers[0], 2) and closed_by_peer(strangers[1], 2)
                        assert closed_by_peer(strangers[3], 5)  # not logged in within 1.5 s
                    await sftp.mkdir("still-logged-in")
                    assert "still-logged-in" in await sftp.listdir(".")

            run(scenario())
        finally:
            service.stop()
    finally:
        app_server.close()


def test_doctor_reports_the_open_files_limit_serve_would_get(tmp_path: Path) -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]

    def start_with_1024() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))

    done = subprocess.run([sys.executable, "-m", "wasdi_server", "doctor", "--data-dir", str(tmp_path), "--json"],
                          capture_output=True, text=True, timeout=120, check=False, preexec_fn=start_with_1024)
    facts = json.loads(done.stdout)
    needed = 4096 + 4096 + 256 + descriptor_limit.RESERVE
    assert facts["open_files"] == {"soft_at_start": 1024, "soft_when_serving": min(needed, hard), "hard": hard,
                                   "needed": needed}
