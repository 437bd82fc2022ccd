"""The async client is generated from the sync one, is current, and has every method with the same signature."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

from wasdi_sdk import AsyncWasdiClient, WasdiClient
from wasdi_sdk._async.resources import RESOURCES as ASYNC_RESOURCES
from wasdi_sdk.catalog import ENDPOINTS
from wasdi_sdk.resources import RESOURCES

ROOT = Path(__file__).resolve().parents[2]


def test_the_generated_async_client_is_current() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_async.py"), "--check"], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr


def public_methods(cls: type) -> dict[str, inspect.Signature]:
    return {name: inspect.signature(member) for name, member in inspect.getmembers(cls, inspect.isfunction)
            if not name.startswith("_")}


def test_every_method_has_an_async_twin_with_the_same_signature() -> None:
    assert set(ASYNC_RESOURCES) == set(RESOURCES)
    compared = 0
    for group, sync_cls in RESOURCES.items():
        async_cls = ASYNC_RESOURCES[group]
        assert async_cls.__name__ == "Async" + sync_cls.__name__
        sync_methods, async_methods = public_methods(sync_cls), public_methods(async_cls)
        assert set(sync_methods) == set(async_methods), group
        for name, signature in sync_methods.items():
            assert [p.name for p in signature.parameters.values()] == \
                [p.name for p in async_methods[name].parameters.values()], f"{group}.{name}"
            assert str(signature.return_annotation) == str(async_methods[name].return_annotation), f"{group}.{name}"
            assert inspect.iscoroutinefunction(getattr(async_cls, name)), f"{group}.{name} is not a coroutine"
            compared += 1
    # Every endpoint of the catalogue the sync client wraps is among them.
    wrapped = {ep.name for ep in ENDPOINTS if callable(getattr(RESOURCES.get(ep.group), ep.operation, None))}
    assert all(inspect.iscoroutinefunction(getattr(ASYNC_RESOURCES[name.split(".")[0]], name.split(".")[1]))
               for name in wrapped)
    assert compared >= len(wrapped)


def test_the_clients_have_the_same_groups_and_helpers() -> None:
    sync_names = {n for n in dir(WasdiClient) if not n.startswith("_")}
    async_names = {n for n in dir(AsyncWasdiClient) if not n.startswith("_")}
    assert sync_names == async_names
    for name in ("wait_for_process", "upload_and_ingest", "import_and_wait", "close", "from_config"):
        assert inspect.iscoroutinefunction(getattr(AsyncWasdiClient, name)), name
    assert hasattr(AsyncWasdiClient, "__aenter__") and hasattr(AsyncWasdiClient, "__aexit__")
