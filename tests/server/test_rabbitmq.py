"""The RabbitMQ backend against this machine's RabbitMQ (127.0.0.1:5672): a real consumer gets each message
with the workspace id as routing key; its Web-STOMP plugin serves the SDK and a STOMP client; and a broker
that is down or slow never holds up requests or runs, and gets the waiting messages once it is back.

Each test publishes to an exchange of its own (other people use the same broker), deleted afterwards; the
one test of ``amq.topic`` (the exchange WASDI's web client subscribes to) listens to a fresh workspace id.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pika
import pytest
from tests.conftest import Person, Server
from tests.messages_support import (
    RABBIT_URL,
    WEB_STOMP_PORT,
    SwitchableProxy,
    foreign_process,
    rabbit_exchange,
    require_rabbitmq,
    stomp_client,
    wait_until,
)
from tests.server.geodata import ingested, make_geotiff

from wasdi_sdk.models.events import ProcessUpdateMessage
from wasdi_server.messages.rabbitmq import RabbitPublisher


@pytest.fixture
def exchange() -> Iterator[str]:
    with rabbit_exchange("wasdi-test") as name:
        yield name


class Consumer:
    """A queue of our own bound to ``exchange`` with one routing key (a workspace id)."""

    def __init__(self, exchange: str, routing_key: str) -> None:
        self.connection = pika.BlockingConnection(pika.URLParameters(RABBIT_URL))
        self.channel = self.connection.channel()
        if not exchange.startswith("amq."):
            self.channel.exchange_declare(exchange, exchange_type="topic", durable=True)
        self.queue = self.channel.queue_declare("", exclusive=True).method.queue
        self.channel.queue_bind(self.queue, exchange, routing_key=routing_key)

    def take(self, count: int, timeout: float = 20.0) -> list[tuple[Any, Any, bytes]]:
        got: list[tuple[Any, Any, bytes]] = []
        deadline = time.monotonic() + timeout
        while len(got) < count and time.monotonic() < deadline:
            method, properties, body = self.channel.basic_get(self.queue, auto_ack=True)
            if method is None:
                self.connection.sleep(0.02)
                continue
            got.append((method, properties, body))
        return got

    def close(self) -> None:
        self.connection.close()


def rabbit_server(tmp_path: Path, broker_url: str, exchange: str, **settings: Any) -> Server:
    return Server(tmp_path / "data", broker_url=broker_url, broker_exchange=exchange, broker_retry_seconds=0.3,
                  **settings)


def updates(server: Server, who: Person, ws: str, percs: range) -> list[float]:
    """Move a process of ``ws`` through ``percs`` with ``sendrabbit``; how long each request took."""
    pid = foreign_process(server, who.user_id, ws)
    took = []
    for perc in percs:
        started = time.monotonic()
        r = server.get("/process/updatebyid", who, procws=pid, status="WAITING", perc=str(perc), sendrabbit="1")
        took.append(time.monotonic() - started)
        assert r.status_code == 200 and r.json["progressPerc"] == perc
    return took


def test_a_consumer_gets_each_message_with_the_workspace_as_routing_key(tmp_path: Path, exchange: str) -> None:
    server = rabbit_server(tmp_path, RABBIT_URL, exchange)
    try:
        alice = server.add_user("alice@example.org")
        ws = server.get("/ws/create", alice, name="w").json["stringValue"]
        consumer = Consumer(exchange, ws)
        try:
            wait_until(lambda: server.services.messages.backend.connected, what="the publisher's connection")
            updates(server, alice, ws, range(1, 4))
            record = ingested(server, alice, ws, make_geotiff(tmp_path / "scene.tif", count=1))
            got = consumer.take(3 + 3)  # three updates; then the import's RUNNING, INGEST, DONE
        finally:
            consumer.close()
    finally:
        server.close()
    bodies = [json.loads(body) for _, _, body in got]
    assert all(method.routing_key == ws for method, _, _ in got)
    assert all(properties.content_type == "application/json" for _, properties, _ in got)
    assert [b["payload"].split(";")[2] for b in bodies[:3]] == ["1", "2", "3"]
    assert bodies[0] == {"messageCode": "UPDATEPROCESSES", "messageResult": None,
                         "payload": bodies[0]["payload"], "workspaceId": ws}
    (ingest,) = [b for b in bodies if b["messageCode"] == "INGEST"]
    assert ingest["messageResult"] == "OK" and ingest["payload"]["fileName"] == record["fileName"]


def test_web_stomp_serves_the_sdk_and_a_stomp_client(tmp_path: Path) -> None:
    require_rabbitmq(web_stomp=True)
    server = rabbit_server(tmp_path, RABBIT_URL, "amq.topic", webstomp_login="guest", webstomp_passcode="guest",
                           webstomp_url=f"ws://127.0.0.1:{WEB_STOMP_PORT}/ws")
    try:
        alice = server.add_user("alice@example.org")
        ws = server.get("/ws/create", alice, name="w").json["stringValue"]
        sdk = server.sdk(alice)
        address = sdk.events.address()
        assert not address.session_as_passcode and address.login == "guest"
        wait_until(lambda: server.services.messages.backend.connected, what="the publisher's connection")
        connection, heard = stomp_client(WEB_STOMP_PORT, path="/ws")
        connection.connect("guest", "guest", wait=True)
        connection.subscribe(f"/exchange/amq.topic/{ws}", id="1", headers={"receipt": "r"})
        wait_until(lambda: "r" in heard.receipts, what="RabbitMQ's receipt")
        with sdk.events.listen(ws, timeout=20) as events:
            updates(server, alice, ws, range(7, 8))
            message = events.get(20)
        assert isinstance(message, ProcessUpdateMessage) and message.progress_perc == 7
        wait_until(lambda: heard.messages, what="the STOMP client's message")
        assert json.loads(heard.messages[0].body)["payload"] == message.payload
        connection.disconnect()
    finally:
        server.close()


def test_a_broker_down_or_slow_holds_up_nothing_and_gets_the_messages_once_back(
        tmp_path: Path, exchange: str) -> None:
    proxy = SwitchableProxy(5672)
    server = rabbit_server(tmp_path, f"amqp://guest:guest@127.0.0.1:{proxy.port}/", exchange)
    publisher = server.services.messages.backend
    assert isinstance(publisher, RabbitPublisher)
    consumer = Consumer(exchange, "")
    try:
        alice = server.add_user("alice@example.org")
        ws = server.get("/ws/create", alice, name="w").json["stringValue"]
        consumer.channel.queue_bind(consumer.queue, exchange, routing_key=ws)
        # Down: connections refused.
        took = updates(server, alice, ws, range(0, 10))
        record = ingested(server, alice, ws, make_geotiff(tmp_path / "a.tif", count=1))  # a run goes on
        assert record["fileName"] == "a.tif" and max(took) < 0.5
        # Slow: connections accepted and never answered (the sender waits on its socket, requests do not).
        proxy.set("slow")
        time.sleep(0.5)
        took = updates(server, alice, ws, range(10, 20))
        assert max(took) < 0.5 and publisher.pending >= 20
        # Back: everything waiting is delivered, in order.
        proxy.set("up")
        wait_until(lambda: publisher.pending == 0, timeout=60, what="the waiting messages' delivery")
        bodies = [json.loads(body) for _, _, body in consumer.take(23, timeout=20)]
        percs = [b["payload"].split(";")[2] for b in bodies if b["messageCode"] == "UPDATEPROCESSES"
                 and b["payload"].split(";")[1] == "WAITING"]
        assert percs == [str(n) for n in range(20)]
        assert any(b["messageCode"] == "INGEST" for b in bodies)
    finally:
        consumer.close()
        server.close()
        proxy.close()


def test_past_its_limit_the_oldest_waiting_messages_are_dropped(tmp_path: Path, exchange: str) -> None:
    proxy = SwitchableProxy(5672)
    server = rabbit_server(tmp_path, f"amqp://guest:guest@127.0.0.1:{proxy.port}/", exchange,
                           broker_queue_messages=5)
    publisher = server.services.messages.backend
    assert isinstance(publisher, RabbitPublisher)
    try:
        alice = server.add_user("alice@example.org")
        ws = server.get("/ws/create", alice, name="w").json["stringValue"]
        updates(server, alice, ws, range(0, 12))
        assert publisher.pending == 5 and publisher.dropped == 7
        consumer = Consumer(exchange, ws)
        try:
            proxy.set("up")
            wait_until(lambda: publisher.pending == 0, timeout=60, what="the delivery")
            kept = [json.loads(body)["payload"].split(";")[2] for _, _, body in consumer.take(5)]
        finally:
            consumer.close()
        assert kept == ["7", "8", "9", "10", "11"]
    finally:
        server.close()
        proxy.close()
