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


def gone(address: str, timeout: float = 30.0) -> bool:
    """Whether nothing answers at the lab's address any more (waiting up to ``timeout``)."""
    base, token = lab_parts(address)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            httpx.get(f"{base}/api/status", headers={"Authorization": f"token {token}"}, timeout=2)
        except httpx.TransportError:
            return True
        time.sleep(0.2)
    return False


@pytest.mark.parametrize("how", ["stop", "kill"])
def test_labs_end_with_their_server(servers: ServerFactory, data_dir: Path, how: str) -> None:
    require_notebooks()
    server = servers.start(data_dir)
    address = start_lab(server)
    assert urlsplit(address).hostname == "127.0.0.1"
    assert server.token() not in server.output() and lab_parts(address)[1] not in server.output()
    scratch = [folder for folder in Path(tempfile.gettempdir()).glob("wasdi-lab-*")
               if (folder / "server.pid").is_file() and (folder / "server.pid").read_text() == str(server.pid)]
    assert len(scratch) == 1
    if how == "stop":
        assert server.stop(timeout=60) == 0
        assert not scratch[0].exists()
    else:
        server.kill()
    assert gone(address), f"the lab outlived its server ({how})"
    if how == "kill":
        # What the killed server's lab left is removed when a server starts again.
        servers.start(data_dir)
        assert not scratch[0].exists()
