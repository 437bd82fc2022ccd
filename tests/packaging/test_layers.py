"""The server's layers hold, and import-linter says so: ``[tool.importlinter]`` of pyproject.toml (run by
``make test`` and ``make lint``) keeps every import of ``wasdi_server`` pointing down, type-only imports
included, and names every top-level module of the server in a layer.  Proved on copies of the package: a
business rule that imports the launcher breaks the contract with its message, and so does a module no layer
names."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def server_contract() -> dict[str, Any]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    return dict(next(c for c in config["contracts"] if c["id"] == "server-layers"))


def rules_package() -> str:
    """The layer of the business rules: the one right below the machinery (the launcher's layer)."""
    names = [[part.strip() for part in layer.split(":")] for layer in server_contract()["layers"]]
    machinery = next(i for i, layer in enumerate(names) if "launcher" in layer)
    (rules,) = names[machinery + 1]
    return rules


def lint(tree: Path) -> subprocess.CompletedProcess[str]:
    """The server's layers contract alone, on ``tree`` (a reach up may break the domains' contracts too)."""
    env = {**os.environ, "PYTHONPATH": str(tree / "src"), "COLUMNS": "250"}
    return subprocess.run([str(LINT_IMPORTS), "--no-cache", "--no-logo", "--contract", "server-layers",
                           str(tree / "pyproject.toml")], cwd=tree, env=env, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the server package and of pyproject.toml, to break on purpose."""
    shutil.copytree(ROOT / "src" / "wasdi_server", tmp_path / "src" / "wasdi_server",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_the_contract_counts_type_only_imports_and_every_module() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    assert config.get("exclude_type_checking_imports", False) is False
    contract = server_contract()
    assert contract["type"] == "layers" and contract["containers"] == ["wasdi_server"]
    assert contract["exhaustive"] is True
    assert "ignore_imports" not in contract and "exhaustive_ignores" not in contract


def test_the_layers_hold_on_this_tree() -> None:
    done = subprocess.run([str(LINT_IMPORTS), "--no-cache", "--no-logo"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "COLUMNS": "250"})
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " 0 broken" in done.stdout


@pytest.mark.parametrize("how", ["at run time", "for the type checker only"])
def test_a_rule_importing_the_launcher_breaks_the_contract(tree: Path, how: str) -> None:
    untouched = lint(tree)
    assert untouched.returncode == 0, untouched.stdout[-4000:] + untouched.stderr[-2000:]
    rules = rules_package()
    rule = min(p for p in (tree / "src" / "wasdi_server" / rules).rglob("*.py") if p.name != "__init__.py")
    module = ".".join(rule.relative_to(tree / "src").with_suffix("").parts)
    source = rule.read_text(encoding="utf-8")
    line = source.count("\n") + (2 if how == "at run time" else 4)
    reach_up = "from wasdi_server.launcher.pool import Launcher\n"
    if how != "at run time":
        reach_up = "from typing import TYPE_CHECKING as _TYPE_CHECKING\nif _TYPE_CHECKING:\n    " + reach_up
    rule.write_text(f"{source}\n{reach_up}", encoding="utf-8")

    broken = lint(tree)

    assert broken.returncode == 1, broken.stdout[-4000:] + broken.stderr[-2000:]
    assert "Contracts: 0 kept, 1 broken." in broken.stdout
    assert f"wasdi_server.{rules} is not allowed to import wasdi_server.launcher:" in broken.stdout
    assert f"- {module} -> wasdi_server.launcher.pool (l.{line})" in broken.stdout


def test_a_module_in_no_layer_breaks_the_contract(tree: Path) -> None:
    (tree / "src" / "wasdi_server" / "stray.py").write_text('"""Placed in no layer."""\n', encoding="utf-8")

    broken = lint(tree)

    assert broken.returncode == 1
    assert "wasdi_server.stray" in broken.stdout
