"""What the app rules ask of an app engine (the launcher's ``engines`` satisfy it, and
``wasdi_server.composition`` passes them in): where an app lives, the few calls on its environment the rules
make, the engine's refusal, and this node's copies of the main node's apps (``nodes.app_install``)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

LogLine = Callable[[str], None]
"""Where an engine writes what it does (the build log, or a run's log), one line per call."""


class EngineError(Exception):
    """An engine could not do what was asked; the message says why, for the app's developer."""


@dataclass(frozen=True)
class AppLayout:
    """Where one app lives on this server."""

    name: str
    app_type: str
    folder: Path
    """The app's own files (myProcessor.py, pip.txt ...)."""
    home: Path
    """The engine's folder for the app: its environment, its build log, its history."""

    @property
    def build_log(self) -> Path:
        return self.home / "build.log"


class AppEngine(Protocol):
    """The calls of one engine family the app rules (and this node's copies of apps) make."""

    def deploy(self, app: AppLayout, log: LogLine, *, stop: threading.Event | None = None) -> None:
        """Build (or rebuild) the app's environment from its files; ``EngineError`` when it cannot, or when
        ``stop`` is set meanwhile (the program building it is ended)."""

    def update_environment(self, app: AppLayout, action: str, package: str, log: LogLine, *,
                           stop: threading.Event | None = None) -> None:
        """``addPackage`` / ``removePackage`` / ``upgradePackage`` one validated package spec (``stop``: as
        ``deploy``'s)."""

    def packages(self, app: AppLayout) -> list[dict[str, str]]:
        """The packages of the app's environment now: ``{"name", "version"}`` each."""

    def manager(self, app: AppLayout) -> dict[str, str]:
        """The package manager of the environment: ``{"name", "version"}``."""

    def delete(self, app: AppLayout) -> None:
        """Remove the app's environment (idempotent)."""


class AppCopies(Protocol):
    """On a compute node of a deployment: this node's copies of the main node's apps."""

    @property
    def needed(self) -> bool:
        """Whether this node keeps copies (a compute node of a deployment)."""

    def is_installed(self, doc: dict[str, Any]) -> bool:
        """Whether this node has a current copy of the app."""

    def forget(self, doc: dict[str, Any]) -> None:
        """Remove this node's copy of the app."""
