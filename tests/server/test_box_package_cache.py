"""No writable file shared between two apps: a build whose package's build code tries to change the package cache
and another app's files (the files every app imports were hard links into one shared cache) changes nothing
another app's environment holds; the victim app still imports the library it was built with.

The builds run in the box on this machine's kernel; where it cannot box them, the tests fail under CI=true and
skip elsewhere."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import tarfile
from pathlib import Path

import pytest
from tests import environment
from tests.app_support import wheelhouse

from wasdi_server.launcher.box import kernel_support
from wasdi_server.launcher.engines import AppLayout, engine_for
from wasdi_server.launcher.engines.python_env import PythonEngine
from wasdi_server.settings import Settings, load_settings

MISSING = kernel_support().missing()
if MISSING and not environment.on_ci():
    pytest.skip(f"this kernel cannot box builds: {'; '.join(MISSING)}", allow_module_level=True)

POISON = "\nPOISONED = 'by the build of another app'\n"
BACKEND = '''
import base64, hashlib, json, os, zipfile

NAME, VERSION = "cache_poisoner", "1.0"


def get_requires_for_build_wheel(config_settings=None):
    return []


def _try(action):
    try:
        action()
        return "changed"
    except OSError as e:
        return f"refused: {e.strerror}"


def _append(path, text):
    def action():
        with open(path, "a") as handle:
            handle.write(text)
    return action


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    with open("targets.json") as handle:
        targets = json.load(handle)
    results = {}
    for path in targets["append_to"]:
        results[path] = _try(_append(path, targets["poison"]))
    for folder in targets["plant_in"]:
        results[folder] = _try(_append(os.path.join(folder, "planted-by-a-build.txt"), "planted"))
    files = {f"{NAME}/__init__.py": "", f"{NAME}/results.json": json.dumps(results),
             f"{NAME}-{VERSION}.dist-info/METADATA":
                 f"Metadata-Version: 2.1\\nName: cache-poisoner\\nVersion: {VERSION}\\n",
             f"{NAME}-{VERSION}.dist-info/WHEEL": "Wheel-Version: 1.0\\nGenerator: backend\\nRoot-Is-Purelib: true\\n"
                                                  "Tag: py3-none-any\\n"}
    record = [f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b'=').decode()},"
              f"{len(text.encode())}" for path, text in files.items()]
    files[f"{NAME}-{VERSION}.dist-info/RECORD"] = "\\n".join(record + [f"{NAME}-{VERSION}.dist-info/RECORD,,"]) + "\\n"
    name = f"{NAME}-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as wheel:
        for path, text in files.items():
            wheel.writestr(path, text)
    return name
'''
PYPROJECT = '''[build-system]
requires = []
build-backend = "backend"
backend-path = ["."]

[project]
name = "cache-poisoner"
version = "1.0"
'''


def poisoner_sdist(folder: Path, targets: dict[str, object]) -> None:
    """``cache_poisoner-1.0.tar.gz`` in ``folder``: an sdist whose build code appends to every file ``targets``
    names and plants a file in each of its folders."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {"pyproject.toml": PYPROJECT.encode(), "backend.py": BACKEND.encode(),
             "targets.json": json.dumps(targets).encode(),
             "PKG-INFO": b"Metadata-Version: 2.1\nName: cache-poisoner\nVersion: 1.0\n"}
    with tarfile.open(folder / "cache_poisoner-1.0.tar.gz", "w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(f"cache_poisoner-1.0/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))


def app(settings: Settings, name: str, pip_txt: str) -> AppLayout:
    folder = settings.apps_root / name
    folder.mkdir(parents=True)
    (folder / "myProcessor.py").write_text("import wasdi\n\n\ndef run():\n    wasdi.wasdiLog('hi')\n")
    (folder / "pip.txt").write_text(pip_txt)
    return AppLayout(name, "python312", folder, settings.app_environments_root / name)


def fingerprint(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink()}


def test_a_build_cannot_change_another_app_s_environment_through_the_package_cache(tmp_path: Path) -> None:
    packages = tmp_path / "packages"
    packages.mkdir()
    settings = load_settings(data_dir=tmp_path / "data", environ={}, apps_offline=True,
                             apps_find_links=[str(wheelhouse()), str(packages)])
    engine = engine_for("python312", settings)
    assert isinstance(engine, PythonEngine)
    environments = settings.app_environments_root
    victim = app(settings, "victims-app", "six==1.16.0\n")
    poisoner = app(settings, "poisoners-app", "cache-poisoner==1.0\n")
    lines: list[str] = []
    engine.deploy(victim, lines.append)
    before = fingerprint(victim.home) | {f"app/{k}": v for k, v in fingerprint(victim.folder).items()}
    # Every copy of the files the victim imports, wherever the server keeps them (its cache, its environment):
    # the attacker knows the server's layout.
    aimed = sorted(str(p) for name in ("wasdi/__init__.py", "six.py")
                   for p in environments.glob(f"**/{name}") if not p.is_relative_to(poisoner.home))
    assert any(Path(p).is_relative_to(victim.home) for p in aimed), aimed
    probe = poisoner.home / "probe.txt"
    poisoner_sdist(packages, {"poison": POISON, "append_to": [*aimed, str(probe)],
                              "plant_in": [str(victim.folder), str(victim.home), str(environments)]})

    engine.deploy(poisoner, lines.append)

    (report,) = poisoner.home.glob("venv/lib/python*/site-packages/cache_poisoner/results.json")
    results: dict[str, str] = json.loads(report.read_text())
    assert results.get(str(probe)) == "changed", f"the build code did not run as an attacker's would: {results}"
    after = fingerprint(victim.home) | {f"app/{k}": v for k, v in fingerprint(victim.folder).items()}
    changed = sorted(name for name in before if after.get(name) != before[name])
    assert changed == [], f"the build changed the victim's files: {changed}"
    refused = {path: results[path] for path in aimed}
    assert all(outcome.startswith("refused") for outcome in refused.values()), json.dumps(refused, indent=1)
    # A plant may land in the build's own world (a folder the box made to hold its mounts): the host's count.
    assert not list(settings.data_dir.rglob("planted-by-a-build.txt"))
    imported = subprocess.run(
        [str(victim.home / "venv" / "bin" / "python"), "-c",
         "import six, wasdi; print(getattr(wasdi, 'POISONED', 'clean'), getattr(six, 'POISONED', 'clean'))"],
        capture_output=True, text=True, timeout=120, check=False)
    assert imported.stdout.split() == ["clean", "clean"], imported.stdout + imported.stderr


def test_environments_built_from_the_old_shared_cache_get_files_of_their_own(tmp_path: Path) -> None:
    settings = load_settings(data_dir=tmp_path / "data", environ={}, apps_offline=True,
                             apps_find_links=[str(wheelhouse())])
    environments = settings.app_environments_root
    cached = environments / ".package-cache" / "archive-v0" / "abc" / "wasdi"
    cached.mkdir(parents=True)
    (cached / "__init__.py").write_text("VERSION = 1\n")
    linked = []
    for name in ("first", "second"):
        site = environments / name / "venv" / "lib" / "python3" / "site-packages" / "wasdi"
        site.mkdir(parents=True)
        os.link(cached / "__init__.py", site / "__init__.py")
        (site / "own.py").write_text("x = 1\n")
        (site / "link.py").symlink_to(site / "own.py")
        linked.append(site / "__init__.py")
    engine_for("python312", settings)
    first, second = linked
    assert not first.samefile(second)
    assert first.read_text() == second.read_text() == "VERSION = 1\n"
    assert first.stat().st_nlink == second.stat().st_nlink == 1
    assert (first.parent / "link.py").is_symlink()
    assert not (environments / ".package-cache").exists()
    with first.open("a") as handle:
        handle.write("POISONED = True\n")
    assert second.read_text() == "VERSION = 1\n"
