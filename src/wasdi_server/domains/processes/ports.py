"""What the process rules ask of the machinery, as small interfaces the machinery satisfies and
``wasdi_server.composition`` passes in (the rules never import the machinery)."""

from __future__ import annotations

from typing import Any, Protocol

OK = "OK"
"""The result of a message that reports a success (the wire value ``messages.OK`` sends)."""
KO = "KO"
"""The result of a message that reports a failure."""


class MessagePublisher(Protocol):
    """Publishes a message about a workspace to whoever listens to it (``messages.Messages``)."""

    def send(self, code: str, payload: Any, workspace_id: str | None, result: str | None = ...) -> None: ...


class ProcessPlaces(Protocol):
    """Where each process of a deployment runs, shared by its nodes (``nodes.locator.ProcessLocator``)."""

    def record(self, process_id: str, workspace_id: str) -> None:
        """A process this node is about to create (called before its record is written)."""

    def forget(self, process_id: str) -> None:
        """A process record deleted on this node."""
