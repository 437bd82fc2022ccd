"""A deploy with ``apps_offline`` off on this machine: the build's installer (uv, in the box) reaches the package
index only through the box's proxy (launcher/box/proxy.py), which resolves the names itself and lets the index the
server is configured with through, whatever its address; each connection is a line of the build's log.

Here the proxy listens on a loopback port of its own and the build is told so with ``HTTPS_PROXY`` (the box's
doors put it on the run's loopback the same way).  It needs the package index: where it cannot be reached the
test fails under CI=true and skips elsewhere."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests import environment
from tests.app_support import LIBRARY, wheelhouse

from wasdi_server.launcher.box import kernel_support
from wasdi_server.launcher.box.doors import RunIdentity
from wasdi_server.launcher.box.proxy import OutboundProxy, ProxyRules
from wasdi_server.launcher.engines import AppLayout
from wasdi_server.launcher.engines.python_env import PythonEngine
from wasdi_server.settings import load_settings

MISSING = kernel_support().missing()
if MISSING and not environment.on_ci():
    pytest.skip(f"this kernel cannot box builds: {'; '.join(MISSING)}", allow_module_level=True)
PACKAGE = "iniconfig==2.0.0"
"""A small pure-Python package that is not in the tests' wheelhouse: it can only come from the index."""


@pytest.fixture
def index_reachable() -> None:
    settings = load_settings(environ={})
    host = settings.package_index_url.split("/")[2]
    try:
        socket.create_connection((host, 443), timeout=10).close()
    except OSError as e:
        environment.unavailable(f"the package index {host} cannot be reached from here: {e}")


@pytest.fixture
def proxy_port(tmp_path: Path) -> Iterator[tuple[int, list[str]]]:
    proxy = OutboundProxy(ProxyRules.from_settings(load_settings(data_dir=tmp_path, environ={}), {}))
    log: list[str] = []
    build = RunIdentity("alice", "", "", log.append)
    listener = socket.create_server(("127.0.0.1", 0))

    def accept() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=proxy.serve, args=(connection, build), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield listener.getsockname()[1], log
    listener.close()


@pytest.mark.usefixtures("index_reachable")
def test_a_build_installs_a_package_from_the_index_through_the_proxy(
        tmp_path: Path, proxy_port: tuple[int, list[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    port, build_log = proxy_port
    for name in ("HTTP_PROXY", "http_proxy", "https_proxy", "UV_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{port}")
    engine = PythonEngine(LIBRARY, find_links=(str(wheelhouse()),), offline=False)
    folder = tmp_path / "app"
    folder.mkdir()
    (folder / "myProcessor.py").write_text("import iniconfig\n\n\ndef run():\n    pass\n")
    (folder / "pip.txt").write_text(f"{PACKAGE}\n")
    app = AppLayout("app", "python312", folder, tmp_path / "env")
    lines: list[str] = []
    engine.deploy(app, lines.append)
    assert lines[-1] == "environment ready", lines[-10:]
    assert "iniconfig" in {p["name"].lower() for p in engine.packages(app)}
    index = [line for line in build_log if "CONNECT pypi.org:443" in line]
    assert index and all("allowed, the package index" in line for line in index), build_log
    files = [line for line in build_log if "CONNECT files.pythonhosted.org:443" in line]
    assert files and "bytes in" in files[0], build_log
    assert not [line for line in build_log if "refused" in line], build_log
