"""What the launcher does with an operation's subprocess: kill_group returns as soon as the group is gone
(it reaps the leader instead of waiting out its grace), ``ctx.run`` enforces its timeout and hands over the
output line by line."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import Person, Server

from wasdi_server.launcher.operations import OperationContext, OperationStopped, OperationTimedOut, kill_group

LONG_GRACE = 600.0
"""A grace no test could wait out: a kill_group that waited its grace would hang the test visibly."""


def _group_gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


def test_kill_group_reaps_its_child_and_does_not_wait_its_grace() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
    finished = threading.Event()

    def kill() -> None:
        kill_group(child.pid, grace=LONG_GRACE, child=child)
        finished.set()

    threading.Thread(target=kill, daemon=True).start()
    assert finished.wait(60), "kill_group waited for its grace although the group was gone"
    assert child.returncode is not None
    assert _group_gone(child.pid)


def test_kill_group_kills_grandchildren_that_ignore_sigterm(tmp_path: Path) -> None:
    marker = tmp_path / "pid"
    code = ("import signal, subprocess, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "p = subprocess.Popen([sys.executable, '-c', 'import signal, time; "
            "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)']); "
            f"open({str(marker)!r}, 'w').write(str(p.pid)); time.sleep(600)")
    child = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    for _ in range(600):
        if marker.exists() and marker.read_text():
            break
        threading.Event().wait(0.05)
    kill_group(child.pid, grace=0.5, child=child)
    assert child.returncode is not None
    for _ in range(200):
        if _group_gone(child.pid):
            break
        threading.Event().wait(0.05)
    assert _group_gone(child.pid)


def test_kill_group_of_a_finished_process_returns() -> None:
    child = subprocess.Popen(["true"], start_new_session=True)
    child.wait()
    kill_group(child.pid, grace=LONG_GRACE, child=child)


@pytest.fixture
def ctx(server: Server, alice: Person) -> OperationContext:
    user = server.services.sessions.resolve(alice.token)
    workspace = server.services.workspaces.create(user, "W")
    record = server.services.processes.create(user, workspace["workspaceId"], "TESTOP", "x")
    return OperationContext(record, server.services)


def test_run_enforces_its_timeout(ctx: OperationContext) -> None:
    with pytest.raises(OperationTimedOut) as raised:
        ctx.run([sys.executable, "-c", "import time; time.sleep(600)"], timeout=0.3)
    assert raised.value.seconds == 0.3
    assert isinstance(raised.value, OperationStopped)
    assert ctx.children == []


def test_run_hands_over_output_lines_and_returns_the_exit_code(ctx: OperationContext) -> None:
    lines: list[str] = []
    code = "import sys; print('out one'); print('err two', file=sys.stderr); sys.exit(3)"
    assert ctx.run([sys.executable, "-c", code], on_output=lines.append) == 3
    assert sorted(lines) == ["err two", "out one"]


def test_run_stops_on_request(ctx: OperationContext) -> None:
    timer = threading.Timer(0.2, ctx.stop_event.set)
    timer.start()
    result: dict[str, Any] = {}
    try:
        ctx.run([sys.executable, "-c", "import time; time.sleep(600)"])
    except OperationStopped as e:
        result["stopped"] = e
    finally:
        timer.cancel()
    assert "stopped" in result and not isinstance(result["stopped"], OperationTimedOut)
