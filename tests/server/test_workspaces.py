"""/ws through the real app: lifecycle, listing, editing, deletion, sharing and their failure styles."""

from __future__ import annotations

import pytest
from tests.conftest import Person, Server


def create(server: Server, who: Person, name: str | None = None, **params) -> str:
    if name is not None:
        params["name"] = name
    r = server.get("/ws/create", who, **params)
    assert r.status_code == 200, r.text
    return r.json["stringValue"]


def share(server: Server, owner: Person, ws: str, user: str, rights: str | None = None) -> dict:
    params = {"workspace": ws, "userId": user}
    if rights is not None:
        params["rights"] = rights
    r = server.put("/ws/share/add", owner, **params)
    assert r.status_code == 200
    return r.json


# -- create -------------------------------------------------------------------------------------------
def test_create_defaults_and_renames_on_collision(server: Server, alice: Person) -> None:
    first = create(server, alice)
    second = create(server, alice)
    named = create(server, alice, "Floods")
    again = create(server, alice, "Floods")
    names = {w["workspaceId"]: w["workspaceName"] for w in server.get("/ws/byuser", alice).json}
    assert names == {first: "Untitled Workspace", second: "Untitled Workspace(1)", named: "Floods",
                     again: "Floods(1)"}
    folder = server.settings.files_root / "alice@example.org" / named
    assert folder.is_dir()


def test_names_are_unique_per_owner_only(server: Server, alice: Person, bob: Person) -> None:
    create(server, alice, "Shared name")
    ws = create(server, bob, "Shared name")
    assert server.get("/ws/wsnamebyid", bob, workspace=ws).text == "Shared name"


def test_create_on_the_local_node_and_unknown_node(server: Server, alice: Person) -> None:
    ws = create(server, alice, "n", node="wasdi")
    assert server.get("/ws/getws", alice, workspace=ws).json["nodeCode"] == "wasdi"
    r = server.get("/ws/create", alice, name="x", node="nowhere")
    assert r.status_code == 200 and r.text == "null"


def test_create_uses_the_users_default_node_when_usable(server: Server, alice: Person) -> None:
    server.services.store.collection("nodes").insert({"nodeCode": "node2", "apiUrl": "http://node2:9000/rest",
                                                      "active": True, "shared": False, "cloudProvider": "ovh"})
    server.services.users.users.update("alice@example.org", {"defaultNode": "node2"})
    server.services.sessions.forget_user("alice@example.org")
    ws = create(server, alice, "remote")
    body = server.get("/ws/getws", alice, workspace=ws).json
    assert body["nodeCode"] == "node2" and body["apiUrl"] == "http://node2:9000/rest"
    assert body["cloudProvider"] == "ovh"


def test_create_on_a_private_node_needs_its_sharing(server: Server, alice: Person, bob: Person,
                                                    admin: Person) -> None:
    server.services.store.collection("nodes").insert({"nodeCode": "private", "apiUrl": "http://p/rest",
                                                      "active": True, "shared": False})
    assert server.get("/ws/create", alice, name="x", node="private").text == "null"
    assert server.get("/ws/create", admin, name="x", node="private").json["stringValue"]
    shared = server.put("/node/share/add", admin, node="private", userId=alice.user_id)
    assert shared.json["boolValue"] is True
    assert server.get("/ws/create", alice, name="x", node="private").json["stringValue"]
    assert server.get("/ws/create", bob, name="x", node="private").text == "null"


def test_create_prefers_the_best_scored_node(server: Server, alice: Person) -> None:
    import time

    nodes = server.services.store.collection("nodes")
    metrics = server.services.store.collection("metrics")
    for code, free in (("small", 10), ("big", 1000)):
        nodes.insert({"nodeCode": code, "apiUrl": f"http://{code}/rest", "active": True, "shared": True})
        metrics.insert({"node": code, "receivedAt": time.time(), "disks": [{"absoluteAvailable": free}]})
    nodes.insert({"nodeCode": "stale", "apiUrl": "http://stale/rest", "active": True, "shared": True})
    metrics.insert({"node": "stale", "receivedAt": time.time() - 3600, "disks": [{"absoluteAvailable": 10**9}]})
    ws = create(server, alice, "scored")
    assert server.get("/ws/getws", alice, workspace=ws).json["nodeCode"] == "big"


@pytest.mark.parametrize("name", ["a/b", "a\\b", "..", "x" * 300, "bad\x01name"])
def test_create_with_a_bad_name_is_null(server: Server, alice: Person, name: str) -> None:
    r = server.get("/ws/create", alice, name=name)
    assert r.status_code == 200 and r.text == "null"
    assert server.get("/ws/byuser", alice).json == []


def test_create_without_session_is_null(server: Server) -> None:
    r = server.get("/ws/create", name="x")
    assert r.status_code == 200 and r.text == "null"


def test_huge_parameter_is_refused_cleanly(server: Server, alice: Person) -> None:
    r = server.get("/ws/create", alice, name="y" * 20000)
    assert r.status_code == 200 and r.text == "null"


# -- list and get ---------------------------------------------------------------------------------------
def test_byuser_lists_owned_and_shared(server: Server, alice: Person, bob: Person, carol: Person) -> None:
    mine = create(server, alice, "mine")
    read = create(server, bob, "bob-read")
    write = create(server, bob, "bob-write")
    create(server, carol, "not-shared")
    share(server, bob, read, alice.user_id)
    share(server, bob, write, alice.user_id, "write")
    listed = {w["workspaceId"]: w for w in server.get("/ws/byuser", alice).json}
    assert set(listed) == {mine, read, write}
    assert listed[mine]["readOnly"] is False and listed[mine]["ownerUserId"] == alice.user_id
    assert listed[read]["readOnly"] is True and listed[read]["ownerUserId"] == bob.user_id
    assert listed[write]["readOnly"] is False
    assert listed[read]["sharedUsers"] == [alice.user_id]
    for item in listed.values():
        assert set(item) >= {"workspaceId", "workspaceName", "ownerUserId", "sharedUsers", "activeNode",
                             "nodeCode", "creationDate", "storageSize", "isPublic", "readOnly"}
        assert isinstance(item["creationDate"], int)


def test_byuser_invalid_session_is_empty_list(server: Server) -> None:
    r = server.get("/ws/byuser")
    assert r.status_code == 200 and r.json == []


def test_getws_fields_and_api_url(server: Server, alice: Person) -> None:
    ws = create(server, alice, "editor")
    folder = server.settings.files_root / alice.user_id / ws
    (folder / "a.tif").write_bytes(b"0" * 2048)
    body = server.get("/ws/getws", alice, workspace=ws).json
    assert body["workspaceId"] == ws and body["name"] == "editor" and body["userId"] == alice.user_id
    assert body["apiUrl"] == "http://falconframework.org"
    assert body["storageSize"] == "2.0 KB" and body["processesCount"] == 0 and body["readOnly"] is False
    assert body["activeNode"] is True and body["isPublic"] is False and body["cloudProvider"] == "local"
    legacy = server.http.simulate_get("/wasdiwebserver/rest/ws/getws", params={"workspace": ws},
                                      headers=alice.headers).json
    assert legacy["apiUrl"] == "http://falconframework.org/wasdiwebserver/rest"


def test_getws_public_url_setting(tmp_path) -> None:
    s = Server(tmp_path / "d", public_url="https://eo.example.org/api/")
    try:
        alice = s.add_user("alice@example.org")
        ws = create(s, alice, "x")
        assert s.get("/ws/getws", alice, workspace=ws).json["apiUrl"] == "https://eo.example.org/api"
    finally:
        s.close()


def test_getws_failures(server: Server, alice: Person, bob: Person) -> None:
    ws = create(server, alice, "private")
    assert server.get("/ws/getws", workspace=ws).text == "null"
    assert server.get("/ws/getws", bob, workspace=ws).json == {}
    assert server.get("/ws/getws", alice, workspace="missing").json == {}
    assert server.get("/ws/getws", alice).json == {}
    assert server.get("/ws/getws", alice, workspace="../../etc").json == {}


def test_reader_sees_read_only_editor(server: Server, alice: Person, bob: Person) -> None:
    ws = create(server, alice, "shared")
    share(server, alice, ws, bob.user_id)
    body = server.get("/ws/getws", bob, workspace=ws).json
    assert body["readOnly"] is True and body["sharedUsers"] == [bob.user_id]


# -- update -------------------------------------------------------------------------------------------
def update(server: Server, who: Person | None, body: dict):
    return server.post("/ws/update", who, json=body)


def test_update_renames_with_collision_rule(server: Server, alice: Person) -> None:
    a = create(server, alice, "A")
    b = create(server, alice, "B")
    r = update(server, alice, {"workspaceId": b, "name": "A"})
    assert r.status_code == 200 and r.json["name"] == "A(1)"
    same = update(server, alice, {"workspaceId": a, "name": "A"})
    assert same.json["name"] == "A"
    public = update(server, alice, {"workspaceId": a, "public": True})
    assert public.json["isPublic"] is True and public.json["name"] == "A"


def test_update_permissions(server: Server, alice: Person, bob: Person, carol: Person, admin: Person) -> None:
    ws = create(server, alice, "orig")
    share(server, alice, ws, bob.user_id, "write")
    share(server, alice, ws, carol.user_id, "read")
    assert update(server, bob, {"workspaceId": ws, "name": "by-writer"}).json["name"] == "by-writer"
    assert update(server, carol, {"workspaceId": ws, "name": "by-reader"}).text == "null"
    assert update(server, admin, {"workspaceId": ws, "name": "by-admin"}).json["name"] == "by-admin"
    stranger = server.add_user("eve@example.org")
    assert update(server, stranger, {"workspaceId": ws, "name": "by-eve"}).text == "null"
    assert server.get("/ws/wsnamebyid", alice, workspace=ws).text == "by-admin"


@pytest.mark.parametrize("body", [{}, {"name": "x"}, {"workspaceId": "missing", "name": "x"}])
def test_update_bad_input_is_null(server: Server, alice: Person, body: dict) -> None:
    assert update(server, alice, body).text == "null"


def test_update_bad_name_and_no_session(server: Server, alice: Person) -> None:
    ws = create(server, alice, "n")
    assert update(server, alice, {"workspaceId": ws, "name": "../x"}).text == "null"
    assert update(server, None, {"workspaceId": ws, "name": "x"}).text == "null"
    assert server.post("/ws/update", alice, body=b"{broken", content_type="application/json").text == "null"


# -- delete -------------------------------------------------------------------------------------------
def test_owner_delete_removes_everything(server: Server, alice: Person, bob: Person) -> None:
    ws = create(server, alice, "doomed")
    share(server, alice, ws, bob.user_id)
    folder = server.settings.files_root / alice.user_id / ws
    (folder / "product.tif").write_bytes(b"data")
    procs = server.services.store.collection("process_workspaces")
    procs.insert({"processObjId": "p1", "workspaceId": ws, "status": "DONE"})
    r = server.delete("/ws/delete", alice, workspace=ws)
    assert r.status_code == 200
    assert not folder.exists()
    assert server.services.store.collection("workspaces").get(ws) is None
    assert procs.count(workspaceId=ws) == 0
    assert server.services.store.collection("sharings").count(resourceId=ws) == 0
    assert server.get("/ws/byuser", bob).json == []


def test_delete_can_keep_files(server: Server, alice: Person) -> None:
    ws = create(server, alice, "keep")
    folder = server.settings.files_root / alice.user_id / ws
    (folder / "product.tif").write_bytes(b"data")
    assert server.delete("/ws/delete", alice, workspace=ws, deletefile="False").status_code == 200
    assert (folder / "product.tif").exists()


def test_non_owner_delete_only_leaves(server: Server, alice: Person, bob: Person) -> None:
    ws = create(server, alice, "kept")
    share(server, alice, ws, bob.user_id, "write")
    assert server.delete("/ws/delete", bob, workspace=ws).status_code == 200
    assert [w["workspaceId"] for w in server.get("/ws/byuser", alice).json] == [ws]
    assert server.get("/ws/byuser", bob).json == []


def test_delete_statuses(server: Server, alice: Person, bob: Person, admin: Person) -> None:
    ws = create(server, alice, "x")
    assert server.delete("/ws/delete", workspace=ws).status_code == 401
    assert server.delete("/ws/delete", alice).status_code == 400
    assert server.delete("/ws/delete", alice, workspace="missing").status_code == 400
    assert server.delete("/ws/delete", alice, workspace="../etc").status_code == 400
    assert server.delete("/ws/delete", alice, workspace=ws, deletefile="maybe").status_code == 400
    r = server.delete("/ws/delete", bob, workspace=ws)
    assert r.status_code == 403 and "message" in r.json
    assert server.delete("/ws/delete", admin, workspace=ws).status_code == 200
    assert server.services.store.collection("workspaces").get(ws) is None


# -- sharing ------------------------------------------------------------------------------------------
def test_share_add_rules(server: Server, alice: Person, bob: Person, carol: Person) -> None:
    ws = create(server, alice, "s")
    assert share(server, alice, ws, bob.user_id) == {"intValue": 200, "stringValue": "Done", "boolValue": True}
    assert share(server, alice, ws, bob.user_id, "write")["stringValue"] == "Already Shared."
    sharings = server.get("/ws/share/byworkspace", alice, workspace=ws).json
    assert sharings == [{"workspaceId": ws, "userId": bob.user_id, "ownerId": alice.user_id, "permissions": "read"}]
    assert share(server, alice, ws, carol.user_id, "nonsense")["boolValue"] is True
    rights = {s["userId"]: s["permissions"] for s in server.get("/ws/share/byworkspace", alice, workspace=ws).json}
    assert rights == {bob.user_id: "read", carol.user_id: "read"}
    mail = [m for m in server.mails() if m["To"] == bob.user_id]
    assert mail and "shared" in mail[-1]["Subject"]


@pytest.mark.parametrize("target,code,message", [
    ("alice@example.org", 400, "MSG_ERROR_SHARING_WITH_ONESELF"),
    ("ghost@example.org", 400, "MSG_ERROR_SHARING_WITH_NON_EXISTENT_USER"),
])
def test_share_add_refusals(server: Server, alice: Person, target: str, code: int, message: str) -> None:
    ws = create(server, alice, "s")
    body = share(server, alice, ws, target)
    assert body == {"boolValue": False, "intValue": code, "stringValue": message}


def test_share_with_owner_and_by_readers(server: Server, alice: Person, bob: Person, carol: Person) -> None:
    ws = create(server, alice, "s")
    share(server, alice, ws, bob.user_id)
    # a reader is refused before any rule that would tell who the owner is
    assert share(server, bob, ws, alice.user_id)["stringValue"] == "MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT"
    reader_try = share(server, bob, ws, carol.user_id)
    assert reader_try["boolValue"] is False and reader_try["intValue"] == 403
    share(server, alice, ws, carol.user_id, "write")
    dave = server.add_user("dave@example.org")
    assert share(server, carol, ws, dave.user_id)["stringValue"] == "Done"
    assert share(server, carol, ws, alice.user_id)["stringValue"] == "MSG_ERROR_SHARING_WITH_OWNER"


def test_admin_may_share_with_themselves(server: Server, alice: Person, admin: Person) -> None:
    ws = create(server, alice, "s")
    assert share(server, admin, ws, admin.user_id)["stringValue"] == "Done"


def test_share_add_bad_workspace_and_session(server: Server, alice: Person, bob: Person) -> None:
    assert share(server, alice, "missing", bob.user_id)["intValue"] == 400
    r = server.put("/ws/share/add", None, workspace="x", userId=bob.user_id)
    assert r.status_code == 200 and r.json["intValue"] == 401 and r.json["boolValue"] is False
    r = server.put("/ws/share/add", alice, userId=bob.user_id)
    assert r.json["intValue"] == 400


def test_share_list_failures_are_empty(server: Server, alice: Person, bob: Person) -> None:
    ws = create(server, alice, "s")
    share(server, alice, ws, bob.user_id)
    stranger = server.add_user("eve@example.org")
    assert server.get("/ws/share/byworkspace", stranger, workspace=ws).json == []
    assert server.get("/ws/share/byworkspace", workspace=ws).json == []
    assert server.get("/ws/share/byworkspace", alice, workspace="nope").json == []
    assert len(server.get("/ws/share/byworkspace", bob, workspace=ws).json) == 1


def test_share_delete_rules(server: Server, alice: Person, bob: Person, carol: Person) -> None:
    ws = create(server, alice, "s")
    share(server, alice, ws, bob.user_id)
    share(server, alice, ws, carol.user_id)
    # a reader cannot remove someone else
    r = server.delete("/ws/share/delete", bob, workspace=ws, userId=carol.user_id)
    assert r.json["boolValue"] is False and r.json["intValue"] == 403
    # but may remove their own sharing
    assert server.delete("/ws/share/delete", bob, workspace=ws, userId=bob.user_id).json["boolValue"] is True
    # the owner removes others
    r = server.delete("/ws/share/delete", alice, workspace=ws, userId=carol.user_id)
    assert r.json == {"boolValue": True, "intValue": 200, "stringValue": "Done"}
    assert server.get("/ws/share/byworkspace", alice, workspace=ws).json == []
    # nothing left to remove
    assert server.delete("/ws/share/delete", alice, workspace=ws, userId=carol.user_id).json["intValue"] == 400
    assert server.delete("/ws/share/delete", None, workspace=ws, userId=carol.user_id).json["intValue"] == 401


def test_writer_removes_other_sharings(server: Server, alice: Person, bob: Person, carol: Person) -> None:
    ws = create(server, alice, "s")
    share(server, alice, ws, bob.user_id, "write")
    share(server, alice, ws, carol.user_id)
    assert server.delete("/ws/share/delete", bob, workspace=ws, userId=carol.user_id).json["boolValue"] is True


# -- wsnamebyid -----------------------------------------------------------------------------------------
def test_wsnamebyid(server: Server, alice: Person, bob: Person) -> None:
    ws = create(server, alice, "Named")
    r = server.get("/ws/wsnamebyid", alice, workspace=ws)
    assert r.status_code == 200 and r.text == "Named" and r.headers["content-type"].startswith("text/plain")
    assert server.get("/ws/wsnamebyid", workspace=ws).status_code == 401
    assert server.get("/ws/wsnamebyid", alice).status_code == 400
    assert server.get("/ws/wsnamebyid", alice, workspace="missing").status_code == 400
    assert server.get("/ws/wsnamebyid", bob, workspace=ws).status_code == 403


def test_public_workspace_is_readable_by_anyone(server: Server, alice: Person, bob: Person) -> None:
    ws = create(server, alice, "open")
    update(server, alice, {"workspaceId": ws, "isPublic": True})
    assert server.get("/ws/wsnamebyid", bob, workspace=ws).text == "open"
    assert server.get("/ws/getws", bob, workspace=ws).json["readOnly"] is True
