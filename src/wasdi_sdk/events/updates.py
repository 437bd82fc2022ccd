"""``ProcessUpdates``: a message source for waits, so they wake when a process changes instead of on a timer.

A wait keeps its own loop (read the process, stop when it is final, else sleep); this only replaces the
sleep.  Where the server's messages cannot be listened to (no broker named, broker down, an older server)
``sleep`` is a plain ``time.sleep``, so a wait works everywhere and is only faster where messages flow.
"""

from __future__ import annotations

import logging
import time
from types import TracebackType
from typing import TYPE_CHECKING, Self

from .._exceptions import WasdiError
from ..models.events import ProcessUpdateMessage
from .broker import open_stream

if TYPE_CHECKING:
    from .._base_client import BaseClient
    from .stream import EventStream

log = logging.getLogger("wasdi_sdk")
PROCESS_UPDATES = frozenset({"UPDATEPROCESSES"})


class ProcessUpdates:
    """Listens to one workspace's process updates while open (``with ProcessUpdates(client, ws) as updates``)."""

    def __init__(self, client: BaseClient, workspace_id: str | None) -> None:
        self.client = client
        self.workspace_id = workspace_id
        self.stream: EventStream | None = None
        self.unavailable: str | None = None
        """Why messages are not used (``None`` while they are)."""

    @property
    def live(self) -> bool:
        """Whether updates arrive as messages (else ``sleep`` only sleeps)."""
        return self.stream is not None

    def __enter__(self) -> Self:
        return self.open()

    def open(self) -> Self:
        """Subscribe to the workspace's process updates, or note why messages cannot be had (never raises)."""
        if not self.workspace_id:
            self.unavailable = "no workspace to listen to"
            return self
        try:
            self.stream = open_stream(self.client, self.workspace_id, codes=PROCESS_UPDATES)
        except WasdiError as e:
            self.unavailable = str(e)
            log.debug("waiting by polling: %s", e)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Stop listening."""
        if self.stream is not None:
            self.stream.close()
            self.stream = None

    def sleep(self, seconds: float, process_id: str | None = None) -> ProcessUpdateMessage | None:
        """Wait up to ``seconds``; return early with the update when ``process_id`` (any process if ``None``)
        changes.  A broker lost meanwhile turns this into plain sleeping for the rest of the wait."""
        if self.stream is None:
            time.sleep(seconds)
            return None
        deadline = time.monotonic() + seconds
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            try:
                message = self.stream.get(timeout=remaining)
            except WasdiError as e:
                self.unavailable = str(e)
                log.debug("messages stopped, waiting by polling: %s", e)
                self.stream.close()
                self.stream = None
                time.sleep(max(0.0, deadline - time.monotonic()))
                return None
            if isinstance(message, ProcessUpdateMessage) and (process_id is None or message.process_id == process_id):
                return message
