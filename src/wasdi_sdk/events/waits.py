"""Waits woken by the server's messages: a ``sleep`` for ``client.wait_for_process`` that returns as soon as a
message says the process changed.

    with wake_on_messages(client, process_id) as sleep:
        client.wait_for_process(process_id, sleep=sleep)

The wait keeps its own loop and backoff; only its pauses change.  Where messages cannot be had (no broker
named, broker down, another server) the pauses are plain ``time.sleep``.  Sync only for now (the async
client's twin comes with its wait).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Self

from .updates import ProcessUpdates

if TYPE_CHECKING:
    from .._client import WasdiClient
    from ..models import ProcessWorkspaceViewModel


class wake_on_messages:
    """A pause of a wait that a message about ``process_id`` ends early (a context manager: it listens while open).

    The workspace to listen to is read on the first pause; that first pause then returns at once, so the wait
    reads the process again right after subscribing and misses no change made in between.
    """

    def __init__(self, client: WasdiClient, process_id: str) -> None:
        self.client = client
        self.process_id = process_id
        self.updates: ProcessUpdates | None = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.updates is not None:
            self.updates.__exit__(None, None, None)

    def __call__(self, seconds: float) -> None:
        if self.updates is None:
            workspace_id = self.client.processes.get(self.process_id).workspace_id
            self.updates = ProcessUpdates(self.client, workspace_id).__enter__()
            if self.updates.live:
                return
        if self.updates.live:
            self.updates.sleep(seconds, self.process_id)
        else:
            time.sleep(seconds)


def wait_for_process(client: WasdiClient, process_id: str, *, timeout: float | None = None,
                     poll_interval: float = 1.0, max_interval: float = 10.0, raise_on_failure: bool = True,
                     on_update: Callable[[ProcessWorkspaceViewModel], None] | None = None) -> ProcessWorkspaceViewModel:
    """``client.wait_for_process`` whose pauses end on a message about the process (see ``wake_on_messages``)."""
    with wake_on_messages(client, process_id) as sleep:
        return client.wait_for_process(process_id, timeout=timeout, poll_interval=poll_interval,
                                       max_interval=max_interval, raise_on_failure=raise_on_failure,
                                       on_update=on_update, sleep=sleep)
