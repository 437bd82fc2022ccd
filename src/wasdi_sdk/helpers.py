"""Helpers beside the endpoint methods: waiting for a process to finish."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from ._waiting import FINAL_STATES, AsyncSleep, ProcessFailedError, ProcessTimeoutError, Sleep

if TYPE_CHECKING:
    from .models import ProcessWorkspaceViewModel
    from .resources.processes import ProcessesResource

__all__ = ["FINAL_STATES", "AsyncSleep", "ProcessFailedError", "ProcessTimeoutError", "Sleep", "WaitingClient",
           "wait_for_process"]


class WaitingClient(Protocol):
    """What a wait needs of a client: its ``processes`` group (``WasdiClient`` has it), so that the helpers
    depend on the groups and not on the client that gathers them."""

    @property
    def processes(self) -> ProcessesResource: ...


def wait_for_process(client: WaitingClient, process_id: str, *, timeout: float | None = None,
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
