"""What a boxed program is given (``Job``), the limits it runs under (``Limits``), and how it ended
(``Outcome``): plain data, the same for an app run, a build, a ``gpt`` graph or a notebook server."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .doors import RunIdentity

MB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """A run's resource limits (0: no limit of that kind)."""

    memory_mb: int = 8192
    processes: int = 512
    open_files: int = 4096
    file_mb: int = 32768
    cpu_seconds: int = 86400
    disk_mb: int = 0
    """How much the job's ``grows`` folder (a run's workspace) may grow while it runs."""

    SETTINGS = {"memory_mb": "app_memory_mb", "processes": "app_max_processes", "open_files": "app_max_open_files",
                "file_mb": "app_max_file_mb", "cpu_seconds": "app_cpu_seconds", "disk_mb": "app_disk_mb"}
    """The setting of each limit, named in the log line of a run that passed it."""
    WORDS = {"memory_mb": "memory limit", "processes": "limit on processes and threads",
             "open_files": "limit on open files", "file_mb": "limit on the size of a file written",
             "cpu_seconds": "CPU time limit", "disk_mb": "limit on the growth of its workspace"}

    def explain(self, name: str) -> str:
        """The log line of a run that passed the limit ``name``."""
        unit = {"memory_mb": " MB", "file_mb": " MB", "cpu_seconds": " s", "disk_mb": " MB"}.get(name, "")
        value = getattr(self, name, "?")
        return (f"the run passed its {self.WORDS.get(name, name)} ({self.SETTINGS.get(name, name)} = {value}{unit}) "
                f"and was ended")


@dataclass(frozen=True)
class Job:
    """One program to run in the box, and what it may reach.

    ``read`` folders and files may be read and executed, ``write`` ones also changed (each with what is
    below it); the system's libraries, interpreters and the few files of ``/etc`` programs need are
    added by the box.  ``connect_ports`` and ``bind_ports`` are TCP ports; the operator's outbound ports
    are added for connections.  ``name`` identifies the run (its cgroup's name)."""

    argv: Sequence[str]
    env: Mapping[str, str]
    cwd: Path
    read: Sequence[Path] = ()
    write: Sequence[Path] = ()
    connect_ports: Sequence[int] = ()
    bind_ports: Sequence[int] = ()
    name: str = ""
    limits: Limits | None = None
    """This job's limits instead of the box's (``None``: the box's)."""
    grows: Path | None = None
    """The folder whose growth ``Limits.disk_mb`` bounds while the job runs (a run's workspace folder)."""
    identity: RunIdentity | None = None
    """Whose run this is, for the doors (the proxy logs each connection to ``identity.log``); ``None``: an
    anonymous run whose door lines go to the run's output."""
    trace: bool = False
    """Note when each phase of the run's start and end was reached (``Outcome.marks``; the launch bench's table)."""


@dataclass
class Outcome:
    """How a boxed program ended."""

    exit_code: int | None = None
    signal: int | None = None
    limits: list[str] = field(default_factory=list)
    """The limits (``Limits`` field names) the run passed."""
    killed: int = 0
    """Processes still running when the program ended, killed by the supervisor."""
    stopped: bool = False
    timed_out: bool = False
    error: str | None = None
    marks: list[tuple[str, float]] = field(default_factory=list)
    """A traced job's phases: (name, ``time.monotonic()``) in order, from the server, the supervisor, the stages
    and the program (a program that writes its own marks: the app executor)."""

    @property
    def code(self) -> int:
        """The exit code as a shell shows it (128 + the signal for a killed program)."""
        if self.exit_code is not None:
            return self.exit_code
        return 128 + self.signal if self.signal else 126

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.stopped and not self.timed_out
