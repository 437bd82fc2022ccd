"""The box itself, on this machine's kernel: what a boxed program can and cannot reach, the limits it runs
under, that a run ends whole, and what an operation sees (its output, timeout and stop).

Every hostile attempt is made by a real program in the box; each test also shows the same program doing
the legitimate thing (reading what it may, writing its own folder), so a box that refused everything
would fail too.  Where the kernel lacks a feature these tests fail under CI=true and skip elsewhere."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests import environment
from tests.box_jobs import python_job
from tests.conftest import Person, Server

from wasdi_server.launcher.box import Box, BoxUnavailable, KernelSupport, Limits, kernel_support
from wasdi_server.launcher.box.doors import ApiRelay, DoorPlan
from wasdi_server.launcher.operations import OperationContext, OperationStopped, OperationTimedOut

MISSING = kernel_support().missing()
if MISSING and not environment.on_ci():
    pytest.skip(f"this kernel cannot box runs: {'; '.join(MISSING)}", allow_module_level=True)

PROBE = r'''
import json, os, socket, sys
results = {}
def attempt(name, action):
    try:
        action()
        results[name] = "allowed"
    except OSError as e:
        results[name] = f"refused: {e.strerror}"
args = json.loads(sys.argv[1])
attempt("read the protected file", lambda: open(args["secret"]).read())
attempt("read its own input", lambda: open(args["input"]).read())
attempt("write its own folder", lambda: open(os.path.join(args["own"], "out.txt"), "w").write("ok"))
attempt("write beside the protected folder", lambda: open(args["outside"], "w").write("x"))
attempt("read /etc/shadow", lambda: open("/etc/shadow").read())
attempt("read the server's environment", lambda: open(f"/proc/{args['server']}/environ", "rb").read())
attempt("open a file the server holds", lambda: open(f"/proc/{args['server']}/fd/0", "rb").close())
attempt("see where the server's files are", lambda: os.readlink(f"/proc/{args['server']}/fd/0"))
attempt("read the server's memory", lambda: open(f"/proc/{args['server']}/mem", "rb").close())
attempt("read the server's command line", lambda: open(f"/proc/{args['server']}/cmdline", "rb").read())
attempt("read the server's status", lambda: open(f"/proc/{args['server']}/status", "rb").read())
attempt("list the machine's processes", lambda: os.listdir("/proc"))
attempt("signal the server", lambda: os.kill(args["server"], 0))
attempt("open a UDP socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).close())
attempt("open a raw socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, 1).close())
attempt("connect to another loopback port", lambda: socket.create_connection(("127.0.0.1", args["other"]), 3).close())
attempt("connect to the allowed port", lambda: socket.create_connection(("127.0.0.1", args["allowed"]), 3).close())
attempt("connect to the server's abstract socket", lambda: socket.socket(socket.AF_UNIX).connect(args["abstract"]))
attempt("read its own /proc entries", lambda: open("/proc/self/cmdline", "rb").read())
attempt("read the machine's memory and CPU figures",
        lambda: (open("/proc/meminfo").read(), open("/proc/cpuinfo").read()))
with open("/proc/self/status") as status:
    results["capabilities"] = sorted({l.split()[1] for l in status if l.startswith(("CapEff", "CapPrm", "CapBnd"))})
print(json.dumps(results), flush=True)
'''


def listener() -> socket.socket:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    return s


def run_probe(box: Box, tmp_path: Path) -> dict[str, Any]:
    protected = tmp_path / "data"
    secret = protected / "db" / "users.json"
    secret.parent.mkdir(parents=True)
    secret.write_text("hashes")
    own = protected / "files" / "alice" / "ws"
    own.mkdir(parents=True)
    (own / "input.txt").write_text("input")
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind(f"\0wasdi-box-test-{os.getpid()}")
    abstract.listen(1)
    other, allowed = listener(), listener()
    args = {"secret": str(secret), "input": str(own / "input.txt"), "own": str(own),
            "outside": str(tmp_path / "outside.txt"), "server": os.getpid(), "other": other.getsockname()[1],
            "allowed": allowed.getsockname()[1], "abstract": abstract.getsockname().decode()}
    job = python_job(PROBE, write=[own], connect_ports=[allowed.getsockname()[1]])
    job = replace(job, argv=[*job.argv, json.dumps(args)])
    # The allowed port is a door: on the run's own loopback, answered by the listener outside.
    door = allowed.getsockname()[1]
    box = replace(box, doors=DoorPlan(door, ApiRelay("127.0.0.1", door)))
    lines: list[str] = []
    try:
        outcome = box.run(job, on_output=lines.append)
    finally:
        for s in (other, allowed, abstract):
            s.close()
    assert outcome.exit_code == 0, lines
    return dict(json.loads(lines[-1]))


def test_a_boxed_program_reaches_its_own_folder_and_nothing_else(tmp_path: Path) -> None:
    box = Box(protected=(tmp_path / "data",))
    results = run_probe(box, tmp_path)
    assert results.pop("read its own input") == "allowed"
    assert results.pop("write its own folder") == "allowed"
    assert results.pop("connect to the allowed port") == "allowed"
    assert results.pop("read its own /proc entries") == "allowed"
    assert results.pop("read the machine's memory and CPU figures") == "allowed"
    assert results.pop("capabilities") == ["0000000000000000"]
    # The test's folder is below /tmp: in the run's world that is its private /tmp, which it may write and
    # which goes with it (the host's file is checked below).
    results.pop("write beside the protected folder")
    for attempt, outcome in results.items():
        assert outcome.startswith("refused"), (attempt, outcome)
    assert (tmp_path / "data" / "files" / "alice" / "ws" / "out.txt").read_text() == "ok"
    assert not (tmp_path / "outside.txt").exists()


def test_with_isolation_off_the_same_program_reaches_everything_the_server_may(tmp_path: Path) -> None:
    results = run_probe(Box(isolation="off", protected=(tmp_path / "data",)), tmp_path)
    assert results["read the protected file"] == "allowed"
    assert results["signal the server"] == "allowed"
    assert results["connect to another loopback port"] == "allowed"


def test_where_the_kernel_cannot_box_a_run_is_refused_with_the_reason_and_the_way_out(tmp_path: Path) -> None:
    old_kernel = KernelSupport("linux", landlock_abi=4, seccomp=True, subreaper=True)
    box = Box(protected=(tmp_path,), support=old_kernel)
    with pytest.raises(BoxUnavailable) as refused:
        box.run(python_job("print('ran')"))
    message = str(refused.value)
    assert "Landlock ABI 4" in message and "app_isolation" in message
    mac = Box(support=KernelSupport("darwin", 0, False, False))
    assert "not Linux" in str(mac.refusal())
    assert Box(isolation="off", support=old_kernel).refusal() is None


def test_a_data_directory_every_run_could_read_is_refused() -> None:
    assert "inside /usr" in str(Box(protected=(Path("/usr/local/wasdi-data"),)).refusal())


def test_a_run_ends_whole_even_its_detached_and_double_forked_children(tmp_path: Path) -> None:
    # Each process carries a mark in its command line: in its own PID namespace a run's pids are not the host's,
    # so what is left of it is looked for by the mark.
    mark = f"wasdi-box-test-{uuid.uuid4().hex}"
    sleeper = f"os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(120)', {mark!r}])"
    escapee = f"import os, sys\nif os.fork(): os._exit(0)\nos.setsid()\n{sleeper}\n"
    code = ("import os, subprocess, sys\n"
            "for _ in range(100):\n"
            "    if os.fork() == 0:\n"
            f"        {sleeper}\n"
            f"subprocess.run([sys.executable, '-c', {escapee!r}])\n"
            "print('started', flush=True)\n"
            "import time; time.sleep(2)\n")
    lines: list[str] = []
    box = Box()
    started = threading.Thread(target=lambda: lines.append(str(box.run(python_job(code), on_output=lines.append))))
    started.start()
    deadline = time.monotonic() + 60
    while "started" not in lines and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(marked(mark)) >= 101, lines  # the 101 sleepers (and the program, whose code holds the mark)
    started.join(60)
    assert "exit_code=0" in lines[-1], lines
    assert marked(mark) == []


def marked(mark: str) -> list[int]:
    """The host's processes whose command line holds ``mark``."""
    found = []
    for name in os.listdir("/proc"):
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                if mark.encode() in handle.read():
                    found.append(int(name))
        except (OSError, ValueError):
            continue
    return found


def _limited(tmp_path: Path, code: str, *, cgroups: bool = True, **limits: int) -> tuple[Any, list[str]]:
    support = kernel_support()
    if not cgroups:
        support = KernelSupport(support.platform, support.landlock_abi, support.seccomp, support.subreaper, {})
        limits.setdefault("processes", 0 if os.getuid() == 0 else Limits().processes)
    box = Box(limits=replace(Limits(), **limits), support=support)
    lines: list[str] = []
    return box.run(python_job(code, write=[tmp_path], cwd=tmp_path), on_output=lines.append, timeout=60), lines


FORK_BOMB = ("import os, time\ncount = 0\ntry:\n    while count < 2000:\n        if os.fork() == 0:\n"
             "            time.sleep(60); os._exit(0)\n        count += 1\nexcept OSError as e:\n"
             "    print('fork refused', e.strerror)\nprint('forked', count, flush=True)\n")
MEMORY_BOMB = "chunks = []\nwhile True:\n    chunks.append(b'x' * (16 * 1024 * 1024))\n"


def test_a_fork_bomb_is_bounded_by_the_run_cgroup_and_named(tmp_path: Path) -> None:
    environment.require("pids" in kernel_support().cgroups, "no writable pids cgroup here")
    outcome, lines = _limited(tmp_path, FORK_BOMB, processes=30)
    forked = int(lines[-1].split()[-1])
    assert forked < 30 and "fork refused" in " ".join(lines)
    assert "processes" in outcome.limits


def test_a_fork_bomb_is_bounded_without_a_cgroup_too(tmp_path: Path) -> None:
    if os.getuid() == 0:
        # The kernel exempts root from RLIMIT_NPROC: without a pids cgroup the box must refuse instead.
        with pytest.raises(BoxUnavailable, match="app_max_processes"):
            _limited(tmp_path, FORK_BOMB, cgroups=False, processes=30)
        return
    outcome, lines = _limited(tmp_path, FORK_BOMB, cgroups=False, processes=30)
    forked = int(lines[-1].split()[-1])
    # RLIMIT_NPROC counts every process of the user, so others starting or ending meanwhile shift it a little.
    assert forked < 200 and "fork refused" in " ".join(lines)
    assert outcome.killed == forked


def test_a_memory_bomb_is_ended_by_the_run_cgroup_and_named(tmp_path: Path) -> None:
    environment.require("memory" in kernel_support().cgroups, "no writable memory cgroup here")
    outcome, _ = _limited(tmp_path, MEMORY_BOMB, memory_mb=128)
    assert outcome.signal == 9 and outcome.limits == ["memory_mb"]
    assert "memory limit (app_memory_mb = 128 MB)" in Limits(memory_mb=128).explain("memory_mb")


def test_a_memory_bomb_fails_its_allocation_without_a_cgroup(tmp_path: Path) -> None:
    outcome, lines = _limited(tmp_path, MEMORY_BOMB, cgroups=False, memory_mb=128)
    assert outcome.exit_code == 1 and "MemoryError" in lines[-1]


def test_the_cpu_file_size_and_open_file_limits(tmp_path: Path) -> None:
    outcome, _ = _limited(tmp_path, "while True:\n    pass\n", cpu_seconds=1)
    assert outcome.limits == ["cpu_seconds"]
    outcome, lines = _limited(tmp_path, "open('big', 'wb').write(b'x' * 3 * 1024 * 1024)\n", file_mb=1)
    assert outcome.exit_code == 1 and "File too large" in lines[-1]
    outcome, lines = _limited(tmp_path, "files = [open('/dev/null') for _ in range(100)]\n", open_files=20)
    assert outcome.exit_code == 1 and "Too many open files" in lines[-1]


# -- what an operation sees ------------------------------------------------------------------------------------
@pytest.fixture
def ctx(server: Server, alice: Person) -> OperationContext:
    user = server.services.sessions.resolve(alice.token)
    workspace = server.services.workspaces.create(user, "W")
    record = server.services.processes.create(user, workspace["workspaceId"], "TESTOP", "x")
    return OperationContext(record, server.services)


def test_an_operation_run_enforces_its_timeout(ctx: OperationContext) -> None:
    with pytest.raises(OperationTimedOut) as raised:
        ctx.run(python_job("import time; time.sleep(600)"), timeout=0.3)
    assert raised.value.seconds == 0.3
    assert isinstance(raised.value, OperationStopped)


def test_an_operation_run_hands_over_output_lines_and_the_exit_code(ctx: OperationContext) -> None:
    lines: list[str] = []
    code = "import sys; print('out one'); print('err two', file=sys.stderr); sys.exit(3)"
    assert ctx.run(python_job(code), on_output=lines.append).code == 3
    assert sorted(lines) == ["err two", "out one"]
    assert ctx.services.processes.get(ctx.process_id)["pid"] > 0


def test_an_operation_run_stops_on_request(ctx: OperationContext) -> None:
    timer = threading.Timer(0.2, ctx.stop_event.set)
    timer.start()
    started = time.monotonic()
    try:
        with pytest.raises(OperationStopped) as raised:
            ctx.run(python_job("import time; time.sleep(600)"))
    finally:
        timer.cancel()
    assert not isinstance(raised.value, OperationTimedOut)
    assert time.monotonic() - started < 10


# -- where the kernel cannot box: the logs and the operator's tools say so ------------------------------------
NO_LANDLOCK = KernelSupport("linux", landlock_abi=0, seccomp=True, subreaper=True)


@pytest.fixture
def old_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    from wasdi_server.launcher import engines
    from wasdi_server.launcher.box import box as box_module

    monkeypatch.setattr(box_module, "kernel_support", lambda: NO_LANDLOCK)
    monkeypatch.setattr(engines, "_PYTHON", {})


def test_a_build_is_refused_with_the_reason_in_its_build_log(server: Server, alice: Person, old_kernel: None) -> None:
    from tests.app_support import HELLO_APP, app_zip
    from tests.server.geodata import new_workspace, wait_process

    ws = new_workspace(server, alice)
    with httpx.Client(transport=httpx.WSGITransport(app=server.app), base_url="http://testserver") as http:
        r = http.post("/processors/uploadprocessor", params={"name": "hello", "workspace": ws}, headers=alice.headers,
                      files={"file": ("hello.zip", app_zip({"myProcessor.py": HELLO_APP}))})
    assert r.status_code == 200, r.text
    assert wait_process(server, r.json()["stringValue"])["status"] == "ERROR"
    doc = server.services.apps.records.by_name("hello")
    build_log = server.services.apps.layout(doc).build_log.read_text()
    assert "no Landlock" in build_log and 'app_isolation = "off"' in build_log


def test_off_is_announced_loudly_and_doctor_reports_the_box(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    from wasdi_server import cli
    from wasdi_server.settings import load_settings

    cli.announce_box(load_settings(data_dir=tmp_path, environ={}, app_isolation="off"))
    assert "UNBOXED" in caplog.text
    assert cli.main(["doctor", "--data-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "verdict           runs are boxed" in out
    assert ("could not reach the data directory, a signal to the server, the server's limits, the host's sockets "
            "(/run, /var/run), a TCP port of the host's loopback") in out
    assert "namespaces        user yes, mount yes, pid yes, network yes, ipc yes, uts yes, cgroup yes" in out
    assert "API door          answered inside the box on 127.0.0.1:" in out


def test_doctor_says_whether_a_boxed_program_can_look_names_up(tmp_path: Path) -> None:
    """Builds look the package index up from inside the box, over TCP: doctor tries it the same way. A name of
    the hosts file is found with no resolver; a name under .invalid never is, whatever the machine."""
    from wasdi_server.launcher.box.report import describe, lines

    box = Box.from_settings(load_settings_for(tmp_path))
    found = describe(box, tmp_path, 8080, name_host="localhost")
    assert found["live_check"]["names"] == {"host": "localhost", "resolved": True, "error": ""}
    assert any(line.startswith("names") and "looked up localhost" in line for line in lines(found))
    missing = describe(box, tmp_path, 8080, name_host="no-such-index.invalid")
    assert missing["live_check"]["names"]["resolved"] is False
    names_line = next(line for line in lines(missing) if line.startswith("names "))
    assert "could not look up no-such-index.invalid" in names_line and "apps_offline" in names_line
    assert "names" not in describe(box, tmp_path, 8080, name_host="")["live_check"]


def load_settings_for(data_dir: Path) -> Any:
    from wasdi_server.settings import load_settings

    return load_settings(data_dir=data_dir, environ={})


def test_doctor_runs_in_a_fresh_interpreter(tmp_path: Path) -> None:
    """As an operator types it: nothing imported before (the launcher first once closed an import cycle)."""
    done = subprocess.run([sys.executable, "-m", "wasdi_server", "doctor", "--data-dir", str(tmp_path), "--json"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["verdict"] == "runs are boxed"


def test_doctor_on_a_kernel_that_cannot_box(tmp_path: Path, old_kernel: None,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    from wasdi_server import cli

    assert cli.main(["doctor", "--data-dir", str(tmp_path), "--json"]) == 1
    facts = json.loads(capsys.readouterr().out)
    assert facts["verdict"] == "runs are refused" and "no Landlock" in facts["refusal"]


def test_a_run_cannot_signal_or_read_another_run() -> None:
    mark = f"wasdi-box-test-{uuid.uuid4().hex}"
    lines: list[str] = []
    sleeper = threading.Thread(target=lambda: Box().run(
        python_job(f"import time; print('up', flush=True); time.sleep(30)  # {mark}"), on_output=lines.append,
        timeout=20))
    sleeper.start()
    deadline = time.monotonic() + 20
    while not lines and time.monotonic() < deadline:
        time.sleep(0.05)
    other = marked(mark)[0]  # its pid on the host: in its own namespace it has another
    code = (f"import os\nfor action in (lambda: os.kill({other}, 0), lambda: open('/proc/{other}/environ').read()):\n"
            "    try:\n        action(); print('allowed')\n    except OSError:\n        print('refused')\n")
    seen: list[str] = []
    assert Box().run(python_job(code), on_output=seen.append).exit_code == 0
    os.kill(other, 9)
    sleeper.join(30)
    assert seen == ["refused", "refused"]
