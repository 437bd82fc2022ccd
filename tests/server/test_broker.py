"""The built-in broker over a real socket: STOMP 1.0-1.2 over WebSocket, only readers of a workspace hear it,
the web client's session cookie from its own pages, heart-beats, and bounded memory for slow subscribers.

Driven by stomp.py (an independent STOMP client) and, for what WASDI's web client does on the wire, by a
plain WebSocket client sending the frames its stomp.js sends.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from tests.conftest import Person
from tests.messages_support import (
    LiveServer,
    foreign_process,
    live_server,  # noqa: F401 (the server fixture)
    stomp_client,
    wait_until,
)
from websockets.sync.client import connect as ws_connect

from wasdi_sdk.events.stomp import Frame, FrameParser, encode
from wasdi_server.messages.access import Gatekeeper
from wasdi_server.messages.broker import StompBroker


@pytest.fixture
def live(server: LiveServer) -> LiveServer:
    return server


def workspace_of(live: LiveServer, who: Person, name: str = "w") -> str:
    return str(live.get("/ws/create", who, name=name).json["stringValue"])


def share(live: LiveServer, owner: Person, ws: str, who: Person, rights: str = "read") -> None:
    r = live.put("/ws/share/add", owner, workspace=ws, userId=who.user_id, rights=rights)
    assert r.json["boolValue"] is True, r.text


def subscribed(live: LiveServer, token: str, ws: str, **options: Any) -> tuple[Any, Any]:
    connection, heard = stomp_client(live.broker.port, **options)
    connection.connect("someone", token, wait=True)
    connection.subscribe(f"/exchange/amq.topic/{ws}", id="1", ack="auto", headers={"receipt": "subscribed"})
    wait_until(lambda: "subscribed" in heard.receipts or heard.errors, what="the subscription's receipt")
    return connection, heard


def test_readers_hear_a_workspace_and_a_stranger_is_refused(live: LiveServer, alice: Person, bob: Person,
                                                             stranger: Person) -> None:
    ws = workspace_of(live, alice)
    share(live, alice, ws, bob)
    owner, heard_owner = subscribed(live, alice.token, ws)
    reader, heard_reader = subscribed(live, bob.token, ws)
    _intruder, heard_intruder = subscribed(live, stranger.token, ws)
    assert not heard_owner.errors and not heard_reader.errors
    (refusal,) = heard_intruder.errors
    assert refusal.headers["message"] == "access refused" and ws in refusal.body
    wait_until(heard_intruder.disconnected.is_set, what="the stranger's disconnection")

    pid = foreign_process(live, alice.user_id, ws)
    r = live.get("/process/updatebyid", alice, procws=pid, status="RUNNING", perc="42", sendrabbit="1")
    assert r.status_code == 200
    for heard in (heard_owner, heard_reader):
        wait_until(lambda h=heard: h.messages, what="the message")
        (message,) = heard.messages
        assert json.loads(message.body) == {"messageCode": "UPDATEPROCESSES", "messageResult": None,
                                            "payload": f"{pid};RUNNING;42", "workspaceId": ws}
        assert message.headers["destination"] == f"/exchange/amq.topic/{ws}"
        assert message.headers["subscription"] == "1" and message.headers["message-id"]
    assert heard_intruder.messages == []
    # A message of another workspace reaches nobody here.
    live.services.messages.send("INFO", "elsewhere", workspace_of(live, bob, "other"))
    time.sleep(0.2)
    assert len(heard_owner.messages) == 1
    owner.disconnect()
    reader.disconnect()


def test_a_login_that_is_not_a_session_is_refused(live: LiveServer) -> None:
    connection, heard = stomp_client(live.broker.port)
    connection.connect("wasdi", "wasdi", wait=False)
    wait_until(lambda: heard.errors, what="the refusal")
    assert heard.errors[0].headers["message"] == "access refused"
    wait_until(heard.disconnected.is_set, what="the disconnection")
    assert not connection.is_connected()


def test_a_public_workspace_is_heard_by_any_session(live: LiveServer, alice: Person, stranger: Person) -> None:
    ws = workspace_of(live, alice)
    live.services.workspaces.workspaces.update(ws, {"isPublic": True})
    connection, heard = subscribed(live, stranger.token, ws)
    assert not heard.errors
    live.services.messages.send("INFO", "hello", ws)
    wait_until(lambda: heard.messages, what="the message")
    connection.disconnect()


# -- the web client's session cookie ----------------------------------------------------------------------
def login_cookie(live: LiveServer, who: Person) -> str:
    r = live.http.simulate_post("/auth/login", json={"userId": who.user_id, "userPassword": "correct-horse-1"})
    assert r.status_code == 200 and r.json["sessionId"], r.text
    return f"wasdi_session={r.cookies['wasdi_session'].value}"


def cookie_answer(port: int, origin: str | None, cookie: str, ws: str) -> str:
    """What the broker answers a browser that opens its socket from ``origin`` with ``cookie`` and the web
    client's fixed login: ``CONNECTED`` (then subscribed to ``ws``), or the ERROR frame's message."""
    with ws_connect(f"ws://127.0.0.1:{port}/rabbit-stomp/ws", origin=origin,  # type: ignore[arg-type]
                    additional_headers={"Cookie": cookie}) as conn:
        conn.send("CONNECT\nlogin:wasdi-web-client\npasscode:session-cookie\naccept-version:1.1\n\n\x00")
        answer = _first_answer(conn)
        if answer.command != "CONNECTED":
            return answer.header("message") or "?"
        conn.send(f"SUBSCRIBE\nid:sub-0\ndestination:/exchange/amq.topic/{ws}\nreceipt:r\n\n\x00")
        assert [f.command for f in frames_of(conn, "RECEIPT")][-1] == "RECEIPT"
        return "CONNECTED"


def _first_answer(conn: Any) -> Frame:
    parser = FrameParser(version="1.1")
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        for frame in parser.feed(conn.recv(timeout=max(0.01, deadline - time.monotonic()))):
            if frame is not None:
                return frame
    raise AssertionError("no answer to CONNECT")


def test_the_web_clients_cookie_works_from_its_own_origin_only(live: LiveServer, alice: Person) -> None:
    ws = workspace_of(live, alice)
    cookie = login_cookie(live, alice)
    port = live.broker.port
    own = f"http://127.0.0.1:{live.settings.port}"  # no public_url: the API's port on the host reached
    assert cookie_answer(port, own, cookie, ws) == "CONNECTED"
    assert cookie_answer(port, own.upper().replace("HTTP", "http"), cookie, ws) == "CONNECTED"
    # Another web application on the same host (another port, the broker's own, the other scheme) or
    # another site, which makes the browser open the socket, gets nothing from the cookie.
    for origin in (f"http://127.0.0.1:{live.settings.port + 7}", f"http://127.0.0.1:{port}",
                   f"https://127.0.0.1:{live.settings.port}", "http://127.0.0.1", "http://evil.example",
                   f"http://localhost:{live.settings.port}", "null"):
        assert cookie_answer(port, origin, cookie, ws) == "access refused", origin
    token = cookie.split("=", 1)[1]
    assert live.get("/auth/logout", Person(alice.user_id, token)).status_code == 200
    assert cookie_answer(port, own, cookie, ws) == "access refused"


def test_with_a_public_url_the_cookie_comes_from_its_exact_origin(tmp_path: Any) -> None:
    server = LiveServer(tmp_path / "data", public_url="https://wasdi.example.org/")
    try:
        alice = server.add_user("alice@example.org")
        ws = workspace_of(server, alice)
        cookie = login_cookie(server, alice)
        port = server.broker.port
        for origin in ("https://wasdi.example.org", "https://WASDI.example.org:443"):
            assert cookie_answer(port, origin, cookie, ws) == "CONNECTED", origin
        for origin in ("https://wasdi.example.org:8443", "http://wasdi.example.org", "https://example.org",
                       f"http://127.0.0.1:{server.settings.port}"):
            assert cookie_answer(port, origin, cookie, ws) == "access refused", origin
    finally:
        server.close()


@pytest.mark.parametrize("header", ["Host", "Cookie", "Origin"])
def test_a_repeated_handshake_header_is_a_400(live: LiveServer, alice: Person, header: str,
                                              caplog: pytest.LogCaptureFixture) -> None:
    cookie = login_cookie(live, alice)
    values = {"Host": ["127.0.0.1", "evil.example"], "Cookie": [cookie, "wasdi_session=other"],
              "Origin": [f"http://127.0.0.1:{live.settings.port}", "http://evil.example"]}[header]
    lines = ["GET /rabbit-stomp/ws HTTP/1.1", "Upgrade: websocket", "Connection: Upgrade",
             "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13"]
    if header != "Host":
        lines.append(f"Host: 127.0.0.1:{live.broker.port}")
    lines += [f"{header}: {value}" for value in values]
    with socket.create_connection(("127.0.0.1", live.broker.port), timeout=5) as raw:
        raw.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        answer = b""
        while chunk := raw.recv(4096):  # the broker closes after its answer
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
    assert answer.endswith(f"the {header} header is repeated\n".encode()), answer
    assert not [r for r in caplog.records if r.exc_info], "no traceback is logged"
    assert live.broker.connections == 0


# -- the wire, as WASDI's web client (stomp.js 2.3) speaks it ---------------------------------------------
def frames_of(socket: Any, until: str, timeout: float = 5.0, version: str = "1.1") -> list[Frame]:
    parser = FrameParser(version=version)
    seen: list[Frame] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        data = socket.recv(timeout=max(0.01, deadline - time.monotonic()))
        assert isinstance(data, str), "the broker sends text frames, as RabbitMQ does"
        seen += [f for f in parser.feed(data) if f is not None]
        if any(f.command == until for f in seen):
            return seen
    raise AssertionError(f"no {until} frame; got {[f.command for f in seen]}")


def test_the_frames_the_web_client_sends_and_reads(live: LiveServer, alice: Person) -> None:
    ws = workspace_of(live, alice)
    with ws_connect(f"ws://127.0.0.1:{live.broker.port}/rabbit-stomp/ws") as socket:  # no subprotocol offered
        socket.send("CONNECT\nlogin:wasdi\npasscode:" + alice.token + "\nhost:/\naccept-version:1.1,1.0\n"
                    "heart-beat:20000,20000\n\n\x00")
        (connected,) = frames_of(socket, "CONNECTED")
        assert connected.header("version") == "1.1" and connected.header("heart-beat") == "10000,10000"
        # stomp.js splits frames longer than its WebSocket frame size: the broker joins them.
        subscribe = f"SUBSCRIBE\nid:sub-0\ndestination:/exchange/amq.topic/{ws}\nreceipt:r-1\n\n\x00"
        socket.send(subscribe[:20])
        socket.send(subscribe[20:])
        frames_of(socket, "RECEIPT")
        live.services.messages.send("INFO", "Caf\u00e9 pr\u00eat<br>d\u00e9j\u00e0", ws)
        (message,) = [f for f in frames_of(socket, "MESSAGE") if f.command == "MESSAGE"]
        body = message.body.decode("utf-8")
        # stomp.js cuts the body at content-length counted in characters: the body is ASCII, so both agree.
        assert int(message.header("content-length") or 0) == len(body) == len(message.body)
        assert json.loads(body)["payload"] == "Caf\u00e9 pr\u00eat<br>d\u00e9j\u00e0"
        assert message.header("subscription") == "sub-0"


def test_a_stomp_1_0_client_and_the_refusals(live: LiveServer, alice: Person) -> None:
    ws = workspace_of(live, alice)
    with ws_connect(f"ws://127.0.0.1:{live.broker.port}/", subprotocols=["v10.stomp"]) as socket:
        assert socket.subprotocol == "v10.stomp"
        socket.send(encode(Frame.make("CONNECT", {"login": "x", "passcode": alice.token})))
        (connected,) = frames_of(socket, "CONNECTED", version="1.0")
        assert connected.header("version") == "1.0"
        # 1.0: no id needed, the destination names the subscription.
        socket.send(encode(Frame.make("SUBSCRIBE", {"destination": f"/topic/{ws}", "receipt": "s"}), version="1.0"))
        frames_of(socket, "RECEIPT", version="1.0")
        assert live.broker.exchange.bound_keys() == 1
        socket.send(encode(Frame.make("UNSUBSCRIBE", {"destination": f"/topic/{ws}", "receipt": "u"}), version="1.0"))
        frames_of(socket, "RECEIPT", version="1.0")
        # Nobody listens now: the workspace costs the exchange nothing.
        assert live.broker.exchange.bound_keys() == 0
        socket.send(encode(Frame.make("SEND", {"destination": f"/topic/{ws}"}, b"{}"), version="1.0"))
        error = next(f for f in frames_of(socket, "ERROR", version="1.0") if f.command == "ERROR")
        assert error.header("message") == "SEND is refused"
    with ws_connect(f"ws://127.0.0.1:{live.broker.port}/") as socket:
        socket.send(encode(Frame.make("CONNECT", {"accept-version": "1.2", "passcode": alice.token})))
        frames_of(socket, "CONNECTED", version="1.2")
        socket.send(encode(Frame.make("SUBSCRIBE", {"id": "1", "destination": "/exchange/amq.topic/#"})))
        error = next(f for f in frames_of(socket, "ERROR", version="1.2") if f.command == "ERROR")
        assert error.header("message") == "unknown destination"
    with ws_connect(f"ws://127.0.0.1:{live.broker.port}/") as socket:
        socket.send(encode(Frame.make("CONNECT", {"accept-version": "1.2", "passcode": alice.token})))
        frames_of(socket, "CONNECTED", version="1.2")
        socket.send(encode(Frame.make("DISCONNECT", {"receipt": "bye"})))
        receipt = next(f for f in frames_of(socket, "RECEIPT", version="1.2") if f.command == "RECEIPT")
        assert receipt.header("receipt-id") == "bye"


# -- heart-beats, ended sessions, slow subscribers ---------------------------------------------------------
@pytest.fixture
def quick_broker(live: LiveServer) -> Iterator[StompBroker]:
    """A second listener on the same exchange, with short heart-beats and checks, and a small buffer."""
    services = live.services
    broker = StompBroker(live.broker.exchange, Gatekeeper(services.sessions, services.workspaces),
                         host="127.0.0.1", port=0, buffer_limit=1 << 20, recheck_seconds=0.3,
                         heartbeat=(100, 100))
    broker.start()
    yield broker
    broker.stop()


def test_heart_beats_both_ways(quick_broker: StompBroker, alice: Person) -> None:
    with ws_connect(f"ws://127.0.0.1:{quick_broker.port}/") as socket:
        socket.send(encode(Frame.make("CONNECT", {"accept-version": "1.2", "passcode": alice.token,
                                                  "heart-beat": "100,100"})))
        frames_of(socket, "CONNECTED", version="1.2")
        assert socket.recv(timeout=1) == "\n"  # the broker's heart-beat
        # A client that promised heart-beats and goes silent is closed after twice the period.
        started = time.monotonic()
        with pytest.raises(Exception, match=r"1000|closed|received"):
            while time.monotonic() - started < 3:
                socket.recv(timeout=3)
        assert time.monotonic() - started < 2


def test_an_ended_session_or_a_removed_sharing_ends_the_connection(live: LiveServer, quick_broker: StompBroker,
                                                                   alice: Person, bob: Person) -> None:
    ws = workspace_of(live, alice)
    share(live, alice, ws, bob)
    for end in ("unshare", "logout"):
        connection, heard = stomp_client(quick_broker.port)
        connection.connect("bob", bob.token, wait=True)
        connection.subscribe(f"/exchange/amq.topic/{ws}", id="1", headers={"receipt": "r"})
        wait_until(lambda h=heard: "r" in h.receipts, what="the receipt")
        if end == "unshare":
            assert live.delete("/ws/share/delete", alice, workspace=ws, userId=bob.user_id).status_code == 200
            expected = "access refused"
        else:
            live.services.sessions.close(bob.token)
            expected = "session ended"
        wait_until(lambda h=heard: h.errors, what=f"the end after the {end}")
        assert heard.errors[0].headers["message"] == expected
        wait_until(heard.disconnected.is_set, what="the disconnection")
        share(live, alice, ws, bob)


def test_a_subscriber_that_does_not_read_is_dropped_and_the_others_go_on(
        live: LiveServer, quick_broker: StompBroker, alice: Person) -> None:
    ws = workspace_of(live, alice)
    heard: list[Frame] = []

    def read(socket: Any) -> None:
        parser = FrameParser(version="1.2")
        with contextlib.suppress(Exception):  # ends when the socket closes
            for data in socket:
                heard.extend(f for f in parser.feed(data) if f is not None and f.command == "MESSAGE")

    with ws_connect(f"ws://127.0.0.1:{quick_broker.port}/", close_timeout=1) as reader, \
            ws_connect(f"ws://127.0.0.1:{quick_broker.port}/", max_queue=1, close_timeout=1) as sleeper:
        for socket in (reader, sleeper):
            socket.send(encode(Frame.make("CONNECT", {"accept-version": "1.2", "passcode": alice.token})))
            frames_of(socket, "CONNECTED", version="1.2")
            socket.send(encode(Frame.make("SUBSCRIBE", {"id": "s", "destination": f"/topic/{ws}", "receipt": "r"})))
            frames_of(socket, "RECEIPT", version="1.2")
        # The reader reads all the time; the sleeper's library keeps one frame, then stops reading.
        threading.Thread(target=read, args=(reader,), daemon=True).start()
        assert quick_broker.connections == 2
        big = "x" * 100_000
        longest = 0.0
        for number in range(120):
            started = time.monotonic()
            live.services.messages.send("INFO", f"{number} {big}", ws)
            longest = max(longest, time.monotonic() - started)
            time.sleep(0.005)  # a steady flow, which a reading subscriber keeps up with
        assert longest < 0.1, "publishing never waits for a subscriber"
        wait_until(lambda: len(heard) == 120, timeout=30, what="every message for the reader")
        wait_until(lambda: quick_broker.connections == 1, timeout=10, what="the sleeper's disconnection")
    assert [json.loads(m.body)["payload"].split(" ")[0] for m in heard] == [str(n) for n in range(120)]


def test_messages_flow_while_the_api_answers(live: LiveServer, alice: Person) -> None:
    """A subscriber keeps up while requests publish from several threads at once."""
    ws = workspace_of(live, alice)
    connection, heard = subscribed(live, alice.token, ws)
    pid = foreign_process(live, alice.user_id, ws)

    def update(start: int) -> None:
        with httpx.Client(transport=httpx.WSGITransport(app=live.app), base_url="http://testserver") as http:
            for perc in range(start, start + 25):
                http.get("/process/updatebyid", params={"procws": pid, "status": "RUNNING", "perc": str(perc),
                                                        "sendrabbit": "1"}, headers=alice.headers)

    threads = [threading.Thread(target=update, args=(n * 25,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wait_until(lambda: len(heard.messages) == 100, what="100 messages")
    assert sorted(int(json.loads(m.body)["payload"].split(";")[2]) for m in heard.messages) == list(range(100))
    connection.disconnect()
