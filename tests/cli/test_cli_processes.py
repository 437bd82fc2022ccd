"""``wasdi processes ...`` against the in-process server with a real launcher."""

from __future__ import annotations

import json
import threading

import pytest

from tests.cli.conftest import ALICE, Cli
from wasdi_server.launcher import OPERATIONS, OperationContext, OperationFailed


@pytest.fixture
def alice(cli: Cli) -> Cli:
    cli.login()
    return cli


def queue(cli: Cli, op: str) -> tuple[str, str]:
    services = cli.app.services
    user = services.users.active_user(ALICE)
    ws = services.workspaces.create(user, "w")["workspaceId"]
    return ws, services.processes.create(user, ws, op, "scene.tif")["processObjId"]


def test_list_show_wait(alice: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(OPERATIONS, "CLIOP", lambda ctx: True)
    ws, pid = queue(alice, "CLIOP")
    waited = alice("processes", "wait", pid, "--interval", "0.05", "--json")
    assert waited.exit_code == 0, waited.output
    assert json.loads(waited.stdout)["status"] == "DONE"
    listed = alice("processes", "list", "--ws", ws, "--json")
    assert [p["processObjId"] for p in json.loads(listed.stdout)] == [pid]
    assert alice("processes", "list", "-q").stdout.split() == [pid]
    assert alice("processes", "list", "--status", "ERROR", "-q").stdout.strip() == ""
    shown = alice("processes", "show", pid)
    assert shown.exit_code == 0 and "CLIOP" in shown.stdout and "DONE" in shown.stdout


def test_wait_fails_on_error(alice: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(ctx: OperationContext) -> bool:
        raise OperationFailed("bad input file")

    monkeypatch.setitem(OPERATIONS, "CLIBAD", broken)
    _, pid = queue(alice, "CLIBAD")
    result = alice("processes", "wait", pid, "--interval", "0.05")
    assert result.exit_code == 1 and "ERROR" in result.stderr and "bad input file" in result.stderr


def test_stop(alice: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    started = threading.Event()

    def hold(ctx: OperationContext) -> bool:
        started.set()
        ctx.stop_event.wait(10)
        ctx.check_stopped()
        return True

    monkeypatch.setitem(OPERATIONS, "CLIHOLD", hold)
    _, pid = queue(alice, "CLIHOLD")
    assert started.wait(10)
    result = alice("processes", "stop", pid)
    assert result.exit_code == 0 and "STOPPED" in result.stderr


def test_unknown_process(alice: Cli) -> None:
    assert alice("processes", "show", "nope").exit_code == 1
    assert alice("processes", "wait", "nope").exit_code == 1


def test_logs(alice: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    def chatty(ctx: OperationContext) -> bool:
        user = ctx.services.users.active_user(ALICE)
        for i in range(3):
            ctx.services.process_logs.add(user, ctx.process_id, f"step {i}")
        return True

    monkeypatch.setitem(OPERATIONS, "CLILOG", chatty)
    _, pid = queue(alice, "CLILOG")
    followed = alice("processes", "logs", pid, "--follow", "--interval", "0.05")
    assert followed.exit_code == 0, followed.output
    assert [line.split("  ", 1)[1] for line in followed.stdout.splitlines()] == ["step 0", "step 1", "step 2"]
    tail = alice("processes", "logs", pid, "--from", "2", "--json")
    assert [json.loads(line)["logRow"] for line in tail.stdout.splitlines()] == ["step 2"]
    assert alice("processes", "logs", "nope").exit_code == 1


def test_follow_shows_state_changes_of_an_operation_without_logs(alice: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()

    def quiet(ctx: OperationContext) -> bool:
        release.wait(10)
        return True

    monkeypatch.setitem(OPERATIONS, "CLIQUIET", quiet)
    _, pid = queue(alice, "CLIQUIET")
    threading.Timer(0.5, release.set).start()
    followed = alice("processes", "logs", pid, "--follow", "--interval", "0.05")
    assert followed.exit_code == 0, followed.output
    assert followed.stdout == ""  # no log lines: the states are shown, on stderr
    states = [line for line in followed.stderr.splitlines() if line.startswith("[CLIQUIET ")]
    assert states[-1] == "[CLIQUIET DONE 100%]" and len(states) >= 2, followed.stderr
