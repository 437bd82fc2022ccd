"""The async client listens too: ``await client.events.listen(...)`` over the same codec and models, on the
built-in broker's real socket."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

import httpx
import pytest
from tests.clients.bridge import AsyncWSGIBridge
from tests.conftest import Person
from tests.messages_support import (
    LiveServer,
    foreign_process,
    free_port,
    live_server,  # noqa: F401 (the server fixture)
)

from wasdi_sdk import AsyncWasdiClient, PermissionDeniedError
from wasdi_sdk.events.stream import EventsUnavailableError
from wasdi_sdk.models.events import BrokerAddress, ProcessUpdateMessage, TextMessage

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def client(server: LiveServer, who: Person) -> AsyncWasdiClient:
    http = httpx.AsyncClient(transport=AsyncWSGIBridge(server.app), base_url="http://testserver")
    return AsyncWasdiClient(base_url="http://testserver", session_token=who.token, http_client=http, max_retries=0)


async def test_the_async_client_listens(server: LiveServer, alice: Person, stranger: Person) -> None:
    ws = str(server.get("/ws/create", alice, name="w").json["stringValue"])
    async with client(server, alice) as sdk:
        address = await sdk.events.address()
        assert address.url.endswith(f":{server.broker.port}/rabbit-stomp/ws")
        async with await sdk.events.listen(ws, timeout=10) as events:
            server.services.messages.send("UPDATEPROCESSES", "p-1;RUNNING;12", ws, result=None)
            server.services.messages.send("INFO", "hello", ws)
            heard = []
            async for message in events:
                heard.append(message)
                if len(heard) == 2:
                    break
        assert isinstance(heard[0], ProcessUpdateMessage) and heard[0].progress_perc == 12
        assert isinstance(heard[1], TextMessage) and heard[1].payload == "hello"
    async with client(server, stranger) as sdk:
        with pytest.raises(PermissionDeniedError):
            await sdk.events.listen(ws)
        with pytest.raises(EventsUnavailableError):
            await sdk.events.listen(ws, address=BrokerAddress(url=f"ws://127.0.0.1:{free_port()}/"))


async def test_the_async_stream_times_out_and_reconnects(server: LiveServer, alice: Person) -> None:
    ws = str(server.get("/ws/create", alice, name="w").json["stringValue"])
    async with client(server, alice) as sdk:
        events = await sdk.events.listen(ws)
        assert await events.get(0.2) is None
        port = server.broker.port
        server.broker.stop()
        from wasdi_server.messages.access import Gatekeeper
        from wasdi_server.messages.broker import StompBroker

        again = StompBroker(server.broker.exchange, Gatekeeper(server.services.sessions, server.services.workspaces),
                            host="127.0.0.1", port=port)
        again.start()
        try:
            for _ in range(100):
                server.services.messages.send("INFO", "after", ws)
                message = await events.get(0.3)
                if message is not None:
                    break
            assert message is not None and message.payload == "after" and events.reconnects >= 1
        finally:
            await events.aclose()
            again.stop()
        await asyncio.sleep(0)


def finish_on_second_read(server: LiveServer, pid: str) -> tuple[list[object], Callable[[object], None]]:
    """Reads seen, and an ``on_update`` ending ``pid`` DONE (with its message) 0.3 s after the second read: a
    wait on messages reads twice at once (before and after subscribing), so the change comes while it listens."""
    reads: list[object] = []

    def on_update(process: object) -> None:
        reads.append(process)
        if len(reads) == 2:
            threading.Timer(0.3, server.services.processes.set_status, (pid, "DONE", 100),
                            {"notify": True}).start()
    return reads, on_update


async def test_an_async_wait_wakes_on_the_message_not_the_poll(server: LiveServer, alice: Person) -> None:
    ws = str(server.get("/ws/create", alice, name="w").json["stringValue"])
    pid = foreign_process(server, alice.user_id, ws, "RUNNING")
    reads, on_update = finish_on_second_read(server, pid)
    async with client(server, alice) as sdk:
        started = time.monotonic()
        final = await sdk.processes.wait(pid, poll_interval=30, max_interval=30, on_update=on_update)
        elapsed = time.monotonic() - started
    assert final.status == "DONE" and elapsed < 5 and len(reads) == 3  # polling alone would take 30 s


async def test_with_the_broker_port_closed_an_async_wait_polls(server: LiveServer, alice: Person) -> None:
    ws = str(server.get("/ws/create", alice, name="w").json["stringValue"])
    server.broker.stop()
    pid = foreign_process(server, alice.user_id, ws, "RUNNING")
    threading.Timer(0.5, server.services.processes.set_status, (pid, "DONE", 100)).start()
    reads: list[object] = []
    async with client(server, alice) as sdk:
        started = time.monotonic()
        final = await sdk.wait_for_process(pid, poll_interval=0.2, max_interval=0.2, on_update=reads.append,
                                           timeout=20)
        elapsed = time.monotonic() - started
    assert final.status == "DONE" and elapsed < 5 and len(reads) >= 3
