"""The box: the one way this server starts code written by someone else (app runs, app builds and
package-manager actions, SNAP ``gpt`` graphs; notebooks next).  ``Box.run(Job(...))`` confines the
program before it starts (Landlock, capabilities dropped, no new privileges, a socket filter, resource
limits, a cgroup where one can be made) and ends the whole run with it.  docs/server.md, "What an app
can reach", says what a run, a build and a graph may touch.  The names below are imported on first use
(module ``__getattr__``): a boxed reader imports this package's reading parts only."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .box import OFF, REQUIRED, Box, BoxUnavailable
    from .job import Job, Limits, Outcome
    from .support import KernelSupport, kernel_support

__all__ = ["OFF", "REQUIRED", "Box", "BoxUnavailable", "Job", "KernelSupport", "Limits", "Outcome",
           "kernel_support"]
_WHERE = {**dict.fromkeys(["OFF", "REQUIRED", "Box", "BoxUnavailable"], ".box"),
          **dict.fromkeys(["Job", "Limits", "Outcome"], ".job"),
          **dict.fromkeys(["KernelSupport", "kernel_support"], ".support")}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)
