"""The run's supervisor, what the box's trampoline (``trampoline.py``, started by the server as
``python -I -S trampoline.py REPORT_FD RUN_ID`` with a job on its standard input) runs: it starts the job's
program confined and supervises it to the end.

Why a trampoline: confinement must be applied by the process that will run the code, between ``fork``
and ``execve``.  The server is threaded, where running Python code in that window (``preexec_fn``) is
unsafe; this small single-threaded process does it instead, then stays as the run's supervisor:

- it is a child subreaper: every process the run starts, however it detaches (double fork, ``setsid``),
  stays its descendant, so when the program ends (or the server asks it to stop with SIGTERM, or the
  server dies: parent-death signal) it kills every descendant left and reaps them: a run ends whole;
- it puts the program in the run's cgroups (pids, memory) when the server found writable ones, and reads
  their counters afterwards to tell which limit a run passed;
- it writes one report on ``REPORT_FD`` (exit code, signal, limits passed, processes it had to kill)
  and exits with the program's exit code.

Standard library only, and nothing of the server is imported: an interpreter with ``-I -S`` starts in a
few milliseconds (so not even ``typing``, ``contextlib`` or ``platform``, hence the plain ``try``/``except``
blocks; and ``marshal`` rather than ``json``, which imports ``re``: the job and the report are plain values
written and read by the same interpreter, the server's).  The confining itself is ``confine.py`` beside this file.
"""
# ruff: noqa: SIM105  (contextlib.suppress would import contextlib: see above)

from __future__ import annotations

import marshal
import os
import resource
import sys
import time

STARTED = time.monotonic()
"""When this interpreter was up (a traced run's first mark of the supervisor)."""
# ``typing.TYPE_CHECKING`` would import typing: mypy takes any name ``TYPE_CHECKING`` as true all the same.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import signal
    from typing import TypedDict

    from wasdi_server.launcher.box import confine, forwarder
    from wasdi_server.launcher.box.stages import INSIDE, JOB_FD, MARKS_FD

    class Limits(TypedDict, total=False):
        """The run's limits, as ``Box.spec`` writes them."""

        memory_bytes: int
        processes: int
        open_files: int
        file_bytes: int
        cpu_seconds: int
        memory_by: str  # "cgroup" or "rlimit"
        processes_by: str

    class CgroupPlace(TypedDict):
        path: str
        version: int

    class JobSpec(TypedDict):
        """The job the server writes on the trampoline's standard input (``Box.spec``)."""

        program: str
        argv: list[str]
        env: dict[str, str]
        cwd: str
        confine: bool
        read: list[str]
        write: list[str]
        devices: list[str]
        connect_ports: list[int]
        bind_ports: list[int]
        limits: Limits
        cgroups: dict[str, CgroupPlace]
        parent_pid: int
        grace_seconds: float
        world: list[str]
        """The ``bwrap`` command line up to the program (``--inside 3`` at its end): empty for no world."""
        forwards: list[tuple[int, str]]
        """The doors: (a port on the run's loopback, the Unix socket the server answers there)."""
        trace: bool
        """Whether the stages and the program write phase marks (``stages.MARKS_FD``) for the report."""
        stage_job: bytes
        """The job as the compiled stage reads it, where the world starts with that stage (``box.stage_job``)."""

    class Report(TypedDict, total=False):
        """What the supervisor writes on ``REPORT_FD``."""

        exit_code: int | None
        signal: int | None
        limits: list[str]
        killed: int
        stopped: bool
        error: str
        marks: list[tuple[str, float]]
        """A traced run's phase marks (name, ``time.monotonic()``), in the order they were made."""
else:
    import _signal as signal  # the C module: ``signal`` imports enum, which imports much more

    import confine  # a sibling module: the trampoline put this folder first on the path
    import forwarder
    from stages import INSIDE, JOB_FD, MARKS_FD

EXIT_NOT_STARTED = 126
SIGNALS_OF_LIMITS: dict[int, str] = {signal.SIGXCPU: "cpu_seconds", signal.SIGXFSZ: "file_mb"}


class StopRequested(Exception):
    """The server asked the run to stop (SIGTERM), or died (parent-death signal)."""


DOORS_PROCESS_NAME = "wasdi-doors"
"""The name of the process that keeps a run's doors (``forwarder``), so the sweep tells it from the app's own."""
BOX_PROCESS_NAMES = frozenset({DOORS_PROCESS_NAME, "bwrap"})


def _process_name(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def descendants(root: int) -> list[int]:
    """Every process below ``root``, from ``/proc`` (parents first)."""
    children: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        try:
            parent = int(data.rsplit(b")", 1)[1].split()[1])
        except (IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(name))
    found: list[int] = []
    queue = [root]
    while queue:
        for child in children.get(queue.pop(), ()):
            found.append(child)
            queue.append(child)
    return found


def count_user_tasks(uid: int) -> int:
    """Threads of every process of ``uid`` (what RLIMIT_NPROC counts)."""
    total = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            if os.stat(f"/proc/{name}").st_uid == uid:
                total += len(os.listdir(f"/proc/{name}/task"))
        except OSError:
            continue
    return total


class Cgroups:
    """The run's cgroups (``{"pids": {"path", "version"}, "memory": {...}}``), made, joined, read, removed."""

    def __init__(self, plan: dict[str, CgroupPlace], limits: Limits) -> None:
        self.plan = plan
        self.limits = limits
        self.made: list[str] = []

    def make(self) -> None:
        for controller, place in self.plan.items():
            # The supervisor's pid in the name tells a later server whether the cgroup is a live run's.
            path = place["path"] = f"{place['path']}.{os.getpid()}"
            parent = os.path.dirname(path)
            for _ in range(5):  # another run may remove the shared parent between our two mkdirs
                try:
                    os.makedirs(parent, exist_ok=True)
                    if int(place["version"]) == 2:
                        _write(os.path.join(parent, "cgroup.subtree_control"), f"+{controller}")
                    os.mkdir(path)
                    break
                except FileExistsError:
                    break
                except FileNotFoundError:
                    continue
            self.made.append(path)
            self._set_limit(controller, int(place["version"]), path)

    def _set_limit(self, controller: str, version: int, path: str) -> None:
        if controller == "pids":
            _write(os.path.join(path, "pids.max"), str(self.limits["processes"]))
        elif controller == "memory":
            name = "memory.limit_in_bytes" if version == 1 else "memory.max"
            _write(os.path.join(path, name), str(self.limits["memory_bytes"]))
            if version == 2:
                try:
                    _write(os.path.join(path, "memory.swap.max"), "0")
                except OSError:
                    pass

    def join(self) -> None:
        """Move the calling process into every run cgroup (called by the program's process itself)."""
        for path in self.made:
            _write(os.path.join(path, "cgroup.procs"), "0")

    def members(self) -> list[int]:
        pids: list[int] = []
        for path in self.made:
            try:
                with open(os.path.join(path, "cgroup.procs")) as handle:
                    pids += [int(line) for line in handle if line.strip()]
            except (OSError, ValueError):
                continue
        return pids

    def limits_passed(self) -> list[str]:
        passed = []
        for controller, place in self.plan.items():
            path = str(place["path"])
            if controller == "pids" and _counter(os.path.join(path, "pids.events"), "max") > 0:
                passed.append("processes")
            if controller == "memory":
                name = "memory.oom_control" if int(place["version"]) == 1 else "memory.events"
                if _counter(os.path.join(path, name), "oom_kill") > 0:
                    passed.append("memory_mb")
        return passed

    def remove(self) -> None:
        for path in self.made:
            for _ in range(50):
                try:
                    os.rmdir(path)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)  # the last members are still being torn down
            try:
                os.rmdir(os.path.dirname(path))  # the shared parent, once no run uses it
            except OSError:
                pass


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="ascii") as handle:
        handle.write(text)


def _counter(path: str, key: str) -> int:
    try:
        with open(path, encoding="ascii") as handle:
            for line in handle:
                parts = line.split()
                if len(parts) == 2 and parts[0] == key:
                    return int(parts[1])
    except (OSError, ValueError):
        pass
    return 0


class Supervisor:
    def __init__(self, job: JobSpec) -> None:
        self.job = job
        self.limits: Limits = job.get("limits") or {}
        self.cgroups = Cgroups(dict(job.get("cgroups") or {}), self.limits)
        self.main = 0
        self.main_status: int | None = None
        self.stopping = False
        self.killed = 0
        self.marks: list[tuple[str, float]] = []
        self.marks_pipe: tuple[int, int] | None = None
        if job.get("trace"):
            self.marks = [("supervisor up", STARTED), ("supervisor ready", time.monotonic())]
            self.marks_pipe = os.pipe()

    def mark(self, name: str) -> None:
        if self.marks_pipe is not None:
            self.marks.append((name, time.monotonic()))

    # -- the program's side of the fork ----------------------------------------------------------------
    def start_program(self) -> None:
        """In the forked child: confine this process, then become the program (in a world of its own: become
        ``bwrap``, whose inside stage is ``inside()``).  Never returns."""
        job = self.job
        try:
            os.setpgid(0, 0)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            if self.marks_pipe is not None:
                os.dup2(self.marks_pipe[1], MARKS_FD)  # inherited by the stages and the program
                os.set_inheritable(MARKS_FD, True)  # dup2 onto itself keeps the pipe's close-on-exec
                os.closerange(3, MARKS_FD)
                os.closerange(MARKS_FD + 1, 1 << 16)
            else:
                os.closerange(3, 1 << 16)
            for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGPIPE):
                signal.signal(sig, signal.SIG_DFL)
            self.cgroups.join()
            self._set_limits()
            world = job.get("world") or []
            if world:
                # The job travels in a memory file: a command line is readable by other users of the host.
                fd = os.memfd_create("job", 0)
                # the compiled stage reads records of its own (``box.stage_job``), the Python stage the job itself
                os.write(fd, job.get("stage_job") or marshal.dumps(dict(job)))
                os.lseek(fd, 0, os.SEEK_SET)
                if fd != JOB_FD:
                    os.dup2(fd, JOB_FD)
                    os.close(fd)
                os.set_inheritable(JOB_FD, True)
                write_mark(job, "world asked")
                os.execve(world[0], world, {})
            os.chdir(job["cwd"])
            if job.get("confine"):
                confine_program(job)
                write_mark(job, "confined")
            write_mark(job, "program started")
            os.execve(job["program"], job["argv"], job["env"])
        except BaseException as e:
            try:
                os.write(2, f"box: cannot start {job['argv'][0]}: {e}\n".encode(errors="replace"))
            except OSError:
                pass
        os._exit(EXIT_NOT_STARTED)

    def _set_limits(self) -> None:
        limits = self.limits
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        pairs = {resource.RLIMIT_NOFILE: limits.get("open_files"), resource.RLIMIT_FSIZE: limits.get("file_bytes")}
        if limits.get("memory_by") == "rlimit":
            pairs[resource.RLIMIT_DATA] = limits.get("memory_bytes")
        for kind, value in pairs.items():
            if value:
                _lower(kind, int(value), int(value))
        cpu = int(limits.get("cpu_seconds") or 0)
        if cpu:
            _lower(resource.RLIMIT_CPU, cpu, cpu + 5)
        if limits.get("processes_by") == "rlimit" and limits.get("processes"):
            # RLIMIT_NPROC counts every task of the user, so the run's share is added to what runs now.
            allowed = count_user_tasks(os.getuid()) + int(limits["processes"])
            _lower(resource.RLIMIT_NPROC, allowed, allowed)

    # -- the supervisor's side -------------------------------------------------------------------------
    def _on_stop(self, signum: int, frame: object) -> None:
        if not self.stopping:
            self.stopping = True
            raise StopRequested

    def run(self) -> Report:
        try:
            confine.set_subreaper()
            confine.set_parent_death_signal(signal.SIGTERM)
            confine.set_not_dumpable()
        except (OSError, AttributeError):
            pass  # not Linux (no prctl): the program's process group is what the sweep reaches there
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(sig, self._on_stop)
        report: Report = {"exit_code": None, "signal": None, "limits": [], "killed": 0, "stopped": False}
        try:
            if os.getppid() != int(self.job.get("parent_pid") or os.getppid()):
                raise StopRequested  # the server died before the parent-death signal was armed
            self.cgroups.make()
            self.mark("cgroups made")
            pid = os.fork()
            if pid == 0:
                self.start_program()
            self.main = pid
            if self.marks_pipe is not None:
                os.close(self.marks_pipe[1])
            self._wait_for_main()
            self.mark("program ended")
        except StopRequested:
            report["stopped"] = True
            self._terminate(float(self.job.get("grace_seconds") or 3.0))
        except OSError as e:
            report["error"] = f"{type(e).__name__}: {e}"
        finally:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGHUP, signal.SIGINT})
            self._sweep()
            self.mark("run swept")
            report["limits"] = self._limits_passed()
            try:
                self.cgroups.remove()
            except OSError:
                pass
            self.mark("cgroups removed")
        status = self.main_status
        if status is not None:
            if os.WIFSIGNALED(status):
                report["signal"] = os.WTERMSIG(status)
            else:
                report["exit_code"] = os.waitstatus_to_exitcode(status)
                code = report["exit_code"] or 0
                if self.job.get("world") and 128 < code < 128 + 65:
                    # bwrap answers a program killed by signal N with the exit code 128 + N, as a shell does.
                    report["signal"], report["exit_code"] = code - 128, None
                    name = SIGNALS_OF_LIMITS.get(code - 128)
                    if name and name not in report["limits"]:
                        report["limits"].append(name)
        report["killed"] = self.killed
        report["stopped"] = report["stopped"] or self.stopping
        if self.marks_pipe is not None:
            report["marks"] = sorted(self.marks + read_marks(self.marks_pipe[0]), key=lambda m: m[1])
        return report

    def _limits_passed(self) -> list[str]:
        passed = self.cgroups.limits_passed()
        status = self.main_status
        if status is not None and os.WIFSIGNALED(status):
            name = SIGNALS_OF_LIMITS.get(os.WTERMSIG(status))
            if name and name not in passed:
                passed.append(name)
        return passed

    def _wait_for_main(self) -> None:
        while self.main_status is None:
            try:
                pid, status = os.waitpid(-1, 0)
            except ChildProcessError:
                return
            if pid == self.main:
                self.main_status = status

    def _reap(self) -> bool:
        """Reap every child that has ended; whether any child is left."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return False
            if pid == 0:
                return True
            if pid == self.main and self.main_status is None:
                self.main_status = status

    def _signal_all(self, sig: int) -> int:
        """Send ``sig`` to every process of the run; how many there were, the box's own door keeper aside."""
        targets = set(descendants(os.getpid())) | set(self.cgroups.members())
        targets.discard(os.getpid())
        # the box's own (bwrap's processes and the door keeper) are swept too, but are not the app's leftovers;
        # nor is a process gone by the time its name is read (the door keeper ends with the app's world)
        keepers = {pid for pid in targets if _process_name(pid) in BOX_PROCESS_NAMES | {""}}
        for pid in targets:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        if self.main:
            try:
                os.killpg(self.main, sig)  # where /proc cannot be read, the program's own group at least
            except OSError:
                pass
        return len(targets - keepers)

    def _terminate(self, grace: float) -> None:
        """SIGTERM to the whole run, then (after ``grace`` seconds) the sweep."""
        self._signal_all(signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and self._reap():
            time.sleep(0.02)

    def _sweep(self) -> None:
        """SIGKILL whatever is left of the run, until no descendant remains."""
        first = True
        while self._reap():
            killed = self._signal_all(signal.SIGKILL)
            if first:
                self.killed, first = killed, False
            if not killed:
                time.sleep(0.01)


def write_mark(job: JobSpec, name: str, when: float | None = None) -> None:
    """Note that a traced run reached ``name`` now, or ``when`` (nothing for a run not traced)."""
    if job.get("trace"):
        try:
            os.write(MARKS_FD, f"{name}\t{time.monotonic() if when is None else when!r}\n".encode())
        except OSError:
            pass


def read_marks(fd: int, most: int = 1 << 16) -> list[tuple[str, float]]:
    """The marks the stages and the program wrote (every writer is gone once the run is swept; a marks pipe
    some leftover still holds is read as far as it goes)."""
    os.set_blocking(fd, False)
    data = b""
    try:
        while len(data) < most:
            chunk = os.read(fd, most)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    finally:
        os.close(fd)
    found = []
    for line in data.decode(errors="replace").splitlines():
        name, _, when = line.rpartition("\t")
        try:
            found.append((name[:60], float(when)))
        except ValueError:
            continue
    return found


def confine_program(job: JobSpec) -> None:
    """The second wall, applied by the program's own process just before it becomes the program."""
    confine.drop_capabilities()
    confine.set_no_new_privileges()
    confine.install_socket_filter()
    confine.restrict_with_landlock(job["read"], job["write"], job["devices"], job["connect_ports"],
                                   job["bind_ports"])


def inside() -> int:
    """The inside stage, in the run's world (``bwrap`` started it as ``trampoline.py --inside 3``): open the
    doors on the run's loopback (a forwarder process keeps them), confine, and become the program."""
    up = time.monotonic()
    job: JobSpec | None = None
    try:
        with open(JOB_FD, "rb", closefd=True) as handle:
            job = marshal.loads(handle.read())
        assert job is not None
        write_mark(job, "stage up", up)
        os.chdir(job["cwd"])
        listeners = forwarder.listen(list(job.get("forwards") or []))
        if listeners and os.fork() == 0:
            try:
                null = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(null, fd)
                if job.get("trace"):
                    os.close(MARKS_FD)
                confine.set_not_dumpable()
                confine.drop_capabilities()
                confine.set_no_new_privileges()
            except OSError:
                os._exit(EXIT_NOT_STARTED)
            try:  # named, so the sweep at the end does not count the box's own door keeper as the app's
                with open("/proc/self/comm", "w") as comm:
                    comm.write(DOORS_PROCESS_NAME)
            except OSError:
                pass
            forwarder.serve(listeners)
        for listener, _path in listeners:
            listener.close()
        write_mark(job, "doors listening")
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        if job.get("confine"):
            confine_program(job)
            write_mark(job, "confined")
        write_mark(job, "program started")
        os.execve(job["program"], job["argv"], job["env"])
    except BaseException as e:
        try:
            name = job["argv"][0] if job else "the program"
            os.write(2, f"box: cannot start {name}: {e}\n".encode(errors="replace"))
        except OSError:
            pass
    return EXIT_NOT_STARTED


def _lower(kind: int, soft: int, hard: int) -> None:
    _, current_hard = resource.getrlimit(kind)
    if current_hard != resource.RLIM_INFINITY:
        hard = min(hard, current_hard)
    resource.setrlimit(kind, (min(soft, hard), hard))


def main() -> int:
    if sys.argv[1] == INSIDE:
        return inside()
    report_fd = int(sys.argv[1])
    job: JobSpec = marshal.loads(sys.stdin.buffer.read())
    report = Supervisor(job).run()
    try:
        os.write(report_fd, marshal.dumps(dict(report)))
        os.close(report_fd)
    except OSError:
        pass
    signal_number = report.get("signal")
    if signal_number:
        return 128 + signal_number
    code = report.get("exit_code")
    return code if code is not None else EXIT_NOT_STARTED
