"""/admin through the real app: every endpoint's statuses in its style (A: status + ErrorResponse), the
admin/non-admin matrix, lookups, permissions delegated to each type's own rules, users, metrics and
nodesByScore, queue cleaning and the staleness rule, and deleting a user with nothing of theirs left."""

from __future__ import annotations

import time
from typing import Any

import pytest
from tests.conftest import Person, Server
from tests.server.user_estate import build_estate, leftovers, owned_keys

from wasdi_sdk.catalog import BY_NAME
from wasdi_server.domains.accounts.identity import User

ADMIN_ONLY = [ep for ep in BY_NAME.values() if ep.group == "admin" and ep.admin]
SESSION = [ep for ep in BY_NAME.values() if ep.group == "admin" and ep.auth.value != "public"]
REQUIRED = {"partialName": "abcd", "resourceType": "WORKSPACE", "resourceId": "x", "userId": "bob@example.org"}


def call(server: Server, method: str, path: str, who: Person | None, *, params: dict[str, Any] | None = None,
         json: Any = None) -> Any:
    headers = who.headers if who else {}
    return server.http.simulate_request(method, path, params=params, headers=headers, json=json)


def entry(node: str = "n1", free: int = 500, used_percent: float = 10.0) -> dict[str, Any]:
    size = {"unit": "bytes", "value": free}
    return {"node": node, "timestamp": {"seconds": time.time(), "millis": time.time() * 1000},
            "cpu": {"count": {"physical": 2, "logical": 4, "total": 4}},
            "disks": [{"mountpoint": "/", "absolute": {"available": size, "total": {"unit": "bytes", "value": 1000},
                                                      "used": {"unit": "bytes", "value": 1000 - free}},
                       "percentage": {"available": {"value": 100 - used_percent}, "used": {"value": used_percent}}}],
            "memory": {"absolute": {"available": {"unit": "bytes", "value": 64 * 2**30}}},
            "licenses": [{"name": "IDL", "status": True}, {"name": "matlab", "status": False}]}


def body_for(ep: Any) -> Any:
    if ep.name == "admin.push_metrics":
        return entry()
    if ep.name == "admin.update_user":
        return {"userId": "bob@example.org", "name": "Bob"}
    return None


# -- the matrix --------------------------------------------------------------------------------------
@pytest.mark.parametrize("ep", SESSION, ids=lambda ep: ep.name)
def test_no_session_is_401(server: Server, ep: Any) -> None:
    params = {p.name: REQUIRED.get(p.name, "abcd") for p in ep.query if p.required}
    result = call(server, ep.method, ep.path, None, params=params, json=body_for(ep))
    assert result.status_code == 401
    assert result.json == {"message": "MSG_ERROR_INVALID_SESSION"}


@pytest.mark.parametrize("ep", ADMIN_ONLY, ids=lambda ep: ep.name)
def test_non_admin_is_403(server: Server, bob: Person, ep: Any) -> None:
    params = {p.name: REQUIRED.get(p.name, "abcd") for p in ep.query if p.required}
    result = call(server, ep.method, ep.path, bob, params=params, json=body_for(ep))
    assert result.status_code == 403
    assert result.json == {"message": "MSG_ERROR_NO_ACCESS_RIGHTS_ADMIN_DASHBOARD"}


def test_resource_types_are_for_admins_and_complete(server: Server, admin: Person, alice: Person) -> None:
    result = server.get("/admin/resourcePermissions/types", admin)
    assert result.status_code == 200
    assert result.json == ["ORGANIZATION", "SUBSCRIPTION", "WORKSPACE", "STYLE", "WORKFLOW", "PROCESSOR",
                           "PARAMETER", "NODE", "VOLUME", "MISSION"]
    assert server.get("/admin/resourcePermissions/types").status_code == 401
    assert server.get("/admin/resourcePermissions/types", alice).status_code == 403


# -- lookups ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["/admin/usersByPartialName", "/admin/workspacesByPartialName",
                                  "/admin/processorsByPartialName"])
@pytest.mark.parametrize("partial", [None, "", "ab", "  a  "])
def test_partial_name_needs_three_characters(server: Server, admin: Person, path: str, partial: str | None) -> None:
    params = {} if partial is None else {"partialName": partial}
    result = call(server, "GET", path, admin, params=params)
    assert result.status_code == 400
    assert "message" in result.json


def test_users_by_partial_name(server: Server, admin: Person, alice: Person, bob: Person) -> None:
    result = server.get("/admin/usersByPartialName", admin, partialName="ALIC")
    assert result.status_code == 200
    assert [u["userId"] for u in result.json] == ["alice@example.org"]
    assert result.json[0]["role"] == "User"
    assert "passwordHash" not in str(result.json)
    roles = {u["userId"]: u["role"] for u in server.get("/admin/usersByPartialName", admin, partialName="example").json}
    assert roles["root@example.org"] == "Admin"
    assert server.get("/admin/usersByPartialName", admin, partialName="nobody-here").json == []


def test_workspaces_by_partial_name(server: Server, admin: Person, alice: Person, bob: Person) -> None:
    services = server.services
    services.workspaces.create(services.users.active_user(alice.user_id), "Flood Mapping")
    services.workspaces.create(services.users.active_user(bob.user_id), "flood risk")
    services.workspaces.create(services.users.active_user(bob.user_id), "fires")
    result = server.get("/admin/workspacesByPartialName", admin, partialName="FLOOD")
    assert result.status_code == 200
    assert sorted((w["workspaceName"], w["ownerUserId"]) for w in result.json) == [
        ("Flood Mapping", "alice@example.org"), ("flood risk", "bob@example.org")]


def test_processors_by_partial_name(server: Server, admin: Person) -> None:
    server.services.store.collection("processors").insert(
        {"processorId": "p1", "name": "edgedetector", "userId": "alice@example.org", "isPublic": 1, "version": "1"})
    result = server.get("/admin/processorsByPartialName", admin, partialName="edge")
    assert result.status_code == 200
    assert result.json[0]["processorId"] == "p1" and result.json[0]["processorName"] == "edgedetector"
    assert result.json[0]["isPublic"] == 1


def test_resource_by_partial_name_pages(server: Server, admin: Person, alice: Person) -> None:
    user = server.services.users.active_user(alice.user_id)
    for i in range(5):
        server.services.workspaces.create(user, f"lake {i}")
    first = server.get("/admin/resourceByPartialName", admin, resourceType="workspace", partialName="lake",
                       offset=1, limit=2)
    assert first.status_code == 200
    assert [r["resourceName"] for r in first.json] == ["lake 1", "lake 2"]
    assert first.json[0]["resourceType"] == "WORKSPACE" and first.json[0]["userId"] == alice.user_id
    default = server.get("/admin/resourceByPartialName", admin, resourceType="WORKSPACE", partialName="lake")
    assert len(default.json) == 5
    org = server.services.organizations.create(user, {"name": "Lakes Inc"})
    orgs = server.get("/admin/resourceByPartialName", admin, resourceType="ORGANIZATION", partialName="lakes")
    assert [(r["resourceId"], r["resourceName"]) for r in orgs.json] == [(org, "Lakes Inc")]
    # WORKFLOW is searchable even before the workflows service is wired (nothing found, not an error)
    assert server.get("/admin/resourceByPartialName", admin, resourceType="WORKFLOW", partialName="lake").json == []


@pytest.mark.parametrize("params", [
    {"partialName": "lake"},
    {"resourceType": "GALAXY", "partialName": "lake"},
    {"resourceType": "NODE", "partialName": "lake"},
    {"resourceType": "WORKSPACE", "partialName": "la"},
    {"resourceType": "WORKSPACE", "partialName": "lake", "offset": "-1"},
    {"resourceType": "WORKSPACE", "partialName": "lake", "limit": "x"},
])
def test_resource_by_partial_name_bad_input_is_400(server: Server, admin: Person, params: dict[str, str]) -> None:
    result = call(server, "GET", "/admin/resourceByPartialName", admin, params=params)
    assert result.status_code == 400
    assert result.json["message"]


# -- permissions ----------------------------------------------------------------------------------------
@pytest.fixture
def alice_ws(server: Server, alice: Person) -> str:
    user = server.services.users.active_user(alice.user_id)
    return str(server.services.workspaces.create(user, "shared one")["workspaceId"])


def test_permissions_need_a_criterion(server: Server, admin: Person) -> None:
    result = server.get("/admin/resourcePermissions", admin)
    assert result.status_code == 400
    assert result.json == {"message": "MSG_ERROR_INSUFFICIENT_SEARCH_CRITERIA"}


def test_non_admins_may_only_query_missions(server: Server, bob: Person, alice_ws: str) -> None:
    assert server.get("/admin/resourcePermissions", bob, resourceType="WORKSPACE").status_code == 403
    assert server.get("/admin/resourcePermissions", bob, userId=bob.user_id).status_code == 403
    missions = server.get("/admin/resourcePermissions", bob, resourceType="MISSION")
    assert missions.status_code == 200 and missions.json == []


def test_admin_shares_lists_and_removes_through_the_types_rules(server: Server, admin: Person, alice: Person,
                                                                bob: Person, alice_ws: str) -> None:
    added = call(server, "POST", "/admin/resourcePermissions", admin,
                 params={"resourceType": "WORKSPACE", "resourceId": alice_ws, "userId": bob.user_id,
                         "rights": "WRITE"})
    assert added.status_code == 200
    listed = server.get("/admin/resourcePermissions", admin, resourceId=alice_ws).json
    assert [(p["userId"], p["ownerId"], p["permissions"], p["createdBy"]) for p in listed] == [
        (bob.user_id, alice.user_id, "write", admin.user_id)]
    # the workspace's own rules now give bob write access
    assert server.get("/ws/getws", bob, workspace=alice_ws).json["readOnly"] is False
    by_user = server.get("/admin/resourcePermissions", admin, userId=bob.user_id, resourceType="workspace").json
    assert [p["resourceId"] for p in by_user] == [alice_ws]
    removed = call(server, "DELETE", "/admin/resourcePermissions", admin,
                   params={"resourceType": "WORKSPACE", "resourceId": alice_ws, "userId": bob.user_id})
    assert removed.status_code == 200
    assert server.get("/admin/resourcePermissions", admin, resourceId=alice_ws).json == []
    assert "workspaceId" not in server.get("/ws/getws", bob, workspace=alice_ws).json


def test_invalid_rights_mean_read(server: Server, admin: Person, bob: Person, alice_ws: str) -> None:
    call(server, "POST", "/admin/resourcePermissions", admin,
         params={"resourceType": "WORKSPACE", "resourceId": alice_ws, "userId": bob.user_id, "rights": "owner"})
    assert server.get("/admin/resourcePermissions", admin, resourceId=alice_ws).json[0]["permissions"] == "read"


@pytest.mark.parametrize("params", [
    {"resourceType": "GALAXY", "resourceId": "x", "userId": "bob@example.org"},
    {"resourceType": "WORKSPACE", "resourceId": "no-such-workspace", "userId": "bob@example.org"},
    {"resourceType": "WORKSPACE", "resourceId": "ALICE_WS", "userId": "ghost@example.org"},
    {"resourceType": "WORKSPACE", "resourceId": "ALICE_WS", "userId": "alice@example.org"},
    {"resourceType": "PROCESSOR", "resourceId": "p1", "userId": "bob@example.org"},
    {"resourceType": "VOLUME", "resourceId": "v1", "userId": "bob@example.org"},
    {"resourceType": "WORKSPACE", "userId": "bob@example.org"},
])
@pytest.mark.parametrize("method", ["POST", "DELETE"])
def test_permission_changes_bad_input_is_400(server: Server, admin: Person, bob: Person, alice_ws: str,
                                             params: dict[str, str], method: str) -> None:
    params = {k: (alice_ws if v == "ALICE_WS" else v) for k, v in params.items()}
    result = call(server, method, "/admin/resourcePermissions", admin, params=params)
    assert result.status_code == 400
    assert result.json["message"]


ROLES = ("owner", "writer", "reader", "stranger", "admin")


@pytest.mark.parametrize("role", ROLES)
def test_permission_matrix_on_add(server: Server, alice: Person, writer: Person, reader: Person, stranger: Person,
                                  admin: Person, carol: Person, alice_ws: str, role: str) -> None:
    services = server.services
    owner = services.users.active_user(alice.user_id)
    services.workspaces.share(owner, alice_ws, writer.user_id, "write")
    services.workspaces.share(owner, alice_ws, reader.user_id, "read")
    who = {"owner": alice, "writer": writer, "reader": reader, "stranger": stranger, "admin": admin}[role]
    result = call(server, "POST", "/admin/resourcePermissions", who,
                  params={"resourceType": "WORKSPACE", "resourceId": alice_ws, "userId": carol.user_id})
    expected = 200 if role == "admin" else 403  # owners share through /ws/share/add
    assert result.status_code == expected
    shared = services.sharing.sharings.get(services.sharing.key("workspace", alice_ws, carol.user_id))
    assert (shared is not None) == (expected == 200)


def test_style_share_keeps_its_repeat_rule(server: Server, admin: Person, alice: Person, bob: Person) -> None:
    from tests.server.user_estate import SLD

    services = server.services
    style = services.styles.create(services.users.active_user(alice.user_id), "ramp_a", "", False,
                                   services.styles.write_staged(SLD))
    params = {"resourceType": "STYLE", "resourceId": style["styleId"], "userId": bob.user_id}
    assert call(server, "POST", "/admin/resourcePermissions", admin, params=params).status_code == 200
    again = call(server, "POST", "/admin/resourcePermissions", admin, params=params)
    assert again.status_code == 400 and again.json == {"message": "Already shared"}


# -- metrics and node scores ----------------------------------------------------------------------------
def test_push_and_read_metrics(server: Server, admin: Person) -> None:
    result = server.http.simulate_put("/admin/metrics", headers=admin.headers, json=entry("n1"))
    assert result.status_code == 200
    assert result.json == {"message": "MSG_SUCCESS_METRICS_ENTRY_INSERT"}
    latest = server.get("/admin/metrics/latest", admin, nodeCode="n1").json
    assert latest["node"] == "n1"
    assert latest["disks"][0]["absoluteAvailable"] == 500 and latest["disks"][0]["percentageUsed"] == 10.0
    assert latest["licenses"] == [{"name": "idl", "status": True}, {"name": "matlab", "status": False}]
    assert "receivedAt" not in latest
    assert server.get("/admin/metrics/latest", admin).json["node"] in ("n1", server.services.settings.node_code)
    assert server.get("/admin/metrics/latest", admin, nodeCode="unknown").json is None


@pytest.mark.parametrize("body", [{}, {"node": ""}, {"node": "../x"}, {"node": "n1", "disks": "full"},
                                  {"node": "n1", "disks": [1, 2]}, {"node": "n1", "cpu": [1]},
                                  {"node": "n1", "licenses": {"a": 1}}, [1, 2]])
def test_bad_metrics_are_400(server: Server, admin: Person, body: Any) -> None:
    result = server.http.simulate_put("/admin/metrics", headers=admin.headers, json=body)
    assert result.status_code == 400
    assert result.json["message"]


def test_this_node_records_its_own_metrics(server: Server, admin: Person) -> None:
    server.services.metrics.record_local()
    own = server.get("/admin/metrics/latest", admin, nodeCode=server.services.settings.node_code).json
    assert own["cpu"]["count"]["logical"] >= 1
    assert own["disks"][0]["absoluteTotal"] > 0 and own["memory"]["absoluteTotal"] > 0
    assert own["runningProcesses"] >= 1


def test_metrics_recorder_runs_and_stops(server: Server) -> None:
    from wasdi_server.domains.platform.metrics import MetricsRecorder

    metrics = server.services.store.collection("metrics")
    metrics.delete(server.services.settings.node_code)
    recorder = MetricsRecorder(server.services.metrics, 0.05)
    recorder.start()
    deadline = time.monotonic() + 10
    while metrics.get(server.services.settings.node_code) is None and time.monotonic() < deadline:
        time.sleep(0.02)
    recorder.stop()
    assert metrics.get(server.services.settings.node_code) is not None
    assert recorder._thread is None


def test_nodes_by_score_ranks_from_the_latest_metrics(server: Server, admin: Person) -> None:
    nodes = server.services.store.collection("nodes")
    for code in ("small", "big"):
        nodes.insert({"nodeCode": code, "apiUrl": f"http://{code}/rest", "active": True, "shared": True})
    server.services.store.collection("metrics").delete(server.services.settings.node_code)
    for code, free in (("small", 10), ("big", 900)):
        assert server.http.simulate_put("/admin/metrics", headers=admin.headers,
                                        json=entry(code, free)).status_code == 200
    ranked = server.get("/process/nodesByScore", admin).json
    assert [n["nodeCode"] for n in ranked] == ["big", "small"]
    assert ranked[0]["diskAbsoluteAvailable"] == 900 and ranked[0]["licenses"] == "idl"
    server.services.metrics.record_local()
    assert server.services.settings.node_code in [n["nodeCode"] for n in server.get("/process/nodesByScore",
                                                                                    admin).json]


# -- users ------------------------------------------------------------------------------------------------
def test_users_list_sorts_filters_and_pages(server: Server, admin: Person, alice: Person, bob: Person,
                                            carol: Person) -> None:
    rows = server.get("/admin/users/list", admin, partialName="example", sortedby="userId", order="desc").json
    assert [r["userId"] for r in rows] == ["root@example.org", "carol@example.org", "bob@example.org",
                                           "alice@example.org"]
    assert rows[0]["active"] is True and rows[0]["type"] in ("FREE", "NONE", "STANDARD", "PROFESSIONAL")
    page = server.get("/admin/users/list", admin, sortedby="name", offset=1, limit=2).json
    assert [r["name"] for r in page] == ["Bob", "Carol"]
    assert server.get("/admin/users/list", admin, partialName="car").json[0]["userId"] == "carol@example.org"
    odd = server.get("/admin/users/list", admin, offset=-5, limit=0, sortedby="height")
    assert odd.status_code == 200 and len(odd.json) == 4


def test_users_summary(server: Server, admin: Person, alice: Person, bob: Person) -> None:
    server.services.users.add("new@example.org", "password-123")
    summary = server.get("/admin/users/summary", admin).json
    assert summary["totalUsers"] == 4
    assert summary["noneUsers"] + summary["freeUsers"] + summary["standardUsers"] + summary["proUsers"] == 4
    assert summary["noneUsers"] >= 1 and summary["organizations"] == 0


def test_get_and_update_user(server: Server, admin: Person, bob: Person) -> None:
    full = server.get("/admin/users", admin, userId="BOB@example.org")
    assert full.status_code == 200
    assert full.json["userId"] == bob.user_id and full.json["role"] == "USER" and full.json["active"] is True
    assert full.json["registrationDate"].endswith(time.strftime("%Y", time.gmtime()))
    changed = server.http.simulate_put("/admin/users", headers=admin.headers, json={
        "userId": bob.user_id, "name": "Robert", "surname": "Builder", "role": "developer", "description": "ops",
        "link": "https://example.org", "publicNickName": "bobby", "defaultNode": server.services.settings.node_code,
        "registrationDate": "2020-01-02T03:04:05Z", "active": False, "type": "PROFESSIONAL"})
    assert changed.status_code == 200
    after = server.get("/admin/users", admin, userId=bob.user_id).json
    assert (after["name"], after["surname"], after["role"], after["publicNickName"]) == (
        "Robert", "Builder", "DEVELOPER", "bobby")
    assert after["registrationDate"] == "Thu Jan 02 03:04:05 UTC 2020"
    assert after["active"] is True  # not an admin-editable field
    assert server.get("/auth/checksession", bob).status_code == 200


@pytest.mark.parametrize("body", [
    None, {"name": "x"}, {"userId": "ghost@example.org", "name": "x"}, {"userId": "bob@example.org", "role": "god"},
    {"userId": "bob@example.org", "name": "  "}, {"userId": "bob@example.org", "defaultNode": "nowhere"},
    {"userId": "bob@example.org", "registrationDate": "yesterday"}, {"userId": "bob@example.org", "name": "x" * 5000},
])
def test_update_user_bad_input_is_400(server: Server, admin: Person, bob: Person, body: Any) -> None:
    result = server.http.simulate_put("/admin/users", headers=admin.headers, json=body)
    assert result.status_code == 400
    assert result.json["message"]


@pytest.mark.parametrize("user_id", [None, "", "ghost@example.org"])
def test_get_unknown_user_is_400(server: Server, admin: Person, user_id: str | None) -> None:
    params = {} if user_id is None else {"userId": user_id}
    assert call(server, "GET", "/admin/users", admin, params=params).status_code == 400
    assert call(server, "DELETE", "/admin/users", admin, params=params).status_code == 400


def test_an_admin_cannot_delete_themself(server: Server, admin: Person) -> None:
    result = server.delete("/admin/users", admin, userId=admin.user_id)
    assert result.status_code == 400
    assert server.services.users.get(admin.user_id) is not None


# -- deleting a user ----------------------------------------------------------------------------------------
def test_deleting_a_user_leaves_nothing_of_theirs(server: Server, admin: Person, alice: Person,
                                                  bob: Person) -> None:
    services = server.services
    kept = build_estate(services, alice.user_id, bob.user_id, "a")
    build_estate(services, bob.user_id, admin.user_id, "b")  # someone else's estate, to see it untouched
    data_dir = services.settings.data_dir
    bob_before = owned_keys(data_dir, bob.user_id)
    between = bob_before & owned_keys(data_dir, alice.user_id)  # sharings from one of them to the other
    assert between and leftovers(data_dir, alice.user_id)

    result = server.delete("/admin/users", admin, userId=alice.user_id)
    assert result.status_code == 200
    assert leftovers(data_dir, alice.user_id) == []
    assert services.users.get(alice.user_id) is None
    assert server.get("/auth/checksession", alice).json["userId"] == ""
    # bob's things are all there (the launcher may have moved his processes on), except the sharings
    # between him and alice
    assert owned_keys(data_dir, bob.user_id) == bob_before - between
    assert services.workspaces.workspaces.get(kept["workspace"]) is not None
    assert services.organizations.get(kept["organization"]) is not None
    assert services.apps.records.get(kept["app"]) is not None
    for collection in ("processors", "workflows", "processor_parameter_templates", "reviews"):
        assert services.store.collection(collection).find(userId=alice.user_id) == [], collection
    assert not any(services.settings.apps_root.glob("a-app*"))
    assert services.store.collection("intents").all() == []
    # a second delete of the same user is a clean 400 (unknown user), not a failure
    assert server.delete("/admin/users", admin, userId=alice.user_id).status_code == 400


def test_every_cleanup_is_idempotent(server: Server, alice: Person, bob: Person) -> None:
    services = server.services
    build_estate(services, alice.user_id, bob.user_id, "a")
    for _, cleanup in services.user_deletion.cleanups:
        cleanup(alice.user_id)
        cleanup(alice.user_id)
    assert [line for line in leftovers(services.settings.data_dir, alice.user_id)
            if not line.startswith("users:")] == []


def test_an_interrupted_deletion_is_finished_at_the_next_start(server: Server, alice: Person, bob: Person) -> None:
    services = server.services
    build_estate(services, alice.user_id, bob.user_id, "a")
    calls: list[str] = []

    def crash_once(user_id: str) -> None:
        calls.append(user_id)
        if len(calls) == 1:
            raise RuntimeError("power cut")

    services.user_deletion.cleanups.insert(3, ("crash", crash_once))
    with pytest.raises(RuntimeError):
        services.user_deletion.delete(alice.user_id)
    # the intent is recorded and the account already disabled: alice cannot log in meanwhile
    assert services.intents.is_pending("delete_user", alice.user_id)
    assert services.users.active_user(alice.user_id) is None
    assert services.intents.resume_pending() == 1
    assert leftovers(services.settings.data_dir, alice.user_id) == []
    assert not services.intents.is_pending("delete_user", alice.user_id)


# -- process queue cleaning ---------------------------------------------------------------------------------
def process(server: Server, owner: Person, status: str, *, changed_ago_s: float, **extra: Any) -> str:
    services = server.services
    user = services.users.active_user(owner.user_id)
    ws = services.workspaces.create(user, f"procs {status} {changed_ago_s}")
    record = services.processes.processes.insert({
        "processObjId": f"p-{status.lower()}-{int(changed_ago_s)}-{len(services.processes.processes.all())}",
        "workspaceId": ws["workspaceId"], "userId": owner.user_id, "productName": "x",
        "operationType": "STANDIN", "status": status, "progressPerc": 0, "nodeCode": services.settings.node_code,
        "operationTimestamp": (time.time() - changed_ago_s) * 1000,
        "lastStateChangeTimestamp": (time.time() - changed_ago_s) * 1000, "runningSince": None, **extra})
    return str(record["processObjId"])


@pytest.fixture
def quiet_launcher(server: Server) -> None:
    # The records below are placed by hand; the launcher must not pick them up meanwhile.
    server.services.launcher.stop()


def test_clean_queue_moves_created_to_error(server: Server, admin: Person, alice: Person,
                                           quiet_launcher: None) -> None:
    queued = process(server, alice, "CREATED", changed_ago_s=5)
    running = process(server, alice, "RUNNING", changed_ago_s=5)
    done = process(server, alice, "DONE", changed_ago_s=5)
    other_node = process(server, alice, "CREATED", changed_ago_s=5, nodeCode="elsewhere")
    answer = server.delete("/admin/cleanProcessesQueue", admin)
    assert answer.status_code == 200 and answer.headers["X-Wasdi-Closed-Count"] == "1" and not answer.content
    status = {pid: server.services.processes.get(pid)["status"] for pid in (queued, running, done, other_node)}
    assert status == {queued: "ERROR", running: "RUNNING", done: "DONE", other_node: "CREATED"}
    assert server.services.processes.get(queued)["operationEndTimestamp"]


def test_clean_old_processes_closes_stale_and_spares_live(server: Server, admin: Person, alice: Person,
                                                          quiet_launcher: None) -> None:
    services = server.services
    orphan = process(server, alice, "RUNNING", changed_ago_s=120)
    waiting_orphan = process(server, alice, "WAITING", changed_ago_s=120)
    just_started = process(server, alice, "RUNNING", changed_ago_s=1)
    live = process(server, alice, "RUNNING", changed_ago_s=120)
    stuck = process(server, alice, "READY", changed_ago_s=3 * 86400)
    created = process(server, alice, "CREATED", changed_ago_s=3 * 86400)
    alive = {live, stuck}
    services.process_cleaning.is_alive = lambda pid: pid in alive
    assert server.delete("/admin/cleanOldProcesses", admin).status_code == 200
    status = {pid: services.processes.get(pid)["status"]
              for pid in (orphan, waiting_orphan, just_started, live, stuck, created)}
    assert status == {orphan: "ERROR", waiting_orphan: "ERROR", just_started: "RUNNING", live: "RUNNING",
                      stuck: "ERROR", created: "CREATED"}
    assert services.processes.get(orphan)["payload"].startswith("The process was closed")


def test_admin_can_still_use_the_server_after_cleaning(server: Server, admin: Person) -> None:
    # the real launcher's worker check is wired in: nothing to clean is a plain 200
    assert server.delete("/admin/cleanOldProcesses", admin).status_code == 200
    assert server.delete("/admin/cleanProcessesQueue", admin).status_code == 200
    assert isinstance(server.services.process_cleaning.is_alive("none"), bool)


def test_user_from_doc_is_not_admin_by_accident() -> None:
    assert not User("x@example.org").is_admin


def test_nodes_by_score_skips_full_disks_and_puts_low_memory_last(server: Server, admin: Person) -> None:
    nodes = server.services.store.collection("nodes")
    server.services.store.collection("metrics").delete(server.services.settings.node_code)
    for code in ("full", "tight", "roomy"):
        nodes.insert({"nodeCode": code, "apiUrl": f"http://{code}/rest", "active": True, "shared": True})
    low_memory = {**entry("tight", 900), "memory": {"absolute": {"available": {"unit": "bytes", "value": 2**30}}}}
    for body in (entry("full", 999, used_percent=95.0), low_memory, entry("roomy", 100)):
        assert server.http.simulate_put("/admin/metrics", headers=admin.headers, json=body).status_code == 200
    assert [n["nodeCode"] for n in server.get("/process/nodesByScore", admin).json] == ["roomy", "tight"]
    for code in ("tight", "roomy"):
        server.services.store.collection("metrics").delete(code)
    assert [n["nodeCode"] for n in server.get("/process/nodesByScore", admin).json] == ["full"]


def test_the_web_clients_query_strings(server: Server, admin: Person, bob: Person, alice_ws: str) -> None:
    # The web client starts this query with "?&" and sends the criteria it has not got as empty values.
    added = server.http.simulate_post("/admin/resourcePermissions", headers=admin.headers,
                                      query_string=f"&resourceType=workspace&resourceId={alice_ws}"
                                                   f"&userId={bob.user_id}&rights=")
    assert added.status_code == 200
    found = server.http.simulate_get("/admin/resourcePermissions", headers=admin.headers,
                                     query_string=f"&resourceType=&resourceId={alice_ws}&userId=")
    assert [(p["userId"], p["permissions"]) for p in found.json] == [(bob.user_id, "read")]


@pytest.mark.parametrize("role", (*ROLES, "self"))
def test_permission_matrix_on_remove(server: Server, alice: Person, writer: Person, reader: Person,
                                     stranger: Person, admin: Person, carol: Person, alice_ws: str,
                                     role: str) -> None:
    services = server.services
    owner = services.users.active_user(alice.user_id)
    for person, rights in ((writer, "write"), (reader, "read"), (carol, "read")):
        services.workspaces.share(owner, alice_ws, person.user_id, rights)
    who = {"owner": alice, "writer": writer, "reader": reader, "stranger": stranger, "admin": admin,
           "self": carol}[role]
    result = call(server, "DELETE", "/admin/resourcePermissions", who,
                  params={"resourceType": "WORKSPACE", "resourceId": alice_ws, "userId": carol.user_id})
    expected = 200 if role == "admin" else 403  # owners and the user themself unshare through /ws/share/delete
    assert result.status_code == expected
    shared = services.sharing.sharings.get(services.sharing.key("workspace", alice_ws, carol.user_id))
    assert (shared is None) == (expected == 200)
