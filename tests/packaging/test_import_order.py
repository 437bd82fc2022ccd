"""No import cycle: every module of the distribution imports cleanly in a fresh interpreter whatever module comes
first; the module-level imports between our modules form no cycle (the composition root sits above everything
it wires; the search grammar below the services and the providers; ``wasdi-server`` shares its command-line
code with ``wasdi`` through ``wasdi_command_line``, never through ``wasdi_cli``); and in the packages of
``ACYCLIC`` no import at all, type-only ones included, closes a loop (the layers themselves are
import-linter's: tests/packaging/test_layers.py)."""

from __future__ import annotations

import ast
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
PACKAGES = ("wasdi_sdk", "wasdi_cli", "wasdi_server", "wasdi_command_line")
NOT_MODULES = {"wasdi_server.data", "wasdi_server.launcher.box.trampoline", "wasdi_server.launcher.box.supervisor"}
"""Scripts, not modules: shipped as data and run in an app's own environment, or run by the box from their own
folder (``python -I -S trampoline.py``), where they import their siblings by bare name."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> list[str]:
    names = []
    for package in PACKAGES:
        for path in (SRC / package).rglob("*.py"):
            name = module_name(path)
            if name.endswith(".__main__") or any(name == p or name.startswith(p + ".") for p in NOT_MODULES):
                continue
            names.append(name)
    return sorted(names)


IMPORT_ALL = """
import importlib, json, sys, traceback
failed = {}
for name in json.loads(sys.argv[1]):
    try:
        importlib.import_module(name)
    except Exception:
        failed[name] = traceback.format_exc(limit=3)
print(json.dumps(failed))
"""


def import_in_order(order: list[str]) -> dict[str, str]:
    done = subprocess.run([sys.executable, "-c", IMPORT_ALL, json.dumps(order)], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    failed: dict[str, str] = json.loads(done.stdout.strip().splitlines()[-1])
    return failed


def shuffled(names: list[str], seed: int) -> list[str]:
    order = list(names)
    random.Random(seed).shuffle(order)
    return order


@pytest.mark.parametrize("order", ["alphabetical", "reverse", "shuffled-22", "shuffled-2026"])
def test_every_module_imports_cleanly_in_a_fresh_interpreter(order: str) -> None:
    names = all_modules()
    assert len(names) > 200 and "wasdi_server.composition" in names
    sequence = {"alphabetical": names, "reverse": names[::-1]}.get(order) or shuffled(names, int(order[9:]))
    failed = import_in_order(sequence)
    assert failed == {}, "\n".join(f"{name}:\n{trace}" for name, trace in failed.items())


def module_level_imports(path: Path, name: str) -> set[str]:
    """Our modules that ``name`` imports when it is imported: module-level statements only (not those inside
    functions or under ``if TYPE_CHECKING``), with the packages each import runs on the way."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                visit(node.orelse)
                continue
            if isinstance(node, ast.If | ast.Try):
                visit(node.body)
                visit(getattr(node, "orelse", []))
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)
                visit(getattr(node, "finalbody", []))
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join([*anchor, base] if base else anchor)
                found.add(base)
                found.update(f"{base}.{alias.name}" for alias in node.names)

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    known = set(all_modules())
    edges: set[str] = set()
    for target in found:
        parts = target.split(".")
        for end in range(1, len(parts) + 1):
            step = ".".join(parts[:end])
            # A package above the importer is already being imported: Python's usual order, not a cycle.
            if step in known and step != name and not name.startswith(step + "."):
                edges.add(step)
    return edges


def test_the_module_level_imports_form_no_cycle() -> None:
    known = set(all_modules())
    graph = {module_name(p): module_level_imports(p, module_name(p))
             for package in PACKAGES for p in (SRC / package).rglob("*.py") if module_name(p) in known}
    cycles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def walk(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt):], nxt])
            elif nxt not in state:
                walk(nxt)
        stack.pop()
        state[node] = 2

    sys.setrecursionlimit(10000)
    for node in sorted(graph):
        if node not in state:
            walk(node)
    assert cycles == [], "\n".join(" -> ".join(c) for c in cycles[:10])


ACYCLIC = ("wasdi_server", "wasdi_command_line")
"""Packages with no import loop at all: every import counted, at run time, inside functions or for the type
checker only (``if TYPE_CHECKING``), since a reader follows each of them just the same."""


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other round a loop (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups


def test_strongly_connected_finds_a_loop_and_only_a_loop() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert strongly_connected(graph) == [["a", "b", "c"]]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("package", ACYCLIC)
def test_no_import_loop_type_only_imports_included(package: str) -> None:
    import grimp

    graph = grimp.build_graph(package, cache_dir=None)  # grimp counts `if TYPE_CHECKING` imports too
    edges = {module: set(graph.find_modules_directly_imported_by(module)) for module in graph.modules}
    assert len(edges) > 3
    loops = strongly_connected(edges)
    assert loops == [], "\n".join(" <-> ".join(loop) for loop in loops)


def test_providers_never_import_the_services() -> None:
    offenders = {}
    for path in (SRC / "wasdi_server" / "providers").rglob("*.py"):
        name = module_name(path)
        reached = {m for m in module_level_imports(path, name) if m.startswith("wasdi_server.domains")}
        reached |= {node.module or "" for node in ast.walk(ast.parse(path.read_text())) if
                    isinstance(node, ast.ImportFrom) and "domains" in (node.module or "").split(".")}
        if reached:
            offenders[name] = sorted(reached)
    assert offenders == {}


def test_the_server_command_line_never_imports_the_client_command_line() -> None:
    for path in (SRC / "wasdi_server").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
            assert not any(n.split(".")[0] == "wasdi_cli" for n in names), f"{path} imports wasdi_cli"
    probe = ("import sys\nfrom wasdi_server.cli import app\nfrom typer.testing import CliRunner\n"
             "for args in (['--help'], ['user', '--help'], ['serve', '--help'], ['store', '--help']):\n"
             "    result = CliRunner().invoke(app, args)\n"
             "    assert result.exit_code == 0, result.output\n"
             "print(sorted(m for m in sys.modules if m.split('.')[0] == 'wasdi_cli'))\n"
             "print('wasdi_command_line.groups' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    client_modules, shared = done.stdout.strip().splitlines()[-2:]
    assert client_modules == "[]"
    assert shared == "True"  # the shared root group is what `wasdi-server` runs on
