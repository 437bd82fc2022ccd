"""Whether a process of this machine still runs, by its id (a leftover of a server that ended: a lab's, a spare
reader's folder)."""

from __future__ import annotations

import os


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (one of another user's counts: it exists, it may not be signalled)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
