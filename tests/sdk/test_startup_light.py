"""``from wasdi_sdk import WasdiClient`` builds no model and reads no endpoint table: the models, the resource
groups and the catalogue's group modules are imported on first use (bench/startup.py measures the time)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import wasdi_sdk

SRC = Path(wasdi_sdk.__file__).resolve().parents[1]
LAZY = ("wasdi_sdk.models", "wasdi_sdk.resources", "wasdi_sdk.catalog.", "wasdi_sdk._async", "pydantic.main")


def loaded_after(code: str) -> list[str]:
    probe = f"{code}\nimport sys, json\nprint(json.dumps(sorted(m for m in sys.modules if m.startswith({LAZY!r}))))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True,
                          env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"})
    return list(json.loads(done.stdout.splitlines()[-1]))


def test_importing_the_client_loads_no_model_and_no_group() -> None:
    from wasdi_sdk.catalog import GROUP_NAMES

    loaded = loaded_after("from wasdi_sdk import WasdiClient\nWasdiClient(base_url='http://127.0.0.1:9')")
    heavy = [m for m in loaded if m.startswith(("wasdi_sdk.models", "wasdi_sdk.resources", "wasdi_sdk._async",
                                               "pydantic.main"))
             or m.removeprefix("wasdi_sdk.catalog.") in GROUP_NAMES]
    assert heavy == [] and "wasdi_sdk.catalog._types" in loaded


def test_a_group_loads_on_first_use_and_its_calls_work() -> None:
    loaded = loaded_after("from wasdi_sdk import WasdiClient\n"
                          "assert WasdiClient(base_url='http://127.0.0.1:9').workspaces.list.__name__ == 'list'\n"
                          "from wasdi_sdk.catalog import endpoint\nassert endpoint('workspaces.create').method")
    assert "wasdi_sdk.resources.workspaces" in loaded and "wasdi_sdk.catalog.workspaces" in loaded
    assert "pydantic.main" in loaded
