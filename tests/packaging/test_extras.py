"""The built wheel, installed into a clean virtual environment per extra, gives what that extra promises.

Slow (it installs packages from the registry or pip's cache), so it is deselected from ``make test``:
run it with ``make test-install`` (``pytest -m install tests/packaging``).
"""

from __future__ import annotations

import subprocess
import sys
import venv
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.install

CHECKS: dict[str, list[tuple[list[str], int, str]]] = {
    # extra: [(command run in the environment, expected exit code, text expected in its output)]
    "": [
        (["python", "-c", "import wasdi_sdk; print(wasdi_sdk.WasdiClient.__name__)"], 0, "WasdiClient"),
        (["python", "-c", "import typer"], 1, "No module named 'typer'"),
        (["wasdi", "--version"], 1, "pip install 'wasdi-toolkit[cli]'"),
        (["python", "-m", "wasdi_cli", "--version"], 1, "pip install 'wasdi-toolkit[cli]'"),
        (["wasdi-server", "--help"], 1, "pip install 'wasdi-toolkit[server]'"),
    ],
    "cli": [
        (["wasdi", "--version"], 0, "wasdi 0.1.0"),
        (["wasdi", "ws", "--help"], 0, "Workspaces"),
        (["python", "-c", "import falcon"], 1, "No module named 'falcon'"),
        (["wasdi-server", "--help"], 1, "pip install 'wasdi-toolkit[server]'"),
    ],
    "server": [
        (["wasdi-server", "--help"], 0, "serve"),
        (["wasdi-server", "catalogue", "list", "--data-dir", "{tmp}/data"], 0, "empty"),
        (["python", "-c", "from wasdi_server import create_app; print(create_app.__name__)"], 0, "create_app"),
        (["wasdi-server", "catalogue", "sample", "--data-dir", "{tmp}/data"], 1, "geo extra"),
        # the default store writes TinyDB's format itself: the library is a test dependency only
        (["python", "-c", "import tinydb"], 1, "No module named 'tinydb'"),
    ],
    "geo": [
        (["python", "-c", "import rasterio, numpy; print('rasters')"], 0, "rasters"),
    ],
    "all": [
        (["wasdi-server", "catalogue", "sample", "--data-dir", "{tmp}/data"], 0, "added S2A_MSIL2A_20240108"),
        (["python", "-c", "import wasdi; print(wasdi.__name__)"], 0, "wasdi"),
        (["wasdi", "--version"], 0, "wasdi 0.1.0"),
    ],
}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-w", str(out)],
                           capture_output=True, text=True, timeout=600, check=False)
    assert built.returncode == 0, built.stderr
    # The licence is an SPDX string: setuptools no longer warns about a TOML-table licence.
    assert not [line for line in (built.stderr + built.stdout).lower().splitlines()
                if "license" in line and "deprecat" in line]
    (found,) = out.glob("wasdi_toolkit-*.whl")
    return found


def install(wheel: Path, extra: str, where: Path) -> tuple[str, Path, str]:
    venv.create(where, with_pip=True)
    target = f"{wheel}[{extra}]" if extra else str(wheel)
    done = subprocess.run([str(where / "bin" / "python"), "-m", "pip", "install", "--quiet", target],
                          capture_output=True, text=True, timeout=900, check=False)
    return extra, where, "" if done.returncode == 0 else done.stderr


def test_each_extra_gives_what_it_promises(wheel: Path, tmp_path: Path) -> None:
    with ThreadPoolExecutor(max_workers=len(CHECKS)) as pool:
        installed = list(pool.map(lambda extra: install(wheel, extra, tmp_path / f"env-{extra or 'base'}"), CHECKS))
    for extra, where, failure in installed:
        assert not failure, f"installing [{extra}] failed: {failure}"
        for command, code, expected in CHECKS[extra]:
            program = [str(where / "bin" / command[0]), *(arg.format(tmp=where) for arg in command[1:])]
            done = subprocess.run(program, capture_output=True, text=True, timeout=300, check=False)
            output = done.stdout + done.stderr
            assert done.returncode == code, (extra, command, output)
            assert expected in output, (extra, command, output)
