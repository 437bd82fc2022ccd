"""The catalogue, the server's routes, the SDK's methods, the CLI's commands and the docs agree."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from wasdi_sdk.catalog import BY_NAME, CONTRACT, ENDPOINTS, GROUPS
from wasdi_sdk.catalog.render import markdown
from wasdi_sdk.resources import RESOURCES
from wasdi_server.api.framework import HANDLERS

ROOT = Path(__file__).resolve().parents[1]
OPTIONS = {"self", "options", "extra_headers", "extra_query", "timeout"}


def sdk_methods() -> set[str]:
    found = set()
    for ep in ENDPOINTS:
        resource = RESOURCES.get(ep.group)
        if resource is not None and callable(getattr(resource, ep.operation, None)):
            found.add(ep.name)
    return found


def cli_endpoints() -> set[str]:
    """Endpoints the CLI calls: every ``<x>.<group>.<operation>(...)`` in its source."""
    found = set()
    for path in (ROOT / "src" / "wasdi_cli").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
                name = f"{node.value.attr}.{node.attr}"
                if name in BY_NAME:
                    found.add(name)
            elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "add_share_commands":
                group = next(k.value.value for k in node.keywords if k.arg == "group")  # type: ignore[attr-defined]
                found |= {f"{group}.{op}" for op in ("share_add", "share_list", "share_delete")} & set(BY_NAME)
    return found


def test_counts(capsys: pytest.CaptureFixture[str]) -> None:
    server, sdk, cli = set(HANDLERS), sdk_methods(), cli_endpoints()
    with capsys.disabled():
        print(f"\ncatalogue {len(CONTRACT)} contract endpoints (+{len(ENDPOINTS) - len(CONTRACT)} client extras) "
              f"in {len(GROUPS)} groups; "
              f"server routes {len(server)}, SDK wraps {len(sdk)}, CLI covers {len(cli)}")
    assert len(CONTRACT) == 216
    contract = {ep.name for ep in CONTRACT}
    # Every endpoint of the contract: routed by the server, wrapped by the SDK, called by some CLI command.
    assert contract <= server, f"server misses {sorted(contract - server)}"
    assert contract <= sdk, f"SDK misses {sorted(contract - sdk)}"
    assert contract <= cli, f"CLI misses {sorted(contract - cli)}"
    assert server <= set(BY_NAME) and cli <= set(BY_NAME)


def test_sdk_methods_take_every_query_parameter() -> None:
    for name in sdk_methods():
        ep = BY_NAME[name]
        signature = inspect.signature(getattr(RESOURCES[ep.group], ep.operation))
        accepted = set(signature.parameters) - OPTIONS
        missing = {p.python_name for p in ep.query} - accepted
        assert not missing, f"{name} lacks {missing}"
        assert "options" in signature.parameters, f"{name} has no request options"


def test_every_route_is_served(tmp_path: Path) -> None:
    from wasdi_server import create_app, load_settings

    app = create_app(load_settings(data_dir=tmp_path, environ={}))
    try:
        for name in HANDLERS:
            ep = BY_NAME[name]
            resource, *_ = app._router.find(ep.path.replace("{", "").replace("}", "")) or (None,)
            assert resource is not None, f"{ep.path} is not routed"
    finally:
        app.services.close()


def test_docs_are_current() -> None:
    assert (ROOT / "docs" / "api.md").read_text() == markdown(), "run: python -m wasdi_sdk.catalog.render > docs/api.md"
