"""What the commerce rules ask of the machinery, as small interfaces the machinery satisfies and
``wasdi_server.composition`` passes in (the rules never import the machinery)."""

from __future__ import annotations

from typing import Any, Protocol


class MessagePublisher(Protocol):
    """Publishes a message about a workspace to whoever listens to it (``messages.Messages``)."""

    def send(self, code: str, payload: Any, workspace_id: str | None, result: str | None = ...) -> None: ...
