"""A notebook's lab reached through the server's own address (``/notebook/<workspaceId>/``): a real JupyterLab
in the box, served by waitress as ``wasdi-server serve`` serves it.  Its page, its REST API and a cell run over
its kernel's WebSocket all pass through the server's port; whoever may not reach the lab is refused by the
server before a byte reaches it; and the lab listens on no TCP port at all (only its Unix socket)."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from tests.conftest import Person, Server
from tests.server.geodata import new_workspace, share
from tests.server.notebook_support import lab_parts, require_notebooks, run_cell, served, wait_ready

from wasdi_server.consoles.proxy import LAB_COOKIE, LabProxy

LISTEN = "0A"
"""A listening socket's state in /proc/net/tcp."""


class CountingProxy(LabProxy):
    """The server's proxy, counting what it carries to a lab (a refused request must not be counted)."""

    def __init__(self) -> None:
        super().__init__()
        self.carried = 0

    def request(self, *args: Any, **kwargs: Any) -> Any:
        self.carried += 1
        return super().request(*args, **kwargs)

    def websocket(self, *args: Any, **kwargs: Any) -> None:
        self.carried += 1
        super().websocket(*args, **kwargs)


@dataclass
class Setting:
    server: Server
    alice: Person
    reader: Person
    stranger: Person
    ws: str
    address: str
    proxy: CountingProxy


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setting]:
    require_notebooks()
    with served(tmp_path_factory.mktemp("proxy") / "data") as server:
        proxy = CountingProxy()
        server.app.notebook_proxy.proxy = proxy
        alice = server.add_user("alice@example.org")
        reader = server.add_user("reader@example.org")
        stranger = server.add_user("stranger@example.org")
        ws = new_workspace(server, alice, "proxied")
        share(server, alice, ws, reader, "read")
        server.post("/console/create", alice, params={"workspaceId": ws})
        yield Setting(server, alice, reader, stranger, ws, wait_ready(server, alice, ws), proxy)


def test_the_lab_page_comes_through_the_server_address_and_its_cookie_opens_the_rest(lab: Setting) -> None:
    base, token = lab_parts(lab.address)
    page = httpx.get(lab.address, timeout=30)
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    # JupyterLab's own page, told its base is the server's path (so its links and WebSockets come back here).
    assert "jupyter-config-data" in page.text and f'"baseUrl": "/notebook/{lab.ws}/"' in page.text
    cookie = page.cookies.get(LAB_COOKIE)
    assert cookie == token
    # What the browser asks next carries only that cookie: it opens the lab's API too.
    status = httpx.get(f"{base}/api/status", cookies={LAB_COOKIE: cookie}, timeout=10)
    assert status.status_code == 200 and "started" in status.json()
    # The lab's static files, streamed through.
    script = re.search(r'src="(/notebook/[^"]+?\.js[^"]*)"', page.text)
    assert script is not None, page.text[:2000]
    origin = base.split("/notebook/")[0]
    asset = httpx.get(origin + script[1], cookies={LAB_COOKIE: cookie}, timeout=30)
    assert asset.status_code == 200 and len(asset.content) > 1000


def test_a_kernel_started_and_a_cell_run_through_the_server(lab: Setting) -> None:
    base, _ = lab_parts(lab.address)
    assert base.startswith(f"http://127.0.0.1:{lab.server.services.settings.port}/notebook/")
    before = lab.proxy.carried
    printed = run_cell(lab.address, "print('through', 6 * 7)")
    assert printed.strip() == "through 42"
    # the kernel's start (REST) and its channels (WebSocket) both went through the proxy
    assert lab.proxy.carried >= before + 2
    # The owner's WASDI session opens her lab as well as its token does.
    kernels = httpx.get(f"{base}/api/kernels", headers=lab.alice.headers, timeout=10)
    assert kernels.status_code == 200 and len(kernels.json()) >= 1


def test_strangers_and_requests_without_credentials_never_reach_the_lab(lab: Setting) -> None:
    import websocket

    base, token = lab_parts(lab.address)
    before = lab.proxy.carried

    def status(**options: Any) -> tuple[int, Any]:
        answer = httpx.get(f"{base}/api/kernels", timeout=10, **options)
        return answer.status_code, answer.json()

    # The server's own ErrorResponse, not the lab's answer.
    assert status() == (401, {"message": "MSG_ERROR_INVALID_SESSION"})
    assert status(headers={"Authorization": "token " + "x" * 43})[0] == 403
    assert status(params={"token": "nope"})[0] == 403
    assert status(cookies={LAB_COOKIE: "nope"})[0] == 403
    assert status(headers=lab.stranger.headers)[0] == 403
    # A reader of the workspace has no lab of their own there (and cannot make one)...
    assert status(headers=lab.reader.headers)[0] == 404
    # ...and another workspace's path does not open this lab with its token.
    other = new_workspace(lab.server, lab.alice, "other")
    assert httpx.get(base.replace(lab.ws, other) + "/api/kernels", headers={"Authorization": f"token {token}"},
                     timeout=10).status_code == 403
    # A page of another site cannot use the browser's cookie.
    assert status(cookies={LAB_COOKIE: token}, headers={"Origin": "http://evil.example"})[0] == 403
    # A WebSocket handshake is checked the same way.
    ws_url = base.replace("http", "ws", 1) + "/api/kernels/00000000-0000-0000-0000-000000000000/channels"
    for header in ([], [f"x-session-token: {lab.stranger.token}"]):
        with pytest.raises(websocket.WebSocketBadStatusException) as refused:
            websocket.create_connection(ws_url, header=header, timeout=10)
        assert refused.value.status_code in (401, 403)
    assert lab.proxy.carried == before, "a refused request reached the lab"


def test_the_lab_listens_on_no_port_only_on_its_socket(lab: Setting) -> None:
    found = lab.server.services.notebooks.find(lab.alice.user_id, lab.ws)
    assert found is not None and found.socket_path.is_socket()
    needle = f"--ServerApp.sock={found.socket_path}".encode()
    pids = [p.name for p in Path("/proc").iterdir() if p.name.isdigit() and _cmdline_has(p, needle)]
    assert pids, "the lab's process was not found"
    # Every TCP socket listening in the lab's network namespace (its own world's, seen from the host).
    listening = set()
    for table in ("tcp", "tcp6"):
        for row in (Path("/proc") / pids[0] / "net" / table).read_text().splitlines()[1:]:
            fields = row.split()
            if fields[3] == LISTEN:
                listening.add(int(fields[1].rsplit(":", 1)[1], 16))
    # Only the box's doors (the API, the outbound proxy) listen there, answered by the server: no lab port.
    box = lab.server.services.notebooks.box
    doors = {door.port for door in box.doors.doors()} if box.in_worlds and box.doors is not None else set()
    assert listening <= doors, (listening, doors)
    if os.path.realpath(f"/proc/{pids[0]}/ns/net") != os.path.realpath("/proc/self/ns/net"):
        # In its own network namespace: nothing of it is on the host's.
        host = {int(r.split()[1].rsplit(":", 1)[1], 16) for t in ("tcp", "tcp6")
                for r in Path(f"/proc/self/net/{t}").read_text().splitlines()[1:] if r.split()[3] == LISTEN}
        assert not (listening - doors) & host


def _cmdline_has(proc: Path, needle: bytes) -> bool:
    try:
        return needle in (proc / "cmdline").read_bytes().replace(b"\0", b" ")
    except OSError:
        return False


def test_websockets_leave_the_api_threads_free_and_are_bounded_per_lab(lab: Setting) -> None:
    import websocket

    base, token = lab_parts(lab.address)
    found = lab.server.services.notebooks.find(lab.alice.user_id, lab.ws)
    assert found is not None
    events = base.replace("http", "ws", 1) + "/api/events/subscribe"
    auth = [f"Authorization: token {token}"]
    # More open WebSockets than the API has worker threads (8 in these tests)...
    opened = [websocket.create_connection(events, header=auth, timeout=10) for _ in range(10)]
    try:
        assert lab.proxy.open_websockets(found) == 10
        # ...and the API still answers at once.
        origin = base.split("/notebook/")[0]
        answer = httpx.get(f"{origin}/ws/byuser", headers=lab.alice.headers, timeout=10)
        assert answer.status_code == 200 and lab.ws in answer.text
        # Past the lab's bound: refused by the server, the lab not asked.
        lab.proxy.max_websockets = 10
        with pytest.raises(websocket.WebSocketBadStatusException) as refused:
            websocket.create_connection(events, header=auth, timeout=10)
        assert refused.value.status_code == 503
    finally:
        lab.proxy.max_websockets = 32
        for connection in opened:
            connection.close()
    deadline = time.monotonic() + 10
    while lab.proxy.open_websockets(found) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert lab.proxy.open_websockets(found) == 0


def test_a_websocket_handshake_on_a_server_that_cannot_hand_its_connection_over_is_501(lab: Setting) -> None:
    import falcon.testing

    base, token = lab_parts(lab.address)
    before = lab.proxy.carried
    answer = falcon.testing.TestClient(lab.server.app).simulate_get(
        urlsplit(base).path + "/api/events/subscribe",
        headers={"Authorization": f"token {token}", "Upgrade": "websocket", "Connection": "Upgrade",
                 "Host": "127.0.0.1"})
    assert answer.status_code == 501 and "WebSockets" in answer.json["message"]
    assert lab.proxy.carried == before


def test_what_reaches_a_lab_carries_its_token_and_none_of_the_callers_credentials() -> None:
    from types import SimpleNamespace

    from wasdi_server.api.notebook_proxy import _target
    from wasdi_server.consoles.proxy import lab_headers

    fake = SimpleNamespace(token="lab-token")
    sent = lab_headers(fake, [("X-Session-Token", "wasdi-session"), ("Authorization", "token lab-token"),  # type: ignore[arg-type]
                              ("Cookie", "wasdi_session=s1; _xsrf=abc; wasdi_lab=lab-token"),
                              ("Connection", "keep-alive"), ("Accept", "application/json")], "example.org:8080")
    assert ("Cookie", "_xsrf=abc") in sent and ("Accept", "application/json") in sent
    assert ("Authorization", "token lab-token") in sent and ("Host", "example.org:8080") in sent
    assert "wasdi-session" not in str(sent) and "s1" not in str(sent)
    assert not any(name.lower() == "connection" for name, _ in sent)
    # The token leaves the address the lab is asked (percent-encoding kept).
    assert _target({"REQUEST_URI": "/notebook/w/api/contents/a%20b.ipynb?token=t&type=file"}) == \
        "/notebook/w/api/contents/a%20b.ipynb?type=file"
    assert _target({"PATH_INFO": "/notebook/w/lab", "QUERY_STRING": "token=t"}) == "/notebook/w/lab"
