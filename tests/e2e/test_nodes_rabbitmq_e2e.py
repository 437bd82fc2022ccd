"""With RabbitMQ (``broker_url`` on every node) a message born on a compute node is published by that node to
the deployment's one broker, as the original's nodes do: a real consumer on this machine's RabbitMQ
(127.0.0.1:5672) hears the UPDATEPROCESSES of work that runs on a compute node, and no message goes through
the main node.  The deployment publishes to an exchange of its own (other people use the same broker)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from tests.e2e.deployment import ALICE, Deployment, start_deployment
from tests.messages_support import RABBIT_URL, rabbit_exchange
from tests.postgres import empty_schema
from tests.server.test_rabbitmq import Consumer


@pytest.fixture(scope="module")
def exchange() -> Iterator[str]:
    with rabbit_exchange("wasdi-nodes-test") as name:
        yield name


@pytest.fixture(scope="module")
def deployment(pg_database: str, exchange: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    empty_schema(pg_database)
    d = start_deployment(tmp_path_factory.mktemp("rabbit-deployment"), pg_database, compute=("node1",),
                         settings={"broker_url": RABBIT_URL, "broker_exchange": exchange,
                                   "broker_retry_seconds": "0.5"})
    try:
        yield d
    finally:
        d.close()


def test_a_compute_nodes_messages_go_to_rabbitmq_from_the_compute_node(deployment: Deployment,
                                                                        exchange: str) -> None:
    d = deployment
    with d.http(ALICE) as main:
        workspace = main.get("/ws/create", params={"name": "rabbit", "node": "node1"}).json()["stringValue"]
    consumer = Consumer(exchange, workspace)
    try:
        with d.http(ALICE) as main:  # sent to the main node, which forwards it to node 1, where it runs
            r = main.post("/product/uploadfile", params={"workspace": workspace, "name": "notes.txt"},
                          files={"file": ("notes.txt", b"heard through RabbitMQ\n")})
            assert r.status_code == 200, r.text
        got = consumer.take(3, timeout=60)  # the ingest's progress, and its INGEST once it is done
    finally:
        consumer.close()
    assert {method.routing_key for method, _, _ in got} == {workspace}
    bodies = [json.loads(body) for _, _, body in got]
    assert {b["messageCode"] for b in bodies} >= {"UPDATEPROCESSES", "INGEST"}
    process_id = next(b["payload"] for b in bodies if b["messageCode"] == "UPDATEPROCESSES").split(";")[0]
    with d.http(ALICE, "node1") as node1:  # the work was node 1's, and so was the message
        record = node1.get("/process/byid", params={"procws": process_id}).json()
        assert (record["workspaceId"], record["operationType"]) == (workspace, "INGEST")
    time.sleep(0.5)
    assert "/nodes/messages" not in d.nodes["wasdi"].output() + d.nodes["node1"].output()
    assert "the main node's message broker" not in d.nodes["node1"].output()
