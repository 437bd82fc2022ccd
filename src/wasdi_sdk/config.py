"""Reading the official ``wasdi`` library's configuration: ``config.json`` and ``WASDI_*`` variables."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._base_client import DEFAULT_BASE_URL


@dataclass
class WasdiConfig:
    """What a user's existing WASDI setup says."""

    base_url: str = DEFAULT_BASE_URL
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    """Never in a repr (``client.config`` in a notebook's output)."""
    session_id: str | None = field(default=None, repr=False)
    workspace: str | None = None
    """Workspace name (``WORKSPACE``); wins over ``workspace_id`` as in the official library."""
    workspace_id: str | None = None
    timeout: float | None = None
    source: Path | None = None


def load_config(path: str | Path | None = None, environ: Mapping[str, str] | None = None) -> WasdiConfig:
    """Merge the environment and ``config.json`` the way the official library does.

    ``WASDI_WEBSERVER_URL`` is read first and ``BASEURL`` overrides it; ``USER``, ``SESSIONID``
    and the workspace keys of the file win over ``WASDI_USER``, ``WASDI_SESSION_ID`` and
    ``WASDI_WORKSPACE_ID``.  Without ``path``, ``./config.json`` is read when it exists.
    """
    env = os.environ if environ is None else environ
    source = Path(path) if path is not None else Path("config.json")
    data: dict[str, Any] = {}
    if source.is_file():
        data = json.loads(source.read_text(encoding="utf-8"))
    elif path is not None:
        raise FileNotFoundError(f"no WASDI config file at {source}")
    base_url = env.get("WASDI_WEBSERVER_URL") or DEFAULT_BASE_URL
    if data.get("BASEURL"):
        base_url = str(data["BASEURL"])
    timeout = data.get("REQUESTSTIMEOUT")
    return WasdiConfig(
        base_url=base_url.rstrip("/"),
        user=data.get("USER") or env.get("WASDI_USER"),
        password=data.get("PASSWORD"),
        session_id=data.get("SESSIONID") or env.get("WASDI_SESSION_ID"),
        workspace=data.get("WORKSPACE"),
        workspace_id=data.get("WORKSPACEID") or env.get("WASDI_WORKSPACE_ID"),
        timeout=float(timeout) if timeout else None,
        source=source if source.is_file() else None,
    )
