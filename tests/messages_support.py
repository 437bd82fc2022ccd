"""A server whose built-in broker really listens (127.0.0.1, a free port), and a real STOMP client for it.

The client is stomp.py's ``WSStompConnection``: an independent implementation of STOMP over WebSocket, so
the broker is checked against somebody else's reading of the protocol, not against our own SDK.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import stomp

from tests import environment
from tests.conftest import Server
from wasdi_server.messages import start_listener
from wasdi_server.messages.broker import StompBroker


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LiveServer(Server):
    """A ``Server`` (in-process API) with its built-in broker listening on 127.0.0.1."""

    def __init__(self, data_dir: Path, **settings: Any) -> None:
        port = free_port()
        super().__init__(data_dir, broker_port=port, webstomp_url=f"ws://127.0.0.1:{port}/rabbit-stomp/ws",
                         **settings)
        broker = start_listener(self.services, host="127.0.0.1")
        assert broker is not None
        self.broker: StompBroker = broker

    def close(self) -> None:
        self.broker.stop()
        super().close()


@pytest.fixture(name="server")
def live_server(tmp_path: Path) -> Iterator[LiveServer]:
    """The ``server`` fixture as a ``LiveServer`` (the users' fixtures, alice and the others, are made on it):
    a test module takes it with ``from tests.messages_support import live_server``."""
    s = LiveServer(tmp_path / "data")
    yield s
    s.close()


def port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def wait_until(check: Callable[[], Any], timeout: float = 10.0, what: str = "the condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout} s")
        time.sleep(0.01)


class Heard(stomp.ConnectionListener):  # type: ignore[misc]
    """What one stomp.py connection received."""

    def __init__(self) -> None:
        self.messages: list[Any] = []
        self.errors: list[Any] = []
        self.receipts: list[str] = []
        self.disconnected = threading.Event()

    def on_message(self, frame: Any) -> None:
        self.messages.append(frame)

    def on_error(self, frame: Any) -> None:
        self.errors.append(frame)

    def on_receipt(self, frame: Any) -> None:
        self.receipts.append(frame.headers.get("receipt-id", ""))

    def on_disconnected(self) -> None:
        self.disconnected.set()

    def bodies(self) -> list[str]:
        return [m.body for m in self.messages]


def stomp_client(port: int, *, headers: dict[str, str] | None = None, path: str = "/rabbit-stomp/ws",
                 heartbeats: tuple[int, int] = (0, 0)) -> tuple[Any, Heard]:
    """A stomp.py connection over WebSocket (not connected yet) and what it hears."""
    # vhost: the CONNECT frame's host header, which RabbitMQ reads as its virtual host.
    connection = stomp.WSStompConnection([("127.0.0.1", port)], ws_path=path, header=headers,
                                         heartbeats=heartbeats, reconnect_attempts_max=1, vhost="/")
    heard = Heard()
    connection.set_listener("heard", heard)
    return connection, heard


# -- RabbitMQ ---------------------------------------------------------------------------------------------
RABBIT_URL = "amqp://guest:guest@127.0.0.1:5672/"
WEB_STOMP_PORT = 15674


def require_rabbitmq(web_stomp: bool = False) -> None:
    """Skip (never under CI=true) when this machine has no RabbitMQ; enable its Web-STOMP plugin if asked."""
    if not port_open(5672):
        environment.unavailable("RabbitMQ does not answer on 127.0.0.1:5672")
    if web_stomp and not port_open(WEB_STOMP_PORT):
        plugins = shutil.which("rabbitmq-plugins") or "/usr/sbin/rabbitmq-plugins"
        try:
            done = subprocess.run([plugins, "enable", "rabbitmq_web_stomp"], capture_output=True, text=True,
                                  timeout=120, check=False)
            reason = done.stderr.strip() or done.stdout.strip()
        except (OSError, subprocess.TimeoutExpired) as e:
            reason = str(e)
        deadline = time.monotonic() + 30
        while not port_open(WEB_STOMP_PORT) and time.monotonic() < deadline:
            time.sleep(0.2)
        if not port_open(WEB_STOMP_PORT):
            environment.unavailable(f"RabbitMQ's Web-STOMP plugin could not be enabled: {reason[:300]}")


class SwitchableProxy:
    """A TCP forwarder on 127.0.0.1 to ``target``: ``down`` (nothing listens: connections refused), ``slow``
    (connections accepted, never answered) or ``up`` (bytes forwarded both ways)."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = free_port()
        self.mode = "down"
        self._listener: socket.socket | None = None
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()

    def set(self, mode: str) -> None:
        self._close_all()
        self.mode = mode
        if mode == "down":
            return
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(16)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener, mode), daemon=True).start()

    def _accept(self, listener: socket.socket, mode: str) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            with self._lock:
                self._sockets.append(client)
            if mode == "slow":
                continue  # held open, never answered
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=5)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets.append(upstream)
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        for each in (source, sink):
            with contextlib.suppress(OSError):
                each.shutdown(socket.SHUT_RDWR)

    def _close_all(self) -> None:
        with self._lock:
            listener, self._listener = self._listener, None
            sockets, self._sockets = self._sockets, []
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)  # wakes the thread waiting in accept()
            listener.close()
        for each in sockets:
            with contextlib.suppress(OSError):
                each.shutdown(socket.SHUT_RDWR)
            each.close()

    def close(self) -> None:
        self._close_all()


def foreign_process(server: Server, user_id: str, ws: str, status: str = "WAITING") -> str:
    """A process record of another node's: no launcher here picks it up, so only the test moves it."""
    pid = f"p-{uuid.uuid4()}"
    server.services.store.collection("process_workspaces").insert({
        "processObjId": pid, "workspaceId": ws, "userId": user_id, "productName": "an-app",
        "operationType": "RUNPROCESSOR", "operationSubType": "", "status": status, "progressPerc": 0, "payload": None,
        "pid": 0, "parentId": None, "nodeCode": "elsewhere", "operationTimestamp": 1.0, "runningTime": 0,
        "lastStateChangeTimestamp": 1.0})
    return pid


@contextlib.contextmanager
def rabbit_exchange(prefix: str) -> Iterator[str]:
    """The name of an exchange of this test's own on the machine's RabbitMQ (a publisher declares it), deleted
    after; skips or fails as ``require_rabbitmq`` does."""
    import pika

    require_rabbitmq()
    name = f"{prefix}-{uuid.uuid4().hex}"
    yield name
    connection = pika.BlockingConnection(pika.URLParameters(RABBIT_URL))
    try:
        connection.channel().exchange_delete(name)
    finally:
        connection.close()
