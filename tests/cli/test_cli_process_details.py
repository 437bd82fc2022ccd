"""``wasdi processes`` statistics, queues, payloads, parameters and states against the in-process server."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from tests.cli.conftest import ALICE, Cli, lines
from tests.server.app_fixtures import app_record
from wasdi_server.launcher import OPERATIONS, OperationContext


@pytest.fixture
def alice(cli: Cli) -> Cli:
    cli.login()
    return cli


def finished(cli: Cli, monkeypatch: pytest.MonkeyPatch, op: str = "CLIDONE", product: str = "scene.tif",
             parameter: dict[str, object] | None = None) -> tuple[str, str]:
    """A workspace and a DONE process in it."""
    monkeypatch.setitem(OPERATIONS, op, lambda ctx: True)
    services = cli.app.services
    user = services.users.active_user(ALICE)
    ws = services.workspaces.create(user, "w")["workspaceId"]
    pid = services.processes.create(user, ws, op, product, parameter=parameter)["processObjId"]
    assert cli("processes", "wait", pid, "--interval", "0.05").exit_code == 0
    return ws, pid


def held(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> tuple[str, threading.Event]:
    """A RUNNING process that ends when the event is set."""
    started, release = threading.Event(), threading.Event()

    def hold(ctx: OperationContext) -> bool:
        started.set()
        release.wait(10)
        return True

    monkeypatch.setitem(OPERATIONS, "CLIHELD", hold)
    services = cli.app.services
    user = services.users.active_user(ALICE)
    ws = services.workspaces.create(user, "held")["workspaceId"]
    pid = services.processes.create(user, ws, "CLIHELD", "x")["processObjId"]
    assert started.wait(10)
    return pid, release


def test_stats_and_history_of_an_app(alice: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    alice.app.services.store.collection("processors").insert(app_record(ALICE, "hello"))  # stats need a readable app
    finished(alice, monkeypatch, op="RUNPROCESSOR", product="hello")
    stats = json.loads(alice("processes", "stats", "hello", "--json").stdout)
    assert (stats["applicationName"], stats["runs"], stats["done"], stats["users"]) == ("hello", 1, 1, [ALICE])
    table = alice("processes", "stats", "hello")
    assert table.exit_code == 0 and "mean run time" in table.stdout
    unknown = alice("processes", "stats", "nope")
    assert unknown.exit_code == 1 and "no app 'nope' that you may read" in unknown.stderr
    runs = json.loads(alice("processes", "history", "hello", "--json").stdout)
    assert [(r["processorName"], r["status"], r["workspaceName"]) for r in runs] == [("hello", "DONE", "w")]
    none = alice("processes", "history", "nope")
    assert none.exit_code == 0 and "No runs of 'nope'" in none.stderr


def test_running_time_by_user_project_and_subscription(alice: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    _, pid = finished(alice, monkeypatch)
    services = alice.app.services
    subscription = services.subscriptions.create_trial(ALICE)
    sub_id = subscription["subscriptionId"]
    services.processes.processes.update(pid, {"runningTime": 3_723_000, "subscriptionId": sub_id,
                                              "projectId": "p1"})
    assert alice("processes", "running-time", "--json").stdout.strip() == "3723000"
    assert "1:02:03" in alice("processes", "running-time", "--by", "user").stdout
    assert alice("processes", "running-time", "--from", "2000-01-01T00:00:00Z", "--to",
                 "2000-01-02T00:00:00Z", "-q").stdout.strip() == "0"
    assert json.loads(alice("processes", "running-time", "--by", "subscription", "--json").stdout) == {
        sub_id: {"p1": 3_723_000}}
    for extra in ((), ("--mine",)):
        rows = json.loads(alice("processes", "running-time", "--by", "project", *extra, "--json").stdout)
        assert rows == [{"subscriptionId": sub_id, "projectId": "p1", "userId": ALICE, "computingTime": 3_723_000}]
    table = alice("processes", "running-time", "--by", "project", "--mine")
    assert "p1" in table.stdout and "1:02:03" in table.stdout
    assert alice("processes", "running-time", "--by", "week").exit_code == 2
    assert alice("processes", "running-time", "--by", "user", "--mine").exit_code == 2
    other = alice("processes", "running-time", "--user", "bob@example.org")
    assert other.exit_code != 0 and "admin" in other.stderr


def test_summary_queues_last_and_statuses(alice: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    ws, done = finished(alice, monkeypatch)
    running, release = held(alice, monkeypatch)
    try:
        counts = json.loads(alice("processes", "summary", "--json").stdout)
        assert counts["userProcessRunning"] == 1
        assert json.loads(alice("processes", "summary", "--ws", ws, "--json").stdout)["userProcessRunning"] == 0
        rows = json.loads(alice("processes", "queues", "--json").stdout)
        assert (rows[0]["operationType"], rows[0]["procRunning"]) == ("CLIHELD", 1)
        assert alice("processes", "queues", "--status", "created", "--json").stdout.count("CLIHELD") == 0
        statuses = alice("processes", "status", done, running, "nope")
        assert [line.split() for line in lines(statuses.stdout)[2:]] == [[done, "DONE"], [running, "RUNNING"],
                                                                          ["nope", "ERROR"]]
        assert json.loads(alice("processes", "status", done, "--json").stdout) == ["DONE"]
    finally:
        release.set()
    assert alice("processes", "wait", running, "--interval", "0.05").exit_code == 0
    assert alice("processes", "last", "-q").stdout.split() == [running, done]
    assert alice("processes", "last", "--ws", ws, "-q").stdout.split() == [done]


def test_nodes_are_for_admins(cli: Cli) -> None:
    cli.app.services.users.add("root@example.org", "password-r", admin=True, name="Root", surname="Admin")
    cli.login()
    empty = cli("processes", "nodes")
    assert empty.exit_code == 0 and "for admins" in empty.stderr
    cli.login("root@example.org", "password-r")
    rows = json.loads(cli("processes", "nodes", "--json").stdout)
    assert rows and rows[0]["nodeCode"] and rows[0]["numberOfProcesses"] == 0
    assert cli("processes", "nodes", "-q").stdout.split() == [rows[0]["nodeCode"]]


def test_payload_params_status_and_subpid(alice: Cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _, pid = finished(alice, monkeypatch, op="RUNPROCESSOR", product="hello", parameter={"NAME": "cli"})
    assert json.loads(alice("processes", "params", pid).stdout) == {"NAME": "cli"}
    _, other = finished(alice, monkeypatch)
    not_a_run = alice("processes", "params", other)
    assert not_a_run.exit_code == 1 and "not a processor run" in not_a_run.stderr, not_a_run.output
    assert alice("processes", "payload", pid).exit_code == 1
    assert alice("processes", "payload", pid, "--set", '{"area": 12}').exit_code == 0
    assert json.loads(alice("processes", "payload", pid).stdout) == {"area": 12}
    big = {"values": list(range(1000))}
    assert alice("processes", "payload", pid, "--set", json.dumps(big)).exit_code == 0
    assert json.loads(alice("processes", "payload", pid).stdout) == big
    assert alice("processes", "payload", pid, "--set", "{oops").exit_code == 2
    saved = tmp_path / "payload.json"
    saved.write_text('{"from": "file"}')
    assert alice("processes", "payload", pid, "--set", str(saved)).exit_code == 0
    assert json.loads(alice("processes", "payload", pid).stdout) == {"from": "file"}
    assert alice("processes", "payload", "nope", "--set", "{}").exit_code == 1
    updated = json.loads(alice("processes", "set-status", pid, "error", "--perc", "40", "--json").stdout)
    assert (updated["status"], updated["progressPerc"]) == ("ERROR", 40)
    assert alice("processes", "set-status", pid, "DONE", "--perc", "101").exit_code == 2
    assert alice("processes", "set-subpid", pid, "4242").exit_code == 0
    assert alice.app.services.processes.get(pid)["subPid"] == 4242
    assert alice("processes", "params", "nope").exit_code == 1
