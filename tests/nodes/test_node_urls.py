"""The node secret and the caller's session go only to node addresses the operator allowed (``node_urls``):
an application admin who registers a node whose ``apiUrl`` is a host of their own learns nothing, because a
forwarded call to an address not in the settings is refused before anything is sent."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Server
from wasdi_server.nodes.identity import SECRET_HEADER

SECRET = "node-urls-test-secret-0123456789"


class Recorder:
    """An HTTP server on 127.0.0.1 that records every request it gets (and answers an empty JSON list)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, str]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _record(self) -> None:
                outer.requests.append({"path": self.path, **{k.lower(): v for k, v in self.headers.items()}})
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"[]")

            do_GET = do_POST = do_PUT = do_DELETE = _record

            def log_message(self, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    r = Recorder()
    yield r
    r.close()


def deployment(tmp_path: Path, pg_url: str, node_urls: list[str]) -> Server:
    return Server(tmp_path / "main", store_url=pg_url, node_secret=SECRET, public_url="http://127.0.0.1:1",
                  node_urls=node_urls)


def forwarded_listing(server: Server, recorder: Recorder) -> tuple[Any, str]:
    """An admin registers node ``evil`` at ``recorder``'s address; a user's workspace is placed there; the
    user lists its processes, a call the main node forwards to the workspace's node."""
    admin = server.add_user("admin@example.org", admin=True)
    r = server.post("/node", admin, json={"nodeCode": "evil", "apiUrl": recorder.url, "cloudProvider": "local",
                                          "active": True, "shared": True})
    assert r.status_code == 200, r.text
    alice = server.add_user("alice@example.org")
    ws = server.get("/ws/create", alice, name="w", node="evil").json["stringValue"]
    assert server.services.workspaces.load(ws)["nodeCode"] == "evil"
    return server.get("/process/byws", alice, workspace=ws), alice.token


def test_a_node_address_not_in_node_urls_gets_no_call_and_no_secret(tmp_path: Path, pg_url: str,
                                                                     recorder: Recorder) -> None:
    server = deployment(tmp_path, pg_url, [])
    try:
        answer, _ = forwarded_listing(server, recorder)
        assert answer.status_code == 200 and answer.json == []  # /process/byws fails with its empty list
        assert recorder.requests == []  # nothing was sent: neither the secret nor the session
    finally:
        server.close()


def test_a_node_address_in_node_urls_gets_the_forwarded_call(tmp_path: Path, pg_url: str,
                                                             recorder: Recorder) -> None:
    """The same call reaches the node once the operator lists its address: the rule is the setting."""
    server = deployment(tmp_path, pg_url, [recorder.url + "/"])
    try:
        _, token = forwarded_listing(server, recorder)
        forwarded = [r for r in recorder.requests if r["path"].startswith("/process/byws")]
        assert forwarded and forwarded[0][SECRET_HEADER] == SECRET
        assert forwarded[0]["x-session-token"] == token
    finally:
        server.close()
