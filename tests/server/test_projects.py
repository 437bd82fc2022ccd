"""/projects through the real app: listing, the active project, editing, the permission matrix."""

from __future__ import annotations

from typing import Any

import pytest
from tests.conftest import Person, Server

LIST_FIELDS = {"projectId", "subscriptionName", "name", "description", "activeProject"}


def assert_error(r: Any, status: int) -> None:
    assert r.status_code == status, r.text
    assert set(r.json) == {"message"} and r.json["message"], r.json


def add(server: Server, who: Person | None, body: Any) -> Any:
    return server.post("/projects/add", who, json=body)


def create(server: Server, who: Person, subscription: str, name: str = "P", **fields: Any) -> str:
    r = add(server, who, {"subscriptionId": subscription, "name": name, **fields})
    assert r.status_code == 200, r.text
    return str(r.json["message"])


def update(server: Server, who: Person | None, body: Any) -> Any:
    return server.http.simulate_put("/projects/update", headers=who.headers if who else None, json=body)


def active(server: Server, who: Person) -> tuple[str | None, str | None]:
    doc = server.services.users.get(who.user_id)
    return doc.get("activeProjectId"), doc.get("activeSubscriptionId")


def project(server: Server, project_id: str) -> dict[str, Any] | None:
    return server.services.store.collection("projects").get(project_id)


def trial_of(server: Server, who: Person) -> tuple[str, str]:
    sub = server.services.store.collection("subscriptions").find_one(userId=who.user_id)["subscriptionId"]
    proj = server.services.store.collection("projects").find_one(subscriptionId=sub)["projectId"]
    return sub, proj


@pytest.fixture
def team(server: Server, alice: Person, bob: Person, carol: Person, admin: Person) -> dict[str, Any]:
    """Alice's subscription "Main" (with its project) shared with bob (write) and carol (read)."""
    sub = server.post("/subscriptions/add", admin, json={"typeId": "OneYearStandard", "name": "Main",
                                                         "userId": alice.user_id, "buySuccess": True}).json["message"]
    for user, rights in ((bob, "write"), (carol, "read")):
        server.http.simulate_post("/subscriptions/share/add", headers=alice.headers,
                                  params={"subscription": sub, "userId": user.user_id, "rights": rights})
    main = server.services.store.collection("projects").find_one(subscriptionId=sub)["projectId"]
    eve = server.add_user("eve@example.org")
    return {"sub": sub, "project": main, "owner": alice, "writer": bob, "reader": carol, "stranger": eve,
            "admin": admin}


# -- byuser ---------------------------------------------------------------------------------------------
def test_byuser_lists_projects_of_every_subscription(server: Server, team: dict[str, Any]) -> None:
    bob = team["writer"]
    extra = create(server, bob, team["sub"], "Extra")
    listed = server.get("/projects/byuser", bob).json
    _, trial_project = trial_of(server, bob)
    assert [(p["projectId"], p["subscriptionName"], p["activeProject"]) for p in listed] == [
        (trial_project, "WASDI Trial", True), (extra, "Main", False), (team["project"], "Main", False)]
    assert all(set(p) == LIST_FIELDS for p in listed)
    assert listed[2]["description"] == "Project automatically created for the Main subscription"
    assert server.get("/projects/byuser", team["stranger"]).json[0]["subscriptionName"] == "WASDI Trial"
    assert_error(server.get("/projects/byuser"), 401)


def test_byuser_makes_the_first_project_active_when_none_is(server: Server, alice: Person) -> None:
    trial_sub, trial_project = trial_of(server, alice)
    server.services.users.set_active_project(alice.user_id, None, None)
    listed = server.get("/projects/byuser", alice).json
    assert [p["activeProject"] for p in listed] == [True]
    assert active(server, alice) == (trial_project, trial_sub)
    # an active project that no longer exists counts as none
    server.services.users.set_active_project(alice.user_id, "gone", "gone")
    assert server.get("/projects/byuser", alice).json[0]["activeProject"] is True
    assert active(server, alice) == (trial_project, trial_sub)


def test_byuser_with_nothing_sets_nothing(server: Server) -> None:
    nobody = server.add_user("nobody@example.org", trial=False)
    assert server.get("/projects/byuser", nobody).json == []
    assert active(server, nobody) == (None, None)


def test_byuser_valid_only(server: Server, alice: Person) -> None:
    unpaid = server.post("/subscriptions/add", alice, json={"typeId": "OneDayStandard", "name": "Later"}).json
    assert {p["subscriptionName"] for p in server.get("/projects/byuser", alice).json} == {"WASDI Trial", "Later"}
    assert {p["subscriptionName"] for p in server.get("/projects/byuser", alice, valid="true").json} == \
        {"WASDI Trial"}
    assert unpaid
    assert_error(server.get("/projects/byuser", alice, valid="sometimes"), 400)


# -- bysubscription and byId ----------------------------------------------------------------------
@pytest.mark.parametrize("role,status", [("owner", 200), ("writer", 200), ("reader", 200), ("stranger", 403),
                                         ("admin", 200)])
def test_bysubscription_permissions(server: Server, team: dict[str, Any], role: str, status: int) -> None:
    r = server.get("/projects/bysubscription", team[role], subscription=team["sub"])
    if status == 200:
        assert r.status_code == 200
        assert [(p["projectId"], p["subscriptionName"]) for p in r.json] == [(team["project"], "Main")]
    else:
        assert_error(r, status)


def test_bysubscription_bad_input_and_session(server: Server, team: dict[str, Any]) -> None:
    assert_error(server.get("/projects/bysubscription", team["owner"]), 400)
    assert_error(server.get("/projects/bysubscription", team["owner"], subscription="missing"), 400)
    assert_error(server.get("/projects/bysubscription", team["owner"], subscription="../x"), 400)
    assert_error(server.get("/projects/bysubscription", subscription=team["sub"]), 401)


@pytest.mark.parametrize("role,status", [("owner", 200), ("writer", 200), ("reader", 200), ("stranger", 403),
                                         ("admin", 200)])
def test_byid_permissions(server: Server, team: dict[str, Any], role: str, status: int) -> None:
    r = server.get("/projects/byId", team[role], project=team["project"])
    if status == 200:
        assert r.status_code == 200
        assert r.json == {"projectId": team["project"], "subscriptionId": team["sub"], "name": "Main",
                          "description": "Project automatically created for the Main subscription",
                          "activeProject": False}
    else:
        assert_error(r, status)


def test_byid_active_flag_bad_input_and_session(server: Server, alice: Person) -> None:
    _, trial_project = trial_of(server, alice)
    assert server.get("/projects/byId", alice, project=trial_project).json["activeProject"] is True
    assert_error(server.get("/projects/byId", alice), 400)
    assert_error(server.get("/projects/byId", alice, project="missing"), 400)
    assert_error(server.get("/projects/byId", alice, project="..\\x"), 400)
    assert_error(server.get("/projects/byId", project=trial_project), 401)


# -- add ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("role,status", [("owner", 200), ("writer", 200), ("reader", 403), ("stranger", 403),
                                         ("admin", 200)])
def test_add_permissions(server: Server, team: dict[str, Any], role: str, status: int) -> None:
    r = add(server, team[role], {"subscriptionId": team["sub"], "name": f"by {role}", "description": "d"})
    if status == 200:
        assert r.status_code == 200
        doc = project(server, r.json["message"])
        assert doc == {"projectId": r.json["message"], "subscriptionId": team["sub"], "name": f"by {role}",
                       "description": "d"}
    else:
        assert_error(r, status)
        assert server.services.store.collection("projects").count(subscriptionId=team["sub"]) == 1


def test_add_renames_within_the_subscription(server: Server, alice: Person, bob: Person) -> None:
    sub, _ = trial_of(server, alice)
    names = [project(server, create(server, alice, sub, "WASDI Trial"))["name"] for _ in range(2)]
    assert names == ["WASDI Trial(1)", "WASDI Trial(2)"]
    bob_sub, _ = trial_of(server, bob)
    assert project(server, create(server, bob, bob_sub, "Floods"))["name"] == "Floods"


def test_add_active_project(server: Server, team: dict[str, Any]) -> None:
    alice, bob, admin = team["owner"], team["writer"], team["admin"]
    mine = create(server, alice, team["sub"], "Now", activeProject=True)
    assert active(server, alice) == (mine, team["sub"])
    # another user's active project: admins only
    assert_error(add(server, alice, {"subscriptionId": team["sub"], "name": "x", "activeProject": True,
                                     "targetUser": bob.user_id}), 403)
    assert_error(add(server, alice, {"subscriptionId": team["sub"], "name": "x", "targetUser": bob.user_id}), 403)
    theirs = create(server, admin, team["sub"], "For Bob", activeProject=True, targetUser=bob.user_id)
    assert active(server, bob) == (theirs, team["sub"])
    assert active(server, admin)[0] != theirs
    assert_error(add(server, admin, {"subscriptionId": team["sub"], "name": "x", "activeProject": True,
                                     "targetUser": "ghost@example.org"}), 400)
    # the target must be able to use the subscription
    assert_error(add(server, admin, {"subscriptionId": team["sub"], "name": "x", "activeProject": True,
                                     "targetUser": team["stranger"].user_id}), 403)


@pytest.mark.parametrize("body", [
    {}, {"name": "x"}, {"subscriptionId": "missing", "name": "x"}, {"subscriptionId": "SUB"},
    {"subscriptionId": "SUB", "name": ""}, {"subscriptionId": "SUB", "name": "a/b"},
    {"subscriptionId": "SUB", "name": "p" * 300}, {"subscriptionId": "SUB", "name": 5},
    {"subscriptionId": "SUB", "name": "x", "activeProject": "kind of"},
    {"subscriptionId": "SUB", "name": "x", "description": "d" * 3000},
])
def test_add_bad_input_is_400(server: Server, alice: Person, body: dict[str, Any]) -> None:
    sub, _ = trial_of(server, alice)
    body = {k: (sub if v == "SUB" else v) for k, v in body.items()}
    assert_error(add(server, alice, body), 400)
    assert server.services.store.collection("projects").count() == 1


def test_add_bad_json_and_session(server: Server, alice: Person) -> None:
    sub, _ = trial_of(server, alice)
    assert_error(server.post("/projects/add", alice, body=b"{", content_type="application/json"), 400)
    assert_error(server.post("/projects/add", alice, body=b"", content_type="application/json"), 400)
    assert_error(add(server, None, {"subscriptionId": sub, "name": "x"}), 401)


# -- update ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("role,status", [("owner", 200), ("writer", 200), ("reader", 403), ("stranger", 403),
                                         ("admin", 200)])
def test_update_permissions(server: Server, team: dict[str, Any], role: str, status: int) -> None:
    r = update(server, team[role], {"projectId": team["project"], "name": f"by {role}", "description": "new"})
    doc = project(server, team["project"])
    if status == 200:
        assert r.status_code == 200 and r.json == {"message": team["project"]}
        assert doc["name"] == f"by {role}" and doc["description"] == "new"
    else:
        assert_error(r, status)
        assert doc["name"] == "Main"


def test_update_unique_name_excluding_itself(server: Server, alice: Person) -> None:
    sub, trial_project = trial_of(server, alice)
    other = create(server, alice, sub, "Other")
    assert update(server, alice, {"projectId": trial_project, "name": "WASDI Trial"}).status_code == 200
    assert project(server, trial_project)["name"] == "WASDI Trial"
    assert update(server, alice, {"projectId": other, "name": "WASDI Trial"}).status_code == 200
    assert project(server, other)["name"] == "WASDI Trial(1)"
    assert update(server, alice, {"projectId": other, "description": "only this"}).status_code == 200
    assert project(server, other) == {"projectId": other, "subscriptionId": sub, "name": "WASDI Trial(1)",
                                      "description": "only this"}


def test_update_active_flag(server: Server, alice: Person) -> None:
    sub, trial_project = trial_of(server, alice)
    other = create(server, alice, sub, "Other")
    assert update(server, alice, {"projectId": other, "activeProject": True}).status_code == 200
    assert active(server, alice) == (other, sub)
    # false on a project that is not the active one changes nothing
    assert update(server, alice, {"projectId": trial_project, "activeProject": False}).status_code == 200
    assert active(server, alice) == (other, sub)
    # false on the active one clears the active project and subscription
    assert update(server, alice, {"projectId": other, "activeProject": False}).status_code == 200
    assert active(server, alice) == (None, None)


def test_update_moves_between_writable_subscriptions(server: Server, team: dict[str, Any]) -> None:
    bob = team["writer"]
    _, bob_project = trial_of(server, bob)
    assert update(server, bob, {"projectId": bob_project, "subscriptionId": team["sub"]}).status_code == 200
    assert project(server, bob_project)["subscriptionId"] == team["sub"]
    assert active(server, bob) == (bob_project, team["sub"])  # the active subscription follows
    assert_error(update(server, team["reader"], {"projectId": trial_of(server, team["reader"])[1],
                                                 "subscriptionId": team["sub"]}), 403)


@pytest.mark.parametrize("body", [{}, {"name": "x"}, {"projectId": ""}, {"projectId": "missing"},
                                  {"projectId": "PROJECT", "name": "a\\b"}, {"projectId": "PROJECT", "name": ""},
                                  {"projectId": "PROJECT", "subscriptionId": "missing"}])
def test_update_bad_input_is_400(server: Server, alice: Person, body: dict[str, Any]) -> None:
    _, trial_project = trial_of(server, alice)
    body = {k: (trial_project if v == "PROJECT" else v) for k, v in body.items()}
    assert_error(update(server, alice, body), 400)
    assert project(server, trial_project)["name"] == "WASDI Trial"


def test_update_target_and_session(server: Server, team: dict[str, Any]) -> None:
    alice, bob = team["owner"], team["writer"]
    assert_error(update(server, alice, {"projectId": team["project"], "activeProject": True,
                                        "targetUser": bob.user_id}), 403)
    assert update(server, team["admin"], {"projectId": team["project"], "activeProject": True,
                                          "targetUser": bob.user_id}).status_code == 200
    assert active(server, bob) == (team["project"], team["sub"])
    assert_error(update(server, None, {"projectId": team["project"], "name": "x"}), 401)
    assert_error(server.http.simulate_put("/projects/update", headers=alice.headers, body=b"null"), 400)


# -- active ---------------------------------------------------------------------------------------------
def test_set_active_and_clear(server: Server, team: dict[str, Any]) -> None:
    carol = team["reader"]
    r = server.put("/projects/active", carol, project=team["project"])
    assert r.status_code == 200 and r.json == {"message": team["project"]}
    assert active(server, carol) == (team["project"], team["sub"])
    assert server.get("/subscriptions/active", carol).json["subscriptionId"] == team["sub"]
    r = server.put("/projects/active", carol)
    assert r.status_code == 200 and r.json == {"message": ""}
    assert active(server, carol) == (None, None)
    server.put("/projects/active", carol, project=team["project"])
    assert server.put("/projects/active", carol, project="null").status_code == 200
    assert active(server, carol) == (None, None)


def test_set_active_for_another_user(server: Server, team: dict[str, Any]) -> None:
    bob, alice, admin = team["writer"], team["owner"], team["admin"]
    assert_error(server.put("/projects/active", alice, project=team["project"], target=bob.user_id), 403)
    assert active(server, bob)[1] != team["sub"]
    assert server.put("/projects/active", admin, project=team["project"], target=bob.user_id).status_code == 200
    assert active(server, bob) == (team["project"], team["sub"])
    assert server.put("/projects/active", admin, target=bob.user_id).status_code == 200
    assert active(server, bob) == (None, None)
    assert_error(server.put("/projects/active", admin, project=team["project"], target="ghost@example.org"), 400)
    assert_error(server.put("/projects/active", admin, project=team["project"],
                            target=team["stranger"].user_id), 403)
    # the caller naming themself is fine
    assert server.put("/projects/active", alice, project=team["project"], target=alice.user_id).status_code == 200


def test_set_active_failures(server: Server, team: dict[str, Any]) -> None:
    eve = team["stranger"]
    before = active(server, eve)
    assert_error(server.put("/projects/active", eve, project=team["project"]), 403)
    assert_error(server.put("/projects/active", eve, project="missing"), 400)
    assert_error(server.put("/projects/active", eve, project="../x"), 400)
    assert active(server, eve) == before
    assert_error(server.put("/projects/active", project=team["project"]), 401)


# -- delete ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("role,status", [("owner", 200), ("writer", 200), ("reader", 403), ("stranger", 403),
                                         ("admin", 200)])
def test_delete_permissions(server: Server, team: dict[str, Any], role: str, status: int) -> None:
    r = server.delete("/projects/delete", team[role], project=team["project"])
    if status == 200:
        assert r.status_code == 200 and r.json == {"message": team["project"]}
        assert project(server, team["project"]) is None
    else:
        assert_error(r, status)
        assert project(server, team["project"]) is not None


def test_delete_clears_the_active_project(server: Server, team: dict[str, Any]) -> None:
    carol = team["reader"]
    server.put("/projects/active", carol, project=team["project"])
    assert server.delete("/projects/delete", team["owner"], project=team["project"]).status_code == 200
    assert active(server, carol) == (None, None)


def test_delete_bad_input_and_session(server: Server, alice: Person) -> None:
    _, trial_project = trial_of(server, alice)
    assert_error(server.delete("/projects/delete", alice), 400)
    assert_error(server.delete("/projects/delete", alice, project="missing"), 400)
    assert_error(server.delete("/projects/delete", alice, project="y" * 9000), 400)
    assert_error(server.delete("/projects/delete", project=trial_project), 401)


# -- bad input never answers 500 ------------------------------------------------------------------------
def test_junk_input_never_answers_500(server: Server, team: dict[str, Any]) -> None:
    from tests.server.test_organizations import check_junk

    people = [team["owner"], team["reader"], team["stranger"], team["admin"]]
    check_junk(server, "projects", people, {"subscription": team["sub"], "project": team["project"],
                                            "target": team["reader"].user_id})
