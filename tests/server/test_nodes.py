"""/node through the real app: visibility, admin-only CRUD with its 401 quirks, and sharing in style B."""

from __future__ import annotations

from typing import Any

import pytest
from tests.conftest import Person, Server

LOCAL = {"nodeCode": "wasdi", "cloudProvider": "local", "apiUrl": "http://falconframework.org"}


def insert_node(server: Server, code: str, *, active: bool = True, shared: bool = False, **fields: Any) -> None:
    server.services.store.collection("nodes").insert({"nodeCode": code, "apiUrl": f"http://{code}:9000/rest",
                                                      "cloudProvider": "ovh", "active": active, "shared": shared,
                                                      **fields})


def codes(server: Server, who: Person | None, **params: Any) -> list[str] | None:
    r = server.get("/node/allnodes", who, **params)
    assert r.status_code == 200, r.text
    return None if r.json is None else [n["nodeCode"] for n in r.json]


def post_node(server: Server, who: Person | None, body: Any) -> Any:
    return server.post("/node", who, json=body)


def put_node(server: Server, who: Person | None, body: Any) -> Any:
    return server.http.simulate_put("/node", json=body, headers=who.headers if who else None)


def share(server: Server, who: Person | None, node: str | None, user: str | None, rights: str | None = None) -> Any:
    params = {k: v for k, v in (("node", node), ("userId", user), ("rights", rights)) if v is not None}
    r = server.put("/node/share/add", who, **params)
    assert r.status_code == 200
    return r.json


def unshare(server: Server, who: Person | None, node: str | None, user: str | None) -> Any:
    params = {k: v for k, v in (("node", node), ("userId", user)) if v is not None}
    r = server.delete("/node/share/delete", who, **params)
    assert r.status_code == 200
    return r.json


def sharings(server: Server, who: Person | None, node: str) -> list[dict[str, Any]]:
    r = server.get("/node/share/bynode", who, node=node)
    assert r.status_code == 200
    return list(r.json)


@pytest.fixture
def nodes(server: Server) -> None:
    insert_node(server, "public", shared=True)
    insert_node(server, "private")
    insert_node(server, "gifted")
    insert_node(server, "asleep", active=False, shared=True)
    insert_node(server, "hidden", active=False)
    insert_node(server, "bare", shared=True, cloudProvider=None)


# -- allnodes -----------------------------------------------------------------------------------------
def test_allnodes_visibility(server: Server, nodes: None, alice: Person, bob: Person, admin: Person) -> None:
    assert share(server, admin, "gifted", alice.user_id)["boolValue"] is True
    assert codes(server, alice) == ["wasdi", "bare", "gifted", "public"]
    assert codes(server, bob) == ["wasdi", "bare", "public"]
    assert codes(server, admin) == ["wasdi", "bare", "gifted", "private", "public"]
    assert codes(server, alice, all="true") == ["wasdi", "asleep", "bare", "gifted", "public"]
    assert codes(server, admin, all="true") == ["wasdi", "asleep", "bare", "gifted", "hidden", "private", "public"]
    listed = {n["nodeCode"]: n for n in server.get("/node/allnodes", alice).json}
    assert listed["wasdi"] == LOCAL
    assert listed["public"] == {"nodeCode": "public", "cloudProvider": "ovh", "apiUrl": "http://public:9000/rest"}
    assert listed["bare"]["cloudProvider"] == "bare"  # no cloud provider: the code, as the original does


def test_allnodes_lists_the_users_default_node(server: Server, nodes: None, bob: Person) -> None:
    server.services.users.users.update(bob.user_id, {"defaultNode": "private"})
    server.services.sessions.forget_user(bob.user_id)
    assert codes(server, bob) == ["wasdi", "bare", "private", "public"]


def test_allnodes_invalid_session_is_null(server: Server) -> None:
    assert server.get("/node/allnodes").text == "null"
    r = server.http.simulate_get("/node/allnodes", headers={"x-session-token": "bogus"})
    assert r.status_code == 200 and r.text == "null"


def test_allnodes_bad_flag_is_null(server: Server, alice: Person) -> None:
    assert server.get("/node/allnodes", alice, all="sometimes").text == "null"


# -- GET /node ------------------------------------------------------------------------------------------
def test_get_node(server: Server, nodes: None, alice: Person, admin: Person) -> None:
    r = server.get("/node", admin, node="private")
    assert r.status_code == 200
    assert r.json == {"nodeCode": "private", "cloudProvider": "ovh", "apiUrl": "http://private:9000/rest",
                      "active": True, "shared": False}
    local = server.get("/node", admin, node="wasdi").json
    assert local["nodeCode"] == "wasdi" and local["active"] is True and local["apiUrl"] == LOCAL["apiUrl"]


def test_get_node_statuses(server: Server, nodes: None, alice: Person, admin: Person) -> None:
    for who, params, status in ((None, {"node": "public"}, 401), (alice, {"node": "public"}, 401),
                                (alice, {"node": "missing"}, 401), (admin, {"node": "missing"}, 400),
                                (admin, {}, 400), (admin, {"node": ""}, 400)):
        r = server.get("/node", who, **params)
        assert r.status_code == status, (params, r.text)
        assert r.json["message"]


# -- POST /node -----------------------------------------------------------------------------------------
def test_create_node(server: Server, alice: Person, admin: Person) -> None:
    r = post_node(server, admin, {"nodeCode": "node-2", "apiUrl": "https://n2.example.org/rest",
                                  "cloudProvider": "creodias", "nodeDescription": "second"})
    assert r.status_code == 200 and r.text == ""
    body = server.get("/node", admin, node="node-2").json
    assert body == {"nodeCode": "node-2", "cloudProvider": "creodias", "apiUrl": "https://n2.example.org/rest",
                    "nodeDescription": "second", "nodeGeoserverAddress": "", "active": True, "shared": False}
    assert "node-2" in codes(server, admin) and "node-2" not in codes(server, alice)
    # A node that exists is usable for new workspaces.
    ws = server.get("/ws/create", admin, name="remote", node="node-2").json["stringValue"]
    assert server.get("/ws/getws", admin, workspace=ws).json["apiUrl"] == "https://n2.example.org/rest"


@pytest.mark.parametrize("body", [
    {}, {"nodeCode": ""}, {"nodeCode": "  "}, {"nodeCode": "a/b"}, {"nodeCode": "x" * 200},
    {"nodeCode": "wasdi"}, {"nodeCode": "n", "apiUrl": "javascript:alert(1)"}, {"nodeCode": "n", "apiUrl": "ftp://x"},
    {"nodeCode": "n", "nodeDescription": "d" * 5000}, {"nodeCode": "n", "active": "perhaps"},
    {"nodeCode": ["n"]},
])
def test_create_node_bad_input_is_400(server: Server, admin: Person, body: dict[str, Any]) -> None:
    r = post_node(server, admin, body)
    assert r.status_code == 400, r.text
    assert server.services.store.collection("nodes").count() == 0


@pytest.mark.parametrize("raw", ["", "not json", "[]", "null"])
def test_create_node_bad_body_is_400(server: Server, admin: Person, raw: str) -> None:
    assert server.post("/node", admin, body=raw, content_type="application/json").status_code == 400


def test_create_node_unique(server: Server, admin: Person) -> None:
    assert post_node(server, admin, {"nodeCode": "n"}).status_code == 200
    r = post_node(server, admin, {"nodeCode": "n", "cloudProvider": "other"})
    assert r.status_code == 400
    assert server.get("/node", admin, node="n").json["cloudProvider"] == ""


def test_create_node_needs_an_admin(server: Server, alice: Person) -> None:
    for who in (None, alice):
        r = post_node(server, who, {"nodeCode": "n"})
        assert r.status_code == 401 and r.json["message"]
    assert server.services.store.collection("nodes").count() == 0


# -- PUT /node ------------------------------------------------------------------------------------------
def test_update_node_and_deactivate(server: Server, nodes: None, alice: Person, admin: Person) -> None:
    assert "public" in codes(server, alice)
    r = put_node(server, admin, {"nodeCode": "public", "active": False, "nodeDescription": "maintenance"})
    assert r.status_code == 200
    body = server.get("/node", admin, node="public").json
    assert body["active"] is False and body["nodeDescription"] == "maintenance"
    assert body["apiUrl"] == "http://public:9000/rest" and body["shared"] is True  # not given: unchanged
    assert "public" not in codes(server, alice) and "public" not in codes(server, admin)
    assert "public" in codes(server, alice, all="true")
    assert put_node(server, admin, {"nodeCode": "public", "active": True}).status_code == 200
    assert "public" in codes(server, alice)


def test_update_node_statuses(server: Server, nodes: None, alice: Person, admin: Person) -> None:
    for who, body, status in ((None, {"nodeCode": "public"}, 401),
                              (alice, {"nodeCode": "public", "active": False}, 401),
                              (admin, {"nodeCode": "missing"}, 400), (admin, {"nodeCode": "wasdi"}, 400),
                              (admin, {"active": False}, 400), (admin, {"nodeCode": "public", "apiUrl": "x"}, 400)):
        r = put_node(server, who, body)
        assert r.status_code == status, (body, r.text)
    assert server.get("/node", admin, node="public").json["active"] is True
    assert server.services.store.collection("nodes").get("missing") is None


# -- sharing --------------------------------------------------------------------------------------------
def test_share_add_done_and_repeat(server: Server, nodes: None, alice: Person, admin: Person) -> None:
    assert share(server, admin, "private", alice.user_id) == {"boolValue": True, "intValue": 200,
                                                              "stringValue": "Done"}
    assert share(server, admin, "private", alice.user_id, "write") == {"boolValue": True, "intValue": 200,
                                                                       "stringValue": "Already Shared."}
    records = server.services.store.collection("sharings").find(resourceType="node", resourceId="private")
    assert [(r["userId"], r["permissions"]) for r in records] == [(alice.user_id, "read")]
    mail = [m for m in server.mails() if m["To"] == alice.user_id]
    assert mail and "node" in mail[-1]["Subject"]
    assert "private" in codes(server, alice)
    assert share(server, admin, "private", admin.user_id)["stringValue"] == "Done"  # admins may self-share


def test_share_add_failures(server: Server, nodes: None, alice: Person, bob: Person, admin: Person) -> None:
    cases = [
        (share(server, None, "private", bob.user_id), 401),
        (share(server, alice, "private", bob.user_id), 403),
        (share(server, alice, "missing", bob.user_id), 403),
        (share(server, admin, "missing", bob.user_id), 400),
        (share(server, admin, "wasdi", bob.user_id), 400),
        (share(server, admin, "private", "nobody@example.org"), 400),
        (share(server, admin, "private", None), 400),
        (share(server, admin, None, bob.user_id), 400),
    ]
    for body, code in cases:
        assert body["boolValue"] is False and body["intValue"] == code, body
        assert body["stringValue"]
    assert server.services.store.collection("sharings").count(resourceType="node") == 0


def test_share_list(server: Server, nodes: None, alice: Person, bob: Person, admin: Person) -> None:
    share(server, admin, "private", alice.user_id)
    share(server, admin, "private", bob.user_id)
    assert sorted(s["userId"] for s in sharings(server, admin, "private")) == [alice.user_id, bob.user_id]
    assert sharings(server, alice, "private") == [{"nodeCode": "private", "userId": alice.user_id}]
    assert sharings(server, admin, "public") == []
    assert sharings(server, admin, "missing") == []
    assert sharings(server, None, "private") == []
    assert server.get("/node/share/bynode", admin).json == []


def test_share_delete(server: Server, nodes: None, alice: Person, bob: Person, admin: Person) -> None:
    share(server, admin, "private", alice.user_id)
    share(server, admin, "private", bob.user_id)
    # Another user may not remove a sharing; the contract lists no 403 here, so it is 401.
    refused = unshare(server, bob, "private", alice.user_id)
    assert refused["boolValue"] is False and refused["intValue"] == 401
    assert unshare(server, None, "private", alice.user_id)["intValue"] == 401
    assert len(sharings(server, admin, "private")) == 2
    # A user may drop their own sharing; an admin anyone's.
    assert unshare(server, bob, "private", bob.user_id) == {"boolValue": True, "intValue": 200, "stringValue": "Done"}
    assert unshare(server, admin, "private", alice.user_id)["stringValue"] == "Done"
    assert sharings(server, admin, "private") == []
    assert "private" not in codes(server, alice)
    for node, user in (("private", alice.user_id), ("missing", alice.user_id), ("private", "nobody@example.org"),
                       ("private", None), (None, alice.user_id)):
        body = unshare(server, admin, node, user)
        assert body["boolValue"] is False and body["intValue"] == 400, (node, user, body)
