"""``client.events``: the SDK listens to a workspace on the built-in broker (a real socket), with typed
messages, a timeout, reconnection, and the refusals as the SDK's exceptions; waits wake on messages."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest
from tests.conftest import Person
from tests.messages_support import (
    LiveServer,
    foreign_process,
    free_port,
    live_server,  # noqa: F401 (the server fixture)
    wait_until,
)

from wasdi_sdk import AuthenticationError, PermissionDeniedError, WasdiClient
from wasdi_sdk.events.stream import EventsUnavailableError
from wasdi_sdk.events.updates import ProcessUpdates
from wasdi_sdk.events.waits import wait_for_process
from wasdi_sdk.models.events import (
    BrokerAddress,
    DeleteMessage,
    FailureMessage,
    ProcessUpdateMessage,
    ProductMessage,
    PublishBandMessage,
    TextMessage,
    UnknownMessage,
)
from wasdi_server.messages.access import Gatekeeper
from wasdi_server.messages.broker import StompBroker


@pytest.fixture
def sdk(server: LiveServer, alice: Person) -> WasdiClient:
    return server.sdk(alice)


@pytest.fixture
def ws(sdk: WasdiClient) -> str:
    return str(sdk.workspaces.create(name="events").string_value)


def test_the_server_says_where_to_listen(server: LiveServer, sdk: WasdiClient, monkeypatch: pytest.MonkeyPatch) -> None:
    address = sdk.events.address()
    assert address.url == f"ws://127.0.0.1:{server.broker.port}/rabbit-stomp/ws"
    assert address.session_as_passcode and address.destination_prefix == "/exchange/amq.topic/"
    with pytest.raises(AuthenticationError):
        server.sdk().events.address()
    monkeypatch.setenv("WASDI_WEBSTOMP_URL", "wss://broker.example.org/ws")
    assert server.sdk().events.address().url == "wss://broker.example.org/ws"


def test_each_kind_of_message_is_its_model(server: LiveServer, sdk: WasdiClient, alice: Person, ws: str) -> None:
    send = server.services.messages.send
    with sdk.events.listen(ws, timeout=10) as events:
        send("UPDATEPROCESSES", "p1;RUNNING;40", ws, result=None)
        send("DOWNLOAD", {"name": "scene", "fileName": "scene.tif", "bbox": "1,2,3,4,1"}, ws)
        send("PUBLISHBAND", {"bandName": "B04", "layerId": "l1", "productName": "scene.tif"}, ws)
        send("INFO", "Deploy Done<br>hello is now available", ws)
        send("DOWNLOAD", "cannot fetch it", ws, result="KO")
        send("DELETE", None, ws)
        send("SOMETHINGNEW", {"x": [1]}, ws)
        received = [events.get(5) for _ in range(7)]
    update, product, band, info, failure, deleted, unknown = received
    assert isinstance(update, ProcessUpdateMessage)
    assert (update.process_id, update.status, update.progress_perc, update.ok) == ("p1", "RUNNING", 40, True)
    assert isinstance(product, ProductMessage) and product.payload.file_name == "scene.tif"
    assert isinstance(band, PublishBandMessage) and band.payload.layer_id == "l1"
    assert isinstance(info, TextMessage) and info.text() == "Deploy Done - hello is now available"
    assert isinstance(failure, FailureMessage) and not failure.ok and failure.payload == "cannot fetch it"
    assert isinstance(deleted, DeleteMessage) and deleted.workspace_id == ws
    assert isinstance(unknown, UnknownMessage) and unknown.payload == {"x": [1]}


def test_codes_filter_and_the_timeout_ends_the_iteration(server: LiveServer, sdk: WasdiClient, ws: str) -> None:
    with sdk.events.listen(ws, codes={"INFO"}, timeout=1.0) as events:
        server.services.messages.send("UPDATEPROCESSES", "p;RUNNING;1", ws, result=None)
        server.services.messages.send("INFO", "only this", ws)
        started = time.monotonic()
        heard = list(events)
        assert time.monotonic() - started < 3
    assert [m.message_code for m in heard] == ["INFO"]


def test_refusals_are_the_sdks_exceptions(server: LiveServer, sdk: WasdiClient, ws: str, stranger: Person) -> None:
    with pytest.raises(PermissionDeniedError, match="may not read"):
        server.sdk(stranger).events.listen(ws)
    address = sdk.events.address()
    with pytest.raises(AuthenticationError):
        server.sdk(Person("x", "not-a-session")).events.listen(ws, address=address)


def test_no_broker_to_reach_is_events_unavailable_and_waits_poll(server: LiveServer, sdk: WasdiClient,
                                                                  ws: str) -> None:
    nowhere = BrokerAddress(url=f"ws://127.0.0.1:{free_port()}/ws")
    with pytest.raises(EventsUnavailableError):
        sdk.events.listen(ws, address=nowhere)
    server.broker.stop()
    with ProcessUpdates(sdk, ws) as updates:
        assert not updates.live and updates.unavailable
        started = time.monotonic()
        assert updates.sleep(0.2) is None
        assert 0.15 < time.monotonic() - started < 2


def test_a_lost_connection_is_opened_again(server: LiveServer, sdk: WasdiClient, ws: str) -> None:
    port = server.broker.port
    with sdk.events.listen(ws, timeout=30) as events:
        server.services.messages.send("INFO", "before", ws)
        assert events.get(5).payload == "before"  # type: ignore[union-attr]
        server.broker.stop()
        services = server.services
        again = StompBroker(server.broker.exchange, Gatekeeper(services.sessions, services.workspaces),
                            host="127.0.0.1", port=port)
        again.start()
        try:
            def heard_after() -> bool:
                server.services.messages.send("INFO", "after", ws)
                message = events.get(0.5)
                return message is not None and message.payload == "after"

            wait_until(heard_after, timeout=20, what="a message after the broker came back")
            assert events.reconnects >= 1
        finally:
            again.stop()


def test_without_reconnect_a_lost_connection_is_an_error(server: LiveServer, sdk: WasdiClient, ws: str) -> None:
    events = sdk.events.listen(ws, reconnect=False)
    server.broker.stop()
    with pytest.raises(EventsUnavailableError):
        events.get(5)
    events.close()


def finish_after_subscribing(server: LiveServer, pid: str, *, notify: bool) -> Callable[[object], None]:
    """An ``on_update`` that ends ``pid`` DONE 0.3 s after the wait's second read: a wait on messages reads
    twice at once (before and after subscribing), so the change comes when it is listening."""
    reads: list[object] = []

    def on_update(process: object) -> None:
        reads.append(process)
        if len(reads) == 2:
            threading.Timer(0.3, server.services.processes.set_status, (pid, "DONE", 100),
                            {"notify": notify}).start()
    return on_update


def test_a_wait_wakes_on_the_message_not_the_poll(server: LiveServer, sdk: WasdiClient, alice: Person,
                                                  ws: str) -> None:
    pid = foreign_process(server, alice.user_id, ws, "RUNNING")
    started = time.monotonic()
    final = sdk.processes.wait(pid, poll_interval=30, max_interval=30,
                               on_update=finish_after_subscribing(server, pid, notify=True))
    assert final.status == "DONE" and time.monotonic() - started < 5  # polling alone would take 30 s
    other = foreign_process(server, alice.user_id, ws, "RUNNING")
    started = time.monotonic()
    final = wait_for_process(sdk, other, poll_interval=30, max_interval=30,  # the older name, the same wait
                             on_update=finish_after_subscribing(server, other, notify=True))
    assert final.status == "DONE" and time.monotonic() - started < 5


def test_with_the_broker_port_closed_a_wait_polls(server: LiveServer, sdk: WasdiClient, alice: Person,
                                                   ws: str) -> None:
    server.broker.stop()
    pid = foreign_process(server, alice.user_id, ws, "RUNNING")
    reads: list[object] = []
    threading.Timer(0.5, server.services.processes.set_status, (pid, "DONE", 100)).start()
    started = time.monotonic()
    final = sdk.processes.wait(pid, poll_interval=0.2, max_interval=0.2, on_update=reads.append, timeout=20)
    assert final.status == "DONE" and time.monotonic() - started < 5 and len(reads) >= 3
