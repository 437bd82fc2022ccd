"""The built-in broker's topic exchange: which sinks hear which workspace.

A sink is a callable that takes a message and returns at once (it queues, it never writes to a socket).
A message to a workspace nobody listens to costs one dictionary lookup.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from .publisher import Message

log = logging.getLogger("wasdi_server.messages")
Sink = Callable[[Message], None]


class Exchange:
    """Routes each message to the sinks bound to its workspace id."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._routes: dict[str, tuple[Sink, ...]] = {}

    def bind(self, routing_key: str, sink: Sink) -> None:
        with self._lock:
            current = self._routes.get(routing_key, ())
            if sink not in current:
                self._routes[routing_key] = (*current, sink)

    def unbind(self, routing_key: str, sink: Sink) -> None:
        with self._lock:
            left = tuple(s for s in self._routes.get(routing_key, ()) if s != sink)
            if left:
                self._routes[routing_key] = left
            else:
                self._routes.pop(routing_key, None)

    def bound_keys(self) -> int:
        with self._lock:
            return len(self._routes)

    def publish(self, message: Message) -> None:
        # Tuples are replaced, never changed, so they are read without the lock.
        for sink in self._routes.get(message.workspace_id, ()):
            try:
                sink(message)
            except Exception:
                log.exception("a listener of workspace %s failed", message.workspace_id)

    # The built-in broker is a Publisher whose backend is this exchange.
    def start(self) -> None:
        return None

    def close(self) -> None:
        return None
