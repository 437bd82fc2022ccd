"""Dependencies are declared as used: every library the code imports is declared in the extra that installs that
code, every declared runtime library is imported, and every runtime range has a floor and a ceiling that hold the
version these tests run with (the floor itself is installed and run by ``test_floor.py``, ``make test-install``).
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import re
import sys
import tomllib
from collections.abc import Mapping
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
EXTRAS: dict[str, list[str]] = PROJECT["optional-dependencies"]
RUNTIME = {"": PROJECT["dependencies"], "cli": EXTRAS["cli"], "server": EXTRAS["server"], "geo": EXTRAS["geo"],
           "postgresql": EXTRAS["postgresql"], "eodag": EXTRAS["eodag"]}
"""What installing each part brings: the SDK (base), the command line, the server, reading rasters on the server,
the database the nodes of a deployment share, EODAG's providers for search."""
PACKAGES = {"wasdi_sdk": ("",), "wasdi_cli": ("", "cli"),
            "wasdi_server": ("", "server", "geo", "postgresql", "eodag"),
            "wasdi_command_line": ("cli", "server")}
"""Each package of the distribution and the extras that install what it imports."""
FIRST_PARTY = {"wasdi_sdk", "wasdi_cli", "wasdi_server", "wasdi_command_line"}
NOT_IMPORTED_BY_US = {"wasdi_server/data/app_executor.py"}
"""Shipped as data: it runs inside an app's own environment, where the official library is installed."""


def distribution(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", Requirement(requirement).name).lower()


def brought_by(requirement: str) -> set[str]:
    """The distributions a requirement installs itself: its own, and those of the extras it names
    (``psycopg[pool]`` brings ``psycopg-pool``)."""
    parsed = Requirement(requirement)
    names = {distribution(requirement)}
    for line in importlib.metadata.requires(parsed.name) or []:
        needed = Requirement(line)
        if needed.marker is not None and any(needed.marker.evaluate({"extra": e}) for e in parsed.extras):
            names.add(distribution(line))
    return names


@functools.cache
def imports_of(package: str) -> dict[str, str]:
    """Top-level third-party modules ``package`` imports (function-local imports included) -> a file importing it."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "src" / package).rglob("*.py")):
        relative = path.relative_to(ROOT / "src").as_posix()
        if relative in NOT_IMPORTED_BY_US:
            continue
        siblings = {p.stem for p in path.parent.glob("*.py")}  # scripts run from their folder import these
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else []
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in FIRST_PARTY and top not in siblings:
                    found.setdefault(top, relative)
    return found


@functools.cache
def installed_modules() -> Mapping[str, list[str]]:
    """Top-level module -> the installed distributions providing it (read once: it walks every distribution's
    files)."""
    return importlib.metadata.packages_distributions()


def providers(module: str) -> set[str]:
    """The installed distributions that provide the top-level module ``module``."""
    return {re.sub(r"[-_.]+", "-", d).lower() for d in installed_modules().get(module, [])}


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_every_import_is_declared_where_the_package_is_installed(package: str) -> None:
    declared = {d for extra in PACKAGES[package] for r in RUNTIME[extra] for d in brought_by(r)}
    undeclared = {module: where for module, where in imports_of(package).items() if not providers(module) & declared}
    assert not undeclared, f"{package} imports libraries its extras do not declare: {undeclared}"


def test_every_declared_runtime_library_is_imported() -> None:
    used = {d for package in PACKAGES for module in imports_of(package) for d in providers(module)}
    unused = {extra or "base": sorted(distribution(r) for r in requirements if not brought_by(r) & used)
              for extra, requirements in RUNTIME.items()}
    assert not any(unused.values()), f"declared but imported by no module: {unused}"


def test_tinydb_is_a_test_dependency_only() -> None:
    # The default engine writes TinyDB's file format itself (store/tinydb_store.py); the library only checks it.
    assert all(distribution(r) != "tinydb" for requirements in RUNTIME.values() for r in requirements)
    assert "tinydb" in {distribution(r) for r in EXTRAS["test"]}


@pytest.mark.parametrize("requirement", [r for requirements in RUNTIME.values() for r in requirements],
                         ids=lambda r: Requirement(r).name)
def test_every_runtime_range_is_bounded_and_holds_the_tested_version(requirement: str) -> None:
    parsed = Requirement(requirement)
    floors = [Version(s.version) for s in parsed.specifier if s.operator == ">="]
    ceilings = [Version(s.version) for s in parsed.specifier if s.operator == "<"]
    assert len(floors) == 1 and len(ceilings) == 1, f"{requirement}: one floor (>=) and one ceiling (<) expected"
    installed = importlib.metadata.version(parsed.name)
    assert parsed.specifier.contains(installed, prereleases=True), \
        f"{parsed.name} {installed} is installed, outside the declared {parsed.specifier}: the suite tests no " \
        "version inside the range"
    # the ceiling is the next major release after the newest one tested (1 while that is a 0.x)
    assert ceilings[0] == Version(str(Version(installed).major + 1)), \
        f"{requirement}: the ceiling should be the next major after the tested {installed}"
    assert floors[0] <= Version(installed)


def test_waitress_stays_below_its_next_major_while_we_subclass_it() -> None:
    (waitress,) = [Requirement(r) for r in EXTRAS["server"] if distribution(r) == "waitress"]
    assert not waitress.specifier.contains("4.0"), "serving.py uses waitress internals: check a new major first"
