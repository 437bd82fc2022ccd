"""The CLI's waits (``--wait``, ``ws watch``) end on SIGINT with exit 130 however ``wasdi`` was started: here as a
script's background job starts it, with SIGINT inherited ignored (Python keeps an ignored SIGINT ignored unless
the program sets a handler itself)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.e2e.conftest import ALICE, PASSWORD, SRC, RunningServer

PROGRAMS = {
    "wasdi": [str(Path(sys.executable).parent / "wasdi")],
    "python -m wasdi_cli": [sys.executable, "-m", "wasdi_cli"],
}


@pytest.fixture
def cli_env(server: RunningServer, tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WASDI_")}
    env.update(WASDI_CONFIG_DIR=str(tmp_path / "config"), PYTHONPATH=str(SRC), NO_COLOR="1", PYTHONUNBUFFERED="1")
    login = subprocess.run([*PROGRAMS["wasdi"], "login", "--base-url", server.base_url, "--user", ALICE,
                            "--password-stdin"], input=PASSWORD + "\n", env=env, capture_output=True, text=True,
                           timeout=60, check=False)
    assert login.returncode == 0, login.stderr
    created = subprocess.run([*PROGRAMS["wasdi"], "ws", "create", "live"], env=env, capture_output=True, text=True,
                             timeout=60, check=False)
    assert created.returncode == 0, created.stderr
    return env


def ignoring_sigint() -> None:
    """As a script's background job starts (``wasdi ... --wait &``): SIGINT ignored, inherited across exec."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def interrupt_when_waiting(command: list[str], env: dict[str, str], waiting: Callable[[str], bool]) -> tuple[int, str]:
    """Start ``command`` with SIGINT ignored, send it SIGINT once ``waiting(its stderr so far)``; (exit code,
    stderr)."""
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, preexec_fn=ignoring_sigint)
    shown: list[str] = []
    assert proc.stderr is not None
    reader = threading.Thread(target=lambda: shown.extend(iter(proc.stderr.readline, "")), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 60
        while not waiting("".join(shown)):
            assert proc.poll() is None and time.monotonic() < deadline, f"{command} did not wait: {''.join(shown)}"
            time.sleep(0.1)
        time.sleep(0.5)  # well inside the wait
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{command} ignored SIGINT: {''.join(shown)}")
        reader.join(10)
        return proc.returncode, "".join(shown)
    finally:
        proc.kill()
        proc.wait(10)


@pytest.mark.parametrize("program", list(PROGRAMS))
def test_ws_watch_ends_on_sigint_with_130_when_started_as_a_background_job(cli_env: dict[str, str],
                                                                           program: str) -> None:
    code, shown = interrupt_when_waiting([*PROGRAMS[program], "ws", "watch", "live"], cli_env,
                                         lambda stderr: "Watching workspace" in stderr)
    assert code == 130, shown
    assert "Traceback" not in shown


def test_a_wait_ends_on_sigint_with_130_when_started_as_a_background_job(server: RunningServer,
                                                                         cli_env: dict[str, str],
                                                                         slow_url: str) -> None:
    sdk = server.sdk(ALICE)
    workspace = next(w.workspace_id for w in sdk.workspaces.list() if w.name == "live")

    def importing(stderr: str) -> bool:  # the CLI is waiting once its import runs
        return any(p.status == "RUNNING" for p in sdk.processes.list_by_workspace(str(workspace)))

    code, shown = interrupt_when_waiting([*PROGRAMS["wasdi"], "import", slow_url, "--ws", "live", "--wait"],
                                         cli_env, importing)
    assert code == 130, shown
    assert "Traceback" not in shown
