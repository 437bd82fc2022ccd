"""Every script and the notebook of ``examples/`` run as a reader runs them, against one real server on
127.0.0.1 (the sample catalogue of ``make run``, apps built offline from the test wheelhouse)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.app_support import wheelhouse
from tests.e2e.conftest import ADMIN, PASSWORD, RunningServer, ServerFactory, add_user, run_cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    work = tmp_path_factory.mktemp("examples")
    data_dir = work / "data"
    add_user(data_dir, ADMIN, admin=True)
    add_user(data_dir, "colleague@example.org")
    sampled = run_cli("catalogue", "sample", "--data-dir", str(data_dir))
    assert sampled.returncode == 0, sampled.stderr
    config = work / "settings.toml"
    config.write_text(f"apps_find_links = [{json.dumps(str(wheelhouse()))}]\napps_offline = true\n")
    factory = ServerFactory(work)
    try:
        yield factory.start(data_dir, extra_args=("--config", str(config)))
    finally:
        factory.close()


def run_example(server: RunningServer, script: str, *args: str, cwd: Path | None = None) -> str:
    env = {**os.environ, "WASDI_PASSWORD": PASSWORD}
    done = subprocess.run([sys.executable, str(EXAMPLES / script), "--base-url", server.base_url, "--user", ADMIN,
                           *args], env=env, capture_output=True, text=True, timeout=300, check=False, cwd=cwd)
    assert done.returncode == 0, f"{script}: {done.stdout}\n{done.stderr}"
    return done.stdout


def workspaces(server: RunningServer) -> list[str]:
    with httpx.Client(base_url=server.base_url, headers={"x-session-token": server.token(ADMIN)}) as http:
        return [w["workspaceName"] for w in http.get("/ws/byuser").json()]


def test_quickstart(server: RunningServer) -> None:
    out = run_example(server, "quickstart.py", "--share-with", "colleague@example.org")
    assert f"logged in as {ADMIN}" in out and "created Quickstart" in out and "Done" in out
    assert "Quickstart" not in workspaces(server)


def test_search_and_import(server: RunningServer) -> None:
    out = run_example(server, "search_and_import.py")
    assert "2 S2 products from 2024-01-01 to 2024-01-31" in out
    assert "import DONE" in out and "bands band_1, band_2, band_3" in out
    assert "Search and import" not in workspaces(server)


def test_run_app_deploys_runs_and_fetches_the_output(server: RunningServer, tmp_path: Path) -> None:
    out = run_example(server, "run_app.py", "--deploy", str(EXAMPLES / "hello_app"), "--params", '{"NAME": "Ada"}',
                      "--out", str(tmp_path))
    assert "deployed hello" in out and " DONE; payload " in out and '"greeting": "Hello Ada"' in out
    assert (tmp_path / "hello.txt").read_text() == "Hello Ada\n"
    assert "output hello.txt" in out


def test_publish_band_gives_the_wms_address(server: RunningServer, tmp_path: Path) -> None:
    png = tmp_path / "band.png"
    out = run_example(server, "publish_band.py", "--png", str(png))
    assert f"WMS address for QGIS: {server.base_url}/wms" in out and "layer wasdi_" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_async_fan_out(server: RunningServer) -> None:
    out = run_example(server, "async_fan_out.py", "--count", "6", "--parallel", "3")
    assert "6 workspaces, notes.txt in 6 of them" in out and "deleted them all" in out
    assert not [name for name in workspaces(server) if name.startswith("fan-out")]


def test_the_notebook_runs(server: RunningServer, monkeypatch: pytest.MonkeyPatch) -> None:
    import nbclient
    import nbformat

    monkeypatch.setenv("WASDI_BASE_URL", server.base_url)
    monkeypatch.setenv("WASDI_USER", ADMIN)
    monkeypatch.setenv("WASDI_PASSWORD", PASSWORD)
    notebook = nbformat.read(EXAMPLES / "notebook.ipynb", as_version=4)
    nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3").execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    texts = "\n".join(str(o.get("text") or o.get("data", {}).get("text/plain", "")) for o in outputs)
    assert ADMIN in texts and "DONE S2A_MSIL2A_" in texts and "band_1" in texts
    assert "Notebook" not in workspaces(server)


def test_the_example_app_is_what_wasdi_apps_new_scaffolds() -> None:
    from wasdi_cli.commands.apps import SCAFFOLD

    for name in ("myProcessor.py", "params.json"):
        text = SCAFFOLD[name]
        assert (EXAMPLES / "hello_app" / name).read_text() == (text.format(name="hello") if "{name}" in text
                                                               else text), name
