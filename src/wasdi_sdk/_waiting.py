"""What every wait on a process shares: the states it ends in, the errors it raises and how it pauses.

Below the resources (``client.processes.wait`` raises these) and the helpers (``wasdi_sdk.helpers``, where users
import them from), so that neither has to import the other for them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from ._exceptions import WasdiError

if TYPE_CHECKING:
    from .models import ProcessWorkspaceViewModel

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
