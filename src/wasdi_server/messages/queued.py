"""``QueuedSender``: a backend that hands messages to something outside the process, from a thread of its own.

``publish`` only appends to a bounded queue, so the request or operation that caused a message never waits
for the far end and never fails because of it.  The thread connects, sends in order and removes a message
only once it is sent; when the far end is down or slow it backs off (0.5 s doubling to 30 s) and tries
again, and past ``limit`` waiting messages the oldest are dropped.  Each outage is logged once when it
starts (with how many messages were dropped, when it ends).

Subclasses say how to ``connect``, ``send`` one message, ``idle`` (keep the connection alive) and
``disconnect``: RabbitMQ (``rabbitmq.py``) is one; a hand-over to another node's broker is another.
"""

from __future__ import annotations

import logging
import threading
import time
from abc import ABC, abstractmethod
from collections import deque

from .publisher import Message

log = logging.getLogger("wasdi_server.messages")


class QueuedSender(ABC):
    """Sends messages in order from its own thread; see the module's docstring."""

    description = "the message broker"
    """How logs name the far end (never with credentials)."""

    def __init__(self, limit: int = 10_000, *, min_backoff: float = 0.5, max_backoff: float = 30.0,
                 idle_seconds: float = 1.0) -> None:
        self.limit = max(1, limit)
        self.min_backoff = min_backoff
        self.max_backoff = max_backoff
        self.idle_seconds = idle_seconds
        self.sent = 0
        self.dropped = 0
        self.connected = False
        self._queue: deque[Message] = deque()
        self._condition = threading.Condition()
        self._stopping = False
        self._thread: threading.Thread | None = None

    # -- what subclasses provide -----------------------------------------------------------------------
    @abstractmethod
    def connect(self) -> None:
        """Open the connection to the far end; raise ``OSError`` (or the backend's own error) if it is down."""

    @abstractmethod
    def send(self, message: Message) -> None:
        """Hand one message to the far end; raise if it could not take it (it is sent again later)."""

    def idle(self) -> None:
        """Called about every ``idle_seconds`` while connected and nothing is to be sent (keep the connection
        alive); a far end that needs nothing of the kind keeps this default."""
        return None

    @abstractmethod
    def disconnect(self) -> None:
        """Close the connection, quietly: the far end may already be gone."""

    # -- the Publisher interface -----------------------------------------------------------------------
    @property
    def pending(self) -> int:
        with self._condition:
            return len(self._queue)

    def publish(self, message: Message) -> None:
        with self._condition:
            if len(self._queue) >= self.limit:
                self._queue.popleft()
                self.dropped += 1
            self._queue.append(message)
            self._condition.notify()

    def start(self) -> None:
        if self._thread is None:
            self._stopping = False
            self._thread = threading.Thread(target=self._run, name="wasdi-message-sender", daemon=True)
            self._thread.start()

    def close(self, timeout: float = 5.0) -> None:
        """Send what can be sent within ``timeout`` seconds, then stop."""
        deadline = time.monotonic() + timeout
        with self._condition:
            while self._queue and self.connected and time.monotonic() < deadline:
                self._condition.wait(0.05)
            self._stopping = True
            self._condition.notify_all()
            left = len(self._queue)
        if self._thread is not None:
            self._thread.join(max(0.1, deadline - time.monotonic()))
            self._thread = None
        if left:
            log.warning("%d messages were not delivered to %s before stopping", left, self.description)

    # -- the sender thread -----------------------------------------------------------------------------
    def _next(self) -> Message | None:
        with self._condition:
            if not self._queue and not self._stopping:
                self._condition.wait(self.idle_seconds)
            return self._queue[0] if self._queue else None

    def _sent(self, message: Message) -> None:
        with self._condition:
            if self._queue and self._queue[0] is message:
                self._queue.popleft()
            self.sent += 1
            self._condition.notify_all()

    def _run(self) -> None:
        backoff = self.min_backoff
        down_since: float | None = None
        dropped_before = 0
        while not self._stopping:
            if not self.connected:
                try:
                    self.connect()
                except Exception as e:
                    if down_since is None:
                        down_since, dropped_before = time.monotonic(), self.dropped
                        log.warning("cannot reach %s (%s: %s); messages wait (at most %d) and it is tried again",
                                    self.description, type(e).__name__, e, self.limit)
                    self._pause(backoff)
                    backoff = min(self.max_backoff, backoff * 2)
                    continue
                self.connected = True
                backoff = self.min_backoff
                if down_since is not None:
                    log.warning("%s is reachable again after %.0f s; %d messages were dropped meanwhile",
                                self.description, time.monotonic() - down_since, self.dropped - dropped_before)
                    down_since = None
            message = self._next()
            try:
                if message is None:
                    self.idle()
                    continue
                self.send(message)
            except Exception as e:
                self.connected = False
                self._quietly_disconnect()
                down_since, dropped_before = time.monotonic(), self.dropped
                log.warning("lost %s (%s: %s); messages wait and it is tried again", self.description,
                            type(e).__name__, e)
                continue
            self._sent(message)
        if self.connected:
            self._quietly_disconnect()
            self.connected = False

    def _pause(self, seconds: float) -> None:
        with self._condition:
            if not self._stopping:
                self._condition.wait(seconds)

    def _quietly_disconnect(self) -> None:
        try:
            self.disconnect()
        except Exception:
            log.debug("closing the connection to %s failed", self.description, exc_info=True)
