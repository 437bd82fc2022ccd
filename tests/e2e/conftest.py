"""End-to-end fixtures: real ``python -m wasdi_server serve`` processes on 127.0.0.1 and a free port.

Users are added with the real management command (``python -m wasdi_server user add ...
--password-stdin``) while no server runs, because a running server holds the data directory's
lock.  That is done once per session into a template data directory; each test then gets its own
copy, so servers start in well under a second and tests never see each other's data.

Every process started here is killed on teardown, whatever the test did.
"""

from __future__ import annotations

import contextlib
import http.server
import importlib
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import httpx
import pytest
from tests.child_signals import default_dispositions

from wasdi_sdk import WasdiClient

SRC = Path(__file__).resolve().parents[2] / "src"
PASSWORD = "e2e-password-1"
ALICE = "alice@example.org"
BOB = "bob@example.org"
CAROL = "carol@example.org"
ADMIN = "root@example.org"
USERS = {ALICE: False, BOB: False, CAROL: False, ADMIN: True}
"""user id -> admin, in every seeded data directory (all with password ``PASSWORD``)."""
START_TIMEOUT = 20.0
"""Seconds a server gets to answer GET /wasdi/hello."""
EXIT_TIMEOUT = 20.0
"""Seconds a server that must refuse to start gets to exit."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test under tests/e2e is marked ``e2e`` (so ``-m "not e2e"`` skips the real servers)."""
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.e2e)


def server_env() -> dict[str, str]:
    """The environment of a server process: ``src`` importable, no stray ``WASDI_SERVER_*`` settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("WASDI_SERVER_")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH", "")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    # The tests' own web servers listen on loopback, which imports refuse unless an operator allows it.
    env["WASDI_SERVER_IMPORT_ALLOWED_HOSTS"] = "127.0.0.1"
    # Each server's SFTP service on a free port of its own (the default 2222 would be shared by every test).
    env["WASDI_SERVER_SFTP_PORT"] = "0"
    return env


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_cli(*args: str, stdin: str | None = None, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    """``python -m wasdi_server ARGS...`` to completion (text output captured)."""
    return subprocess.run([sys.executable, "-m", "wasdi_server", *args], input=stdin, env=server_env(),
                          capture_output=True, text=True, timeout=timeout, check=False)


def add_user(data_dir: Path, user_id: str, password: str = PASSWORD, *, admin: bool = False) -> None:
    """``python -m wasdi_server user add USER [--admin] --password-stdin --data-dir D``."""
    args = ["user", "add", user_id, "--password-stdin", "--data-dir", str(data_dir)]
    if admin:
        args.append("--admin")
    done = run_cli(*args, stdin=password + "\n")
    assert done.returncode == 0, f"user add {user_id} failed ({done.returncode}): {done.stderr}"


def serve_command(data_dir: Path, port: int, threads: int | None = None) -> list[str]:
    # The built-in broker gets a free port of its own too (its default, the API's port + 1, may be taken).
    cmd = [sys.executable, "-m", "wasdi_server", "serve", "--data-dir", str(data_dir),
           "--host", "127.0.0.1", "--port", str(port), "--broker-port", str(free_port())]
    if threads is not None:
        cmd += ["--threads", str(threads)]
    return cmd


@dataclass
class RunningServer:
    """One server process and what tests need to talk to it."""

    proc: subprocess.Popen[bytes]
    data_dir: Path
    port: int
    log_path: Path
    tokens: dict[str, str] = field(default_factory=dict)

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        return self.base_url + path

    def output(self) -> str:
        """What the server printed so far (stdout and stderr)."""
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def login(self, user_id: str = ALICE, password: str = PASSWORD) -> str:
        """A new session token for ``user_id`` (POST /auth/login over HTTP)."""
        r = httpx.post(self.url("/auth/login"), json={"userId": user_id, "userPassword": password}, timeout=30)
        r.raise_for_status()
        token = r.json().get("sessionId")
        assert token, f"login of {user_id} failed: {r.text}"
        return str(token)

    def token(self, user_id: str = ALICE) -> str:
        """A session token for ``user_id``, logged in once per server."""
        if user_id not in self.tokens:
            self.tokens[user_id] = self.login(user_id)
        return self.tokens[user_id]

    def http(self, user_id: str | None = ALICE) -> httpx.Client:
        """An ``httpx.Client`` on the server, with ``user_id``'s session header (none for ``None``)."""
        headers = {"x-session-token": self.token(user_id)} if user_id else {}
        return httpx.Client(base_url=self.base_url, headers=headers, timeout=30)

    def sdk(self, user_id: str | None = ALICE) -> WasdiClient:
        """An SDK client on the server, logged in as ``user_id`` (anonymous for ``None``), no retries."""
        return WasdiClient(base_url=self.base_url, session_token=self.token(user_id) if user_id else None,
                           max_retries=0, timeout=30)

    def workspace_ids(self, user_id: str = ALICE) -> set[str]:
        """Ids of the workspaces GET /ws/byuser lists for ``user_id``."""
        with self.http(user_id) as c:
            r = c.get("/ws/byuser")
        r.raise_for_status()
        return {w["workspaceId"] for w in r.json()}

    def running(self) -> bool:
        return self.proc.poll() is None

    def stop(self, timeout: float = 10.0) -> int:
        """SIGTERM, then SIGKILL if it lingers; the exit code."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        return self.proc.wait(timeout)

    def kill(self) -> int:
        """SIGKILL now (a crash, as far as the data directory can tell); the exit code."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        return self.proc.wait(10)


def _wait_until_ready(server: RunningServer, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=2.0) as client:
        while True:
            if server.proc.poll() is not None:
                raise RuntimeError(f"server exited with {server.proc.returncode} before answering:\n"
                                   f"{server.output()}")
            try:
                if client.get(server.url("/wasdi/hello")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"server did not answer GET /wasdi/hello within {timeout:.0f} s:\n"
                                   f"{server.output()}")
            time.sleep(0.05)


class ServerFactory:
    """Starts servers (and remembers them, so that teardown kills every one)."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.started: list[RunningServer] = []

    def start(self, data_dir: Path, *, threads: int | None = None, timeout: float = START_TIMEOUT,
              extra_args: tuple[str, ...] = (), open_files: int | None = None) -> RunningServer:
        """A server on ``data_dir`` answering GET /wasdi/hello (a port race is retried); ``extra_args`` are
        added to its ``serve`` command line (e.g. ``--config FILE``); ``open_files``: the soft open-files limit
        it starts with (as many systems start a process: 1024)."""

        def child_setup() -> None:
            default_dispositions()
            if open_files is not None:
                resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

        last: Exception | None = None
        for attempt in range(3):
            port = free_port()
            log_path = self.workdir / f"server-{len(self.started)}-{attempt}.log"
            log = open(log_path, "wb")  # noqa: SIM115  (the child writes it; closed right after the fork)
            try:
                # the tests stop servers with SIGINT and SIGTERM: a server hears them however the suite started
                proc = subprocess.Popen([*serve_command(data_dir, port, threads), *extra_args], env=server_env(),
                                        stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                        preexec_fn=child_setup)
            finally:
                log.close()
            server = RunningServer(proc, data_dir, port, log_path)
            self.started.append(server)
            try:
                _wait_until_ready(server, timeout)
                return server
            except RuntimeError as e:
                server.kill()
                last = e
                if "already in use" not in server.output():  # a port race: another free port
                    break
        raise AssertionError(str(last))

    def run_to_exit(self, data_dir: Path, timeout: float = EXIT_TIMEOUT) -> subprocess.CompletedProcess[str]:
        """Run ``serve`` on ``data_dir`` expecting it to refuse to start; fails the test if it serves."""
        port = free_port()
        try:
            return subprocess.run(serve_command(data_dir, port), env=server_env(), capture_output=True, text=True,
                                  timeout=timeout, stdin=subprocess.DEVNULL, check=False)
        except subprocess.TimeoutExpired as e:  # subprocess.run killed it
            pytest.fail(f"the server did not exit within {timeout:.0f} s (it was expected to refuse to start); "
                        f"output: {e.stdout!r} {e.stderr!r}")

    @staticmethod
    def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        """``python -m wasdi_server ARGS...`` to completion (for management commands)."""
        return run_cli(*args, stdin=stdin)

    def close(self) -> None:
        for server in self.started:
            with contextlib.suppress(Exception):  # teardown must reach every process
                server.kill()


@pytest.fixture(scope="session")
def seeded_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A stopped data directory holding ``USERS``, made once per session with the real CLI."""
    template = tmp_path_factory.mktemp("e2e-template") / "data"
    for user_id, admin in USERS.items():
        add_user(template, user_id, admin=admin)
    return template


@pytest.fixture(scope="session")
def workspace_template(tmp_path_factory: pytest.TempPathFactory, seeded_template: Path) -> Path:
    """A stopped data directory holding ``USERS`` and alice's workspace ``precious`` (made by a real server)."""
    base = tmp_path_factory.mktemp("e2e-workspace-template")
    template = copy_data_dir(seeded_template, base / "data")
    factory = ServerFactory(base)
    try:
        server = factory.start(template)
        with server.sdk(ALICE) as sdk:
            sdk.workspaces.create(name="precious")
        server.stop()
    finally:
        factory.close()
    return template


def copy_data_dir(source: Path, target: Path) -> Path:
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(".lock"))
    return target


@pytest.fixture
def data_dir(tmp_path: Path, seeded_template: Path) -> Path:
    """A fresh data directory with ``USERS`` (a copy of the seeded template)."""
    return copy_data_dir(seeded_template, tmp_path / "data")


@pytest.fixture
def data_dir_with_workspace(tmp_path: Path, workspace_template: Path) -> Path:
    """A fresh stopped data directory with ``USERS`` and alice's workspace ``precious``."""
    return copy_data_dir(workspace_template, tmp_path / "data")


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[ServerFactory]:
    """Start servers with ``servers.start(data_dir)``; all are killed on teardown."""
    factory = ServerFactory(tmp_path)
    try:
        yield factory
    finally:
        factory.close()


@pytest.fixture
def server(servers: ServerFactory, data_dir: Path) -> RunningServer:
    """A running server over a fresh data directory holding ``USERS``."""
    return servers.start(data_dir)


@dataclass(frozen=True)
class Accounts:
    """The users every seeded data directory holds (all with ``password``)."""

    alice: str = ALICE
    bob: str = BOB
    carol: str = CAROL
    admin: str = ADMIN
    password: str = PASSWORD


@pytest.fixture(scope="session")
def accounts() -> Accounts:
    return Accounts()


@pytest.fixture
def waspy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The official ``wasdi`` module with pristine globals, isolated from the user's home and environment.

    waspy keeps all its state in module globals, so it is reloaded before and after the test; ``HOME``
    is a fresh directory (waspy reads ``~/.wasdi/credentials.json``), which must still be empty at the
    end, and no ``WASDI_*`` variable leaks in from outside.  Give it a ``BASEPATH`` under ``tmp_path``.
    """
    import wasdi

    for name in list(os.environ):
        if name.startswith("WASDI_"):
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    module = importlib.reload(wasdi)
    yield module
    importlib.reload(wasdi)  # leave no session or workspace behind for whoever imports it next
    assert not any(home.iterdir()), "waspy wrote into HOME"


class SlowFile(http.server.BaseHTTPRequestHandler):
    """A large file sent a few bytes at a time: an import still running when a person interrupts its wait."""

    stop = threading.Event()

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(10_000_000))
        self.end_headers()
        while not self.stop.is_set():
            try:
                self.wfile.write(b"\0" * 64)
                self.wfile.flush()
            except OSError:
                return
            time.sleep(0.2)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def slow_url() -> Iterator[str]:
    """The address of a ``SlowFile`` served on 127.0.0.1 for the test's length."""
    SlowFile.stop.clear()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), SlowFile)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/slow.tif"
    SlowFile.stop.set()
    httpd.shutdown()
    httpd.server_close()
