"""Helpers beside the endpoint methods: waiting for a process to finish."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ._exceptions import WasdiError
from .models import ProcessWorkspaceViewModel

if TYPE_CHECKING:
    from ._client import WasdiClient

FINAL_STATES = frozenset({"DONE", "ERROR", "STOPPED"})


class ProcessFailedError(WasdiError):
    """A process ended in ERROR or STOPPED; ``process`` is its last state."""

    def __init__(self, process: ProcessWorkspaceViewModel) -> None:
        super().__init__(f"process {process.process_obj_id} ended {process.status}"
                         + (f": {process.payload}" if process.payload else ""))
        self.process = process


class ProcessTimeoutError(WasdiError):
    """The process did not finish within the time allowed; ``process`` is its last known state."""

    def __init__(self, process: ProcessWorkspaceViewModel, timeout: float) -> None:
        super().__init__(f"process {process.process_obj_id} still {process.status} after {timeout:g} s")
        self.process = process


def wait_for_process(client: WasdiClient, process_id: str, *, timeout: float | None = None,
                     poll_interval: float = 1.0, max_interval: float = 10.0, raise_on_failure: bool = True,
                     on_update: Callable[[ProcessWorkspaceViewModel], None] | None = None,
                     sleep: Callable[[float], None] = time.sleep, listen: bool = False) -> ProcessWorkspaceViewModel:
    """Poll a process with backoff until it is DONE, ERROR or STOPPED; its final state.

    ``on_update`` sees every state read (for progress bars).  Raises ``ProcessFailedError`` on ERROR
    or STOPPED (unless ``raise_on_failure=False``) and ``ProcessTimeoutError`` after ``timeout`` seconds.
    With ``listen=True`` the wait also listens to the process's workspace on the server's message broker
    and reads the process again as soon as a message says it changed (polling every ``max_interval``
    seconds in between, in case a message is missed); where messages cannot be had it polls as usual.
    """
    from .events.updates import ProcessUpdates

    started = time.monotonic()
    interval = poll_interval
    updates: ProcessUpdates | None = None
    try:
        while True:
            process = client.processes.get(process_id)
            if on_update is not None:
                on_update(process)
            if process.status in FINAL_STATES:
                if raise_on_failure and process.status != "DONE":
                    raise ProcessFailedError(process)
                return process
            if listen and updates is None:
                updates = ProcessUpdates(client, process.workspace_id).__enter__()
                if updates.live:
                    continue  # read once more: a change made before the subscription started is not missed
            if updates is not None and updates.live:
                interval = max_interval
            if timeout is not None and time.monotonic() - started + interval > timeout:
                remaining = timeout - (time.monotonic() - started)
                if updates is None or not updates.live or remaining <= 0:
                    raise ProcessTimeoutError(process, timeout)
                interval = remaining
            if updates is not None and updates.live:
                updates.sleep(interval, process_id)
            else:
                sleep(interval)
                interval = min(max_interval, interval * 1.5)
    finally:
        if updates is not None:
            updates.__exit__(None, None, None)
