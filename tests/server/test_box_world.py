"""The channels around the box, tried as an attacker would from inside it: host Unix sockets (a listener of
the test's own, PostgreSQL's), ``prlimit`` and ``getpriority`` on the server, netlink's list of the host's
sockets, ``/dev/shm`` between two users' live runs, ``listen()`` without ``bind()``, a direct TCP connection
to an address that is not a door, a workspace filled past ``app_disk_mb`` and a run past ``app_max_minutes``.

Each hostile program is also a normal app: it reads its input and writes its output in its own folder, and
the test checks both, so a box that refused everything would fail too.  Under ``CI=true`` a machine without
bubblewrap or namespaces fails these tests; elsewhere they skip with the reason."""

from __future__ import annotations

import json
import os
import resource
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from tests import environment
from tests.box_jobs import python_job
from tests.conftest import Person, Server

from wasdi_server.launcher.box import Box, Job, Limits, kernel_support

MISSING = kernel_support().missing()
if MISSING and not environment.on_ci():
    pytest.skip(f"this machine cannot box runs in worlds of their own: {'; '.join(MISSING)}", allow_module_level=True)

NORMAL = r'''
import json, os, sys
args = json.loads(sys.argv[1])
with open(os.path.join(args["own"], "input.txt")) as handle:
    data = handle.read()
with open(os.path.join(args["own"], "output.txt"), "w") as handle:
    handle.write(data.upper())
results = {}
def attempt(name, action):
    try:
        results[name] = "allowed: " + str(action())
    except OSError as e:
        results[name] = f"refused: {type(e).__name__} {e.strerror}"
'''
REPORT = "\nprint(json.dumps(results), flush=True)\n"


@pytest.fixture
def own(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    (folder / "input.txt").write_text("scene")
    return folder


def hostile(box: Box, own: Path, attacks: str, **args: Any) -> dict[str, str]:
    """Run ``attacks`` (lines calling ``attempt``) as a normal app in ``own``; what each attempt met."""
    job = python_job(NORMAL + attacks + REPORT, write=[own], cwd=own)
    job = replace(job, argv=[*job.argv, json.dumps({"own": str(own), **args})])
    lines: list[str] = []
    outcome = box.run(job, on_output=lines.append, timeout=60)
    assert outcome.exit_code == 0, lines
    assert (own / "output.txt").read_text() == "SCENE"
    return dict(json.loads(lines[-1]))


def refused(results: dict[str, str]) -> None:
    for name, met in results.items():
        assert met.startswith("refused"), (name, met)


# -- Unix sockets of the host ----------------------------------------------------------------------------------
def test_a_unix_socket_of_a_listener_outside_the_box_cannot_be_reached(own: Path, tmp_path: Path) -> None:
    path = tmp_path / "service.sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    listener.listen(4)
    accepted: list[bytes] = []
    done = threading.Event()

    def answer() -> None:
        listener.settimeout(0.1)
        deadline = time.monotonic() + 15
        while not done.is_set() and time.monotonic() < deadline:
            try:
                connection, _ = listener.accept()
                break
            except OSError:
                continue
        else:
            return
        with connection:
            accepted.append(connection.recv(100))
            connection.sendall(b"secret")

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    attacks = ('import socket\n'
               'def talk():\n'
               '    with socket.socket(socket.AF_UNIX) as s:\n'
               '        s.connect(args["path"]); s.sendall(b"hello"); return s.recv(100)\n'
               'attempt("connect to the listener", talk)\n')
    try:
        results = hostile(Box(), own, attacks, path=str(path))
    finally:
        done.set()
        thread.join(20)
        listener.close()
    refused(results)
    assert accepted == []


def test_postgresql_s_socket_cannot_be_reached(own: Path) -> None:
    folder = Path("/var/run/postgresql")
    sockets = sorted(str(p) for p in folder.glob(".s.PGSQL.*") if p.is_socket()) if folder.is_dir() else []
    environment.require(sockets, "PostgreSQL listens on no Unix socket in /var/run/postgresql here")
    attacks = ('import socket, struct\n'
               'def startup():\n'
               '    with socket.socket(socket.AF_UNIX) as s:\n'
               '        s.connect(args["socket"])\n'
               '        body = struct.pack("!I", 196608) + b"user\\0postgres\\0database\\0postgres\\0\\0"\n'
               '        s.sendall(struct.pack("!I", len(body) + 4) + body); return s.recv(1)\n'
               'attempt("start a PostgreSQL session as postgres", startup)\n'
               'attempt("list /var/run/postgresql", lambda: os.listdir("/var/run/postgresql"))\n'
               'attempt("list /run", lambda: os.listdir("/run"))\n')
    refused(hostile(Box(), own, attacks, socket=sockets[0]))


# -- other processes: their limits, their priority, the host's sockets ----------------------------------------
@pytest.fixture
def decoy() -> Iterator[int]:
    """A process of the server's user outside the box, the attacks' target beside the server itself."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        yield process.pid
    finally:
        process.kill()
        process.wait()


def test_prlimit_cannot_read_or_change_the_limits_of_the_server_or_another_process(own: Path, decoy: int) -> None:
    before = resource.prlimit(decoy, resource.RLIMIT_NOFILE)
    attacks = ('import resource\n'
               'attempt("read the server\'s CPU limit",\n'
               '        lambda: resource.prlimit(args["server"], resource.RLIMIT_CPU))\n'
               'attempt("set another process\'s open files to 0",\n'
               '        lambda: resource.prlimit(args["decoy"], resource.RLIMIT_NOFILE, (0, 0)))\n'
               'attempt("set another process\'s CPU limit to 1 s",\n'
               '        lambda: resource.prlimit(args["decoy"], resource.RLIMIT_CPU, (1, 1)))\n')
    refused(hostile(Box(), own, attacks, server=os.getpid(), decoy=decoy))
    assert resource.prlimit(decoy, resource.RLIMIT_NOFILE) == before
    assert resource.prlimit(decoy, resource.RLIMIT_CPU) == (resource.RLIM_INFINITY, resource.RLIM_INFINITY)


def test_getpriority_and_netlink_do_not_see_the_server(own: Path) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    # A sock_diag dump of the TCP sockets of the network namespace (what `ss -t` asks), parsed for local ports.
    attacks = ('import socket, struct\n'
               'def tcp_ports():\n'
               '    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 4) as s:\n'
               '        request = struct.pack("=BBBxI", socket.AF_INET, socket.IPPROTO_TCP, 0, 0xFFFFFFFF)\n'
               '        request += bytes(48)\n'
               '        s.send(struct.pack("=IHHII", 16 + len(request), 20, 0x301, 1, 0) + request)\n'
               '        ports = set()\n'
               '        while True:\n'
               '            data = s.recv(65536); offset = 0\n'
               '            while offset < len(data):\n'
               '                length, kind = struct.unpack_from("=IH", data, offset)\n'
               '                if kind in (2, 3): return sorted(ports)\n'
               '                ports.add(struct.unpack_from("!H", data, offset + 20)[0])\n'
               '                offset += (length + 3) & ~3\n'
               'def sees_server():\n'
               '    if args["port"] in tcp_ports(): return "the server\'s port " + str(args["port"])\n'
               '    raise OSError(2, "the server\'s socket is not in the list")\n'
               'attempt("find the server\'s listening socket over netlink", sees_server)\n'
               'attempt("getpriority of the server", lambda: os.getpriority(os.PRIO_PROCESS, args["server"]))\n')
    try:
        results = hostile(Box(), own, attacks, server=os.getpid(), port=port)
    finally:
        listener.close()
    refused(results)


# -- /dev/shm ------------------------------------------------------------------------------------------------
def test_dev_shm_is_private_to_each_run_and_goes_with_it(own: Path, tmp_path: Path) -> None:
    name = f"wasdi-session-{os.getpid()}-{time.monotonic_ns()}"
    writer_code = (f"import os, time\nopen('/dev/shm/{name}', 'w').write('alice-session-token')\n"
                   "print('written', flush=True)\ntime.sleep(20)\n")
    lines: list[str] = []
    alice = threading.Thread(target=lambda: Box().run(python_job(writer_code), on_output=lines.append, timeout=30))
    alice.start()
    deadline = time.monotonic() + 30
    while "written" not in lines and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "written" in lines, lines
    try:
        attacks = (f'attempt("read another run\'s /dev/shm file", lambda: open("/dev/shm/{name}").read())\n'
                   'def listing():\n'
                   '    found = [n for n in os.listdir("/dev/shm") if n.startswith("wasdi-session-")]\n'
                   '    if found: return found\n'
                   '    raise OSError(2, "nothing of another run")\n'
                   'attempt("list another run\'s /dev/shm files", listing)\n'
                   'attempt("use its own /dev/shm", lambda: open("/dev/shm/mine", "w").write("x"))\n')
        results = hostile(Box(), own, attacks)
        assert results.pop("use its own /dev/shm") == "allowed: 1"
        refused(results)
        assert not Path(f"/dev/shm/{name}").exists()
    finally:
        for pid in marked_python_sleepers(name):
            os.kill(pid, 9)
        alice.join(40)
    assert not Path(f"/dev/shm/{name}").exists()


def marked_python_sleepers(mark: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                if mark.encode() in handle.read():
                    found.append(int(entry))
        except (OSError, ValueError):
            continue
    return found


# -- the network ---------------------------------------------------------------------------------------------
def test_listen_without_bind_is_not_reachable_from_outside(own: Path) -> None:
    # it waits for a connection until the test has tried every address (it writes "tried"), 15 s at most
    code = ("import os, socket, time\ns = socket.socket()\ns.listen(4)\nprint('port', s.getsockname()[1], flush=True)\n"
            "s.settimeout(0.1)\nend = time.monotonic() + 15\n"
            "while not os.path.exists('tried') and time.monotonic() < end:\n"
            "    try:\n        c, _ = s.accept(); c.sendall(b'from inside'); print('accepted', flush=True); break\n"
            "    except OSError:\n        continue\nelse:\n    print('nobody came', flush=True)\n"
            "open('output.txt', 'w').write(open('input.txt').read().upper())\n")
    lines: list[str] = []
    runner = threading.Thread(target=lambda: Box().run(python_job(code, write=[own], cwd=own),
                                                       on_output=lines.append, timeout=40))
    runner.start()
    deadline = time.monotonic() + 30
    while not any(line.startswith("port ") for line in lines) and time.monotonic() < deadline:
        time.sleep(0.05)
    port = int(next(line for line in lines if line.startswith("port ")).split()[1])
    reached = []
    for host in ("127.0.0.1", socket.gethostbyname(socket.gethostname())):
        try:
            with socket.create_connection((host, port), timeout=3) as connection:
                reached.append(connection.recv(100))
        except OSError:
            continue
    (own / "tried").touch()
    runner.join(40)
    assert reached == [] and "nobody came" in lines, lines
    assert (own / "output.txt").read_text() == "SCENE"


def test_a_direct_tcp_connection_to_an_address_that_is_not_a_door_is_refused(own: Path) -> None:
    """The operator allows a port (today's rule allowed it to any address); the box's only way out is its
    doors, so a listener of the host on that port is out of reach, while the door to the API answers."""
    outside = socket.create_server(("127.0.0.1", 0))
    api = socket.create_server(("127.0.0.1", 0))
    port, api_port = outside.getsockname()[1], api.getsockname()[1]

    def answer_api() -> None:
        api.settimeout(20)
        try:
            connection, _ = api.accept()
        except OSError:
            return
        with connection:
            connection.recv(100)
            connection.sendall(b"api answered")

    thread = threading.Thread(target=answer_api, daemon=True)
    thread.start()
    from wasdi_server.launcher.box.doors import ApiRelay, DoorPlan

    box = Box(outbound_ports=(port,), doors=DoorPlan(api_port, ApiRelay("127.0.0.1", api_port)))
    attacks = ('import socket\n'
               'def call(port):\n'
               '    with socket.create_connection(("127.0.0.1", port), 3) as s:\n'
               '        s.sendall(b"GET"); return s.recv(100)\n'
               'attempt("connect to a host listener on an allowed port", lambda: call(args["port"]))\n'
               'attempt("call the API through its door", lambda: call(args["api"]))\n')
    try:
        results = hostile(box, own, attacks, port=port, api=api_port)
    finally:
        outside.close()
        api.close()
        thread.join(20)
    assert results.pop("call the API through its door") == "allowed: b'api answered'"
    refused(results)


# -- limits that hold: disk growth, wall clock -------------------------------------------------------------------
FILL = ("import os, time\n"
        "open('output.txt', 'w').write(open('input.txt').read().upper())\n"
        "for i in range(200):\n"
        "    with open(f'fill-{i}', 'wb') as f: f.write(os.urandom(1024 * 1024))\n"
        "    time.sleep(0.02)\n"
        "print('filled', flush=True)\n")


def test_a_run_filling_its_workspace_past_its_disk_limit_is_ended(own: Path) -> None:
    box = Box(limits=replace(Limits(), disk_mb=20))
    lines: list[str] = []
    outcome = box.run(replace(python_job(FILL, write=[own], cwd=own), grows=own), on_output=lines.append, timeout=60)
    assert outcome.limits == ["disk_mb"] and "filled" not in lines
    assert sum(p.stat().st_size for p in own.glob("fill-*")) < 100 * 1024 * 1024
    assert (own / "output.txt").read_text() == "SCENE"
    assert "limit on the growth of its workspace (app_disk_mb = 20 MB)" in box.limits.explain("disk_mb")


class OneJobEngine:
    """An engine whose app is one boxed Python snippet (what the limits do not depend on)."""

    family = "test"

    def __init__(self, code: str) -> None:
        self.code = code

    def run(self, app: Any, launch: Any, runner: Any) -> int:
        job: Job = python_job(self.code, write=[launch.workspace, launch.scratch], cwd=launch.workspace)
        return int(runner(job))

    def delete(self, app: Any) -> None:
        pass


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    """The server of the app-run tests (``alice`` is its user), with the disk and wall-clock limits low."""
    from tests.app_support import app_settings

    server = Server(tmp_path / "data", **{**app_settings(), "app_disk_mb": 20, "app_max_minutes": 1})
    yield server
    server.close()


def _run_app(server: Server, alice: Person, code: str, monkeypatch: pytest.MonkeyPatch,
             minute_timeout: int) -> tuple[str, str, Path]:
    from tests.server.app_fixtures import make_app
    from tests.server.test_apps import wait

    make_app(server, alice, "limited", minuteTimeout=minute_timeout)
    monkeypatch.setattr(server.services.apps, "engine", lambda doc: OneJobEngine(code))
    user = server.services.sessions.resolve(alice.token)
    workspace = server.services.workspaces.create(user, "W")
    folder = server.services.workspaces.folder(workspace)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "input.txt").write_text("scene")
    r = server.post("/processors/run", alice, params={"name": "limited", "workspace": workspace["workspaceId"]},
                    body="{}")
    process_id = r.json["processingIdentifier"]
    status = wait(server, process_id, timeout=120)
    log = "\n".join(str(row.get("logRow")) for row in server.services.process_logs.rows(user, process_id, None, None))
    return status, log, folder


def test_an_app_run_past_app_disk_mb_ends_in_error_naming_the_limit(server: Server, alice: Person,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    status, log, folder = _run_app(server, alice, FILL, monkeypatch, 0)
    assert status == "ERROR", log
    assert "app_disk_mb = 20 MB" in log
    assert (folder / "output.txt").read_text() == "SCENE"


def test_an_app_declaring_no_timeout_is_ended_at_app_max_minutes(server: Server, alice: Person,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from wasdi_server.launcher import ops_apps

    monkeypatch.setattr(ops_apps, "SECONDS_PER_MINUTE", 1.0)
    code = ("import time\nopen('output.txt', 'w').write(open('input.txt').read().upper())\n"
            "time.sleep(600)\n")
    started = time.monotonic()
    status, log, folder = _run_app(server, alice, code, monkeypatch, 0)
    assert status == "ERROR" and "app_max_minutes = 1 minutes" in log, log
    assert time.monotonic() - started < 60
    assert (folder / "output.txt").read_text() == "SCENE"
    # An app's own timeout longer than the ceiling is cut to it too.
    status, log, _ = _run_app(server, alice, code, monkeypatch, 600)
    assert status == "ERROR" and "app_max_minutes" in log, log


def test_a_netlink_request_is_parsed_by_the_attack_outside_the_box() -> None:
    """The netlink attack above finds a listener where nothing boxes it (so its refusal inside means something)."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    try:
        with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 4) as s:
            request = struct.pack("=BBBxI", socket.AF_INET, socket.IPPROTO_TCP, 0, 0xFFFFFFFF) + bytes(48)
            s.send(struct.pack("=IHHII", 16 + len(request), 20, 0x301, 1, 0) + request)
            ports: set[int] = set()
            done = False
            while not done:
                data = s.recv(65536)
                offset = 0
                while offset < len(data):
                    length, kind = struct.unpack_from("=IH", data, offset)
                    if kind in (2, 3):
                        done = True
                        break
                    ports.add(struct.unpack_from("!H", data, offset + 20)[0])
                    offset += (length + 3) & ~3
    finally:
        listener.close()
    assert port in ports
