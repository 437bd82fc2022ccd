"""The box: the one way this server starts code written by someone else (app runs, app builds and
package-manager actions, SNAP ``gpt`` graphs; notebooks next).  ``Box.run(Job(...))`` confines the
program before it starts (Landlock, capabilities dropped, no new privileges, a socket filter, resource
limits, a cgroup where one can be made) and ends the whole run with it.  docs/server.md, "What an app
can reach", says what a run, a build and a graph may touch."""

from .box import OFF, REQUIRED, Box, BoxUnavailable
from .job import Job, Limits, Outcome
from .support import KernelSupport, kernel_support

__all__ = ["OFF", "REQUIRED", "Box", "BoxUnavailable", "Job", "KernelSupport", "Limits", "Outcome",
           "kernel_support"]
