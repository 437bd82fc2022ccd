"""The SDK's imports point one way (issue 29): no cycle among its modules, type-only imports included (a reader
follows them just the same), and the contracts of ``pyproject.toml`` hold: its layers (``sdk-layers``) and its
resource groups independent of each other (``sdk-groups``).

``test_import_order.py`` counts only the imports that run; these count every ``import`` statement, as grimp reads
them, so that a loop hidden under ``if TYPE_CHECKING:`` or inside a function is a loop too.
"""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path

import grimp
import pytest
from importlinter.contracts.independence import IndependenceContract
from importlinter.contracts.layers import LayersContract
from importlinter.domain.contract import Contract

ROOT = Path(__file__).resolve().parents[2]
CONTRACT_TYPES: dict[str, type[Contract]] = {"layers": LayersContract, "independence": IndependenceContract}


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("wasdi_sdk", include_external_packages=False, exclude_type_checking_imports=False)


def import_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The groups of modules that import each other, directly or not (strongly connected, more than one module;
    a module importing itself is one too): Tarjan's algorithm, without recursion."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in order:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(graph.find_modules_directly_imported_by(root)))]
        order[root] = low[root] = len(order)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, pending = work[-1]
            if pending:
                target = pending.pop()
                if target not in order:
                    order[target] = low[target] = len(order)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, sorted(graph.find_modules_directly_imported_by(target))))
                elif target in on_stack:
                    low[module] = min(low[module], order[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[module])
            if low[module] == order[module]:
                group: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == module:
                        break
                if len(group) > 1 or module in graph.find_modules_directly_imported_by(module):
                    found.append(sorted(group))
    return found


def describe(graph: grimp.ImportGraph, cycles: list[list[str]]) -> str:
    lines = []
    for group in cycles:
        lines.append(f"{len(group)} modules import each other:")
        for a in group:
            for b in sorted(graph.find_modules_directly_imported_by(a) & set(group)):
                where = ", ".join(str(d["line_number"]) for d in graph.get_import_details(importer=a, imported=b))
                lines.append(f"  {a} -> {b} (l.{where})")
    return "\n".join(lines)


def test_no_module_of_the_sdk_imports_itself_back(graph: grimp.ImportGraph) -> None:
    cycles = import_cycles(graph)
    assert cycles == [], describe(graph, cycles)


def test_a_type_only_import_back_up_is_a_cycle(graph: grimp.ImportGraph) -> None:
    # The loop this test was written against: a helper naming the client for its annotations.
    looped = copy.deepcopy(graph)
    looped.add_import(importer="wasdi_sdk.helpers", imported="wasdi_sdk._client", line_number=1,
                      line_contents="from ._client import WasdiClient")
    cycles = import_cycles(looped)
    assert len(cycles) == 1 and {"wasdi_sdk._client", "wasdi_sdk.helpers"} <= set(cycles[0])
    assert "wasdi_sdk.helpers -> wasdi_sdk._client (l.1)" in describe(looped, cycles)


def sdk_contract(contract_id: str) -> Contract:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    assert config.get("exclude_type_checking_imports") is False, "type-only imports must count"
    [options] = [c for c in config["contracts"] if c.get("id") == contract_id]
    return CONTRACT_TYPES[options["type"]](name=options["name"], session_options={}, contract_options=options)


@pytest.mark.parametrize("contract_id", ["sdk-layers", "sdk-groups"])
def test_the_sdk_contracts_hold(graph: grimp.ImportGraph, contract_id: str) -> None:
    check = sdk_contract(contract_id).check(copy.deepcopy(graph), verbose=False)
    assert check.kept, check.metadata


@pytest.mark.parametrize(("contract_id", "importer", "imported"), [
    ("sdk-layers", "wasdi_sdk.resources.workspaces", "wasdi_sdk._client"),  # a group reaching up to the client
    ("sdk-layers", "wasdi_sdk._async.resources.processes", "wasdi_sdk.helpers"),  # the twin's group to a helper
    ("sdk-layers", "wasdi_sdk._base_client", "wasdi_sdk.resources"),  # the transport to the groups above it
    ("sdk-layers", "wasdi_sdk._client", "wasdi_sdk._async._client"),  # one client to the other
    ("sdk-groups", "wasdi_sdk.resources.styles", "wasdi_sdk.resources.images"),  # a group to another
    ("sdk-groups", "wasdi_sdk._async.resources.files", "wasdi_sdk.resources.maps"),  # to another's sync twin
])
def test_an_import_the_contracts_forbid_breaks_them(graph: grimp.ImportGraph, contract_id: str, importer: str,
                                                    imported: str) -> None:
    changed = copy.deepcopy(graph)
    changed.add_import(importer=importer, imported=imported, line_number=1, line_contents="import across")
    assert not sdk_contract(contract_id).check(changed, verbose=False).kept
