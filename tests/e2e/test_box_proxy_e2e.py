"""The box's proxy door from inside a real run, as an attacker would use it: the run speaks the proxy protocol on
the door the box gives it (``HTTP_PROXY``) and asks for the cloud metadata address, the host's loopback, a
private address and a denied public name; each is refused with a 403 and a line of the run's own log, while a
host the operator allowed is reached (bytes counted in the log) and the same app still reads its input and
writes its output.

These run on this machine's kernel; where it cannot box a run, the tests fail under CI=true and skip elsewhere."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests import environment
from tests.app_support import wheelhouse
from tests.e2e.conftest import ALICE, RunningServer, ServerFactory
from tests.e2e.test_apps_e2e import Api

from wasdi_server.launcher.box import kernel_support

MISSING = kernel_support().missing()
if MISSING and not environment.on_ci():
    pytest.skip(f"this kernel cannot box runs: {'; '.join(MISSING)}", allow_module_level=True)

PROXY_USER = '''
import os
import socket
from urllib.parse import urlsplit

import wasdi


def through_the_proxy(request):
    proxy = urlsplit(os.environ["HTTP_PROXY"])
    with socket.create_connection((proxy.hostname, proxy.port), timeout=30) as s:
        s.sendall(request.encode())
        data = b""
        while b"\\r\\n\\r\\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        head, _, rest = data.partition(b"\\r\\n\\r\\n")
        status = head.split(b"\\r\\n")[0].decode()
        if request.startswith("CONNECT") and " 200 " in status:
            s.sendall(b"ping")
            rest = s.recv(100)
        else:
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                rest += chunk
        return status + " | " + rest.decode(errors="replace").strip()


def run():
    results = {name: through_the_proxy(request) for name, request in wasdi.getParameter("requests", {}).items()}
    with open(wasdi.getPath("input.txt")) as handle:
        text = handle.read()
    with open(wasdi.getPath("output.txt"), "w") as handle:
        handle.write(text.upper())
    wasdi.addFileToWASDI("output.txt")
    wasdi.setPayload(results)
'''


class Echo:
    """A TCP echo server on the host's loopback: what an operator's internal service stands for."""

    def __init__(self) -> None:
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.socket.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            with connection:
                while data := connection.recv(4096):
                    connection.sendall(data)


@pytest.fixture
def echo() -> Iterator[Echo]:
    server = Echo()
    yield server
    server.socket.close()


@pytest.fixture
def server(servers: ServerFactory, data_dir_with_workspace: Path, tmp_path: Path, echo: Echo) -> RunningServer:
    config = tmp_path / "proxy.toml"
    config.write_text(f"apps_find_links = [{json.dumps(str(wheelhouse()))}]\napps_offline = true\n"
                      f"launcher_workers = 1\napp_outbound_ports = [80, 443, {echo.port}]\n"
                      'proxy_allowed_hosts = ["127.0.0.1/32"]\nproxy_denied_hosts = ["example.com"]\n')
    return servers.start(data_dir_with_workspace, extra_args=("--config", str(config)))


def test_a_run_reaches_only_what_the_proxy_lets_through(server: RunningServer, echo: Echo) -> None:
    alice = Api(server)
    folder = server.data_dir / "files" / ALICE / alice.workspace
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "input.txt").write_text("alice's input")
    alice.upload("proxy-user", {"myProcessor.py": PROXY_USER})
    requests = {
        "metadata": "GET http://169.254.169.254/latest/meta-data/iam/security-credentials/ HTTP/1.1\r\n"
                    "Host: 169.254.169.254\r\n\r\n",
        "host loopback, another port": f"CONNECT 127.0.0.1:{server.port} HTTP/1.1\r\n\r\n",
        "host loopback over IPv6": f"CONNECT [::1]:{echo.port} HTTP/1.1\r\n\r\n",
        "private": "CONNECT 10.0.0.1:443 HTTP/1.1\r\n\r\n",
        "denied name": "CONNECT www.example.com:443 HTTP/1.1\r\n\r\n",
        "allowed": f"CONNECT 127.0.0.1:{echo.port} HTTP/1.1\r\n\r\n",
    }
    run = alice.run("proxy-user", {"requests": requests})
    assert alice.wait(run, timeout=120) == "DONE", alice.log(run)
    results = alice.payload(run)
    assert results["allowed"] == "HTTP/1.1 200 Connection established | ping", results
    expected = {"metadata": "link-local", "host loopback, another port": "app_outbound_ports",
                "host loopback over IPv6": "loopback", "private": "private",
                "denied name": "deny list"}
    for name, reason in expected.items():
        assert results[name].startswith("HTTP/1.1 403 Forbidden | ") and reason in results[name], (name, results)
    assert (folder / "output.txt").read_text() == "ALICE'S INPUT"
    log = alice.log(run)
    door_lines = [line for line in log if "proxy: " in line]
    assert any(f"CONNECT 127.0.0.1:{echo.port} (127.0.0.1) allowed, allowed by the operator: 4 bytes out, "
               "4 bytes in" in line for line in door_lines), door_lines
    assert sum("refused (403)" in line for line in door_lines) == len(expected), door_lines
    assert not any("security-credentials" in line for line in log), "a request's path reached the log"
