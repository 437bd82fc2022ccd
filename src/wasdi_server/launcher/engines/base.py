"""What every app engine offers, and what it is given: one small interface so that a new engine family
(a Docker one, say) is one new module, and nothing else knows how an app is built or started."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ...domains.apps.engines import AppLayout, LogLine
from ..box import Job

Runner = Callable[[Job], int]
"""Runs a job in the box to its end and answers its exit code; the caller owns stopping, timeouts and
where the output goes."""


@dataclass(frozen=True)
class Launch:
    """One run of an app: the variables the official library reads, and the parameters file."""

    variables: Mapping[str, str]
    """WASDI_WEBSERVER_URL, WASDI_USER, WASDI_SESSION_ID, WASDI_WORKSPACE_ID, WASDI_PROCESS_WORKSPACE_ID,
    WASDI_BASE_PATH, WASDI_PARAMETERS_FILE."""
    scratch: Path
    """A private folder for this run (HOME and TMPDIR of the app), removed afterwards."""
    workspace: Path
    """The folder of the workspace the run works in: the only other folder it may write."""
    api_ports: Sequence[int] = ()
    """The TCP ports of this server's API (what the official library calls)."""
    extra: Mapping[str, str] = field(default_factory=dict)


class Engine(Protocol):
    """One engine family (Python + pip, ...)."""

    family: str

    def deploy(self, app: AppLayout, log: LogLine, *, stop: threading.Event | None = None) -> None:
        """Build (or rebuild) the app's environment from its files; ``EngineError`` when it cannot, or when
        ``stop`` is set meanwhile (the program building it is ended)."""

    def update_library(self, app: AppLayout, log: LogLine, *, stop: threading.Event | None = None) -> None:
        """Refresh the official library in the app's environment (``stop``: as ``deploy``'s)."""

    def update_environment(self, app: AppLayout, action: str, package: str, log: LogLine, *,
                           stop: threading.Event | None = None) -> None:
        """``addPackage`` / ``removePackage`` / ``upgradePackage`` one validated package spec (``stop``: as
        ``deploy``'s)."""

    def packages(self, app: AppLayout) -> list[dict[str, str]]:
        """The packages of the app's environment now: ``{"name", "version"}`` each."""

    def manager(self, app: AppLayout) -> dict[str, str]:
        """The package manager of the environment: ``{"name", "version"}``."""

    def run(self, app: AppLayout, launch: Launch, runner: Runner) -> int:
        """Start the app through ``runner`` (in the box) and answer its exit code."""

    def delete(self, app: AppLayout) -> None:
        """Remove the app's environment (idempotent)."""
