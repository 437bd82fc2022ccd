"""Helpers beside the endpoint methods: waiting for a process to finish."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from ._exceptions import WasdiError
from .models import ProcessWorkspaceViewModel

if TYPE_CHECKING:
    from ._client import WasdiClient

FINAL_STATES = frozenset({"DONE", "ERROR", "STOPPED"})
"""The states a process does not leave."""

Sleep = Callable[[float], None]
"""How a wait pauses between polls (``time.sleep``; tests pass a recorder)."""
AsyncSleep = Callable[[float], Awaitable[None]]
"""How the async client's wait pauses (``asyncio.sleep``): the generated twin of ``Sleep``."""


class ProcessFailedError(WasdiError):
    """A process ended in ERROR or STOPPED; ``process`` is its last state."""

    def __init__(self, process: ProcessWorkspaceViewModel) -> None:
        super().__init__(f"process {process.process_id} ended {process.status}"
                         + (f": {process.payload}" if process.payload else ""))
        self.process = process


class ProcessTimeoutError(WasdiError):
    """The process did not finish within the time allowed; ``process`` is its last known state."""

    def __init__(self, process: ProcessWorkspaceViewModel, timeout: float) -> None:
        super().__init__(f"process {process.process_id} still {process.status} after {timeout:g} s")
        self.process = process


def wait_for_process(client: WasdiClient, process_id: str, *, timeout: float | None = None,
                     poll_interval: float = 1.0, max_interval: float = 10.0, raise_on_failure: bool = True,
                     on_update: Callable[[ProcessWorkspaceViewModel], None] | None = None,
                     sleep: Sleep | None = None) -> ProcessWorkspaceViewModel:
    """Wait until a process is DONE, ERROR or STOPPED, woken by its messages where the server has them, else
    polling with backoff; its final state.

    The same as ``client.processes.wait``: ``on_update`` sees every state read (for progress bars).
    Raises ``ProcessFailedError`` on ERROR or STOPPED (unless ``raise_on_failure=False``) and
    ``ProcessTimeoutError`` after ``timeout`` seconds.
    """
    return client.processes.wait(process_id, timeout=timeout, poll_interval=poll_interval, max_interval=max_interval,
                                 raise_on_failure=raise_on_failure, on_update=on_update, sleep=sleep)
