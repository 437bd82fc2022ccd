"""``wasdi`` in a real terminal (a pseudo-terminal), typed as a person types it, against a real server.

Includes a Ctrl-C during a progress bar and during a follow: the command exits 130 and leaves the terminal
as it found it (cursor shown again, the same terminal modes).  App environments are built offline from the
tests' wheelhouse (tests/app_support.py), so nothing is downloaded per test.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import sys
import termios
import time
from pathlib import Path

import pytest
from tests.app_support import wheelhouse
from tests.child_signals import default_dispositions, started_as_a_background_job
from tests.e2e.conftest import ALICE, PASSWORD, RunningServer, ServerFactory

WASDI = str(Path(sys.executable).parent / "wasdi")
HIDE_CURSOR, SHOW_CURSOR = b"\x1b[?25l", b"\x1b[?25h"


class Terminal:
    """Runs one command on a fresh pseudo-terminal and reads what it shows."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.env = env
        self.cwd = cwd  # the folder the person types in (``wasdi apps new NAME`` makes ./NAME there)

    def run(self, *args: str, interrupt_when: bytes | None = None, timeout: float = 60.0) -> tuple[int, bytes, bool]:
        """(exit code, everything shown, whether the terminal modes are as before)."""
        with started_as_a_background_job():  # as `make test &` from a script: the child inherits SIGINT ignored
            pid, fd = pty.fork()
        if pid == 0:  # the child: the command, with the pty as its controlling terminal
            default_dispositions()  # Ctrl-C is typed at it
            os.chdir(self.cwd)
            os.execve(WASDI, [WASDI, *args], self.env)
        before = termios.tcgetattr(fd)
        shown = b""
        interrupted = False
        deadline = time.monotonic() + timeout
        status = None
        try:
            while time.monotonic() < deadline:
                ready, _, _ = select.select([fd], [], [], 0.1)
                if ready:
                    try:
                        chunk = os.read(fd, 65536)
                    except OSError:  # the child closed the terminal
                        chunk = b""
                    shown += chunk
                if interrupt_when is not None and not interrupted and interrupt_when in shown:
                    time.sleep(0.3)  # a moment inside the bar
                    os.write(fd, b"\x03")  # Ctrl-C, as typed: the terminal sends SIGINT
                    interrupted = True
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    break
            else:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                text = shown.decode(errors="replace")
                raise AssertionError(f"wasdi {' '.join(args)} did not end; it showed:\n{text}")
            while True:  # what is still buffered
                ready, _, _ = select.select([fd], [], [], 0.05)
                if not ready:
                    break
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                shown += chunk
            try:
                same_modes = termios.tcgetattr(fd) == before
            except termios.error:
                same_modes = True  # the terminal is gone with the child: nothing was left changed on it
        finally:
            os.close(fd)
        assert status is not None
        return os.waitstatus_to_exitcode(status), shown, same_modes


@pytest.fixture
def terminal(tmp_path: Path) -> Terminal:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WASDI", "NO_COLOR", "COLUMNS"))}
    env.update(WASDI_CONFIG_DIR=str(tmp_path / "config"), WASDI_PASSWORD=PASSWORD, TERM="xterm-256color",
               HOME=str(tmp_path))
    return Terminal(env, tmp_path)


def test_a_person_at_a_terminal(server: RunningServer, terminal: Terminal, slow_url: str) -> None:
    code, shown, _ = terminal.run("login", "--base-url", server.base_url, "--user", ALICE)
    assert code == 0 and b"Logged in as alice@example.org" in shown, shown
    code, shown, _ = terminal.run("ws", "create", "Floods 2024")
    assert code == 0 and b"Created workspace 'Floods 2024'" in shown, shown
    code, shown, _ = terminal.run("ws", "list")
    assert code == 0 and b"Floods 2024" in shown and "─".encode() in shown, shown  # a table, for people
    code, shown, _ = terminal.run("ws", "show", "Nope")
    assert code == 1 and b"no workspace has the id or name 'Nope'" in shown, shown

    code, shown, same_modes = terminal.run("import", slow_url, "--ws", "Floods 2024", "--wait",
                                           interrupt_when=b"Importing")
    assert code == 130, shown
    assert b"Traceback" not in shown
    if HIDE_CURSOR in shown:  # a bar that hid the cursor showed it again
        assert shown.rfind(SHOW_CURSOR) > shown.rfind(HIDE_CURSOR), shown[-400:]
    assert same_modes


# What the person writes into the scaffolded app's myProcessor.py: a run long enough to interrupt.  It ends
# by itself (a minute) so that nothing outlives the test even if stopping it failed.
SLOW_APP = """
import time

import wasdi


def run():
    for second in range(60):
        wasdi.wasdiLog(f"tick {second}")
        wasdi.updateProgressPerc(second)
        time.sleep(1)
"""
PROCESS_ID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@pytest.fixture
def apps_server(servers: ServerFactory, data_dir_with_workspace: Path, tmp_path: Path) -> RunningServer:
    config = tmp_path / "apps.toml"
    config.write_text(f"apps_find_links = [{json.dumps(str(wheelhouse()))}]\napps_offline = true\n")
    return servers.start(data_dir_with_workspace, extra_args=("--config", str(config)))


def assert_interrupted_cleanly(code: int, shown: bytes, same_modes: bool) -> None:
    assert code == 130, shown
    assert b"Traceback" not in shown, shown
    if HIDE_CURSOR in shown:  # a bar that hid the cursor showed it again
        assert shown.rfind(SHOW_CURSOR) > shown.rfind(HIDE_CURSOR), shown[-400:]
    assert same_modes


def test_a_person_writes_deploys_and_runs_apps(apps_server: RunningServer, terminal: Terminal,
                                                tmp_path: Path) -> None:
    code, shown, _ = terminal.run("login", "--base-url", apps_server.base_url, "--user", ALICE)
    assert code == 0, shown

    code, shown, _ = terminal.run("apps", "new", "hello")
    assert code == 0 and (tmp_path / "hello" / "myProcessor.py").is_file(), shown
    code, shown, _ = terminal.run("apps", "deploy", "hello", "--wait", timeout=300)
    assert code == 0 and b"App 'hello' is ready" in shown, shown
    code, shown, _ = terminal.run("apps", "list")
    assert code == 0 and b"hello" in shown and "─".encode() in shown, shown
    code, shown, _ = terminal.run("apps", "run", "hello", "--ws", "precious", "--follow", timeout=120)
    assert code == 0 and b"Hello world" in shown and b"is DONE" in shown, shown
    code, shown, _ = terminal.run("apps", "run", "nope", "--ws", "precious")
    assert code == 1 and b"Traceback" not in shown, shown

    code, shown, _ = terminal.run("apps", "new", "slow")
    assert code == 0, shown
    (tmp_path / "slow" / "myProcessor.py").write_text(SLOW_APP)
    code, shown, _ = terminal.run("apps", "deploy", "slow", "--wait", timeout=300)
    assert code == 0 and b"App 'slow' is ready" in shown, shown

    # Ctrl-C in the progress bar of --wait, then in the log lines of --follow; each run is then stopped
    # the way a person would, by the id the command printed (the interrupt stops the waiting, not the run).
    for how, shown_while_running in (("--wait", b"Running slow"), ("--follow", b"tick 1")):
        result = terminal.run("apps", "run", "slow", "--ws", "precious", how, interrupt_when=shown_while_running,
                              timeout=120)
        assert_interrupted_cleanly(*result)
        started = PROCESS_ID.search(result[1])
        assert started is not None, result[1]
        code, shown, _ = terminal.run("processes", "stop", started.group().decode())
        assert code == 0, shown
