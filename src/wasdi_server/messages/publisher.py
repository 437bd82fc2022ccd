"""One message, the interface every backend implements, and ``Messages``, the one place that sends.

A message is the original's RabbitMessageViewModel (``messageCode``, ``messageResult``, ``payload``,
``workspaceId``, nulls included), published with the workspace id as routing key.  ``Messages.send`` never
fails and never waits for a broker: a backend either routes in memory (the built-in broker) or queues for a
sender thread of its own (RabbitMQ), so the request or operation that caused a message goes on regardless.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Protocol

from wasdi_sdk.models import RabbitMessageViewModel, WasdiModel

log = logging.getLogger("wasdi_server.messages")

OK = "OK"
KO = "KO"


@dataclass(frozen=True)
class Message:
    """One message about one workspace."""

    code: str
    payload: Any
    workspace_id: str
    result: str | None = OK

    def wire(self) -> dict[str, Any]:
        """The message as its JSON object (the wire names of RabbitMessageViewModel, nulls kept)."""
        payload = self.payload.to_wire() if isinstance(self.payload, WasdiModel) else self.payload
        return RabbitMessageViewModel(message_code=self.code, message_result=self.result, payload=payload,
                                      workspace_id=self.workspace_id).to_wire(keep_none=True)

    @cached_property
    def body(self) -> bytes:
        """The JSON bytes every subscriber receives, made once.  ASCII only: WASDI's web client counts a
        frame's ``content-length`` in characters, so a body whose characters are its bytes reads right there
        and everywhere else."""
        return json.dumps(self.wire(), ensure_ascii=True, separators=(",", ":")).encode("ascii")


class Publisher(Protocol):
    """A backend: takes messages without blocking and without raising."""

    def publish(self, message: Message) -> None: ...

    def start(self) -> None: ...

    def close(self) -> None: ...


class Messages:
    """The server's messages (gaps §7), handed to the configured backend."""

    def __init__(self, backend: Publisher) -> None:
        self.backend = backend
        self._taps: tuple[Callable[[Message], None], ...] = ()

    def tap(self, listener: Callable[[Message], None]) -> Callable[[], None]:
        """An in-process listener of every message (tests record with it); returns what removes it."""
        self._taps = (*self._taps, listener)

        def remove() -> None:
            self._taps = tuple(t for t in self._taps if t is not listener)

        return remove

    def send(self, code: str, payload: Any, workspace_id: str | None, result: str | None = OK) -> None:
        """Publish one message about ``workspace_id`` (none: nobody can hear it, so nothing is sent)."""
        if not workspace_id:
            return
        message = Message(code, payload, str(workspace_id), result)
        try:
            for listener in self._taps:
                listener(message)
            self.backend.publish(message)
        except Exception:  # a message is never worth failing the work that caused it
            log.exception("could not publish %s for workspace %s", code, workspace_id)

    def start(self) -> None:
        self.backend.start()

    def close(self) -> None:
        self.backend.close()
