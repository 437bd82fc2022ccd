"""A compute node's hand-over of its messages to the main node's built-in broker (messages/relay.py): the
request that causes a message never waits for the main node, whatever state it is in; the messages wait in a
bounded queue while it is down and reach it in order, with the node secret, once it is back."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from wasdi_server.messages.publisher import Message
from wasdi_server.messages.relay import NODE_MESSAGES, Fanout, MainNodeRelay, messages_of
from wasdi_server.nodes.client import NodeClient
from wasdi_server.nodes.identity import FROM_HEADER, SECRET_HEADER, NodeIdentity
from wasdi_server.store import open_store

SECRET = "relay-test-secret-0123456789"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class MainNode:
    """A stand-in main node on a real socket that records each hand-over."""

    def __init__(self, port: int) -> None:
        self.received: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                assert self.path == NODE_MESSAGES
                outer.headers.append({k.lower(): v for k, v in self.headers.items()})
                outer.received.extend(json.loads(body))
                self.send_response(200)
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def relay(tmp_path: Path) -> Iterator[tuple[MainNodeRelay, int]]:
    port = free_port()
    identity = NodeIdentity.from_settings("node1", "http://127.0.0.1:1", "postgresql://unused", SECRET,
                                          f"http://127.0.0.1:{port}")
    store = open_store(tmp_path, "tinydb")
    nodes = store.declare("nodes", "nodeCode")
    client = NodeClient(identity, nodes, 2.0, [])  # main_url is allowed without node_urls
    sender = MainNodeRelay(client, 50, min_backoff=0.05, max_backoff=0.2)
    sender.start()
    try:
        yield sender, port
    finally:
        sender.close(1.0)
        client.close()
        store.close()


def wait_until(check: Any, timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < end, "not within the time"
        time.sleep(0.02)


def test_messages_wait_while_the_main_node_is_down_and_reach_it_in_order_with_the_secret(
        relay: tuple[MainNodeRelay, int]) -> None:
    sender, port = relay
    started = time.perf_counter()
    for n in range(30):  # nothing listens at the main node's address yet
        sender.publish(Message("UPDATEPROCESSES", f"p{n};RUNNING;{n}", "ws-1"))
    assert time.perf_counter() - started < 0.05  # publishing never waits for the main node
    time.sleep(0.3)
    assert sender.pending == 30 and not sender.connected
    main = MainNode(port)
    try:
        wait_until(lambda: len(main.received) == 30)
        assert [m["payload"] for m in main.received] == [f"p{n};RUNNING;{n}" for n in range(30)]
        assert {m["workspaceId"] for m in main.received} == {"ws-1"}
        assert all(h[SECRET_HEADER] == SECRET and h[FROM_HEADER] == "node1" for h in main.headers)
        # a message leaves the queue once its send returns, which may be just after the main node has it
        wait_until(lambda: sender.pending == 0)
    finally:
        main.close()


def test_a_long_outage_keeps_only_the_newest_messages(relay: tuple[MainNodeRelay, int]) -> None:
    sender, port = relay
    for n in range(80):  # the queue holds 50
        sender.publish(Message("INFO", f"m{n}", "ws-2"))
    assert sender.pending == 50 and sender.dropped == 30
    main = MainNode(port)
    try:
        wait_until(lambda: len(main.received) == 50)
        assert main.received[0]["payload"] == "m30" and main.received[-1]["payload"] == "m79"
    finally:
        main.close()


def test_a_fanout_gives_each_backend_every_message_and_a_hand_over_is_read_back() -> None:
    got: list[list[Message]] = [[], []]

    class Recorder:
        def __init__(self, into: list[Message]) -> None:
            self.into = into

        def publish(self, message: Message) -> None:
            self.into.append(message)

        def start(self) -> None:
            return None

        def close(self) -> None:
            return None

    fanout = Fanout(Recorder(got[0]), Recorder(got[1]))
    message = Message("UPDATEPROCESSES", "p;DONE;100", "ws-3")
    fanout.publish(message)
    assert got == [[message], [message]]
    assert messages_of(b"[" + message.body + b"]") == [message]
    for bad in (b"{}", b"[1]", b'[{"messageCode": "X"}]', b"not json"):
        with pytest.raises(ValueError):
            messages_of(bad)
