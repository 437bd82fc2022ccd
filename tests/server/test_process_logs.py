"""/processors/logs: run logs appended durably, counted and read back by row range."""

from __future__ import annotations

from tests.conftest import Person, Server


def new_process(server: Server, who: Person) -> tuple[str, str]:
    user = server.services.users.active_user(who.user_id)
    ws = server.services.workspaces.create(user, "w")["workspaceId"]
    server.services.launcher.stop()  # keep the record as it is
    return ws, server.services.processes.create(user, ws, "RUNPROCESSOR", "app")["processObjId"]


def add(server: Server, who: Person | None, pid: str, line: str):
    # waspy sends the line as the raw body with Content-Type application/json
    return server.post("/processors/logs/add", who, body=line, params={"processworkspace": pid},
                       content_type="application/json")


def test_add_count_list(server: Server, alice: Person) -> None:
    _, pid = new_process(server, alice)
    for i in range(5):
        assert add(server, alice, pid, f"line {i} ünïcode").status_code == 200
    assert server.get("/processors/logs/count", alice, processworkspace=pid).json == 5
    rows = server.get("/processors/logs/list", alice, processworkspace=pid).json
    assert [r["logRow"] for r in rows] == [f"line {i} ünïcode" for i in range(5)]
    assert [r["rowNumber"] for r in rows] == [0, 1, 2, 3, 4]
    assert rows[0]["processWorkspaceId"] == pid and len(rows[0]["logDate"]) == 19
    window = server.get("/processors/logs/list", alice, processworkspace=pid, startrow="1", endrow="2").json
    assert [r["rowNumber"] for r in window] == [1, 2]


def test_logs_survive_a_restart_and_go_with_the_workspace(tmp_path) -> None:
    s = Server(tmp_path / "d")
    alice = s.add_user("alice@example.org")
    ws, pid = new_process(s, alice)
    add(s, alice, pid, "kept")
    # Finished, so the next server's launcher does not run it (and log its failure) while we look.
    s.services.processes.set_status(pid, "DONE")
    s.close()
    s2 = Server(tmp_path / "d")
    try:
        alice2 = Person(alice.user_id, s2.services.sessions.open(alice.user_id))
        # The restarted launcher may already have run the record and logged how it ended: the line
        # written before the restart must still come first.
        rows = s2.get("/processors/logs/list", alice2, processworkspace=pid).json
        assert rows[0]["logRow"] == "kept" and rows[0]["rowNumber"] == 0
        assert s2.delete("/ws/delete", alice2, workspace=ws).status_code == 200
        assert not (s2.settings.data_dir / "logs" / f"{pid}.jsonl").exists()
    finally:
        s2.close()


def test_access_rules_and_failure_styles(server: Server, alice: Person, bob: Person) -> None:
    ws, pid = new_process(server, alice)
    assert add(server, bob, pid, "intruder").status_code == 403
    assert add(server, None, pid, "anon").status_code == 401
    assert add(server, alice, "missing", "x").status_code == 400
    assert add(server, alice, "../../etc", "x").status_code == 400
    assert server.get("/processors/logs/count", bob, processworkspace=pid).json == -1
    assert server.get("/processors/logs/count", processworkspace=pid).json == -1
    assert server.get("/processors/logs/list", bob, processworkspace=pid).json == []
    server.put("/ws/share/add", alice, workspace=ws, userId=bob.user_id)
    assert server.get("/processors/logs/count", bob, processworkspace=pid).json == 0  # a reader may read
    assert add(server, bob, pid, "reader").status_code == 403  # but not write
