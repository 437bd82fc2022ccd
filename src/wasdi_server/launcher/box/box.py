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
from typing import IO, TYPE_CHECKING, Any, ClassVar

from . import confine, system, world
from .cgroups import runs_folder
from .doors import ApiRelay, DoorPlan, DoorService, OpenDoors, RunIdentity, open_doors
from .job import MB, Job, Limits, Outcome
from .stages import INSIDE, JOB_FD, MARKS_ENV, MARKS_FD
from .support import KernelSupport, kernel_support

if TYPE_CHECKING:
    from ...settings import Settings

log = logging.getLogger("wasdi_server.box")
TRAMPOLINE = Path(__file__).with_name("trampoline.py")
STAGE = Path(__file__).with_name("wasdi-box-stage")
"""The world's stage compiled from ``stage.c`` by ``make`` (where there is no C compiler, the Python stage)."""
STAGE_JOB_VERSION = "1"
"""The version of the records ``stage_job`` writes, which ``stage.c`` checks (it refuses a job of another)."""
REQUIRED = "required"
OFF = "off"
DNS_PORT = 53
"""UDP is refused in the box, so names are resolved over TCP (``RES_OPTIONS=use-vc``) on this port."""
STOP_GRACE_SECONDS = 3.0
"""Between the SIGTERM a stopped run gets and the SIGKILL of what is left of it."""
DISK_CHECK_SECONDS = 1.0
"""How often a run's workspace growth is measured against ``Limits.disk_mb``."""
TMP_MB, SHM_MB = 1024, 256
"""The most a run's private ``/tmp`` and ``/dev/shm`` may hold (never more than its memory limit)."""


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
    doors: DoorPlan | None = field(default=None, compare=False, hash=False)
    """The doors each run's network namespace gets (``None``: none, a run has no network at all)."""
    cgroups_folder: str = ""
    """The folder of this server's runs' cgroups (named after its data directory); empty: the shared one."""
    compiled_stage: bool = True
    """Start a world with the compiled stage where ``make`` built it (``False``: always the Python stage)."""
    trace_runs: ClassVar[bool] = False
    """Trace every run (``Job.trace``) and log its phase marks: set by ``bench/launch.py`` in its servers."""

    @classmethod
    def from_settings(cls, settings: Settings, *, proxy: DoorService | None = None) -> Box:
        """The box of a server: its settings' limits; doors to its own API listener and, where the
        composition root passes one, to the outbound proxy service."""
        limits = Limits(settings.app_memory_mb, settings.app_max_processes, settings.app_max_open_files,
                        settings.app_max_file_mb, settings.app_cpu_seconds)
        host = settings.host if settings.host not in ("0.0.0.0", "::", "") else "127.0.0.1"
        doors = DoorPlan(settings.port, ApiRelay(host, settings.port), proxy) if settings.port else None
        data_dir = Path(settings.data_dir).resolve()
        return cls(settings.app_isolation, limits, tuple(int(p) for p in settings.app_outbound_ports),
                   (data_dir,), kernel_support(), doors, runs_folder(data_dir))

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

    @property
    def in_worlds(self) -> bool:
        """Whether runs get worlds of their own (namespaces, ``world.py``): always, where they are boxed."""
        return self.confined

    def api_url(self, url: str) -> str:
        """The address of the server's API a boxed run is given: its API door on the run's own loopback
        (``url`` itself for an unboxed run, which reaches the server as any local program does)."""
        if not self.in_worlds or self.doors is None or not self.doors.api_port:
            return url
        return f"http://127.0.0.1:{self.doors.api_port}"

    def stage(self) -> Path | None:
        """The compiled stage runs start with (``None``: the Python stage)."""
        return built_stage() if self.compiled_stage else None

    def world_of(self, job: Job, doors: OpenDoors | None, stage: Path | None = None) -> world.World:
        """The world ``job`` runs in: its read and write folders (less the protected ones), the box's own
        code (and, for the Python stage, its interpreter) to start it, the doors' folder, a private ``/tmp``
        and ``/dev/shm``."""
        limits = job.limits or self.limits
        memory = limits.memory_mb
        tmpfs = world.default_tmpfs(min(TMP_MB, memory) if memory else TMP_MB,
                                    min(SHM_MB, memory) if memory else SHM_MB)
        read = [Path(p) for p in self._allowed(job.read)]
        read.append(TRAMPOLINE.parent)
        if stage is None:
            interpreter = Path(os.path.realpath(sys.executable))
            read += [interpreter, system.program_root(interpreter)]
        if doors is not None:
            read.append(doors.folder)  # the door sockets the forwarder connects to
        write = [Path(p) for p in self._allowed(job.write)]
        return world.World(tuple(read), tuple(write), tmpfs, {}, Path(job.cwd), doors is not None)

    def spec(self, job: Job, run_id: str, doors: OpenDoors | None = None) -> dict[str, Any]:
        limits = job.limits or self.limits
        env = dict(job.env)
        connect = {*job.connect_ports, *self.outbound_ports}
        forwards = doors.forwards() if doors is not None else []
        if self.in_worlds:
            connect.update(port for port, _ in forwards)
            if doors is not None and self.doors is not None:
                env.update(self.doors.env())
        elif self.confined:
            env.setdefault("RES_OPTIONS", "use-vc")
            connect.add(DNS_PORT)
        support = self.support
        cgroups = {name: place.for_run(run_id, self.cgroups_folder) for name, place in support.cgroups.items()
                   if (name == "memory" and limits.memory_mb) or (name == "pids" and limits.processes)}
        argv = [str(a) for a in job.argv]
        trace = job.trace or self.trace_runs
        if trace:
            env[MARKS_ENV] = str(MARKS_FD)
        # Found here, on the job's PATH: once confined, the supervisor could not import what a search needs.
        program = argv[0] if "/" in argv[0] else (shutil.which(argv[0], path=env.get("PATH", "")) or argv[0])
        stage = self.stage() if self.in_worlds else None
        spec: dict[str, Any] = {
            "program": program,
            "argv": argv,
            "env": env,
            "cwd": str(job.cwd),
            "confine": self.confined,
            "read": system.system_read() + self._allowed(job.read),
            # The world's /tmp is its own but stays read-only: folders a run is given below the host's /tmp have
            # their parents there, and a run writes its scratch folder (its TMPDIR) instead.
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
            "world": self._world_argv(job, doors, stage) if self.in_worlds else [],
            "forwards": forwards,
            "trace": trace,
        }
        if stage is not None:
            spec["stage_job"] = stage_job(spec)
        return spec

    def _world_argv(self, job: Job, doors: OpenDoors | None, stage: Path | None) -> list[str]:
        if stage is not None:
            inside = [str(stage), str(JOB_FD)]
        else:
            inside = [os.path.realpath(sys.executable), "-I", "-S", str(TRAMPOLINE), INSIDE, str(JOB_FD)]
        return world.bwrap_argv(self.world_of(job, doors, stage), inside,
                                bwrap=self.support.world.bwrap or world.BWRAP)

    def summary(self, job: Job) -> str:
        """One line for a run's log: how the run is boxed."""
        limits = job.limits or self.limits
        figures = (f"memory {limits.memory_mb} MB, {limits.processes} processes, {limits.open_files} open files, "
                   f"files up to {limits.file_mb} MB, {limits.cpu_seconds} s of CPU")
        if not self.confined:
            return f"unboxed (app_isolation = off): limits {figures}"
        if limits.disk_mb and job.grows is not None:
            figures += f", its workspace may grow by {limits.disk_mb} MB"
        doors = ", ".join(f"{d.name} (127.0.0.1:{d.port})" for d in self.doors.doors()) if self.doors else ""
        return (f"boxed in a world of its own (namespaces: mount, PID, network, IPC, UTS, cgroup): writes only its "
                f"workspace and scratch folders, network only through the doors {doors or '(none)'}; "
                f"limits {figures}")

    # -- running ---------------------------------------------------------------------------------------
    def run(self, job: Job, *, on_output: Callable[[str], None] | None = None,
            stop: threading.Event | None = None, timeout: float | None = None,
            on_start: Callable[[int], object] | None = None) -> Outcome:
        """Run ``job`` to its end, boxed; how it ended (``BoxUnavailable`` when it may not start here).

        ``on_output`` gets each line the program prints (stdout and stderr merged); ``stop`` set, or
        ``timeout`` seconds passed, end the whole run (``Outcome.stopped`` / ``timed_out``);
        ``on_start`` gets the supervisor's pid."""
        asked = time.monotonic()
        self.check()
        run_id = job.name or uuid.uuid4().hex
        identity = job.identity or RunIdentity("", "", "", on_output or _ignore)
        marks = [("box asked", asked)] if job.trace or self.trace_runs else None
        # The supervisor's interpreter starts first and waits for its job on its input: its start overlaps the
        # doors opening and the job being made.
        child, report_read = _spawn_supervisor(run_id)
        if marks is not None:
            marks.append(("supervisor spawned", time.monotonic()))
        doors: OpenDoors | None = None
        try:
            try:
                doors = open_doors(self.doors, identity) if self.in_worlds else None
                if marks is not None:
                    marks.append(("doors open", time.monotonic()))
                payload = marshal.dumps(self.spec(job, run_id, doors))
            except BaseException:
                _abandon(child, report_read)
                raise
            outcome = self._run(job, child, report_read, payload, on_output, stop, timeout, on_start, marks)
        finally:
            if doors is not None:
                doors.close()
        if marks is not None:
            outcome.marks = sorted(outcome.marks + marks, key=lambda m: m[1])
            log.info("box phases of %s: %s", run_id, " ".join(f"{name.replace(' ', '_')}@{when:.6f}"
                                                               for name, when in outcome.marks))
        return outcome

    def _run(self, job: Job, child: subprocess.Popen[bytes], report_read: int, payload: bytes,
             on_output: Callable[[str], None] | None, stop: threading.Event | None, timeout: float | None,
             on_start: Callable[[int], object] | None, marks: list[tuple[str, float]] | None) -> Outcome:
        limits = job.limits or self.limits
        growth = _Growth(job.grows, limits.disk_mb * MB) if limits.disk_mb and job.grows is not None else None
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
            if marks is not None:
                marks.append(("job written", time.monotonic()))
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
                elif growth is not None and growth.passed():
                    outcome.limits.append("disk_mb")
                    end_supervised(child)
                    break
                if outcome.stopped or outcome.timed_out:
                    end_supervised(child)
                    break
        finally:
            if child.poll() is None:
                end_supervised(child)
            if marks is not None:
                marks.append(("supervisor ended", time.monotonic()))
            collector.join(5.0)
            # Every process of the run is gone once the supervisor is: nothing can hold the pipe open.
            reader.join(5.0)
        report = _report(b"".join(report_chunks))
        outcome.marks = [(str(name), float(when)) for name, when in report.get("marks") or []]
        outcome.exit_code = report.get("exit_code")
        outcome.signal = report.get("signal")
        outcome.limits += [str(n) for n in report.get("limits") or [] if str(n) not in outcome.limits]
        outcome.killed = int(report.get("killed") or 0)
        outcome.error = report.get("error")
        if not report:
            outcome.error = outcome.error or f"the box's supervisor ended with code {child.returncode}"
        return outcome

    def with_limits(self, **changes: int) -> Box:
        return replace(self, limits=replace(self.limits, **changes))


def _ignore(line: str) -> None:
    """Where the lines of a run nobody reads go."""


def _spawn_supervisor(run_id: str) -> tuple[subprocess.Popen[bytes], int]:
    """The run's supervisor (the trampoline), started and waiting for its job on its input; the pipe its report
    comes back on."""
    report_read, report_write = os.pipe()
    try:
        child = subprocess.Popen([sys.executable, "-I", "-S", str(TRAMPOLINE), str(report_write), run_id], env={},
                                 cwd="/", stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 pass_fds=(report_write,), start_new_session=True)
    except OSError:
        os.close(report_read)
        raise
    finally:
        os.close(report_write)
    return child, report_read


def _abandon(child: subprocess.Popen[bytes], report_read: int) -> None:
    """End a supervisor that never got its job (it has done nothing yet: it reads its job first)."""
    with contextlib.suppress(ProcessLookupError):
        child.kill()
    child.wait()
    for stream in (child.stdin, child.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
    os.close(report_read)


def built_stage() -> Path | None:
    """The compiled stage, where ``make`` built it from the ``stage.c`` beside it (``None``: not built, not
    executable, or older than its source, which may have changed what a job holds)."""
    try:
        built = STAGE.stat()
        if not os.access(STAGE, os.X_OK) or built.st_mtime < STAGE.with_name("stage.c").stat().st_mtime:
            return None
    except OSError:
        return None
    return STAGE


def stage_job(spec: dict[str, Any]) -> bytes:
    """A job as the compiled stage reads it: one record per value, a tag letter and the value, each ended by a
    NUL byte (no value can hold one: paths, arguments and variables cannot)."""
    records: list[tuple[str, str | int]] = [("V", STAGE_JOB_VERSION), ("P", spec["program"])]
    records += [("A", arg) for arg in spec["argv"]]
    records += [("E", f"{name}={value}") for name, value in spec["env"].items()]
    records += [("C", spec["cwd"]), ("K", "1" if spec["confine"] else "0"), ("M", "1" if spec["trace"] else "0")]
    for tag, key in (("R", "read"), ("W", "write"), ("D", "devices"), ("T", "connect_ports"), ("B", "bind_ports")):
        records += [(tag, value) for value in spec[key]]
    records += [("F", f"{port}:{path}") for port, path in spec["forwards"]]
    if spec["confine"]:
        records.append(("S", confine.socket_filter(confine.machine()).hex()))
    out = bytearray()
    for tag, value in records:
        data = os.fsencode(str(value))
        if b"\0" in data:
            raise ValueError(f"a job's value holds a NUL byte: {data[:40]!r}")
        out += tag.encode() + data + b"\0"
    return bytes(out)


class _Growth:
    """How much a folder grew since the run began, measured at most every ``DISK_CHECK_SECONDS``."""

    def __init__(self, folder: Path, allowed: int) -> None:
        self.folder = folder
        self.allowed = allowed
        self.start = folder_bytes(folder)
        self.next = time.monotonic() + DISK_CHECK_SECONDS

    def passed(self) -> bool:
        now = time.monotonic()
        if now < self.next:
            return False
        self.next = now + DISK_CHECK_SECONDS
        return folder_bytes(self.folder) - self.start > self.allowed


def folder_bytes(folder: Path) -> int:
    """The bytes the files below ``folder`` take on disk (links not followed; what vanishes meanwhile skipped)."""
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
    return total


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
