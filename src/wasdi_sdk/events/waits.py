"""Waits woken by the server's messages.

``client.processes.wait`` (and so ``client.wait_for_process``, ``run_and_wait`` and the transfer helpers) listens
to the workspace's process updates between its reads and falls back to polling where there are no messages
(``events.updates.ProcessUpdates``); this module keeps the name earlier versions documented.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..models import ProcessWorkspaceViewModel


class ProcessWaits(Protocol):
    """What this wait calls: ``client.processes.wait`` (stated here, below the groups, rather than imported)."""

    def wait(self, process_id: str, *, timeout: float | None = ..., poll_interval: float = ...,
             max_interval: float = ..., raise_on_failure: bool = ...,
             on_update: Callable[[ProcessWorkspaceViewModel], None] | None = ...) -> ProcessWorkspaceViewModel:
        """Wait until the process is DONE, ERROR or STOPPED; its final state."""
        ...


class ClientWithProcesses(Protocol):
    """A client with a ``processes`` group that waits (``WasdiClient`` is one)."""

    @property
    def processes(self) -> ProcessWaits:
        """/process."""
        ...


def wait_for_process(client: ClientWithProcesses, process_id: str, *, timeout: float | None = None,
                     poll_interval: float = 1.0, max_interval: float = 10.0, raise_on_failure: bool = True,
                     on_update: Callable[[ProcessWorkspaceViewModel], None] | None = None) -> ProcessWorkspaceViewModel:
    """``client.processes.wait``: its pauses end on a message about the process, and poll where there is none."""
    return client.processes.wait(process_id, timeout=timeout, poll_interval=poll_interval, max_interval=max_interval,
                                 raise_on_failure=raise_on_failure, on_update=on_update)
