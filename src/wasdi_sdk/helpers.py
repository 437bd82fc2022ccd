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
                     sleep: Callable[[float], None] = time.sleep) -> ProcessWorkspaceViewModel:
    """Poll a process with backoff until it is DONE, ERROR or STOPPED; its final state.

    ``on_update`` sees every state read (for progress bars).  Raises ``ProcessFailedError`` on ERROR
    or STOPPED (unless ``raise_on_failure=False``) and ``ProcessTimeoutError`` after ``timeout`` seconds.
    """
    started = time.monotonic()
    interval = poll_interval
    while True:
        process = client.processes.get(process_id)
        if on_update is not None:
            on_update(process)
        if process.status in FINAL_STATES:
            if raise_on_failure and process.status != "DONE":
                raise ProcessFailedError(process)
            return process
        if timeout is not None and time.monotonic() - started + interval > timeout:
            raise ProcessTimeoutError(process, timeout)
        sleep(interval)
        interval = min(max_interval, interval * 1.5)
