"""/auth through the real app: every status and failure style the contract lists."""

from __future__ import annotations

import json
import re
import time

import pytest
from tests.conftest import PASSWORD, Person, Server

INVALID_USER = {"userId": "", "boolValue": False}


def login(server: Server, user: str, password: str) -> dict:
    r = server.post("/auth/login", json={"userId": user, "userPassword": password})
    assert r.status_code == 200
    return r.json


def check(server: Server, token: str) -> dict:
    return server.http.simulate_get("/auth/checksession", headers={"x-session-token": token}).json


# -- login / checksession / logout ----------------------------------------------------------------
def test_login_returns_a_new_working_session_each_time(server: Server, alice: Person) -> None:
    first = login(server, "alice@example.org", PASSWORD)
    second = login(server, "ALICE@example.org ", PASSWORD)
    assert first["userId"] == "alice@example.org"
    assert first["sessionId"] and second["sessionId"] and first["sessionId"] != second["sessionId"]
    assert len(first["sessionId"]) >= 22  # >= 128 bits of randomness, URL-safe
    assert first["role"] == "USER" and first["type"] == "FREE" and first["skin"] == "wasdi"
    assert "boolValue" not in first
    for token in (first["sessionId"], second["sessionId"]):
        assert check(server, token)["userId"] == "alice@example.org"


@pytest.mark.parametrize("body", [
    {"userId": "alice@example.org", "userPassword": "wrong-password"},
    {"userId": "nobody@example.org", "userPassword": PASSWORD},
    {"userId": "alice@example.org"},
    {},
])
def test_bad_login_is_200_with_empty_user_and_false_marker(server: Server, alice: Person, body: dict) -> None:
    r = server.post("/auth/login", json=body)
    assert r.status_code == 200 and r.json == INVALID_USER


@pytest.mark.parametrize("raw", [b"", b"not json", b"[1,2]", b'{"userId": 5}', b"null"])
def test_malformed_login_bodies_get_the_marker_not_a_500(server: Server, raw: bytes) -> None:
    r = server.post("/auth/login", body=raw, content_type="application/json")
    assert r.status_code == 200 and r.json == INVALID_USER


def test_passwords_are_stored_hashed(server: Server, alice: Person) -> None:
    # the snapshots and the journal of the store: wherever the record is on disk
    raw = "".join(p.read_text() for p in (server.settings.data_dir / "db").iterdir() if p.is_file())
    assert PASSWORD not in raw and "scrypt$" in raw


def test_checksession_invalid_gives_empty_user_id(server: Server) -> None:
    for headers in ({}, {"x-session-token": "nope"}, {"x-session-token": "x" * 5000}):
        r = server.http.simulate_get("/auth/checksession", headers=headers)
        assert r.status_code == 200 and r.json["userId"] == ""


def test_checksession_fields(server: Server, alice: Person) -> None:
    body = check(server, alice.token)
    assert body["userId"] == "alice@example.org" and body["name"] == "Alice" and body["type"] == "FREE"


def test_session_expires_after_idle_time(server: Server, alice: Person) -> None:
    sessions = server.services.store.collection("sessions")
    sessions.update(alice.token, {"lastTouch": time.time() * 1000 - 25 * 3600 * 1000})
    assert check(server, alice.token)["userId"] == ""
    assert sessions.get(alice.token) is None  # an expired session is removed when seen


def test_use_slides_the_expiry(server: Server, alice: Person) -> None:
    sessions = server.services.store.collection("sessions")
    old = time.time() * 1000 - 23 * 3600 * 1000
    sessions.update(alice.token, {"lastTouch": old})
    assert check(server, alice.token)["userId"] == "alice@example.org"
    assert sessions.get(alice.token)["lastTouch"] > old


def test_logout_deletes_the_session(server: Server, alice: Person) -> None:
    r = server.get("/auth/logout", alice)
    assert r.status_code == 200 and r.json == {"boolValue": True, "stringValue": alice.token}
    assert server.services.store.collection("sessions").get(alice.token) is None
    assert check(server, alice.token)["userId"] == ""
    again = server.get("/auth/logout", alice)
    assert again.status_code == 200 and again.json["boolValue"] is False


def test_disable_authentication_returns_an_admin_with_a_session(tmp_path) -> None:
    s = Server(tmp_path / "d", disable_authentication=True)
    try:
        body = login(s, "anyone", "anything")
        assert body["role"] == "ADMIN" and body["sessionId"]
        assert check(s, "whatever-token")["userId"] == "user"
    finally:
        s.close()


# -- registration ----------------------------------------------------------------------------------
def _code_from_mail(server: Server, to: str) -> str:
    mails = [m for m in server.mails() if m["To"] == to]
    assert mails, "no validation mail"
    match = re.search(r"validationCode=([0-9a-f-]{36})", mails[-1].get_content())
    assert match
    return match.group(1)


def test_register_validate_login_flow(server: Server) -> None:
    r = server.post("/auth/register", json={"userId": "New@Example.org", "password": "long-enough",
                                             "name": "New", "surname": "User"})
    assert r.status_code == 200
    assert r.json == {"boolValue": True, "intValue": 200, "stringValue": "Welcome to space"}
    assert login(server, "new@example.org", "long-enough") == INVALID_USER  # not validated yet
    code = _code_from_mail(server, "new@example.org")
    bad = server.get("/auth/validateNewUser", email="new@example.org", validationCode="0" * 36)
    assert bad.status_code == 200 and bad.json["boolValue"] is False
    ok = server.get("/auth/validateNewUser", email="new@example.org", validationCode=code)
    assert ok.json == {"boolValue": True, "stringValue": "new@example.org"}
    body = login(server, "new@example.org", "long-enough")
    assert body["userId"] == "new@example.org" and body["type"] == "FREE"
    subs = server.services.store.collection("subscriptions").find(userId="new@example.org")
    assert len(subs) == 1 and subs[0]["typeId"] == "Free" and subs[0]["buySuccess"] is True
    assert round((subs[0]["endDate"] - subs[0]["startDate"]) / 86_400_000) == 90
    user = server.services.users.get("new@example.org")
    project = server.services.store.collection("projects").get(user["activeProjectId"])
    assert project["subscriptionId"] == subs[0]["subscriptionId"] and project["name"] == "WASDI Trial"
    again = server.get("/auth/validateNewUser", email="new@example.org", validationCode=code)
    assert again.json["boolValue"] is False


def test_register_existing_user_is_304(server: Server, alice: Person) -> None:
    r = server.post("/auth/register", json={"userId": "alice@example.org", "password": "long-enough"})
    assert r.status_code == 304


@pytest.mark.parametrize("body,status", [
    (None, 400), ({}, 400), ({"password": "long-enough"}, 400), ({"userId": "a@b.org", "password": "short"}, 400),
    ({"userId": "not-an-email", "password": "long-enough"}, 400),
    ({"userId": "../../etc@x.org", "password": "long-enough"}, 400),
])
def test_register_bad_input_status_equals_int_value(server: Server, body, status: int) -> None:
    r = server.post("/auth/register", body=json.dumps(body) if body is not None else b"",
                    content_type="application/json")
    assert r.status_code == status and r.json["intValue"] == status and r.json["boolValue"] is False


def test_validate_requires_both_parameters(server: Server) -> None:
    r = server.get("/auth/validateNewUser", email="x@y.org")
    assert r.status_code == 200 and r.json["boolValue"] is False and r.json["intValue"] == 400


# -- profile and password ----------------------------------------------------------------------------
def test_edit_user_details(server: Server, alice: Person) -> None:
    r = server.post("/auth/editUserDetails", alice, json={"name": "Alicia", "surname": "Smith",
                                                           "publicNickName": "ally", "link": "https://x.org",
                                                           "description": "EO analyst", "role": "ADMIN"})
    assert r.status_code == 200
    assert r.json["name"] == "Alicia" and r.json["publicNickName"] == "ally" and r.json["sessionId"] == alice.token
    stored = server.services.users.get("alice@example.org")
    assert stored["description"] == "EO analyst" and stored["role"] == "USER"  # no self-promotion


@pytest.mark.parametrize("body", [{"name": ""}, {"surname": "   "}, {"name": "x" * 5000}])
def test_edit_user_details_invalid_gives_invalid_user(server: Server, alice: Person, body: dict) -> None:
    r = server.post("/auth/editUserDetails", alice, json=body)
    assert r.status_code == 200 and r.json["userId"] == ""


def test_edit_user_details_needs_session(server: Server) -> None:
    r = server.post("/auth/editUserDetails", json={"name": "x"})
    assert r.status_code == 200 and r.json["userId"] == ""


def test_change_password(server: Server, alice: Person) -> None:
    r = server.post("/auth/changePassword", alice, json={"currentPassword": PASSWORD, "newPassword": "brand-new-pw"})
    assert r.status_code == 200 and r.json == {"boolValue": True}
    assert login(server, "alice@example.org", PASSWORD) == INVALID_USER
    assert login(server, "alice@example.org", "brand-new-pw")["sessionId"]


@pytest.mark.parametrize("body", [
    {"currentPassword": "wrong-password", "newPassword": "brand-new-pw"},
    {"currentPassword": PASSWORD, "newPassword": "short"},
    {"currentPassword": PASSWORD},
])
def test_change_password_refusals(server: Server, alice: Person, body: dict) -> None:
    r = server.post("/auth/changePassword", alice, json=body)
    assert r.status_code == 200 and r.json["boolValue"] is False
    assert login(server, "alice@example.org", PASSWORD)["sessionId"]


def test_change_password_invalid_session(server: Server) -> None:
    r = server.post("/auth/changePassword", json={"currentPassword": PASSWORD, "newPassword": "brand-new-pw"})
    assert r.status_code == 200 and r.json["boolValue"] is False and r.json["intValue"] == 401


def test_lost_password_mails_a_working_new_password(server: Server, alice: Person) -> None:
    r = server.get("/auth/lostPassword", userId="alice@example.org")
    assert r.status_code == 200 and r.json == {"boolValue": True, "intValue": 0}
    mail = [m for m in server.mails() if m["To"] == "alice@example.org"][-1]
    new_password = re.search(r"PASSWORD: (\S+)", mail.get_content()).group(1)
    assert login(server, "alice@example.org", PASSWORD) == INVALID_USER
    assert login(server, "alice@example.org", new_password)["sessionId"]


@pytest.mark.parametrize("params", [{}, {"userId": "ghost@example.org"}, {"userId": ""}])
def test_lost_password_unknown_or_missing_is_400(server: Server, params: dict) -> None:
    r = server.get("/auth/lostPassword", **params)
    assert r.status_code == 400 and r.json["intValue"] == 400 and r.json["boolValue"] is False


# -- configuration -----------------------------------------------------------------------------------
def test_config_lists_public_missions(server: Server, alice: Person) -> None:
    r = server.get("/auth/config", alice)
    assert r.status_code == 200
    values = {m["indexvalue"] for m in r.json["missions"]}
    assert {"Sentinel-1", "Sentinel-2"} <= values
    assert r.json["orbitsearch"]["sensortypes"] == ["SAR", "Optical"]


@pytest.mark.parametrize("path", ["/auth/config", "/auth/privatemissions", "/auth/skin"])
def test_config_endpoints_need_a_session(server: Server, path: str) -> None:
    r = server.get(path)
    assert r.status_code == 401 and r.json == {"message": "MSG_ERROR_INVALID_SESSION"}


def test_private_missions_owned_and_shared(tmp_path) -> None:
    missions = tmp_path / "missions.json"
    missions.write_text(json.dumps({"missions": [
        {"name": "Secret", "indexname": "platformname", "indexvalue": "SECRET", "ispublic": False,
         "userid": "alice@example.org"},
        {"name": "Open", "indexname": "platformname", "indexvalue": "OPEN"}], "orbitsearch": {}}))
    s = Server(tmp_path / "d", missions_file=str(missions))
    try:
        alice, bob, carol = (s.add_user(u) for u in ("alice@example.org", "bob@example.org", "carol@example.org"))
        assert [m["missionIndexValue"] for m in s.get("/auth/privatemissions", alice).json] == ["SECRET"]
        assert s.get("/auth/privatemissions", bob).json == []
        assert [m["indexvalue"] for m in s.get("/auth/config", bob).json["missions"]] == ["OPEN"]
        from wasdi_server.services.sharing import Resource

        s.services.sharing.share(s.services.users.active_user("alice@example.org"),
                                 Resource("mission", "SECRET", "alice@example.org", "Secret"), "bob@example.org")
        shared = s.get("/auth/privatemissions", bob).json
        assert shared[0]["missionIndexValue"] == "SECRET" and shared[0]["permissionType"] == "read"
        assert {m["indexvalue"] for m in s.get("/auth/config", bob).json["missions"]} == {"OPEN", "SECRET"}
        assert s.get("/auth/privatemissions", carol).json == []
    finally:
        s.close()


def test_skin_default_and_configured(tmp_path) -> None:
    s = Server(tmp_path / "d", skins={"acme": {"tabTitle": "ACME EO", "brandMainColor": "#000000"}})
    try:
        alice = s.add_user("alice@example.org")
        default = s.get("/auth/skin", alice).json
        assert default["tabTitle"] == "Wasdi 2.0" and default["activateSubscriptions"] is True
        acme = s.get("/auth/skin", alice, skin="acme").json
        assert acme["tabTitle"] == "ACME EO" and acme["helpLink"] == default["helpLink"]
        assert s.get("/auth/skin", alice, skin="unknown").json == default
    finally:
        s.close()


# -- upload accounts -----------------------------------------------------------------------------------
def test_upload_account_lifecycle(server: Server, alice: Person) -> None:
    assert server.get("/auth/upload/existsaccount", alice).json is False
    r = server.post("/auth/upload/createaccount", alice, body="alice.transfer@example.org", content_type="text/plain")
    assert r.status_code == 200
    mail = [m for m in server.mails() if m["To"] == "alice.transfer@example.org"][-1]
    assert "PASSWORD:" in mail.get_content()
    assert server.get("/auth/upload/existsaccount", alice).json is True
    assert server.get("/auth/upload/list", alice).json == []
    folder = server.settings.uploads_root / "alice@example.org"
    (folder / "scene.tif").write_bytes(b"x")
    assert server.get("/auth/upload/list", alice).json == ["scene.tif"]
    again = server.post("/auth/upload/createaccount", alice, body="alice@example.org", content_type="text/plain")
    assert again.status_code == 400
    upd = server.post("/auth/upload/updatepassword", alice, body="alice@example.org", content_type="text/plain")
    assert upd.status_code == 200
    assert [m for m in server.mails() if m["To"] == "alice@example.org"]
    assert server.delete("/auth/upload/removeaccount", alice).status_code == 200
    assert server.get("/auth/upload/existsaccount", alice).json is False


@pytest.mark.parametrize("body", ["", "not-an-email", "a@b"])
def test_upload_account_needs_a_valid_email(server: Server, alice: Person, body: str) -> None:
    r = server.post("/auth/upload/createaccount", alice, body=body, content_type="text/plain")
    assert r.status_code == 400


def test_upload_update_password_without_account_is_400(server: Server, alice: Person) -> None:
    r = server.post("/auth/upload/updatepassword", alice, body="alice@example.org", content_type="text/plain")
    assert r.status_code == 400


def test_upload_endpoints_invalid_session(server: Server) -> None:
    assert server.get("/auth/upload/existsaccount").json is False
    r = server.get("/auth/upload/list")
    assert r.status_code == 200 and r.text == "null"
    assert server.post("/auth/upload/createaccount", body="a@b.org").status_code == 401
    assert server.post("/auth/upload/updatepassword", body="a@b.org").status_code == 401
    assert server.delete("/auth/upload/removeaccount").status_code == 401
