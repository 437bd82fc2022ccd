"""The shared database restarted under load, with a PostgreSQL server of the test's own (started from the
installed binaries, so restarting it disturbs nobody else's tests): requests made while it is down fail in
their endpoint's own failure style, never with a traceback; the pool reconnects by itself when it is back;
nothing a node acknowledged is lost."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from tests.e2e.deployment import ALICE, Deployment, free_port, start_deployment
from tests.postgres import OwnPostgres, admin_connection


@pytest.fixture
def own_postgres() -> Iterator[OwnPostgres]:
    server = OwnPostgres(free_port())
    try:
        server.init()
        server.start()
        with admin_connection(server.url()) as conn:
            conn.execute("CREATE DATABASE wasdi")
        yield server
    finally:
        server.remove()


def test_the_database_restarted_under_load(own_postgres: OwnPostgres, tmp_path: Path) -> None:
    d: Deployment = start_deployment(tmp_path / "deployment", own_postgres.url("wasdi"), compute=(),
                                     settings={"store_timeout_seconds": "1.5"})
    acknowledged: list[str] = []
    refused: list[httpx.Response] = []
    stop = threading.Event()

    def load() -> None:
        with d.http(ALICE, timeout=30) as main:
            n = 0
            while not stop.is_set():
                n += 1
                created = main.get("/ws/create", params={"name": f"ws {n}"})
                listed = main.get("/ws/byuser")
                if created.status_code == 200 and created.json() is not None:
                    acknowledged.append(created.json()["stringValue"])
                else:
                    refused.append(created)
                if listed.status_code != 200 or not isinstance(listed.json(), list):
                    refused.append(listed)

    try:
        d.token(ALICE)
        worker = threading.Thread(target=load)
        worker.start()
        time.sleep(1.5)
        own_postgres.stop("fast")  # every connection of the node is cut
        time.sleep(5.0)  # longer than the node waits for a connection
        during = len(acknowledged)
        own_postgres.start()
        restarted = time.monotonic()
        end = restarted + 30
        while len(acknowledged) < during + 10 and time.monotonic() < end:
            time.sleep(0.2)
        stop.set()
        worker.join(60)
        assert len(acknowledged) >= during + 10, "the node did not come back after the database did"
        assert refused, "no request was made while the database was down"
        for answer in refused:  # each in its endpoint's style: /ws/create and /ws/byuser are style C (HTTP 200)
            assert answer.status_code == 200, answer.text
            assert "Traceback" not in answer.text
        assert "the database" in d.nodes["wasdi"].output()  # logged as a warning, one line each
        with d.http(ALICE) as main:
            listed = {w["workspaceId"] for w in main.get("/ws/byuser").json()}
        assert set(acknowledged) <= listed  # nothing acknowledged was lost
    finally:
        stop.set()
        d.close()
