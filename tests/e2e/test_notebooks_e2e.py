"""Labs end with their server: a real ``wasdi-server serve`` process, a JupyterLab started through
``/console/create``, then the server stopped (SIGTERM: it stops its labs) or killed (SIGKILL: the box's
supervisor of each lab ends it when the server dies)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from tests.e2e.conftest import RunningServer, ServerFactory
from tests.server.notebook_support import lab_parts, require_notebooks

from wasdi_server.consoles.lab import LAB_SOCKET


def start_lab(server: RunningServer) -> str:
    with server.http() as http:
        ws = http.get("/ws/create", params={"name": "notes"}).json()["stringValue"]
        assert http.post("/console/create", params={"workspaceId": ws}).json()["boolValue"] is True
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            answer = http.get("/console/ready", params={"workspaceId": ws}).json()
            if answer["boolValue"]:
                return str(answer["stringValue"])
            time.sleep(0.2)
    raise AssertionError(f"the lab never became ready:\n{server.output()[-3000:]}")


def gone(scratch: Path, token: str, timeout: float = 30.0) -> bool:
    """Whether nothing answers on the lab's own socket any more (waiting up to ``timeout``): its address is the
    server's, which is gone either way."""
    transport = httpx.HTTPTransport(uds=str(scratch / LAB_SOCKET))
    deadline = time.monotonic() + timeout
    with httpx.Client(transport=transport, headers={"Authorization": f"token {token}"}, timeout=2) as lab:
        while time.monotonic() < deadline:
            try:
                lab.get("http://lab/api/status")
            except httpx.TransportError:
                return True
            time.sleep(0.2)
    return False


@pytest.mark.parametrize("how", ["stop", "kill"])
def test_labs_end_with_their_server(servers: ServerFactory, data_dir: Path, how: str) -> None:
    require_notebooks()
    server = servers.start(data_dir)
    address = start_lab(server)
    assert urlsplit(address).hostname == "127.0.0.1" and urlsplit(address).path.startswith("/notebook/")
    assert server.token() not in server.output() and lab_parts(address)[1] not in server.output()
    scratch = [folder for folder in Path(tempfile.gettempdir()).glob("wasdi-lab-*")
               if (folder / "server.pid").is_file() and (folder / "server.pid").read_text() == str(server.pid)]
    assert len(scratch) == 1
    assert httpx.get(address, timeout=30).status_code == 200  # the lab's page, through the server's port
    assert not gone(scratch[0], lab_parts(address)[1], timeout=0.1)
    if how == "stop":
        assert server.stop(timeout=60) == 0
        assert not scratch[0].exists()
    else:
        server.kill()
    assert gone(scratch[0], lab_parts(address)[1]), f"the lab outlived its server ({how})"
    if how == "kill":
        # What the killed server's lab left is removed when a server starts again.
        servers.start(data_dir)
        assert not scratch[0].exists()
