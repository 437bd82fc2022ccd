"""/organizations through the real app: every status, the permission matrix, sharing and deletion."""

from __future__ import annotations

from typing import Any

import pytest
from tests.conftest import Person, Server

ROLES = ("owner", "writer", "reader", "stranger", "admin")


def create(server: Server, who: Person, name: str = "ACME", **fields: Any) -> str:
    r = server.post("/organizations/add", who, json={"name": name, **fields})
    assert r.status_code == 200, r.text
    return str(r.json["message"])


def update(server: Server, who: Person | None, body: Any) -> Any:
    return server.http.simulate_put("/organizations/update", headers=who.headers if who else None, json=body)


def share(server: Server, who: Person | None, org: str | None, user: str | None, rights: str | None = None) -> Any:
    params = {k: v for k, v in (("organization", org), ("userId", user), ("rights", rights)) if v is not None}
    return server.http.simulate_post("/organizations/share/add", params=params,
                                     headers=who.headers if who else None)


@pytest.fixture
def team(server: Server, alice: Person, bob: Person, carol: Person, admin: Person) -> dict[str, Any]:
    """ACME owned by alice, shared with bob (write) and carol (read); eve is a stranger."""
    org = create(server, alice)
    assert share(server, alice, org, bob.user_id, "write").json == {"message": "Done"}
    assert share(server, alice, org, carol.user_id, "read").json == {"message": "Done"}
    eve = server.add_user("eve@example.org")
    return {"org": org, "owner": alice, "writer": bob, "reader": carol, "stranger": eve, "admin": admin}


def assert_error(r: Any, status: int) -> None:
    assert r.status_code == status, r.text
    assert set(r.json) == {"message"} and r.json["message"], r.json


# -- add ----------------------------------------------------------------------------------------------
def test_add_creates_with_generated_id(server: Server, alice: Person) -> None:
    r = server.post("/organizations/add", alice, json={"organizationId": "mine", "name": "  ACME  ",
                                                       "description": "d", "address": "a", "email": "e@x.org",
                                                       "url": "https://acme.example"})
    assert r.status_code == 200 and set(r.json) == {"message"}
    org = r.json["message"]
    assert org != "mine" and len(org) == 36
    body = server.get("/organizations/byId", alice, organization=org).json
    assert body == {"organizationId": org, "userId": alice.user_id, "name": "ACME", "description": "d",
                    "address": "a", "email": "e@x.org", "url": "https://acme.example", "readOnly": False,
                    "sharedUsers": []}


def test_add_duplicate_name_is_400(server: Server, alice: Person, bob: Person) -> None:
    create(server, alice, "ACME")
    for who, name in ((alice, "ACME"), (bob, "acme"), (bob, " ACME ")):
        r = server.post("/organizations/add", who, json={"name": name})
        assert_error(r, 400)
    assert r.json["message"] == "An organization with the same name already exists."
    assert server.services.store.collection("organizations").count() == 1


@pytest.mark.parametrize("body", [
    {}, {"name": ""}, {"name": "   "}, {"name": None}, {"name": 123}, {"name": ["x"]}, {"name": "a/b"},
    {"name": "a\\b"}, {"name": ".."}, {"name": "x..y"}, {"name": "x" * 201}, {"name": "bad\x01"},
    {"name": "ok", "description": "d" * 3000}, {"name": "ok", "url": 5},
])
def test_add_bad_body_is_400(server: Server, alice: Person, body: dict[str, Any]) -> None:
    assert_error(server.post("/organizations/add", alice, json=body), 400)
    assert server.services.store.collection("organizations").count() == 0


@pytest.mark.parametrize("raw", [b"", b"null", b"{broken", b"[1, 2]", b"\"text\"", b"\xff\xfe"])
def test_add_bad_json_is_400(server: Server, alice: Person, raw: bytes) -> None:
    r = server.post("/organizations/add", alice, body=raw, content_type="application/json")
    assert_error(r, 400)


def test_add_needs_a_session(server: Server) -> None:
    r = server.post("/organizations/add", None, json={"name": "ACME"})
    assert_error(r, 401)
    assert r.json["message"] == "MSG_ERROR_INVALID_SESSION"


# -- byuser and byId --------------------------------------------------------------------------------
def test_byuser_lists_owned_and_shared(server: Server, team: dict[str, Any]) -> None:
    bobs = create(server, team["writer"], "Bob Corp")
    listed = server.get("/organizations/byuser", team["writer"]).json
    assert listed == [
        {"organizationId": bobs, "ownerUserId": team["writer"].user_id, "name": "Bob Corp", "readOnly": False},
        {"organizationId": team["org"], "ownerUserId": team["owner"].user_id, "name": "ACME", "readOnly": False},
    ]
    reader = server.get("/organizations/byuser", team["reader"]).json
    assert reader == [{"organizationId": team["org"], "ownerUserId": team["owner"].user_id, "name": "ACME",
                       "readOnly": True}]
    assert server.get("/organizations/byuser", team["stranger"]).json == []
    assert_error(server.get("/organizations/byuser"), 401)


@pytest.mark.parametrize("role,status,read_only", [
    ("owner", 200, False), ("writer", 200, False), ("reader", 200, True), ("admin", 200, False),
    ("stranger", 403, None),
])
def test_byid_permissions(server: Server, team: dict[str, Any], role: str, status: int,
                          read_only: bool | None) -> None:
    r = server.get("/organizations/byId", team[role], organization=team["org"])
    assert r.status_code == status, r.text
    if status == 200:
        assert r.json["readOnly"] is read_only
        assert sorted(r.json["sharedUsers"]) == sorted([team["writer"].user_id, team["reader"].user_id])
    else:
        assert_error(r, 403)


@pytest.mark.parametrize("params", [{}, {"organization": ""}, {"organization": "missing"},
                                    {"organization": "../../etc"}, {"organization": "x" * 9000}])
def test_byid_bad_input_is_400(server: Server, alice: Person, params: dict[str, str]) -> None:
    assert_error(server.get("/organizations/byId", alice, **params), 400)


def test_byid_needs_a_session(server: Server, team: dict[str, Any]) -> None:
    assert_error(server.get("/organizations/byId", organization=team["org"]), 401)


# -- update -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("role,status", [("owner", 200), ("writer", 200), ("reader", 403), ("stranger", 403),
                                         ("admin", 200)])
def test_update_permissions(server: Server, team: dict[str, Any], role: str, status: int) -> None:
    r = update(server, team[role], {"organizationId": team["org"], "name": f"by {role}", "url": "u"})
    assert r.status_code == status, r.text
    stored = server.services.store.collection("organizations").get(team["org"])
    if status == 200:
        assert r.json == {"message": team["org"]}
        assert stored["name"] == f"by {role}" and stored["url"] == "u"
        assert stored["userId"] == team["owner"].user_id  # the owner never changes
    else:
        assert_error(r, status)
        assert stored["name"] == "ACME"


def test_update_keeps_fields_not_sent_or_null(server: Server, alice: Person) -> None:
    org = create(server, alice, "ACME", description="old", address="street", email="a@b.org")
    body = {"organizationId": org, "name": "ACME", "description": None, "email": ""}
    assert update(server, alice, body).status_code == 200
    body = server.get("/organizations/byId", alice, organization=org).json
    assert body["description"] == "old" and body["address"] == "street" and body["email"] == ""


def test_update_name_collision_is_400_but_own_name_is_fine(server: Server, alice: Person) -> None:
    first = create(server, alice, "ACME")
    second = create(server, alice, "Other")
    assert update(server, alice, {"organizationId": first, "name": "acme"}).status_code == 200
    r = update(server, alice, {"organizationId": second, "name": "ACME"})
    assert_error(r, 400)
    assert server.get("/organizations/byId", alice, organization=second).json["name"] == "Other"


@pytest.mark.parametrize("body", [{}, {"name": "x"}, {"organizationId": "missing", "name": "x"},
                                  {"organizationId": "../x", "name": "x"}, "ORG-ID"])
def test_update_bad_input_is_400(server: Server, alice: Person, body: Any) -> None:
    org = create(server, alice)
    if body == "ORG-ID":
        body = {"organizationId": org}  # no name
    assert_error(update(server, alice, body), 400)


def test_update_bad_name_empty_body_and_no_session(server: Server, alice: Person) -> None:
    org = create(server, alice)
    assert_error(update(server, alice, {"organizationId": org, "name": "a/b"}), 400)
    r = server.http.simulate_put("/organizations/update", headers=alice.headers, body=b"")
    assert_error(r, 400)
    assert_error(update(server, None, {"organizationId": org, "name": "x"}), 401)


# -- delete -----------------------------------------------------------------------------------------
def test_owner_delete_removes_sharings_and_detaches_subscriptions(server: Server, team: dict[str, Any]) -> None:
    org = team["org"]
    subscriptions = server.services.store.collection("subscriptions")
    sub = subscriptions.find_one(userId=team["owner"].user_id)
    subscriptions.update(sub["subscriptionId"], {"organizationId": org})
    # through the organization, bob sees alice's subscription
    assert sub["subscriptionId"] in {s["subscriptionId"] for s in server.get("/subscriptions/byuser",
                                                                             team["writer"]).json}
    r = server.delete("/organizations/delete", team["owner"], organization=org)
    assert r.status_code == 200 and r.json == {"message": org}
    assert server.services.store.collection("organizations").get(org) is None
    assert server.services.store.collection("sharings").count(resourceType="organization") == 0
    assert subscriptions.get(sub["subscriptionId"])["organizationId"] is None
    assert sub["subscriptionId"] not in {s["subscriptionId"] for s in server.get("/subscriptions/byuser",
                                                                                 team["writer"]).json}
    assert server.get("/organizations/byuser", team["writer"]).json == []


@pytest.mark.parametrize("role", ["writer", "reader"])
def test_sharee_delete_removes_only_their_sharing(server: Server, team: dict[str, Any], role: str) -> None:
    r = server.delete("/organizations/delete", team[role], organization=team["org"])
    assert r.status_code == 200 and r.json == {"message": team["org"]}
    assert server.get("/organizations/byuser", team[role]).json == []
    assert server.services.store.collection("organizations").get(team["org"]) is not None
    assert len(server.get("/organizations/share/byorganization", team["owner"], organization=team["org"]).json) == 1


def test_stranger_delete_is_403_and_admin_delete_removes(server: Server, team: dict[str, Any]) -> None:
    assert_error(server.delete("/organizations/delete", team["stranger"], organization=team["org"]), 403)
    assert server.services.store.collection("organizations").get(team["org"]) is not None
    assert server.delete("/organizations/delete", team["admin"], organization=team["org"]).status_code == 200
    assert server.services.store.collection("organizations").get(team["org"]) is None
    assert server.services.store.collection("sharings").count(resourceType="organization") == 0


def test_delete_bad_input_and_session(server: Server, alice: Person) -> None:
    org = create(server, alice)
    assert_error(server.delete("/organizations/delete", alice), 400)
    assert_error(server.delete("/organizations/delete", alice, organization="missing"), 400)
    assert_error(server.delete("/organizations/delete", alice, organization="../etc/passwd"), 400)
    assert_error(server.delete("/organizations/delete", organization=org), 401)


# -- sharing ----------------------------------------------------------------------------------------
def test_share_add_done_then_already_shared(server: Server, alice: Person, bob: Person) -> None:
    org = create(server, alice)
    assert share(server, alice, org, bob.user_id).json == {"message": "Done"}
    again = share(server, alice, org, bob.user_id, "write")
    assert again.status_code == 200 and again.json == {"message": "Already Shared"}
    sharings = server.get("/organizations/share/byorganization", alice, organization=org).json
    assert sharings == [{"organizationId": org, "userId": bob.user_id, "ownerId": alice.user_id,
                         "permissions": "read"}]
    mail = [m for m in server.mails() if m["To"] == bob.user_id]
    assert mail and "shared" in mail[-1]["Subject"] and "ACME" in mail[-1].get_content()


def test_share_rights_default_to_read(server: Server, alice: Person, bob: Person, carol: Person) -> None:
    org = create(server, alice)
    share(server, alice, org, bob.user_id, "nonsense")
    share(server, alice, org, carol.user_id, "WRITE")
    rights = {s["userId"]: s["permissions"]
              for s in server.get("/organizations/share/byorganization", alice, organization=org).json}
    assert rights == {bob.user_id: "read", carol.user_id: "write"}


@pytest.mark.parametrize("role,status", [("owner", 200), ("writer", 200), ("reader", 403), ("stranger", 403),
                                         ("admin", 200)])
def test_share_add_permissions(server: Server, team: dict[str, Any], role: str, status: int) -> None:
    dave = server.add_user("dave@example.org")
    r = share(server, team[role], team["org"], dave.user_id)
    assert r.status_code == status, r.text
    if status != 200:
        assert_error(r, status)


@pytest.mark.parametrize("target,message", [
    ("alice@example.org", "MSG_ERROR_SHARING_WITH_ONESELF"),
    ("ghost@example.org", "MSG_ERROR_SHARING_WITH_NON_EXISTENT_USER"),
])
def test_share_add_refusals(server: Server, alice: Person, target: str, message: str) -> None:
    org = create(server, alice)
    r = share(server, alice, org, target)
    assert_error(r, 400)
    assert r.json["message"] == message


def test_share_with_owner_refused_and_admin_self_share(server: Server, team: dict[str, Any]) -> None:
    r = share(server, team["writer"], team["org"], team["owner"].user_id)
    assert_error(r, 400)
    assert r.json["message"] == "MSG_ERROR_SHARING_WITH_OWNER"
    assert share(server, team["admin"], team["org"], team["admin"].user_id).json == {"message": "Done"}


def test_share_add_bad_input_and_session(server: Server, alice: Person, bob: Person) -> None:
    org = create(server, alice)
    assert_error(share(server, alice, None, bob.user_id), 400)
    assert_error(share(server, alice, org, None), 400)
    assert_error(share(server, alice, "missing", bob.user_id), 400)
    assert_error(share(server, alice, org, "x" * 9000), 400)
    assert_error(share(server, None, org, bob.user_id), 401)


@pytest.mark.parametrize("role,status", [("owner", 200), ("writer", 200), ("reader", 200), ("stranger", 403),
                                         ("admin", 200)])
def test_share_list_permissions(server: Server, team: dict[str, Any], role: str, status: int) -> None:
    r = server.get("/organizations/share/byorganization", team[role], organization=team["org"])
    assert r.status_code == status, r.text
    if status == 200:
        assert {s["userId"] for s in r.json} == {team["writer"].user_id, team["reader"].user_id}
        assert {s["ownerId"] for s in r.json} == {team["owner"].user_id}
    else:
        assert_error(r, 403)


def test_share_list_bad_input_and_session(server: Server, alice: Person) -> None:
    org = create(server, alice)
    assert_error(server.get("/organizations/share/byorganization", alice), 400)
    assert_error(server.get("/organizations/share/byorganization", alice, organization="missing"), 400)
    assert_error(server.get("/organizations/share/byorganization", organization=org), 401)


@pytest.mark.parametrize("role,status", [("owner", 200), ("writer", 200), ("reader", 403), ("stranger", 403),
                                         ("admin", 200)])
def test_share_delete_permissions(server: Server, team: dict[str, Any], role: str, status: int) -> None:
    dave = server.add_user("dave@example.org")
    share(server, team["owner"], team["org"], dave.user_id)
    r = server.delete("/organizations/share/delete", team[role], organization=team["org"], userId=dave.user_id)
    assert r.status_code == status, r.text
    remaining = {s["userId"] for s in server.get("/organizations/share/byorganization", team["owner"],
                                                 organization=team["org"]).json}
    if status == 200:
        assert r.json == {"message": "Done"} and dave.user_id not in remaining
    else:
        assert_error(r, status)
        assert dave.user_id in remaining


def test_share_delete_rules(server: Server, team: dict[str, Any]) -> None:
    org, owner, reader = team["org"], team["owner"], team["reader"]
    # a reader may drop their own sharing
    assert server.delete("/organizations/share/delete", reader, organization=org, userId=reader.user_id).json == \
        {"message": "Done"}
    # the owner is not a sharing; unknown users and users without a sharing are refused
    assert_error(server.delete("/organizations/share/delete", owner, organization=org, userId=owner.user_id), 400)
    assert_error(server.delete("/organizations/share/delete", owner, organization=org,
                               userId="ghost@example.org"), 400)
    assert_error(server.delete("/organizations/share/delete", owner, organization=org, userId=reader.user_id), 400)
    assert_error(server.delete("/organizations/share/delete", owner, organization=org), 400)
    assert_error(server.delete("/organizations/share/delete", owner, userId=reader.user_id), 400)
    assert_error(server.delete("/organizations/share/delete", owner, organization="missing",
                               userId=reader.user_id), 400)
    assert_error(server.delete("/organizations/share/delete", None, organization=org, userId=reader.user_id), 401)


def test_members_read_the_organizations_subscriptions(server: Server, team: dict[str, Any]) -> None:
    owner_sub = server.services.store.collection("subscriptions").find_one(userId=team["owner"].user_id)
    sid = owner_sub["subscriptionId"]
    r = server.http.simulate_put("/subscriptions/update", headers=team["owner"].headers,
                                 json={"subscriptionId": sid, "organizationId": team["org"]})
    assert r.status_code == 200, r.text
    for role in ("writer", "reader"):
        listed = {s["subscriptionId"]: s for s in server.get("/subscriptions/byuser", team[role]).json}
        assert listed[sid]["reason"] == "shared by ACME" and listed[sid]["readOnly"] is True
        assert listed[sid]["organizationName"] == "ACME" and listed[sid]["organizationId"] == team["org"]
        assert server.get("/subscriptions/byId", team[role], subscription=sid).json["readOnly"] is True
    assert_error(server.get("/subscriptions/byId", team["stranger"], subscription=sid), 403)


# -- bad input never answers 500 ------------------------------------------------------------------------
JUNK = ["", " ", "../..", "a/b", "..\\x", "null", "ünïcødé", "x" * 5000, "%00", "' OR 1=1 --", "-1", "true"]
JUNK_BODIES: list[Any] = [{}, [], "text", 5, None, {"name": 5}, {"organizationId": ["x"]}, {"name": {"a": 1}},
                          {"name": "ok", "organizationId": "../x"}, {"name": "x" * 100000}, {"name": "a/b"}]


def check_junk(server: Server, group: str, people: list[Person], real: dict[str, str]) -> None:
    """Every endpoint of ``group`` with junk in each parameter (the others junk too, then real ids) and junk
    bodies: only the contract's statuses (or 400/403), always with an ErrorResponse, never a 500."""
    from wasdi_sdk.catalog import ENDPOINTS, BodyKind

    for ep in sorted((e for e in ENDPOINTS if e.group == group), key=lambda e: e.method == "DELETE"):
        allowed = set(ep.statuses) | {400, 403}
        path = ep.path.replace("{payprov}", "local").replace("{CHECKOUT_SESSION_ID}", "cs_junk")
        for who in people:
            for junk in JUNK:
                names = [p.name for p in ep.query]
                combos = [dict.fromkeys(names, junk), {n: real.get(n, junk) for n in names}]
                combos += [{**{n: real.get(n, junk) for n in names}, name: junk} for name in names]
                for params in combos:
                    bodies = JUNK_BODIES if ep.body.kind is BodyKind.JSON else [None]
                    for body in bodies:
                        r = server.http.simulate_request(ep.method, path, params=params, headers=who.headers,
                                                         json=body)
                        assert r.status_code in allowed, (ep.name, params, body, r.status_code, r.text)
                        if r.status_code != 200:
                            assert set(r.json) == {"message"}, (ep.name, r.text)


def test_junk_input_never_answers_500(server: Server, team: dict[str, Any]) -> None:
    people = [team["owner"], team["reader"], team["stranger"], team["admin"]]
    check_junk(server, "organizations", people, {"organization": team["org"], "userId": team["writer"].user_id})
