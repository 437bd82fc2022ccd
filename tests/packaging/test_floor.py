"""The floor of every runtime range in pyproject.toml is tested: a fresh environment gets the wheel with each
declared dependency (base, cli, server, geo, postgresql) pinned to its lowest allowed release, and
``floor_smoke.py`` serves, uploads, downloads, styles, publishes a band and runs the CLI in it.  The newest
releases are what ``make test`` runs with (tests/packaging/test_dependencies.py checks they are inside the
ranges).

Slow and needs the package index (old releases are rarely in pip's cache): ``make test-install``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.install
EXTRAS = ("cli", "server", "geo", "postgresql")


def floors() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = [*project["dependencies"], *(r for extra in EXTRAS for r in project["optional-dependencies"][extra])]
    pinned: dict[str, str] = {}
    for requirement in map(Requirement, requirements):
        (floor,) = [s.version for s in requirement.specifier if s.operator == ">="]
        pinned[requirement.name] = f"{requirement.name}=={floor}"
    return sorted(pinned.values())


def test_the_oldest_allowed_releases_serve_upload_draw_and_answer(tmp_path: Path) -> None:
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-w", str(tmp_path)],
                           capture_output=True, text=True, timeout=600, check=False)
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("wasdi_toolkit-*.whl")
    constraints = tmp_path / "floors.txt"
    constraints.write_text("\n".join(floors()) + "\n")
    venv.create(tmp_path / "env", with_pip=True)
    python = tmp_path / "env" / "bin" / "python"
    installed = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "-c", str(constraints),
                                f"{wheel}[{','.join(EXTRAS)}]"], capture_output=True, text=True, timeout=1800,
                               check=False)
    assert installed.returncode == 0, installed.stderr[-3000:]
    listed = subprocess.run([str(python), "-m", "pip", "list", "--format=json"], capture_output=True, text=True,
                            check=True)
    installed_versions = {canonicalize_name(d["name"]): Version(d["version"]) for d in json.loads(listed.stdout)}
    for pin in map(Requirement, floors()):
        (floor,) = pin.specifier
        assert installed_versions[canonicalize_name(pin.name)] == Version(floor.version), pin
    smoke = subprocess.run([str(python), str(Path(__file__).with_name("floor_smoke.py"))], capture_output=True,
                           text=True, timeout=900, check=False, cwd=tmp_path)
    assert smoke.returncode == 0 and smoke.stdout.strip().endswith("floor ok"), smoke.stdout + smoke.stderr
