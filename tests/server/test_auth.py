"""/auth through the real app: every status and failure style the contract lists."""

from __future__ import annotations

import json
import re
import time

import pytest
from tests.conftest import PASSWORD, Person, Server

from wasdi_server.domains.accounts.sessions import token_digest

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
    sessions.update(token_digest(alice.token), {"lastTouch": time.time() * 1000 - 25 * 3600 * 1000})
    assert check(server, alice.token)["userId"] == ""
    assert sessions.get(token_digest(alice.token)) is None  # an expired session is removed when seen


def test_use_slides_the_expiry(server: Server, alice: Person) -> None:
    sessions = server.services.store.collection("sessions")
    old = time.time() * 1000 - 23 * 3600 * 1000
    sessions.update(token_digest(alice.token), {"lastTouch": old})
    assert check(server, alice.token)["userId"] == "alice@example.org"
    assert sessions.get(token_digest(alice.token))["lastTouch"] > old


def test_logout_deletes_the_session(server: Server, alice: Person) -> None:
    r = server.get("/auth/logout", alice)
    assert r.status_code == 200 and r.json == {"boolValue": True, "stringValue": alice.token}
    assert server.services.store.collection("sessions").get(token_digest(alice.token)) is None
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


def mailed_password(server: Server, user_id: str) -> str:
    mail = [m for m in server.mails() if m["To"] == user_id][-1]
    return re.search(r"PASSWORD: (\S+)", mail.get_content()).group(1)


def test_lost_password_mails_a_new_password_the_old_one_works_until_it_is_used(server: Server,
                                                                               alice: Person) -> None:
    r = server.get("/auth/lostPassword", userId="alice@example.org")
    assert r.status_code == 200 and r.json == {"boolValue": True, "intValue": 0}
    new_password = mailed_password(server, "alice@example.org")
    # A stranger asking for a reset locks nobody out: the old password still opens the account.
    assert login(server, "alice@example.org", PASSWORD)["sessionId"]
    assert check(server, alice.token)["userId"] == "alice@example.org"
    assert login(server, "alice@example.org", new_password)["sessionId"]
    # From the first use of the mailed password on, it is the password and the old one is gone,
    # and so are the sessions opened under the old one.
    assert login(server, "alice@example.org", PASSWORD) == INVALID_USER
    assert check(server, alice.token)["userId"] == ""
    assert login(server, "alice@example.org", new_password)["sessionId"]


def test_lost_password_sends_at_most_one_mail_per_few_minutes(server: Server, alice: Person) -> None:
    before = len(server.mails())
    for _ in range(3):
        r = server.get("/auth/lostPassword", userId="alice@example.org")
        assert r.status_code == 200 and r.json == {"boolValue": True, "intValue": 0}
    assert len(server.mails()) == before + 1
    assert login(server, "alice@example.org", mailed_password(server, "alice@example.org"))["sessionId"]


def test_lost_password_mail_expires_after_the_limit(server: Server, alice: Person) -> None:
    server.get("/auth/lostPassword", userId="alice@example.org")
    new_password = mailed_password(server, "alice@example.org")
    users = server.services.store.collection("users")
    users.update("alice@example.org", {"resetDate": time.time() * 1000 - 8 * 24 * 3600 * 1000})
    assert login(server, "alice@example.org", new_password) == INVALID_USER
    assert login(server, "alice@example.org", PASSWORD)["sessionId"]


def test_change_password_ends_the_other_sessions_and_keeps_this_one(server: Server, alice: Person) -> None:
    other = login(server, "alice@example.org", PASSWORD)["sessionId"]
    body = {"currentPassword": PASSWORD, "newPassword": "brand-new-pw"}
    r = server.post("/auth/changePassword", alice, json=body)
    assert r.status_code == 200 and r.json["boolValue"] is True
    assert check(server, other)["userId"] == ""
    assert check(server, alice.token)["userId"] == "alice@example.org"


def test_sessions_are_stored_as_digests(server: Server, alice: Person) -> None:
    stored = server.services.store.collection("sessions").all()
    assert stored and all(alice.token not in json.dumps(d) for d in stored)
    assert server.services.store.collection("sessions").get(token_digest(alice.token))["userId"] == alice.user_id


def test_a_clear_token_of_an_older_data_directory_is_rekeyed_at_start(tmp_path) -> None:
    first = Server(tmp_path / "d")
    first.services.users.add("old@example.org", PASSWORD)
    first.services.store.collection("sessions").insert(
        {"sessionId": "legacy-token", "userId": "old@example.org", "loginDate": time.time() * 1000,
         "lastTouch": time.time() * 1000})
    first.services.close()
    second = Server(tmp_path / "d")
    try:
        sessions = second.services.store.collection("sessions")
        assert sessions.get("legacy-token") is None
        assert check(second, "legacy-token")["userId"] == "old@example.org"
    finally:
        second.services.close()


def test_the_session_user_cache_is_bounded(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server.services.sessions._user_cache, "max_entries", 5)
    server.services.users.add("many@example.org", PASSWORD)
    tokens = [server.services.sessions.open("many@example.org") for _ in range(20)]
    for token in tokens:
        assert server.services.sessions.resolve(token) is not None
    assert server.services.sessions.cached_count() <= 5


def test_end_all_of_user_ends_every_session_and_is_idempotent(server: Server, alice: Person) -> None:
    other = server.services.sessions.open(alice.user_id)
    assert server.services.sessions.end_all_of_user(alice.user_id) == 2
    assert server.services.sessions.end_all_of_user(alice.user_id) == 0
    assert check(server, other)["userId"] == "" and check(server, alice.token)["userId"] == ""


# -- throttling ------------------------------------------------------------------------------------
def test_repeated_wrong_passwords_are_refused_for_a_while_even_with_the_right_one(server: Server,
                                                                                   alice: Person) -> None:
    for _ in range(8):
        assert login(server, "alice@example.org", "wrong-password") == INVALID_USER
    # The same client address is now slowed down for this account, right password or not.
    assert login(server, "alice@example.org", PASSWORD) == INVALID_USER


def test_a_stranger_failing_cannot_lock_the_owner_out(server: Server, alice: Person) -> None:
    throttle = server.services.login.throttle
    throttle.succeeded("alice@example.org", "10.0.0.1")  # the owner has logged in from here before
    for n in range(40):
        throttle.failed("alice@example.org", f"203.0.113.{n}")
    assert throttle.wait_seconds("alice@example.org", "10.0.0.1") == 0
    assert throttle.wait_seconds("alice@example.org", "203.0.113.200") > 0  # unknown addresses are slowed


def test_the_throttle_delay_grows_and_is_forgotten() -> None:
    from wasdi_server.domains.accounts.login_throttle import FORGET_AFTER_SECONDS, PAIR, LoginThrottle

    now = [1000.0]
    throttle = LoginThrottle(clock=lambda: now[0])
    waits = []
    for _ in range(PAIR.free + 4):
        throttle.failed("bob@example.org", "192.0.2.1")
        waits.append(throttle.wait_seconds("bob@example.org", "192.0.2.1"))
    assert waits[: PAIR.free - 1] == [0.0] * (PAIR.free - 1)
    assert waits[-1] > waits[-2] > waits[-3] > 0
    assert throttle.wait_seconds("carol@example.org", "192.0.2.2") == 0
    now[0] += FORGET_AFTER_SECONDS + 1
    assert throttle.wait_seconds("bob@example.org", "192.0.2.1") == 0


def test_login_rehashes_a_password_made_with_older_parameters(server: Server, alice: Person,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from wasdi_server.domains.accounts import passwords

    users = server.services.store.collection("users")
    old_hash = users.get("alice@example.org")["passwordHash"]
    monkeypatch.setattr(passwords, "SCRYPT_N", 2**9)
    assert login(server, "alice@example.org", PASSWORD)["sessionId"]
    new_hash = users.get("alice@example.org")["passwordHash"]
    assert new_hash != old_hash and new_hash.startswith("scrypt$512$")
    assert login(server, "alice@example.org", PASSWORD)["sessionId"]


def test_a_planted_hash_with_huge_parameters_is_refused_not_run() -> None:
    from wasdi_server.domains.accounts.passwords import verify_password

    assert verify_password("whatever1", "scrypt$1073741824$8$1$AAAA$AAAA") is False


@pytest.mark.parametrize("params", [{}, {"userId": "not an address"}, {"userId": ""}])
def test_lost_password_missing_or_invalid_is_400(server: Server, params: dict) -> None:
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
        from wasdi_server.domains.accounts.sharing import Resource

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
