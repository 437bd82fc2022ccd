"""What the notebook tests and the notebook figure share: a server on a real socket, served by waitress as
``wasdi-server serve`` serves it (the lab's kernel calls its API with the official library; a browser reaches
the lab through the server's ``/notebook/`` path, its WebSockets too), and a cell executed on a lab's kernel
through the Jupyter protocol (jupyter_client's messages over the lab's kernel WebSocket, as JupyterLab itself
sends them)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
from tests import environment
from tests.conftest import Server

from wasdi_server import serving
from wasdi_server.consoles import missing_packages
from wasdi_server.launcher.box import Box


def require_notebooks() -> None:
    """Skip (with the reason) where labs cannot run here; never on CI, which must run them."""
    missing = missing_packages()
    reason = (f"the [notebook] extra is not installed here ({', '.join(missing)} missing)" if missing
              else Box().refusal())
    if reason:
        environment.unavailable(reason)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def served(data_dir: Path, **settings: Any) -> Iterator[Server]:
    """A test server whose API is also on a real socket at its own ``port`` (what labs call)."""
    port = free_port()
    # The address /console/create answers is under public_url (the test client reaches the app by no address).
    settings.setdefault("public_url", f"http://127.0.0.1:{port}")
    server = Server(data_dir, port=port, **settings)
    httpd = serving.make_server(server.app, host="127.0.0.1", port=port, threads=8, asyncore_use_poll=True)
    thread = threading.Thread(target=httpd.run, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        try:
            serving.close(httpd)
            thread.join(1)
        finally:
            server.close()


def wait_ready(server: Server, who: Any, ws: str, timeout: float = 120.0) -> str:
    """The lab's address once ``/console/ready`` says it is up."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = server.get("/console/ready", who, workspaceId=ws).json
        if answer["boolValue"]:
            return str(answer["stringValue"])
        time.sleep(0.1)
    raise AssertionError(f"the lab never became ready: {server.get('/console/ready', who, workspaceId=ws).json}")


def lab_parts(address: str) -> tuple[str, str]:
    """(base URL, token) of a lab's address (``http://HOST:PORT/notebook/<workspaceId>/lab?token=``)."""
    parts = urlsplit(address)
    path = parts.path.removesuffix("/lab").rstrip("/")
    return f"{parts.scheme}://{parts.netloc}{path}", parse_qs(parts.query)["token"][0]


def run_cell(address: str, code: str, timeout: float = 60.0) -> str:
    """Start a kernel on the lab at ``address``, execute ``code`` as one cell, and answer what it printed
    (its errors raise, with the traceback)."""
    import websocket
    from jupyter_client.jsonutil import json_default
    from jupyter_client.session import Session

    base, token = lab_parts(address)
    auth = {"Authorization": f"token {token}"}
    kernel = httpx.post(f"{base}/api/kernels", headers=auth, json={"name": "python3"}, timeout=30).json()
    session = Session()
    request = session.msg("execute_request", content={"code": code, "silent": False, "store_history": False,
                                                      "user_expressions": {}, "allow_stdin": False})
    request["channel"] = "shell"
    ws_url = base.replace("http", "ws", 1) + f"/api/kernels/{kernel['id']}/channels"
    connection = websocket.create_connection(ws_url, header=[f"Authorization: token {token}"], timeout=timeout)
    printed: list[str] = []
    try:
        connection.send(json.dumps(request, default=json_default))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            message = json.loads(connection.recv())
            if message.get("parent_header", {}).get("msg_id") != request["header"]["msg_id"]:
                continue
            kind, content = message["msg_type"], message["content"]
            if kind == "stream":
                printed.append(content["text"])
            elif kind == "error":
                raise AssertionError("the cell failed:\n" + "\n".join(content["traceback"]))
            elif kind == "status" and content["execution_state"] == "idle":
                return "".join(printed)
        raise AssertionError(f"the cell did not finish in {timeout} s; printed so far: {''.join(printed)}")
    finally:
        connection.close()
