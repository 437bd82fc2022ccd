"""Types this server has no engine for (IDL, Octave, C#, Java, conda, EOEPCA, personalised Docker,
notebooks): the app is stored, but building or running it ends in ERROR with the reason."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from ...domains.apps.engines import AppLayout, EngineError, LogLine
from .base import Launch, Runner
from .paths_util import remove_home

REASONS = {
    "ubuntu_idl372": "IDL apps need an IDL runtime and licence",
    "octave": "Octave apps need an Octave runtime",
    "csharp": ".NET apps need a .NET runtime",
    "java_17_Ubuntu_22": "Java apps need a Java 17 runtime image",
    "conda": "conda apps need conda environments",
    "eoepca": "EOEPCA apps are deployed to an EOEPCA ADES",
    "personalized_docker": "personalised Docker apps need a Docker engine",
    "jupyter-notebook": "notebook apps need a Jupyter service",
}


@dataclass
class UnsupportedEngine:
    """Refuses every build and run with a sentence naming what is missing."""

    app_type: str
    family: str = "unsupported"

    def _refuse(self) -> EngineError:
        reason = REASONS.get(self.app_type, f"apps of type {self.app_type} need an engine")
        return EngineError(f"{reason}, which this server does not have: the app is stored but cannot be "
                           f"built or run here (type {self.app_type})")

    def deploy(self, app: AppLayout, log: LogLine, *, stop: threading.Event | None = None) -> None:
        raise self._refuse()

    def update_library(self, app: AppLayout, log: LogLine, *, stop: threading.Event | None = None) -> None:
        raise self._refuse()

    def update_environment(self, app: AppLayout, action: str, package: str, log: LogLine, *,
                           stop: threading.Event | None = None) -> None:
        raise self._refuse()

    def packages(self, app: AppLayout) -> list[dict[str, str]]:
        raise self._refuse()

    def manager(self, app: AppLayout) -> dict[str, str]:
        raise self._refuse()

    def run(self, app: AppLayout, launch: Launch, runner: Runner) -> int:
        raise self._refuse()

    def delete(self, app: AppLayout) -> None:
        remove_home(app)
