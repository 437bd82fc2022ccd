"""The launcher and /process: states, slots, stopping, restart rule, and every endpoint's answers."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from tests.box_jobs import python_job
from tests.conftest import Person, Server
from tests.server.app_fixtures import make_app

from wasdi_server.domains.accounts.identity import User
from wasdi_server.launcher import OPERATIONS, OperationContext, OperationFailed


def user_of(server: Server, who: Person) -> User:
    user = server.services.users.active_user(who.user_id)
    assert user is not None
    return user


def new_workspace(server: Server, who: Person, name: str = "w") -> str:
    return server.services.workspaces.create(user_of(server, who), name)["workspaceId"]


def queue(server: Server, who: Person, ws: str, op: str = "TESTOP", name: str = "p", **kw: Any) -> str:
    return server.services.processes.create(user_of(server, who), ws, op, name, **kw)["processObjId"]


def wait_status(server: Server, pid: str, statuses: set[str], timeout: float = 10.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        record = server.services.processes.get(pid)
        if record and record["status"] in statuses:
            return record
        time.sleep(0.02)
    raise AssertionError(f"{pid} never reached {statuses}: {server.services.processes.get(pid)}")


def insert(server: Server, who: Person, ws: str, status: str, stamp: float, op: str = "INGEST",
           name: str = "file.tif", **extra: Any) -> str:
    pid = f"p-{uuid.uuid4()}"
    server.services.store.collection("process_workspaces").insert({
        "processObjId": pid, "workspaceId": ws, "userId": who.user_id, "productName": name, "operationType": op,
        "operationSubType": "", "status": status, "progressPerc": 100 if status == "DONE" else 0, "payload": None,
        "pid": 0, "parentId": None, "nodeCode": "wasdi", "operationTimestamp": stamp, "runningTime": 0,
        "lastStateChangeTimestamp": stamp, **extra})
    return pid


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], threading.Event]:
    """Register operation types whose handlers block until their event is set (or a stop is asked)."""
    events: dict[str, threading.Event] = {}

    def make(op: str) -> threading.Event:
        event = events.setdefault(op, threading.Event())

        def handler(ctx: OperationContext) -> bool:
            ctx.progress(10)
            while not event.wait(0.02):
                ctx.check_stopped()
            ctx.set_payload("finished")
            return True

        monkeypatch.setitem(OPERATIONS, op, handler)
        return event

    yield make
    for event in events.values():
        event.set()


# -- the launcher ---------------------------------------------------------------------------------------
def test_operation_runs_to_done_with_progress_and_messages(server: Server, alice: Person, gate) -> None:
    release = gate("TESTOP")
    ws = new_workspace(server, alice)
    pid = queue(server, alice, ws)
    running = wait_status(server, pid, {"RUNNING"})
    assert running["operationStartTimestamp"] and running["pid"] == 0
    release.set()
    done = wait_status(server, pid, {"DONE"})
    assert done["progressPerc"] == 100 and done["payload"] == "finished" and done["operationEndTimestamp"]

    def update_messages() -> list[str]:
        return [m["payload"] for m in server.messages_of(ws)
                if m["messageCode"] == "UPDATEPROCESSES"]

    # The DONE message is sent just after the DONE status is stored: a reader may see the status first.
    deadline = time.monotonic() + 10
    while f"{pid};DONE;100" not in update_messages() and time.monotonic() < deadline:
        time.sleep(0.01)
    codes = update_messages()
    assert f"{pid};RUNNING;0" in codes and f"{pid};RUNNING;10" in codes and f"{pid};DONE;100" in codes


def test_failures_become_error_with_a_ko_message(server: Server, alice: Person, monkeypatch) -> None:
    def failing(ctx: OperationContext) -> bool:
        raise OperationFailed("the file is not there")

    monkeypatch.setitem(OPERATIONS, "FAILOP", failing)
    monkeypatch.setitem(OPERATIONS, "FALSEOP", lambda ctx: False)
    ws = new_workspace(server, alice)
    failed = wait_status(server, queue(server, alice, ws, "FAILOP"), {"ERROR"})
    assert failed["payload"] == "the file is not there"
    assert wait_status(server, queue(server, alice, ws, "FALSEOP"), {"ERROR"})["operationEndTimestamp"]
    unknown = wait_status(server, queue(server, alice, ws, "NOSUCHOP"), {"ERROR"})
    assert "no handler" in unknown["payload"]
    ko = [m for m in server.messages_of(ws) if m["messageResult"] == "KO"]
    assert {m["messageCode"] for m in ko} == {"FAILOP", "FALSEOP", "NOSUCHOP"}


def test_an_operation_that_ended_itself_is_still_announced(server: Server, alice: Person, monkeypatch) -> None:
    """An app sets DONE itself (the official library's updateStatus sends no message); the launcher's close
    announces it, as the original's does, so the web client's process bar turns DONE."""
    def ends_itself(ctx: OperationContext) -> bool:
        server.services.processes.set_status(ctx.process_id, "DONE", 100)
        return True

    monkeypatch.setitem(OPERATIONS, "SELFOP", ends_itself)
    ws = new_workspace(server, alice)
    pid = queue(server, alice, ws, "SELFOP")
    wait_status(server, pid, {"DONE"})
    deadline = time.monotonic() + 10
    while f"{pid};DONE;100" not in [m["payload"] for m in server.messages_of(ws)] and time.monotonic() < deadline:
        time.sleep(0.01)
    assert [m["payload"] for m in server.messages_of(ws)] == [f"{pid};RUNNING;0", f"{pid};DONE;100"]


def test_slots_limit_concurrency_and_ready_goes_first(tmp_path, gate) -> None:
    s = Server(tmp_path / "d", launcher_workers=1)
    try:
        alice = s.add_user("alice@example.org")
        ws = new_workspace(s, alice)
        first_gate, second_gate = gate("FIRST"), gate("SECOND")
        first = queue(s, alice, ws, "FIRST")
        wait_status(s, first, {"RUNNING"})
        second = queue(s, alice, ws, "SECOND")
        time.sleep(0.3)
        assert s.services.processes.get(second)["status"] == "CREATED"
        # an application waiting for children frees its slot
        s.services.processes.set_status(first, "WAITING")
        s.services.launcher.wake()
        wait_status(s, second, {"RUNNING"})
        # the waiting parent is ready again: it takes the next free slot before new work
        s.services.processes.set_status(first, "READY")
        third = queue(s, alice, ws, "SECOND")
        second_gate.set()
        wait_status(s, second, {"DONE"})
        wait_status(s, first, {"RUNNING"})
        assert s.services.processes.get(third)["status"] == "CREATED"
        first_gate.set()
        wait_status(s, third, {"DONE"})
    finally:
        s.close()


def test_an_idle_launcher_does_not_rescan_the_queue(server: Server, alice: Person, monkeypatch) -> None:
    launcher = server.services.launcher
    launcher.stop()
    scans = []
    real = server.services.processes.active_on_node
    monkeypatch.setattr(server.services.processes, "active_on_node", lambda: scans.append(1) or real())
    launcher.cycle()
    settled = len(scans)
    launcher.cycle()
    launcher.cycle()
    assert len(scans) == settled  # nothing changed: no scan
    queue(server, alice, new_workspace(server, alice), "QUICK")
    launcher.cycle()
    assert len(scans) == settled + 1  # new work: the queue is read again


def test_running_time_is_accounted(server: Server, alice: Person, gate) -> None:
    release = gate("TESTOP")
    ws = new_workspace(server, alice)
    pid = queue(server, alice, ws)
    wait_status(server, pid, {"RUNNING"})
    time.sleep(0.2)
    release.set()
    done = wait_status(server, pid, {"DONE"})
    assert 150 <= done["runningTime"] < 5000


def test_stop_with_and_without_tree(server: Server, alice: Person, gate) -> None:
    gate("TESTOP")
    ws = new_workspace(server, alice)
    parent = queue(server, alice, ws)
    wait_status(server, parent, {"RUNNING"})
    child = queue(server, alice, ws, parent=parent)
    grandchild = queue(server, alice, ws, parent=child)
    wait_status(server, grandchild, {"RUNNING"})
    assert server.get("/process/delete", alice, procws=parent, treeKill="false").status_code == 200
    assert wait_status(server, parent, {"STOPPED"})["operationEndTimestamp"]
    assert server.services.processes.get(child)["status"] == "RUNNING"
    assert server.get("/process/delete", alice, procws=child).status_code == 200
    wait_status(server, child, {"STOPPED"})
    wait_status(server, grandchild, {"STOPPED"})


def test_stop_ends_the_whole_run_even_a_detached_grandchild(server: Server, alice: Person, monkeypatch) -> None:
    import os
    import uuid

    # found by its command line: a pid inside the run's world is not the host's
    marker = f"grandchild-{uuid.uuid4().hex}"
    code = ("import subprocess, sys, time\n"
            f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', '{marker}'], "
            "start_new_session=True)\n"
            "print('started', flush=True)\ntime.sleep(60)\n")
    started: list[str] = []

    def sleeper(ctx: OperationContext) -> bool:
        return ctx.run(python_job(code), on_output=started.append).ok

    def running() -> list[int]:
        found = []
        for name in os.listdir("/proc"):
            try:
                with open(f"/proc/{name}/cmdline", "rb") as handle:
                    if marker.encode() in handle.read():
                        found.append(int(name))
            except (OSError, ValueError):
                continue
        return found

    monkeypatch.setitem(OPERATIONS, "SLEEPOP", sleeper)
    ws = new_workspace(server, alice)
    pid = queue(server, alice, ws, "SLEEPOP")
    deadline = time.monotonic() + 10
    while not (started and running()) and time.monotonic() < deadline:
        time.sleep(0.02)
    supervisor = server.services.processes.get(pid)["pid"]
    assert supervisor > 0 and running(), "the grandchild did not start"
    server.services.launcher.kill(pid)
    wait_status(server, pid, {"STOPPED"})
    deadline = time.monotonic() + 10
    while (running() or _alive(supervisor)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not running(), "the detached grandchild survived the stop"
    assert not _alive(supervisor), "the run's supervisor survived the stop"


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_restart_rule_errors_orphans_and_keeps_the_queue(tmp_path, monkeypatch) -> None:
    data = tmp_path / "d"
    s = Server(data)
    alice = s.add_user("alice@example.org")
    ws = new_workspace(s, alice)
    s.close()
    # records a killed server left behind
    from wasdi_server.store import open_store

    store = open_store(data)
    procs = store.declare("process_workspaces", "processObjId")
    for status in ("RUNNING", "WAITING", "READY", "CREATED"):
        procs.insert({"processObjId": status.lower(), "workspaceId": ws, "userId": alice.user_id,
                      "productName": "x", "operationType": "LATEROP", "status": status, "progressPerc": 5,
                      "nodeCode": "wasdi", "operationTimestamp": 1.0, "lastStateChangeTimestamp": 1.0})
    store.close()
    monkeypatch.setitem(OPERATIONS, "LATEROP", lambda ctx: True)
    s2 = Server(data)
    try:
        for orphan in ("running", "waiting", "ready"):
            record = s2.services.processes.get(orphan)
            assert record["status"] == "ERROR" and record["operationEndTimestamp"]
            assert record["payload"] == "interrupted by a server restart"
        assert wait_status(s2, "created", {"DONE"})
    finally:
        s2.close()


# -- listings -----------------------------------------------------------------------------------------
def test_byws_filters_and_paging(server: Server, alice: Person, bob: Person) -> None:
    ws = new_workspace(server, alice)
    ids = [insert(server, alice, ws, status, 1_700_000_000_000 + i * 1000, name=f"f{i}.tif")
           for i, status in enumerate(["DONE", "ERROR", "DONE", "STOPPED", "DONE", "DONE"])]
    listed = server.get("/process/byws", alice, workspace=ws).json
    assert [p["processObjId"] for p in listed] == ids[::-1]
    first = listed[0]
    assert first["operationDate"] == "2023-11-14 22:13:25" and first["operationSubType"] == ""
    assert set(first) >= {"productName", "operationType", "status", "progressPerc", "pid", "workspaceId", "userId"}
    assert len(server.get("/process/byws", alice, workspace=ws, status="DONE").json) == 4
    assert len(server.get("/process/byws", alice, workspace=ws, status="BOGUS").json) == 6
    assert [p["productName"] for p in server.get("/process/byws", alice, workspace=ws, namePattern="f2").json] \
        == ["f2.tif"]
    paged = server.get("/process/byws", alice, workspace=ws, startindex="1", endindex="3").json
    assert [p["processObjId"] for p in paged] == ids[::-1][1:3]
    assert len(server.get("/process/byws", alice, workspace=ws, startindex="x", endindex="y").json) == 6
    after = server.get("/process/byws", alice, workspace=ws, dateFrom="2023-11-14T22:13:23Z").json
    assert len(after) == 3  # 22:13:23, :24 and :25
    assert len(server.get("/process/byws", alice, workspace=ws, dateFrom="not-a-date").json) == 6
    assert server.get("/process/byws", bob, workspace=ws).json == []
    assert server.get("/process/byws", workspace=ws).json == []


def test_last_by_workspace_and_user_limit_five(server: Server, alice: Person) -> None:
    ws = new_workspace(server, alice)
    ids = [insert(server, alice, ws, "DONE", 1000.0 + i) for i in range(7)]
    assert [p["processObjId"] for p in server.get("/process/lastbyws", alice, workspace=ws).json] == ids[::-1][:5]
    assert len(server.get("/process/lastbyusr", alice).json) == 5
    assert len(server.get("/process/byusr", alice).json) == 7
    assert server.get("/process/byusr", alice, ogc="true").json == []


def test_summary_counts_mine_and_others(server: Server, alice: Person, bob: Person) -> None:
    ws = new_workspace(server, alice)
    for status in ("CREATED", "CREATED", "RUNNING", "DONE"):
        insert(server, alice, ws, status, time.time() * 1000, op="NEVEROP", nodeCode="elsewhere")
    insert(server, bob, ws, "RUNNING", 5.0, op="NEVEROP", nodeCode="elsewhere")
    body = server.get("/process/summary", alice).json
    assert body == {"userProcessWaiting": 2, "userProcessRunning": 1, "allProcessWaiting": 0,
                    "allProcessRunning": 1}
    assert server.get("/process/summary", alice, workspace="missing").json == {}


def test_by_app_and_app_stats(server: Server, alice: Person, bob: Person) -> None:
    ws = new_workspace(server, alice, "apps")
    insert(server, alice, ws, "DONE", 1.0, op="RUNPROCESSOR", name="ndvi", runningTime=4000)
    insert(server, alice, ws, "ERROR", 2.0, op="RUNPROCESSOR", name="ndvi", runningTime=2000)
    insert(server, bob, ws, "DONE", 3.0, op="RUNPROCESSOR", name="ndvi", runningTime=6000)
    insert(server, alice, ws, "DONE", 4.0, op="RUNPROCESSOR", name="other")
    history = server.get("/process/byapp", alice, processorName="ndvi").json
    assert [h["status"] for h in history] == ["ERROR", "DONE"] and history[0]["workspaceName"] == "apps"
    make_app(server, alice, "ndvi")
    stats = server.get("/process/appstats", alice, processorName="ndvi").json
    assert stats == {"applicationName": "ndvi", "runs": 3, "error": 1, "done": 2, "stopped": 0, "mediumTime": 4,
                     "uniqueUsers": 2, "users": [alice.user_id, bob.user_id]}
    # a private app's statistics are for those who may read it; an unknown app has none (the default model)
    assert server.get("/process/appstats", bob, processorName="ndvi").json == {}
    assert server.get("/process/appstats", alice, processorName="other").json == {}
    assert server.get("/process/byapp", alice).json == []


# -- one process ---------------------------------------------------------------------------------------
def test_byid_and_statuses(server: Server, alice: Person, bob: Person) -> None:
    ws = new_workspace(server, alice)
    done = insert(server, alice, ws, "DONE", 1.0)
    err = insert(server, alice, ws, "ERROR", 2.0)
    assert server.get("/process/byid", alice, procws=done).json["status"] == "DONE"
    assert server.get("/process/byid", bob, procws=done).json == {"status": "ERROR"}
    assert server.get("/process/byid", alice, procws="missing").json == {"status": "ERROR"}
    r = server.post("/process/statusbyid", alice, json=[err, "missing", done, "STOPPED", 5])
    assert r.json == ["ERROR", "ERROR", "DONE", "STOPPED", "ERROR"]
    assert server.post("/process/statusbyid", bob, json=[done]).json == ["ERROR"]
    assert server.post("/process/statusbyid", alice, json={"not": "a list"}).json == []
    text = server.get("/process/getstatusbyid", alice, procws=done)
    assert text.text == "DONE" and text.headers["content-type"].startswith("text/plain")
    assert server.get("/process/getstatusbyid", alice, procws="missing").text == "ERROR"
    assert server.get("/process/getstatusbyid", procws=done).text == "ERROR"


def test_update_status_payload_and_subpid(server: Server, alice: Person, bob: Person) -> None:
    ws = new_workspace(server, alice)
    pid = insert(server, alice, ws, "WAITING", 1.0, op="NEVEROP", nodeCode="elsewhere")
    r = server.get("/process/updatebyid", alice, procws=pid, status="RUNNING", perc="42", sendrabbit="1")
    assert r.json["status"] == "RUNNING" and r.json["progressPerc"] == 42
    assert any(m["payload"] == f"{pid};RUNNING;42" for m in server.messages_of(ws))
    r = server.get("/process/updatebyid", alice, procws=pid, status="done", perc="-1")
    assert r.json["status"] == "DONE" and r.json["progressPerc"] == 42 and r.json["operationEndDate"]
    assert server.get("/process/updatebyid", alice, procws=pid, status="SLEEPY").json == {}
    assert server.get("/process/updatebyid", bob, procws=pid, status="ERROR").json == {}
    assert server.get("/process/updatebyid", alice, procws=pid).json == {}
    r = server.post("/process/setpayload", alice, body='{"result": [1, 2]}', params={"procws": pid},
                    content_type="application/json")
    assert r.json["payload"] == '{"result": [1, 2]}'
    payload = server.get("/process/payload", alice, procws=pid)
    assert payload.text == '{"result": [1, 2]}'
    assert server.get("/process/setpayload", alice, procws=pid, payload="short").json["payload"] == "short"
    assert server.get("/process/setsubpid", alice, procws=pid, subpid="4242").json["processObjId"] == pid
    assert server.services.processes.get(pid)["subPid"] == 4242
    assert server.get("/process/setsubpid", alice, procws=pid, subpid="x").json == {}
    assert server.get("/process/payload", bob, procws=pid).text == "null"


def test_stop_statuses(server: Server, alice: Person, bob: Person, admin: Person) -> None:
    ws = new_workspace(server, alice)
    pid = insert(server, alice, ws, "DONE", 1.0)
    assert server.get("/process/delete", procws=pid).status_code == 401
    assert server.get("/process/delete", alice).status_code == 400
    assert server.get("/process/delete", alice, procws="missing").status_code == 400
    assert server.get("/process/delete", bob, procws=pid).status_code == 403
    assert server.get("/process/delete", admin, procws=pid).status_code == 200
    assert server.services.processes.get(pid)["status"] == "DONE"  # finished work stays as it ended


def test_params_by_id(server: Server, alice: Person, bob: Person) -> None:
    ws = new_workspace(server, alice)
    run = insert(server, alice, ws, "DONE", 1.0, op="RUNPROCESSOR", name="ndvi", parameter={"bbox": [1, 2]})
    ingest = insert(server, alice, ws, "DONE", 2.0)
    assert server.get("/process/paramsbyid", alice, procws=run).json == {"bbox": [1, 2]}
    assert server.get("/process/paramsbyid", alice, procws=ingest).status_code == 400
    assert server.get("/process/paramsbyid", alice, procws="missing").status_code == 400
    assert server.get("/process/paramsbyid", bob, procws=run).status_code == 403
    assert server.get("/process/paramsbyid", procws=run).status_code == 401


# -- running time ---------------------------------------------------------------------------------------
def test_running_time_queries(server: Server, alice: Person, bob: Person, admin: Person) -> None:
    ws = new_workspace(server, alice)
    alice_doc = server.services.users.get(alice.user_id)
    sub, project = alice_doc["activeSubscriptionId"], alice_doc["activeProjectId"]
    insert(server, alice, ws, "DONE", 1_704_067_200_000, runningTime=3000, subscriptionId=sub, projectId=project)
    insert(server, alice, ws, "DONE", 1_735_689_600_000, runningTime=5000, subscriptionId=sub, projectId=project)
    assert server.get("/process/runningTime/UI", alice, userId=alice.user_id).json == 8000
    in_2024 = server.get("/process/runningTime/UI", alice, userId=alice.user_id, dateFrom="2024-01-01T00:00:00Z",
                         dateTo="2024-12-31T23:59:59Z")
    assert in_2024.json == 3000
    assert server.get("/process/runningTime/UI", bob, userId=alice.user_id).text == "null"
    assert server.get("/process/runningTime/UI", admin, userId=alice.user_id).json == 8000
    assert server.get("/process/runningTime/SP", alice).json == {sub: {project: 8000}}
    assert server.get("/process/runningTime/SP", bob).json == {}
    rows = server.get("/process/runningtimeproject", alice).json
    assert rows == [{"subscriptionId": sub, "projectId": project, "userId": alice.user_id, "computingTime": 8000}]
    assert server.get("/process/runningtimeproject/byuser", alice).json == rows
    assert server.get("/process/runningtimeproject").status_code == 401
    assert server.get("/process/runningtimeproject/byuser").status_code == 401


# -- queues and nodes -----------------------------------------------------------------------------------
def test_queues_status(server: Server, alice: Person) -> None:
    ws = new_workspace(server, alice)
    server.services.launcher.stop()  # or it would resume the READY record
    for status in ("WAITING", "WAITING", "READY"):
        insert(server, alice, ws, status, 1.0, op="RUNPROCESSOR", nodeCode="wasdi", name=status)
    rows = server.get("/process/queuesStatus", alice).json
    by_type = {r["operationType"]: r for r in rows}
    assert by_type["RUNPROCESSOR"]["procWaiting"] == 2 and by_type["RUNPROCESSOR"]["procReady"] == 1
    assert rows[-1]["operationType"] == "OTHERS" and rows[-1]["numberOfUnfinishedProcesses"] == 3
    only_ready = server.get("/process/queuesStatus", alice, statuses="READY").json
    assert only_ready[-1]["numberOfUnfinishedProcesses"] == 1
    assert server.get("/process/queuesStatus", alice, nodeCode="other").json == []


def test_nodes_by_score_admin_only(server: Server, alice: Person, admin: Person) -> None:
    assert server.get("/process/nodesByScore", alice).json == []
    rows = server.get("/process/nodesByScore", admin).json
    assert [r["nodeCode"] for r in rows] == ["wasdi"] and rows[0]["numberOfProcesses"] == 0
