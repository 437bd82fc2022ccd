"""The session an app run gets reaches its own workspace and its own process records, nothing else of its
caller's account (domains/processes/run_scope.py), and only the request gate that enforces the scope accepts it."""

from __future__ import annotations

from typing import Any

import pytest
from tests.conftest import Person, Server
from tests.server.geodata import new_workspace


@pytest.fixture
def scene(server: Server, alice: Person) -> dict[str, Any]:
    mine, other = new_workspace(server, alice, "run-here"), new_workspace(server, alice, "elsewhere")
    user = server.services.sessions.resolve(alice.token)
    processes = server.services.processes
    run = processes.create(user, mine, "RUNPROCESSOR", "app")["processObjId"]
    child = processes.create(user, mine, "RUNPROCESSOR", "app", parent=run)["processObjId"]
    sibling = processes.create(user, mine, "RUNPROCESSOR", "app")["processObjId"]
    foreign = processes.create(user, other, "RUNPROCESSOR", "app")["processObjId"]
    token = server.services.sessions.open(alice.user_id, scope={"workspaceId": mine, "processId": run})
    return {"mine": mine, "other": other, "run": run, "child": child, "sibling": sibling, "foreign": foreign,
            "run_session": Person(alice.user_id, token)}


def test_the_run_reaches_its_own_workspace(server: Server, scene: dict[str, Any]) -> None:
    who = scene["run_session"]
    assert server.get("/auth/checksession", who).json["userId"] == who.user_id
    assert server.get("/ws/getws", who, workspace=scene["mine"]).status_code == 200
    assert server.get("/product/byws", who, workspace=scene["mine"]).status_code == 200
    assert [w["workspaceId"] for w in server.get("/ws/byuser", who).json] == [scene["mine"]]
    for process in (scene["run"], scene["child"]):
        r = server.get("/process/updatebyid", who, procws=process, status="RUNNING", perc="10")
        assert r.status_code == 200 and r.json["status"] == "RUNNING", r.text
    assert server.get("/process/byid", who, procws=scene["sibling"]).status_code == 200


def test_nothing_else_of_the_account(server: Server, alice: Person, scene: dict[str, Any]) -> None:
    who = scene["run_session"]
    assert scene["other"] not in server.get("/ws/getws", who, workspace=scene["other"]).text
    assert server.put("/ws/share/add", who, workspace=scene["mine"], userId="bob@example.org").json["intValue"] == 403
    assert server.get("/ws/create", who, name="by-an-app").json is None
    assert len(server.get("/ws/byuser", alice).json) == 2
    assert "processObjId" not in server.get("/process/byid", who, procws=scene["foreign"]).json
    # (the launcher may take the queued record meanwhile and end it in ERROR: no such app; never DONE)
    server.get("/process/updatebyid", who, procws=scene["sibling"], status="DONE")
    assert server.services.processes.get(scene["sibling"])["status"] != "DONE"
    # The caller's own session still reaches everything, and its cached listing is not the run's.
    assert len(server.get("/ws/byuser", alice).json) == 2
    assert "processObjId" in server.get("/process/byid", alice, procws=scene["foreign"]).json


@pytest.mark.parametrize(("endpoint", "params"), [
    ("products.list", {"workspace": "other"}), ("files.download", {"workspace": "other"}),
    ("processors.run", {"workspace": "other"}), ("workflows.run", {"workspace": "other"}),
    ("files.copy_to_sftp", {"workspace": "mine"}), ("workspaces.delete", {"workspace": "mine"}),
    ("auth.logout", {}), ("admin.find_users", {}), ("processes.stop", {"procws": "sibling"}),
    ("processes.get", {"procws": "foreign"}), ("processors.add_log", {"processworkspace": "sibling"}),
])
def test_the_gate_refuses(server: Server, scene: dict[str, Any], endpoint: str, params: dict[str, str]) -> None:
    from wasdi_server.domains.processes import run_scope
    from wasdi_server.errors import Forbidden

    values = {name: scene.get(value, value) for name, value in params.items()}
    with pytest.raises(Forbidden, match="only its own workspace"):
        run_scope.check(server.services, endpoint, values, None, {"workspaceId": scene["mine"],
                                                                   "processId": scene["run"]})


def test_places_that_do_not_enforce_a_scope_refuse_a_run_session(server: Server, scene: dict[str, Any]) -> None:
    sessions = server.services.sessions
    assert sessions.resolve(scene["run_session"].token) is None
    found = sessions.resolve_scoped(scene["run_session"].token)
    assert found is not None and found[1] == {"workspaceId": scene["mine"], "processId": scene["run"]}


def test_an_app_the_operator_allows_gets_its_callers_whole_account() -> None:
    from wasdi_server.domains.processes.run_scope import ACCOUNT, WORKSPACE, scope_name

    assert scope_name(["mosaicker"], "mosaicker") == ACCOUNT
    assert scope_name(["mosaicker"], "other") == WORKSPACE
