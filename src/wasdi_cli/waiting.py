"""Waiting for a server process with a progress bar, and the sentence when it fails."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .errors import INTERRUPTED, CliError
from .output import progress

if TYPE_CHECKING:
    from wasdi_sdk import WasdiClient
    from wasdi_sdk.models import ProcessWorkspaceViewModel


def wait_bar(description: str) -> Any:
    """A 0-100 bar fed by process states (``on_update`` of the SDK's waits), in percent."""
    return progress(description, total=100, unit="percent")


def follow(advance: Callable[[float], None]) -> Callable[[object], None]:
    """An ``on_update`` that moves the bar by the process's progress since the last state."""
    done = [0]

    def update(state: object) -> None:
        perc = int(getattr(state, "progress_perc", 0) or 0)
        advance(max(0, perc - done[0]))
        done[0] = max(done[0], perc)

    return update


def wait_for(client: WasdiClient, process_id: str, description: str, timeout: float | None,
             failed: str) -> ProcessWorkspaceViewModel:
    """Wait for ``process_id`` to end DONE, showing a bar; else a ``CliError`` saying ``failed: why``."""
    from wasdi_sdk import ProcessFailedError, ProcessTimeoutError

    try:
        # The SDK's wait wakes on a message about the process; where the server has no messages, it polls.
        with wait_bar(description) as advance:
            return client.wait_for_process(process_id, timeout=timeout, poll_interval=0.5, max_interval=5.0,
                                           on_update=follow(advance))
    except (ProcessFailedError, ProcessTimeoutError) as e:
        raise CliError(f"{failed}: {e}") from e
    except KeyboardInterrupt as e:
        raise interrupted(f"process {process_id}", process_id, f"wasdi processes wait {process_id}") from e


def interrupted(what: str, process_id: str, again: str) -> CliError:
    """Ctrl-C during a wait: the wait ends (exit 130), the work does not; the sentence says how to go on."""
    return CliError(f"interrupted: only the wait ended, {what} goes on on the server: wait again with '{again}', "
                    f"or stop it with 'wasdi processes stop {process_id}'", INTERRUPTED)
