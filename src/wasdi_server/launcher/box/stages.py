"""How the two stages of a boxed run's supervisor find each other: the outside stage (``supervisor.main``)
execs ``bwrap``, which starts the inside stage as ``trampoline.py INSIDE JOB_FD`` in the run's world.  Shared
by the server (which writes the command line) and the supervisor (which reads it): plain constants only."""

INSIDE = "--inside"
"""The trampoline's first argument inside a world: the job is on the descriptor that follows."""
JOB_FD = 3
"""Where the inside stage finds its job (a memory file the outside stage wrote)."""
MARKS_FD = 4
"""Where a traced run's stages and program write their phase marks (``name monotonic-seconds`` lines), read by
the supervisor at the end: only for a job with ``trace`` (the launch bench's phase table)."""
MARKS_ENV = "WASDI_BOX_MARKS_FD"
"""The variable that tells a traced run's program (the app executor) where to write its own marks."""
