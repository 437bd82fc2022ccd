"""The box: every program written by someone else (app runs, app builds and package-manager actions, SNAP
``gpt`` graphs, notebooks) is started through ``Box.run``, which confines it before its first instruction.

``Box.run`` starts the trampoline (``trampoline.py``: the run's supervisor, which confines and executes the
program and ends the whole run with it) with the job on its standard input, copies the program's output
line by line to the caller, stops it on request or after its timeout, and answers how it ended.

With ``app_isolation = required`` (the default) a job is refused (``BoxUnavailable``) where the kernel
cannot box it; with ``off`` it runs unconfined (but still supervised, limited and ended whole).
"""

from __future__ import annotations

import contextlib
import logging
import marshal
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from . import system
from .job import MB, Job, Limits, Outcome
from .support import KernelSupport, kernel_support

if TYPE_CHECKING:
    from ...settings import Settings

log = logging.getLogger("wasdi_server.box")
TRAMPOLINE = Path(__file__).with_name("trampoline.py")
REQUIRED = "required"
OFF = "off"
DNS_PORT = 53
"""UDP is refused in the box, so names are resolved over TCP (``RES_OPTIONS=use-vc``) on this port."""
STOP_GRACE_SECONDS = 3.0
"""Between the SIGTERM a stopped run gets and the SIGKILL of what is left of it."""


class BoxUnavailable(Exception):
    """The kernel cannot box a run and ``app_isolation`` is ``required``: the message says why and what to do."""


@dataclass(frozen=True)
class Box:
    """The confinement policy of one server: its isolation mode, its limits, its outbound ports and the
    folders no rule may open (the data directory)."""

    isolation: str = REQUIRED
    limits: Limits = field(default_factory=Limits)
    outbound_ports: tuple[int, ...] = (80, 443)
    protected: tuple[Path, ...] = ()
    """Folders no job's rule may cover whole (the data directory): a job gets only the parts of them it names."""
    support: KernelSupport = field(default_factory=kernel_support, compare=False, hash=False)
    """What the kernel offers (found once per process; not part of a box's identity)."""

    @classmethod
    def from_settings(cls, settings: Settings) -> Box:
        limits = Limits(settings.app_memory_mb, settings.app_max_processes, settings.app_max_open_files,
                        settings.app_max_file_mb, settings.app_cpu_seconds)
        return cls(settings.app_isolation, limits, tuple(int(p) for p in settings.app_outbound_ports),
                   (Path(settings.data_dir).resolve(),), kernel_support())

    # -- what the box can do here ----------------------------------------------------------------------
    @property
    def confined(self) -> bool:
        return self.isolation != OFF

    def refusal(self) -> str | None:
        """Why runs cannot start here (``None``: they can)."""
        if not self.confined:
            return None
        reasons = self.support.missing()
        if self.limits.processes and "pids" not in self.support.cgroups and os.getuid() == 0:
            # The kernel exempts root from RLIMIT_NPROC whatever its capabilities, so only a cgroup holds it.
            reasons.append("the server runs as root and no pids cgroup can be made here, so the limit on a run's "
                           "processes (app_max_processes) could not hold: run the server as an ordinary user, "
                           "give it a writable pids cgroup, or set app_max_processes = 0")
        for folder in self.protected:
            cover = next((p for p in system.SYSTEM_FOLDERS if folder == Path(p) or Path(p) in folder.parents), None)
            if cover:
                reasons.append(f"the data directory {folder} is inside {cover}, which every run may read")
        if not reasons:
            return None
        return ("this server cannot box the code of apps and workflows: " + "; ".join(reasons) + ". Nothing of "
                "other people's code runs unboxed: run the server on a kernel that can box it (see "
                "'wasdi-server doctor'), or, on a single-user machine only, set app_isolation = \"off\" "
                "(WASDI_SERVER_APP_ISOLATION=off), which lets apps do whatever the server's OS user can")

    def check(self) -> None:
        reason = self.refusal()
        if reason:
            raise BoxUnavailable(reason)

    # -- a job as the trampoline reads it --------------------------------------------------------------
    def _allowed(self, paths: Sequence[Path | str]) -> list[str]:
        """``paths`` without those that would open a protected folder whole (or one above it)."""
        kept = []
        for raw in paths:
            path = Path(raw).resolve()
            if any(path == p or path in p.parents for p in self.protected):
                continue
            kept.append(str(path))
        return kept

    def spec(self, job: Job, run_id: str) -> dict[str, Any]:
        limits = job.limits or self.limits
        env = dict(job.env)
        connect = {*job.connect_ports, *self.outbound_ports}
        if self.confined:
            env.setdefault("RES_OPTIONS", "use-vc")
            connect.add(DNS_PORT)
        support = self.support
        cgroups = {name: place.for_run(run_id) for name, place in support.cgroups.items()
                   if (name == "memory" and limits.memory_mb) or (name == "pids" and limits.processes)}
        argv = [str(a) for a in job.argv]
        # Found here, on the job's PATH: once confined, the supervisor could not import what a search needs.
        program = argv[0] if "/" in argv[0] else (shutil.which(argv[0], path=env.get("PATH", "")) or argv[0])
        return {
            "program": program,
            "argv": argv,
            "env": env,
            "cwd": str(job.cwd),
            "confine": self.confined,
            "read": system.system_read() + self._allowed(job.read),
            "write": [system.SHARED_MEMORY, *self._allowed(job.write)],
            "devices": system.devices(),
            "connect_ports": sorted(connect),
            "bind_ports": sorted(set(job.bind_ports)),
            "limits": {
                "memory_bytes": limits.memory_mb * MB, "processes": limits.processes,
                "open_files": limits.open_files, "file_bytes": limits.file_mb * MB,
                "cpu_seconds": limits.cpu_seconds,
                "memory_by": "cgroup" if "memory" in cgroups else "rlimit",
                "processes_by": "cgroup" if "pids" in cgroups else "rlimit",
            },
            "cgroups": cgroups,
            "parent_pid": os.getpid(),
            "grace_seconds": STOP_GRACE_SECONDS,
        }

    def summary(self, job: Job) -> str:
        """One line for a run's log: how the run is boxed."""
        limits = job.limits or self.limits
        figures = (f"memory {limits.memory_mb} MB, {limits.processes} processes, {limits.open_files} open files, "
                   f"files up to {limits.file_mb} MB, {limits.cpu_seconds} s of CPU")
        if not self.confined:
            return f"unboxed (app_isolation = off): limits {figures}"
        ports = ", ".join(str(p) for p in sorted({*job.connect_ports, *self.outbound_ports}))
        return f"boxed: writes only its workspace and scratch folders, TCP to ports {ports}; limits {figures}"

    # -- running ---------------------------------------------------------------------------------------
    def run(self, job: Job, *, on_output: Callable[[str], None] | None = None,
            stop: threading.Event | None = None, timeout: float | None = None,
            on_start: Callable[[int], object] | None = None) -> Outcome:
        """Run ``job`` to its end, boxed; how it ended (``BoxUnavailable`` when it may not start here).

        ``on_output`` gets each line the program prints (stdout and stderr merged); ``stop`` set, or
        ``timeout`` seconds passed, end the whole run (``Outcome.stopped`` / ``timed_out``);
        ``on_start`` gets the supervisor's pid."""
        self.check()
        run_id = job.name or uuid.uuid4().hex
        payload = marshal.dumps(self.spec(job, run_id))
        report_read, report_write = os.pipe()
        try:
            child = subprocess.Popen([sys.executable, "-I", "-S", str(TRAMPOLINE), str(report_write), run_id], env={},
                                     cwd="/", stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, pass_fds=(report_write,), start_new_session=True)
        except OSError:
            os.close(report_read)
            raise
        finally:
            os.close(report_write)
        reader = threading.Thread(target=_pump, args=(child.stdout, on_output), daemon=True, name=f"box-{child.pid}")
        reader.start()
        report_chunks: list[bytes] = []
        collector = threading.Thread(target=_collect, args=(report_read, report_chunks), daemon=True)
        collector.start()
        if on_start is not None:
            on_start(child.pid)
        outcome = Outcome()
        try:
            assert child.stdin is not None
            with contextlib.suppress(BrokenPipeError):
                child.stdin.write(payload)
            with contextlib.suppress(BrokenPipeError):
                child.stdin.close()
            deadline = None if not timeout or timeout <= 0 else time.monotonic() + timeout
            while True:
                try:
                    child.wait(timeout=0.05)
                    break
                except subprocess.TimeoutExpired:
                    pass
                if stop is not None and stop.is_set():
                    outcome.stopped = True
                elif deadline is not None and time.monotonic() >= deadline:
                    outcome.timed_out = True
                if outcome.stopped or outcome.timed_out:
                    end_supervised(child)
                    break
        finally:
            if child.poll() is None:
                end_supervised(child)
            collector.join(5.0)
            # Every process of the run is gone once the supervisor is: nothing can hold the pipe open.
            reader.join(5.0)
        report = _report(b"".join(report_chunks))
        outcome.exit_code = report.get("exit_code")
        outcome.signal = report.get("signal")
        outcome.limits = [str(n) for n in report.get("limits") or []]
        outcome.killed = int(report.get("killed") or 0)
        outcome.error = report.get("error")
        if not report:
            outcome.error = outcome.error or f"the box's supervisor ended with code {child.returncode}"
        return outcome

    def with_limits(self, **changes: int) -> Box:
        return replace(self, limits=replace(self.limits, **changes))


def end_supervised(child: subprocess.Popen[bytes], grace: float = STOP_GRACE_SECONDS) -> None:
    """Ask a supervisor to end its run (SIGTERM: it signals and sweeps the run itself), and kill it if it
    has not finished after the run's own grace and a margin."""
    with contextlib.suppress(ProcessLookupError):
        child.send_signal(signal.SIGTERM)
    try:
        child.wait(timeout=grace + 5.0)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
        child.wait()


def _pump(stream: IO[bytes] | None, on_output: Callable[[str], None] | None) -> None:
    if stream is None:
        return
    with stream:
        for raw in stream:
            text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            if on_output is None or not text.strip():
                continue
            try:
                on_output(text)
            except Exception:
                # Where the lines go may vanish meanwhile (an app deleted during its build): the program's
                # output is still drained, or it would block on a full pipe.
                log.warning("a line of a boxed program's output could not be kept", exc_info=True)
                on_output = None


def _collect(fd: int, into: list[bytes]) -> None:
    try:
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                return
            into.append(chunk)
    finally:
        os.close(fd)


def _report(raw: bytes) -> dict[str, Any]:
    try:
        value = marshal.loads(raw) if raw else {}
    except (ValueError, EOFError, TypeError):
        return {}
    return value if isinstance(value, dict) else {}
