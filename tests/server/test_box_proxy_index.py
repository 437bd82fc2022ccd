"""A deploy with ``apps_offline`` off on this machine: the build's installer (uv, in the box's world, whose
network holds nothing but loopback) reaches the package index only through the box's proxy door
(launcher/box/proxy.py), which resolves the names itself (the box has no resolver) and lets the index the server
is configured with through, whatever its address; each connection is a line of the build's log.

It needs the package index: where it cannot be reached the test fails under CI=true and skips elsewhere."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from tests import environment
from tests.app_support import wheelhouse

from wasdi_server.launcher.box import kernel_support
from wasdi_server.launcher.box.proxy import OutboundProxy
from wasdi_server.launcher.engines import AppLayout, engine_for
from wasdi_server.launcher.engines.python_env import PythonEngine
from wasdi_server.settings import load_settings

MISSING = kernel_support().missing()
if MISSING and not environment.on_ci():
    pytest.skip(f"this kernel cannot box builds: {'; '.join(MISSING)}", allow_module_level=True)
PACKAGE = "iniconfig==2.0.0"
"""A small pure-Python package that is not in the tests' wheelhouse: it can only come from the index."""


@pytest.fixture
def index_reachable() -> None:
    host = load_settings(environ={}).package_index_url.split("/")[2]
    try:
        socket.create_connection((host, 443), timeout=10).close()
    except OSError as e:
        environment.unavailable(f"the package index {host} cannot be reached from here: {e}")


def app(tmp_path: Path) -> AppLayout:
    folder = tmp_path / "processors" / "app"
    folder.mkdir(parents=True)
    (folder / "myProcessor.py").write_text("import iniconfig\n\n\ndef run():\n    pass\n")
    (folder / "pip.txt").write_text(f"{PACKAGE}\n")
    return AppLayout("app", "python312", folder, tmp_path / "app-environments" / "app")


@pytest.mark.usefixtures("index_reachable")
def test_a_build_installs_a_package_from_the_index_through_the_proxy_door(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "UV_INDEX_URL", "UV_DEFAULT_INDEX",
                 "UV_INDEX"):
        monkeypatch.delenv(name, raising=False)
    settings = load_settings(data_dir=tmp_path, environ={}, apps_find_links=[str(wheelhouse())], apps_offline=False)
    engine = engine_for("python312", settings)
    layout = app(tmp_path)
    lines: list[str] = []
    engine.deploy(layout, lines.append)
    assert lines[-1] == "environment ready", lines[-10:]
    assert "iniconfig" in {p["name"].lower() for p in engine.packages(layout)}
    proxied = [line for line in lines if line.startswith("proxy: ")]
    index = [line for line in proxied if "CONNECT pypi.org:443" in line]
    assert index and all("allowed, the package index" in line for line in index), proxied
    files = [line for line in proxied if "CONNECT files.pythonhosted.org:443" in line]
    assert files and "bytes in" in files[0], proxied
    assert not [line for line in proxied if "refused" in line], proxied


def test_only_builds_that_may_reach_the_index_get_the_proxy_door(tmp_path: Path) -> None:
    online = engine_for("python312", load_settings(data_dir=tmp_path, environ={}, apps_offline=False))
    offline = engine_for("python312", load_settings(data_dir=tmp_path, environ={}, apps_offline=True))
    assert isinstance(online, PythonEngine) and isinstance(offline, PythonEngine)
    assert online.box.doors is not None and isinstance(online.box.doors.proxy, OutboundProxy)
    assert offline.box.doors is None or offline.box.doors.proxy is None
