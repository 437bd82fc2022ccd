"""The broker-message log: messages the original service publishes to its broker are recorded here.

Clients of the original service receive these over a message broker keyed by workspace id; this server
keeps them in a collection so operators, tests and a future push channel can read them in order.
"""

from __future__ import annotations

import itertools
import threading
import time
import uuid
from typing import Any

from ..store import Collection

OK = "OK"
KO = "KO"


class MessageLog:
    """The ``messages`` collection: ``{messageId, sequence, messageCode, messageResult, payload, workspaceId,
    createdDate}``."""

    def __init__(self, messages: Collection) -> None:
        self.messages = messages
        self._lock = threading.Lock()
        existing = [int(m.get("sequence") or 0) for m in messages.all()]
        self._sequence = itertools.count(max(existing, default=0) + 1)

    def send(self, message_code: str, payload: Any, workspace_id: str | None,
             result: str | None = OK) -> dict[str, Any]:
        """Record one message (RabbitMessageViewModel fields plus a sequence number and a time)."""
        with self._lock:
            sequence = next(self._sequence)
        return self.messages.insert({
            "messageId": str(uuid.uuid4()), "sequence": sequence, "messageCode": message_code,
            "messageResult": result, "payload": payload, "workspaceId": workspace_id,
            "createdDate": time.time() * 1000,
        })

    def for_workspace(self, workspace_id: str, after_sequence: int = 0) -> list[dict[str, Any]]:
        """Messages of one workspace, oldest first."""
        found = self.messages.find(lambda m: int(m.get("sequence") or 0) > after_sequence, workspaceId=workspace_id)
        return sorted(found, key=lambda m: int(m["sequence"]))
