"""What a stranger learns from a refusal: nothing.  ``/admin/resourcePermissions`` is the admins' (owners
share through each type's own share call), rights are checked before any rule whose answer would say who
owns something or whether it exists, and the payment confirmations answer an id naming no checkout in the
contract's style (401), never 500."""

from __future__ import annotations

import pytest
from tests.conftest import Person, Server

PERMISSIONS = "/admin/resourcePermissions"


def workspace(server: Server, owner: Person) -> str:
    return str(server.get("/ws/create", owner, name="private").json["stringValue"])


@pytest.mark.parametrize("method", ["POST", "DELETE"])
def test_a_stranger_cannot_tell_a_right_guess_from_a_wrong_one(server: Server, alice: Person, bob: Person,
                                                               method: str) -> None:
    ws = workspace(server, alice)
    answers = set()
    for resource_id, user_id in [(ws, alice.user_id), (ws, "guess@example.org"), ("no-such-ws", alice.user_id),
                                 ("no-such-ws", "guess@example.org")]:
        r = server.http.simulate_request(method, PERMISSIONS, headers=bob.headers, params={
            "resourceType": "WORKSPACE", "resourceId": resource_id, "userId": user_id})
        answers.add((r.status_code, r.text))
    assert answers == {(403, '{"message":"MSG_ERROR_NO_ACCESS_RIGHTS_ADMIN_DASHBOARD"}')}
    r = server.http.simulate_request(method, PERMISSIONS, headers=bob.headers, params={
        "resourceType": "GALAXY", "resourceId": "x", "userId": alice.user_id})
    assert r.status_code == 403  # rights before the type is judged


def test_the_owner_shares_through_the_type_own_call(server: Server, alice: Person, bob: Person) -> None:
    ws = workspace(server, alice)
    params = {"resourceType": "WORKSPACE", "resourceId": ws, "userId": bob.user_id}
    assert server.http.simulate_post(PERMISSIONS, headers=alice.headers, params=params).status_code == 403
    r = server.put("/ws/share/add", alice, workspace=ws, userId=bob.user_id)
    assert r.json["stringValue"] == "Done"


def test_sharing_someone_else_resource_says_nothing_of_its_owner(server: Server, alice: Person, bob: Person,
                                                                 carol: Person) -> None:
    ws = workspace(server, alice)
    server.put("/ws/share/add", alice, workspace=ws, userId=carol.user_id)  # carol may read, not share
    for who in (bob, carol):
        answers = {server.put("/ws/share/add", who, workspace=ws, userId=guess).text
                   for guess in (alice.user_id, "guess@example.org", who.user_id)}
        assert len(answers) == 1 and '"intValue":403' in answers.pop()
        answers = {server.delete("/ws/share/delete", who, workspace=ws, userId=guess).text
                   for guess in (alice.user_id, "guess@example.org")}
        assert len(answers) == 1 and '"intValue":403' in answers.pop()


def test_listing_permissions_checks_rights_before_criteria(server: Server, bob: Person) -> None:
    assert server.get(PERMISSIONS, bob).status_code == 403
    assert server.get(PERMISSIONS, bob, resourceType="WORKSPACE").status_code == 403
    assert server.get(PERMISSIONS, bob, resourceType="MISSION").status_code == 200


def test_the_resource_types_need_an_admin(server: Server, bob: Person, admin: Person) -> None:
    assert server.get(f"{PERMISSIONS}/types").status_code == 401
    assert server.get(f"{PERMISSIONS}/types", bob).status_code == 403
    assert "WORKSPACE" in server.get(f"{PERMISSIONS}/types", admin).json


@pytest.mark.parametrize("group", ["credits", "subscriptions"])
@pytest.mark.parametrize("session", ["unknown", "cs_local_" + "0" * 32, "x" * 2000])
def test_a_confirmation_of_no_checkout_is_401(server: Server, group: str, session: str) -> None:
    r = server.get(f"/{group}/local/confirmation/{session}")
    assert r.status_code == 401 and set(r.json) == {"message"}, r.text
