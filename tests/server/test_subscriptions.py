"""/subscriptions through the real app: listing, editing, sharing, payment and their failure styles."""

from __future__ import annotations

import re
import time
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from tests.conftest import Person, Server

from wasdi_server.dates import iso_z_ms as iso_from_ms
from wasdi_server.domains.commerce.subscription_terms import DAY_MS, parse_date
from wasdi_server.errors import BadRequest
from wasdi_server.providers.payments.base import CheckoutRequest, CheckoutSession, PaymentError

ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
LIST_FIELDS = {"subscriptionId", "ownerUserId", "name", "typeId", "typeName", "startDate", "endDate", "reason",
               "buySuccess", "readOnly"}
VIEW_FIELDS = {"subscriptionId", "name", "description", "typeId", "typeName", "startDate", "endDate",
               "durationDays", "userId", "buySuccess", "readOnly"}


def ms(text: str) -> int:
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def assert_error(r: Any, status: int) -> None:
    assert r.status_code == status, r.text
    assert set(r.json) == {"message"} and r.json["message"], r.json


def add(server: Server, who: Person | None, body: Any) -> Any:
    return server.post("/subscriptions/add", who, json=body)


def create(server: Server, who: Person, type_id: str = "OneMonthStandard", **fields: Any) -> str:
    r = add(server, who, {"typeId": type_id, **fields})
    assert r.status_code == 200, r.text
    return str(r.json["message"])


def update(server: Server, who: Person | None, body: Any) -> Any:
    return server.http.simulate_put("/subscriptions/update", headers=who.headers if who else None, json=body)


def share(server: Server, who: Person | None, sub: str | None, user: str | None, rights: str | None = None) -> Any:
    params = {k: v for k, v in (("subscription", sub), ("userId", user), ("rights", rights)) if v is not None}
    return server.http.simulate_post("/subscriptions/share/add", params=params, headers=who.headers if who else None)


def stored(server: Server, sub: str) -> dict[str, Any]:
    return server.services.store.collection("subscriptions").get(sub)


def user_doc(server: Server, who: Person) -> dict[str, Any]:
    return server.services.users.get(who.user_id)


def trial_of(server: Server, who: Person) -> str:
    return str(server.services.store.collection("subscriptions").find_one(userId=who.user_id)["subscriptionId"])


@pytest.fixture
def team(server: Server, alice: Person, bob: Person, carol: Person, admin: Person) -> dict[str, Any]:
    """Alice's paid "Main" subscription shared with bob (write) and carol (read); eve is a stranger."""
    sub = create(server, admin, "OneYearStandard", name="Main", userId=alice.user_id, buySuccess=True)
    assert share(server, alice, sub, bob.user_id, "write").json == {"message": "Done"}
    assert share(server, alice, sub, carol.user_id).json == {"message": "Done"}
    eve = server.add_user("eve@example.org")
    return {"sub": sub, "owner": alice, "writer": bob, "reader": carol, "stranger": eve, "admin": admin}


# -- dates --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("value,expected", [
    ("2024-03-01T10:20:30.123Z", ms("2024-03-01T10:20:30.123Z")),
    ("2024-03-01T10:20:30Z", ms("2024-03-01T10:20:30Z")),
    ("2024-03-01T12:20:30+02:00", ms("2024-03-01T10:20:30Z")),
    ("2024-03-01", ms("2024-03-01T00:00:00Z")),
    (1709288430123, 1709288430123), (1.709288430123e12, 1709288430123), ("1709288430123", 1709288430123),
    (None, None), ("", None),
])
def test_parse_date_accepts_iso_and_epoch(value: Any, expected: int | None) -> None:
    assert parse_date(value, "d") == expected


@pytest.mark.parametrize("value", ["yesterday", "2024-13-01", -5, 1e20, "nan", True, [1], "9" * 80])
def test_parse_date_refuses_junk(value: Any) -> None:
    with pytest.raises(BadRequest):
        parse_date(value, "d")


def test_iso_from_ms() -> None:
    assert iso_from_ms(ms("2024-03-01T10:20:30.123Z")) == "2024-03-01T10:20:30.123Z"
    assert iso_from_ms(None) is None


# -- byuser and active ---------------------------------------------------------------------------------
def test_byuser_owned_shared_and_organization(server: Server, team: dict[str, Any]) -> None:
    bob, alice = team["writer"], team["owner"]
    org = server.post("/organizations/add", bob, json={"name": "Bob Corp"}).json["message"]
    server.http.simulate_post("/organizations/share/add", headers=bob.headers,
                              params={"organization": org, "userId": team["reader"].user_id})
    org_sub = create(server, team["admin"], "OneMonthProfessional", userId=team["stranger"].user_id,
                     organizationId=org, buySuccess=True)
    listed = server.get("/subscriptions/byuser", team["reader"]).json
    reasons = {s["subscriptionId"]: (s["reason"], s["readOnly"]) for s in listed}
    assert reasons == {trial_of(server, team["reader"]): ("owner", False), org_sub: ("shared by Bob Corp", True),
                       team["sub"]: ("shared by user", True)}
    assert [s["reason"] for s in listed] == ["owner", "shared by Bob Corp", "shared by user"]
    for item in listed:
        assert set(item) - {"organizationId", "organizationName"} == LIST_FIELDS
        assert ISO.match(item["startDate"]) and ISO.match(item["endDate"])
    writer = {s["subscriptionId"]: s for s in server.get("/subscriptions/byuser", bob).json}
    assert writer[team["sub"]]["readOnly"] is False and writer[team["sub"]]["ownerUserId"] == alice.user_id
    assert writer[org_sub]["reason"] == "shared by Bob Corp"  # the organization's owner sees it too


def test_byuser_valid_keeps_paid_current_ones(server: Server, alice: Person, admin: Person) -> None:
    unpaid = create(server, alice, "OneDayStandard")
    expired = create(server, admin, "OneDayStandard", userId=alice.user_id, buySuccess=True,
                     startDate="2020-01-01T00:00:00.000Z")
    future = create(server, admin, "OneDayStandard", userId=alice.user_id, buySuccess=True,
                    startDate="2999-01-01T00:00:00.000Z")
    everything = {s["subscriptionId"] for s in server.get("/subscriptions/byuser", alice).json}
    assert {unpaid, expired, future, trial_of(server, alice)} == everything
    assert [s["subscriptionId"] for s in server.get("/subscriptions/byuser", alice, valid="true").json] == \
        [trial_of(server, alice)]
    assert len(server.get("/subscriptions/byuser", alice, valid="false").json) == 4
    assert_error(server.get("/subscriptions/byuser", alice, valid="maybe"), 400)
    assert_error(server.get("/subscriptions/byuser"), 401)


def test_active_is_the_users_active_one_or_the_best_valid(server: Server, alice: Person, admin: Person) -> None:
    trial = trial_of(server, alice)
    r = server.get("/subscriptions/active", alice)
    assert r.status_code == 200 and r.json["subscriptionId"] == trial and r.json["reason"] == "owner"
    pro = create(server, admin, "OneMonthProfessional", userId=alice.user_id, buySuccess=True)
    assert server.get("/subscriptions/active", alice).json["subscriptionId"] == trial  # still the active one
    server.services.users.set_active_project(alice.user_id, None, None)
    assert server.get("/subscriptions/active", alice).json["subscriptionId"] == pro  # best valid: PROFESSIONAL
    server.services.store.collection("subscriptions").update(pro, {"endDate": time.time() * 1000 - 1000})
    server.services.users.set_active_project(alice.user_id, None, pro)  # active but expired: skipped
    assert server.get("/subscriptions/active", alice).json["subscriptionId"] == trial


def test_active_404_without_valid_subscription(server: Server, alice: Person) -> None:
    nobody = server.add_user("nobody@example.org", trial=False)
    assert_error(server.get("/subscriptions/active", nobody), 404)
    create(server, nobody, "OneMonthStandard")  # unpaid: not valid
    assert_error(server.get("/subscriptions/active", nobody), 404)
    assert_error(server.get("/subscriptions/active"), 401)


# -- count, types, list (admin) ---------------------------------------------------------------------
def test_count_is_admin_only(server: Server, alice: Person, bob: Person, admin: Person) -> None:
    r = server.get("/subscriptions/count", admin)
    assert r.status_code == 200 and r.json == {"intValue": 3}
    assert_error(server.get("/subscriptions/count", alice), 403)
    assert_error(server.get("/subscriptions/count"), 401)


def test_types(server: Server, alice: Person) -> None:
    r = server.get("/subscriptions/types", alice)
    assert r.status_code == 200
    assert [t["typeId"] for t in r.json] == ["Free", "OneDayStandard", "OneWeekStandard", "OneMonthStandard",
                                             "OneYearStandard", "OneMonthProfessional", "OneYearProfessional"]
    assert r.json[1] == {"typeId": "OneDayStandard", "name": "One Day Standard", "description": "One Day Standard"}
    assert_error(server.get("/subscriptions/types"), 401)


@pytest.fixture
def many(server: Server, admin: Person) -> list[str]:
    users = [server.add_user(f"u{i}@example.org", trial=False) for i in range(3)]
    ids = []
    for i in range(12):
        owner = users[i % 3]
        ids.append(create(server, admin, "OneDayStandard", name=f"Sub {i:02d}", userId=owner.user_id,
                          buySuccess=i % 2 == 0, startDate=1_700_000_000_000 + i * 1000 * 86_400_000))
    return ids


def test_list_defaults_are_offset_0_limit_10_by_name_asc(server: Server, admin: Person, many: list[str]) -> None:
    r = server.get("/subscriptions/list", admin)
    assert r.status_code == 200
    names = [s["name"] for s in r.json]
    everything = sorted([f"Sub {i:02d}" for i in range(12)] + ["WASDI Trial"], key=str.casefold)
    assert names == everything[:10]
    assert all(s["reason"] == "owner" and s["readOnly"] is False for s in r.json)


def test_list_filters_paging_and_sorting(server: Server, admin: Person, many: list[str]) -> None:
    def names(**params: Any) -> list[str]:
        r = server.get("/subscriptions/list", admin, **params)
        assert r.status_code == 200, r.text
        return [s["name"] for s in r.json]

    assert names(userfilter="U1@EXAMPLE", limit=50) == ["Sub 01", "Sub 04", "Sub 07", "Sub 10"]
    assert names(namefilter="sub 1") == ["Sub 10", "Sub 11"]
    assert names(idfilter=many[3][:8]) == ["Sub 03"]
    assert names(userfilter="u1@", namefilter="Sub 0") == ["Sub 01", "Sub 04", "Sub 07"]  # filters combine
    assert names(namefilter="Sub", offset=10) == ["Sub 10", "Sub 11"]
    assert names(namefilter="Sub", limit=3, order="desc") == ["Sub 11", "Sub 10", "Sub 09"]
    assert names(namefilter="Sub", sortby="endDate", order="desc", limit=2) == ["Sub 11", "Sub 10"]
    assert names(namefilter="Sub", statusfilter="unpaid") == [f"Sub {i:02d}" for i in range(1, 12, 2)]
    assert names(namefilter="Sub", statusfilter="paid", limit=2) == ["Sub 00", "Sub 02"]
    assert names(statusfilter="valid") == ["WASDI Trial"]  # the admin's trial; the others are past
    assert names(namefilter="Sub", statusfilter="expired", limit=1) == ["Sub 00"]
    assert names(namefilter="Sub", limit=0) == []


@pytest.mark.parametrize("params", [{"sortby": "password"}, {"order": "sideways"}, {"statusfilter": "weird"},
                                    {"offset": "-1"}, {"limit": "-5"}, {"offset": "ten"}, {"limit": "1.5"}])
def test_list_bad_parameters_are_400(server: Server, admin: Person, params: dict[str, str]) -> None:
    assert_error(server.get("/subscriptions/list", admin, **params), 400)


def test_list_is_admin_only(server: Server, alice: Person) -> None:
    assert_error(server.get("/subscriptions/list", alice), 403)
    assert_error(server.get("/subscriptions/list"), 401)


# -- byId ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("role,status,read_only", [
    ("owner", 200, False), ("writer", 200, False), ("reader", 200, True), ("admin", 200, False),
    ("stranger", 403, None),
])
def test_byid_permissions(server: Server, team: dict[str, Any], role: str, status: int,
                          read_only: bool | None) -> None:
    r = server.get("/subscriptions/byId", team[role], subscription=team["sub"])
    if status == 200:
        assert r.status_code == 200 and r.json["readOnly"] is read_only
        assert set(r.json) == VIEW_FIELDS | {"buyDate"}
        assert r.json["userId"] == team["owner"].user_id and r.json["typeName"] == "One Year Standard"
        assert ISO.match(r.json["buyDate"]) and r.json["buySuccess"] is True
    else:
        assert_error(r, status)


@pytest.mark.parametrize("params", [{}, {"subscription": ""}, {"subscription": "missing"},
                                    {"subscription": "../x"}, {"subscription": "y" * 9000}])
def test_byid_bad_input(server: Server, alice: Person, params: dict[str, str]) -> None:
    assert_error(server.get("/subscriptions/byId", alice, **params), 400)


def test_byid_needs_a_session(server: Server, team: dict[str, Any]) -> None:
    assert_error(server.get("/subscriptions/byId", subscription=team["sub"]), 401)


# -- add ------------------------------------------------------------------------------------------------
def test_add_by_a_user(server: Server, alice: Person, bob: Person) -> None:
    before = int(time.time() * 1000)
    r = add(server, alice, {"name": "Mine", "typeId": "OneMonthStandard", "userId": bob.user_id, "buySuccess": True,
                            "buyDate": "2024-01-01T00:00:00.000Z", "startDate": "2001-01-01T00:00:00.000Z",
                            "endDate": "2099-01-01T00:00:00.000Z", "durationDays": 9999, "description": "desc"})
    assert r.status_code == 200, r.text
    doc = stored(server, r.json["message"])
    # the target user is the caller, it is unpaid, and the period is the type's, starting now (not in 2001)
    assert doc["userId"] == alice.user_id and doc["buySuccess"] is False and doc["buyDate"] is None
    assert before <= doc["startDate"] <= time.time() * 1000
    start = datetime.fromtimestamp(doc["startDate"] / 1000, UTC)
    end = datetime.fromtimestamp(doc["endDate"] / 1000, UTC)
    assert (end.year * 12 + end.month) - (start.year * 12 + start.month) == 1 and end.day <= start.day
    assert doc["durationDays"] in (28, 29, 30, 31) and doc["description"] == "desc"
    body = server.get("/subscriptions/byId", alice, subscription=doc["subscriptionId"]).json
    assert body["name"] == "Mine" and "buyDate" not in body and body["readOnly"] is False


@pytest.mark.parametrize("type_id,days", [("OneDayStandard", 1), ("OneWeekStandard", 7), ("Free", 90),
                                          ("OneYearProfessional", None)])
def test_add_derives_the_end_from_the_type(server: Server, alice: Person, type_id: str, days: int | None) -> None:
    doc = stored(server, create(server, alice, type_id))
    if days is None:
        assert doc["durationDays"] in (365, 366)
    else:
        assert doc["endDate"] - doc["startDate"] == days * DAY_MS and doc["durationDays"] == days


def test_add_also_creates_the_default_project(server: Server, alice: Person) -> None:
    sub = create(server, alice, name="Floods")
    projects = server.get("/projects/bysubscription", alice, subscription=sub).json
    assert [(p["name"], p["subscriptionName"], p["activeProject"]) for p in projects] == [("Floods", "Floods", False)]
    assert projects[0]["description"] == "Project automatically created for the Floods subscription"


def test_add_activates_the_project_of_a_user_without_one(server: Server) -> None:
    newbie = server.add_user("new@example.org", trial=False)
    sub = create(server, newbie, name="First")
    project = server.services.store.collection("projects").find_one(subscriptionId=sub)
    assert user_doc(server, newbie)["activeProjectId"] == project["projectId"]
    assert user_doc(server, newbie)["activeSubscriptionId"] == sub


def test_add_renames_on_name_clash(server: Server, alice: Person, bob: Person) -> None:
    first, second, third = (create(server, alice, name="Mine") for _ in range(3))
    assert [stored(server, s)["name"] for s in (first, second, third)] == ["Mine", "Mine(1)", "Mine(2)"]
    assert stored(server, create(server, bob, name="Mine"))["name"] == "Mine"  # names are per owner
    assert stored(server, create(server, alice, name="WASDI Trial"))["name"] == "WASDI Trial(1)"


def test_add_without_a_name_uses_the_type_name(server: Server, alice: Person) -> None:
    assert stored(server, create(server, alice, "OneWeekStandard"))["name"] == "One Week Standard"


def test_add_by_an_admin(server: Server, alice: Person, admin: Person) -> None:
    sub = create(server, admin, "OneDayStandard", userId="ALICE@example.org", buySuccess=True,
                 startDate=1_700_000_000_000, endDate="2030-01-01T00:00:00Z", name="Gift")
    doc = stored(server, sub)
    assert doc["userId"] == alice.user_id and doc["buySuccess"] is True and doc["buyDate"] is not None
    assert doc["startDate"] == 1_700_000_000_000 and doc["endDate"] == ms("2030-01-01T00:00:00Z")
    assert doc["durationDays"] == round((doc["endDate"] - doc["startDate"]) / DAY_MS)
    by_days = stored(server, create(server, admin, "OneDayStandard", startDate="2024-01-01", durationDays=10,
                                    buyDate="2024-01-02T00:00:00.000Z"))
    assert by_days["endDate"] - by_days["startDate"] == 10 * DAY_MS and by_days["durationDays"] == 10
    assert by_days["buyDate"] == ms("2024-01-02T00:00:00Z") and by_days["buySuccess"] is False
    assert by_days["userId"] == admin.user_id
    body = server.get("/subscriptions/byId", alice, subscription=sub).json
    assert body["startDate"] == iso_from_ms(1_700_000_000_000) and body["endDate"] == "2030-01-01T00:00:00.000Z"


@pytest.mark.parametrize("body,status", [
    ({}, 400), ({"typeId": "Platinum"}, 400), ({"typeId": None}, 400), ({"typeId": 7}, 400),
    ({"typeId": "Free", "name": "a/b"}, 400), ({"typeId": "Free", "name": ".."}, 400),
    ({"typeId": "Free", "name": "n" * 500}, 400), ({"typeId": "Free", "startDate": "soon"}, 400),
    ({"typeId": "Free", "startDate": "x" * 9000}, 400), ({"typeId": "Free", "buySuccess": "perhaps"}, 400),
    ({"typeId": "Free", "durationDays": "long"}, 400), ({"typeId": "Free", "organizationId": "missing"}, 400),
    ({"typeId": "Free", "description": "d" * 5000}, 400),
])
def test_add_bad_input_is_400(server: Server, alice: Person, body: dict[str, Any], status: int) -> None:
    count = server.services.store.collection("subscriptions").count()
    assert_error(add(server, alice, body), status)
    assert server.services.store.collection("subscriptions").count() == count


@pytest.mark.parametrize("body", [
    {"typeId": "Free", "userId": "ghost@example.org"}, {"typeId": "Free", "startDate": "2024-02-01",
                                                       "endDate": "2024-01-01"},
    {"typeId": "Free", "durationDays": -3}, {"typeId": "Free", "durationDays": 0},
])
def test_add_bad_admin_input_is_400(server: Server, admin: Person, body: dict[str, Any]) -> None:
    assert_error(add(server, admin, body), 400)


@pytest.mark.parametrize("raw", [b"", b"null", b"{oops", b"[]"])
def test_add_bad_json_is_400(server: Server, alice: Person, raw: bytes) -> None:
    assert_error(server.post("/subscriptions/add", alice, body=raw, content_type="application/json"), 400)


def test_add_into_an_organization_needs_write_on_it(server: Server, alice: Person, bob: Person) -> None:
    org = server.post("/organizations/add", alice, json={"name": "ACME"}).json["message"]
    assert stored(server, create(server, alice, organizationId=org))["organizationId"] == org
    assert_error(add(server, bob, {"typeId": "Free", "organizationId": org}), 403)
    server.http.simulate_post("/organizations/share/add", headers=alice.headers,
                              params={"organization": org, "userId": bob.user_id, "rights": "write"})
    assert stored(server, create(server, bob, organizationId=org))["organizationId"] == org


def test_add_needs_a_session(server: Server) -> None:
    assert_error(add(server, None, {"typeId": "Free"}), 401)


# -- update ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("role,status", [("owner", 200), ("writer", 200), ("reader", 403), ("stranger", 403),
                                         ("admin", 200)])
def test_update_permissions(server: Server, team: dict[str, Any], role: str, status: int) -> None:
    r = update(server, team[role], {"subscriptionId": team["sub"], "name": f"by {role}", "description": "new"})
    doc = stored(server, team["sub"])
    if status == 200:
        assert r.status_code == 200 and r.json == {"message": team["sub"]}
        assert doc["name"] == f"by {role}" and doc["description"] == "new"
        assert doc["userId"] == team["owner"].user_id
    else:
        assert_error(r, status)
        assert doc["name"] == "Main"


def test_non_admins_cannot_change_buy_success(server: Server, team: dict[str, Any]) -> None:
    sub = team["sub"]
    for role in ("owner", "writer"):
        assert update(server, team[role], {"subscriptionId": sub, "buySuccess": False}).status_code == 200
        assert stored(server, sub)["buySuccess"] is True
    unpaid = create(server, team["owner"], "OneDayStandard")
    assert update(server, team["owner"], {"subscriptionId": unpaid, "buySuccess": True,
                                          "buyDate": "2024-01-01"}).status_code == 200
    assert stored(server, unpaid)["buySuccess"] is False and stored(server, unpaid)["buyDate"] is None
    assert update(server, team["admin"], {"subscriptionId": unpaid, "buySuccess": True}).status_code == 200
    assert stored(server, unpaid)["buySuccess"] is True and stored(server, unpaid)["buyDate"] is not None
    assert update(server, team["admin"], {"subscriptionId": sub, "buySuccess": False}).status_code == 200
    assert stored(server, sub)["buySuccess"] is False


def test_paid_subscription_type_and_dates_are_frozen_for_non_admins(server: Server, team: dict[str, Any]) -> None:
    sub = team["sub"]
    before = stored(server, sub)
    r = update(server, team["owner"], {"subscriptionId": sub, "typeId": "OneYearProfessional",
                                       "startDate": "2000-01-01T00:00:00Z", "endDate": "2999-01-01T00:00:00Z",
                                       "durationDays": 100000})
    assert r.status_code == 200
    after = stored(server, sub)
    assert {k: after[k] for k in ("typeId", "startDate", "endDate", "durationDays")} == \
        {k: before[k] for k in ("typeId", "startDate", "endDate", "durationDays")}


def test_unpaid_subscription_type_change_rederives_the_end(server: Server, alice: Person) -> None:
    sub = create(server, alice, "OneDayStandard")
    view = server.get("/subscriptions/byId", alice, subscription=sub).json
    # sending back what was read changes nothing
    assert update(server, alice, view).status_code == 200
    assert stored(server, sub)["durationDays"] == 1
    r = update(server, alice, {"subscriptionId": sub, "typeId": "OneWeekStandard", "endDate": "2999-01-01"})
    assert r.status_code == 200
    doc = stored(server, sub)
    assert doc["typeId"] == "OneWeekStandard" and doc["typeName"] == "One Week Standard"
    assert doc["endDate"] - doc["startDate"] == 7 * DAY_MS and doc["durationDays"] == 7
    later = int(time.time() * 1000) + 30 * int(DAY_MS)
    assert update(server, alice, {"subscriptionId": sub, "startDate": later}).status_code == 200
    doc = stored(server, sub)
    assert doc["startDate"] == later and doc["endDate"] == later + 7 * DAY_MS
    assert_error(update(server, alice, {"subscriptionId": sub, "typeId": "Gold"}), 400)


def test_admin_sets_dates(server: Server, team: dict[str, Any]) -> None:
    sub = team["sub"]
    r = update(server, team["admin"], {"subscriptionId": sub, "startDate": "2024-01-01T00:00:00.000Z",
                                       "endDate": 1735689600000})
    assert r.status_code == 200
    doc = stored(server, sub)
    assert doc["startDate"] == ms("2024-01-01T00:00:00Z") and doc["endDate"] == 1735689600000
    assert doc["durationDays"] == 366
    assert update(server, team["admin"], {"subscriptionId": sub, "durationDays": 10}).status_code == 200
    assert stored(server, sub)["endDate"] == ms("2024-01-11T00:00:00Z")
    assert_error(update(server, team["admin"], {"subscriptionId": sub, "endDate": "2023-01-01"}), 400)


def test_update_renames_on_clash_and_keeps_own_name(server: Server, alice: Person) -> None:
    a = create(server, alice, name="A")
    b = create(server, alice, name="B")
    assert update(server, alice, {"subscriptionId": b, "name": "A"}).status_code == 200
    assert stored(server, b)["name"] == "A(1)"
    assert update(server, alice, {"subscriptionId": a, "name": "A"}).status_code == 200
    assert stored(server, a)["name"] == "A"


def test_update_attaches_and_detaches_an_organization(server: Server, alice: Person, bob: Person) -> None:
    sub = create(server, alice)
    mine = server.post("/organizations/add", alice, json={"name": "Mine"}).json["message"]
    bobs = server.post("/organizations/add", bob, json={"name": "Bobs"}).json["message"]
    assert update(server, alice, {"subscriptionId": sub, "organizationId": mine}).status_code == 200
    assert stored(server, sub)["organizationId"] == mine
    assert server.get("/subscriptions/byId", alice, subscription=sub).json["organizationName"] == "Mine"
    assert_error(update(server, alice, {"subscriptionId": sub, "organizationId": bobs}), 403)
    assert_error(update(server, alice, {"subscriptionId": sub, "organizationId": "missing"}), 400)
    assert update(server, alice, {"subscriptionId": sub, "organizationId": None}).status_code == 200
    assert stored(server, sub)["organizationId"] == mine  # null keeps
    assert update(server, alice, {"subscriptionId": sub, "organizationId": ""}).status_code == 200
    assert stored(server, sub)["organizationId"] is None


@pytest.mark.parametrize("body", [{}, {"name": "x"}, {"subscriptionId": ""}, {"subscriptionId": "missing"},
                                  {"subscriptionId": "../x"}])
def test_update_bad_input_is_400(server: Server, alice: Person, body: dict[str, Any]) -> None:
    assert_error(update(server, alice, body), 400)


def test_update_bad_values_empty_body_and_session(server: Server, alice: Person) -> None:
    sub = create(server, alice)
    for body in ({"subscriptionId": sub, "name": "a\\b"}, {"subscriptionId": sub, "startDate": "never"},
                 {"subscriptionId": sub, "description": "d" * 5000}):
        assert_error(update(server, alice, body), 400)
    assert_error(server.http.simulate_put("/subscriptions/update", headers=alice.headers, body=b""), 400)
    assert_error(update(server, None, {"subscriptionId": sub, "name": "x"}), 401)


# -- delete ---------------------------------------------------------------------------------------------
def test_owner_delete_removes_sharings_and_projects(server: Server, team: dict[str, Any]) -> None:
    sub, bob = team["sub"], team["writer"]
    project = server.services.store.collection("projects").find_one(subscriptionId=sub)
    assert server.put("/projects/active", bob, project=project["projectId"]).status_code == 200
    r = server.delete("/subscriptions/delete", team["owner"], subscription=sub)
    assert r.status_code == 200 and r.json == {"message": "Done"}
    assert stored(server, sub) is None
    assert server.services.store.collection("projects").count(subscriptionId=sub) == 0
    assert server.services.store.collection("sharings").count(resourceId=sub) == 0
    assert user_doc(server, bob)["activeProjectId"] is None and user_doc(server, bob)["activeSubscriptionId"] is None


@pytest.mark.parametrize("role", ["writer", "reader"])
def test_sharee_delete_removes_only_their_sharing(server: Server, team: dict[str, Any], role: str) -> None:
    r = server.delete("/subscriptions/delete", team[role], subscription=team["sub"])
    assert r.status_code == 200 and r.json == {"message": "Sharing removed"}
    assert stored(server, team["sub"]) is not None
    assert team["sub"] not in {s["subscriptionId"] for s in server.get("/subscriptions/byuser", team[role]).json}
    assert server.services.store.collection("projects").count(subscriptionId=team["sub"]) == 1


def test_stranger_and_organization_member_cannot_delete(server: Server, team: dict[str, Any]) -> None:
    assert_error(server.delete("/subscriptions/delete", team["stranger"], subscription=team["sub"]), 403)
    org = server.post("/organizations/add", team["owner"], json={"name": "ACME"}).json["message"]
    update(server, team["owner"], {"subscriptionId": team["sub"], "organizationId": org})
    server.http.simulate_post("/organizations/share/add", headers=team["owner"].headers,
                              params={"organization": org, "userId": team["stranger"].user_id, "rights": "write"})
    assert server.get("/subscriptions/byId", team["stranger"], subscription=team["sub"]).status_code == 200
    assert_error(server.delete("/subscriptions/delete", team["stranger"], subscription=team["sub"]), 403)
    assert stored(server, team["sub"]) is not None


def test_admin_delete_removes_everything(server: Server, team: dict[str, Any]) -> None:
    r = server.delete("/subscriptions/delete", team["admin"], subscription=team["sub"])
    assert r.status_code == 200 and r.json == {"message": "Done"}
    assert stored(server, team["sub"]) is None
    assert server.services.store.collection("sharings").count(resourceId=team["sub"]) == 0


def test_delete_clears_the_owners_active_project(server: Server, alice: Person) -> None:
    trial = trial_of(server, alice)
    assert user_doc(server, alice)["activeSubscriptionId"] == trial
    server.delete("/subscriptions/delete", alice, subscription=trial)
    assert user_doc(server, alice)["activeSubscriptionId"] is None
    assert user_doc(server, alice)["activeProjectId"] is None


def test_delete_bad_input_and_session(server: Server, alice: Person) -> None:
    sub = create(server, alice)
    assert_error(server.delete("/subscriptions/delete", alice), 400)
    assert_error(server.delete("/subscriptions/delete", alice, subscription="missing"), 400)
    assert_error(server.delete("/subscriptions/delete", alice, subscription="a/../b"), 400)
    assert_error(server.delete("/subscriptions/delete", subscription=sub), 401)


# -- sharing --------------------------------------------------------------------------------------------
def test_share_add_done_then_already_shared(server: Server, alice: Person, bob: Person) -> None:
    sub = create(server, alice, name="Team")
    assert share(server, alice, sub, bob.user_id).json == {"message": "Done"}
    again = share(server, alice, sub, bob.user_id, "write")
    assert again.status_code == 200 and again.json == {"message": "Already Shared"}
    assert server.get("/subscriptions/share/bysubscription", alice, subscription=sub).json == [
        {"subscriptionId": sub, "userId": bob.user_id, "ownerId": alice.user_id, "permissions": "read"}]
    mail = [m for m in server.mails() if m["To"] == bob.user_id]
    assert mail and "subscription" in mail[-1]["Subject"] and "Team" in mail[-1].get_content()


@pytest.mark.parametrize("role,status", [("owner", 200), ("writer", 200), ("reader", 403), ("stranger", 403),
                                         ("admin", 200)])
def test_share_add_permissions(server: Server, team: dict[str, Any], role: str, status: int) -> None:
    dave = server.add_user("dave@example.org")
    r = share(server, team[role], team["sub"], dave.user_id, "write")
    if status == 200:
        assert r.status_code == 200 and r.json == {"message": "Done"}
    else:
        assert_error(r, status)


@pytest.mark.parametrize("target,message", [
    ("alice@example.org", "MSG_ERROR_SHARING_WITH_ONESELF"),
    ("ghost@example.org", "MSG_ERROR_SHARING_WITH_NON_EXISTENT_USER"),
    ("", "MSG_ERROR_SHARING_WITH_NON_EXISTENT_USER"),
])
def test_share_add_refusals(server: Server, alice: Person, target: str, message: str) -> None:
    sub = create(server, alice)
    r = share(server, alice, sub, target or None)
    assert_error(r, 400)
    if target:
        assert r.json["message"] == message


def test_nobody_shares_a_subscription_with_themself(server: Server, team: dict[str, Any]) -> None:
    for role in ("writer", "admin"):
        r = share(server, team[role], team["sub"], team[role].user_id)
        assert_error(r, 400)
        assert r.json["message"] == "MSG_ERROR_SHARING_WITH_ONESELF"


def test_share_with_owner_and_bad_input(server: Server, team: dict[str, Any]) -> None:
    r = share(server, team["writer"], team["sub"], team["owner"].user_id)
    assert_error(r, 400)
    assert r.json["message"] == "MSG_ERROR_SHARING_WITH_OWNER"
    assert_error(share(server, team["owner"], None, team["stranger"].user_id), 400)
    assert_error(share(server, team["owner"], "missing", team["stranger"].user_id), 400)
    assert_error(share(server, None, team["sub"], team["stranger"].user_id), 401)


@pytest.mark.parametrize("role,status", [("owner", 200), ("writer", 200), ("reader", 200), ("stranger", 403),
                                         ("admin", 200)])
def test_share_list_permissions(server: Server, team: dict[str, Any], role: str, status: int) -> None:
    r = server.get("/subscriptions/share/bysubscription", team[role], subscription=team["sub"])
    if status == 200:
        assert r.status_code == 200
        assert {(s["userId"], s["permissions"]) for s in r.json} == {(team["writer"].user_id, "write"),
                                                                     (team["reader"].user_id, "read")}
    else:
        assert_error(r, status)


def test_share_list_bad_input_and_session(server: Server, team: dict[str, Any]) -> None:
    assert_error(server.get("/subscriptions/share/bysubscription", team["owner"]), 400)
    assert_error(server.get("/subscriptions/share/bysubscription", team["owner"], subscription="nope"), 400)
    assert_error(server.get("/subscriptions/share/bysubscription", subscription=team["sub"]), 401)


@pytest.mark.parametrize("role,status", [("owner", 200), ("writer", 200), ("reader", 403), ("stranger", 403),
                                         ("admin", 200)])
def test_share_delete_permissions(server: Server, team: dict[str, Any], role: str, status: int) -> None:
    dave = server.add_user("dave@example.org")
    share(server, team["owner"], team["sub"], dave.user_id)
    r = server.delete("/subscriptions/share/delete", team[role], subscription=team["sub"], userId=dave.user_id)
    shared = {s["userId"] for s in server.get("/subscriptions/share/bysubscription", team["owner"],
                                              subscription=team["sub"]).json}
    if status == 200:
        assert r.status_code == 200 and r.json == {"message": "Done"} and dave.user_id not in shared
    else:
        assert_error(r, status)
        assert dave.user_id in shared


def test_share_delete_rules(server: Server, team: dict[str, Any]) -> None:
    sub, owner, reader = team["sub"], team["owner"], team["reader"]
    r = server.delete("/subscriptions/share/delete", team["admin"], subscription=sub, userId=owner.user_id)
    assert_error(r, 400)
    assert r.json["message"] == "MSG_ERROR_SHARING_WITH_OWNER"
    assert server.delete("/subscriptions/share/delete", reader, subscription=sub, userId=reader.user_id).json == \
        {"message": "Done"}
    assert_error(server.delete("/subscriptions/share/delete", owner, subscription=sub, userId=reader.user_id), 400)
    assert_error(server.delete("/subscriptions/share/delete", owner, subscription=sub,
                               userId="ghost@example.org"), 400)
    assert_error(server.delete("/subscriptions/share/delete", owner, subscription=sub), 400)
    assert_error(server.delete("/subscriptions/share/delete", owner, userId=reader.user_id), 400)
    assert_error(server.delete("/subscriptions/share/delete", owner, subscription="nope", userId=reader.user_id), 400)
    assert_error(server.delete("/subscriptions/share/delete", None, subscription=sub, userId=reader.user_id), 401)


def test_removed_sharee_loses_the_active_subscription(server: Server, team: dict[str, Any]) -> None:
    bob = team["writer"]
    project = server.services.store.collection("projects").find_one(subscriptionId=team["sub"])
    server.put("/projects/active", bob, project=project["projectId"])
    assert user_doc(server, bob)["activeSubscriptionId"] == team["sub"]
    server.delete("/subscriptions/share/delete", team["owner"], subscription=team["sub"], userId=bob.user_id)
    assert user_doc(server, bob)["activeSubscriptionId"] is None


# -- payment ----------------------------------------------------------------------------------------------
def checkout_id(url: str) -> str:
    return url.rsplit("/", 1)[1]


def test_payment_flow_with_the_local_provider(server: Server, alice: Person) -> None:
    ws = server.get("/ws/create", alice, name="Shop").json["stringValue"]
    sub = create(server, alice, "OneWeekStandard", name="Week")
    r = server.get("/subscriptions/local/paymentUrl", alice, subscription=sub, workspace=ws)
    assert r.status_code == 200 and set(r.json) == {"message"}
    url = r.json["message"]
    assert url.startswith("http://falconframework.org/payments/local/checkout/cs_local_")
    session_id = checkout_id(url)
    record = server.services.store.collection("checkout_sessions").get(session_id)
    assert record["clientReferenceId"] == f"{sub}_{ws}" and record["productCode"] == "OneWeekStandard"
    assert record["amountCents"] == 5000 and record["successUrl"].endswith(
        "/subscriptions/local/confirmation/{CHECKOUT_SESSION_ID}")
    # not paid yet: the confirmation does not flip anything
    assert_error(server.get(f"/subscriptions/local/confirmation/{session_id}"), 500)
    assert stored(server, sub)["buySuccess"] is False
    # pay on the checkout page, as a browser would
    paid = server.http.simulate_post(f"/payments/local/checkout/{session_id}", body="action=pay",
                                     headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert paid.status_code == 303 and paid.headers["location"].endswith(f"/confirmation/{session_id}")
    before = int(time.time() * 1000)
    r = server.get(f"/subscriptions/local/confirmation/{session_id}")  # no session header: the provider calls it
    assert r.status_code == 200 and r.text == ""
    doc = stored(server, sub)
    assert doc["buySuccess"] is True and doc["buyDate"] >= before
    assert doc["startDate"] >= before and doc["endDate"] - doc["startDate"] == 7 * DAY_MS
    messages = server.messages_of(ws)
    assert [m["messageCode"] for m in messages] == ["SUBSCRIPTION"]
    payload = messages[0]["payload"]
    assert payload["clientReferenceId"] == f"{sub}_{ws}" and payload["paymentStatus"] == "paid"
    assert payload["paymentAmountInCents"] == 5000 and payload["paymentIntentId"].startswith("pi_local_")
    assert set(payload) <= {"clientReferenceId", "customerName", "customerEmail", "paymentIntentId",
                            "paymentStatus", "paymentCurrency", "paymentAmountInCents", "invoiceId",
                            "productDescription", "paymentDateInSeconds", "date", "invoicePdfUrl"}
    # a repeated confirmation changes nothing and sends nothing
    buy_date = doc["buyDate"]
    assert server.get(f"/subscriptions/local/confirmation/{session_id}").status_code == 200
    assert stored(server, sub)["buyDate"] == buy_date and len(server.messages_of(ws)) == 1
    # a paid subscription is not sold again
    assert_error(server.get("/subscriptions/local/paymentUrl", alice, subscription=sub), 400)
    assert sub in {s["subscriptionId"] for s in server.get("/subscriptions/byuser", alice, valid="true").json}


def test_payment_without_workspace_sends_no_message(server: Server, alice: Person) -> None:
    sub = create(server, alice, "OneDayStandard")
    url = server.get("/subscriptions/local/paymentUrl", alice, subscription=sub).json["message"]
    session_id = checkout_id(url)
    record = server.services.store.collection("checkout_sessions").get(session_id)
    assert record["clientReferenceId"] == sub and record["customerEmail"] == alice.user_id
    server.services.payments.get("local").pay(session_id)
    assert server.get(f"/subscriptions/local/confirmation/{session_id}").status_code == 200
    assert stored(server, sub)["buySuccess"] is True
    assert server.services.store.collection("messages").count(messageCode="SUBSCRIPTION") == 0


@pytest.mark.parametrize("role,status", [("owner", 200), ("writer", 200), ("reader", 200), ("stranger", 403),
                                         ("admin", 200)])
def test_payment_url_permissions(server: Server, team: dict[str, Any], role: str, status: int) -> None:
    update(server, team["admin"], {"subscriptionId": team["sub"], "buySuccess": False})
    r = server.get("/subscriptions/local/paymentUrl", team[role], subscription=team["sub"])
    if status == 200:
        assert r.status_code == 200 and "/payments/local/checkout/" in r.json["message"]
    else:
        assert_error(r, status)


def test_payment_url_failures(server: Server, alice: Person, bob: Person) -> None:
    sub = create(server, alice, "OneMonthStandard")
    free = create(server, alice, "Free")
    bobs_ws = server.get("/ws/create", bob, name="b").json["stringValue"]
    assert_error(server.get("/subscriptions/nowhere/paymentUrl", alice, subscription=sub), 400)
    assert_error(server.get("/subscriptions/local/paymentUrl", alice), 400)
    assert_error(server.get("/subscriptions/local/paymentUrl", alice, subscription="missing"), 400)
    assert_error(server.get("/subscriptions/local/paymentUrl", alice, subscription=free), 400)
    assert_error(server.get("/subscriptions/local/paymentUrl", alice, subscription=sub, workspace="missing"), 400)
    assert_error(server.get("/subscriptions/local/paymentUrl", alice, subscription=sub, workspace=bobs_ws), 403)
    assert_error(server.get("/subscriptions/local/paymentUrl", subscription=sub), 401)
    assert server.services.store.collection("checkout_sessions").count() == 0


def test_confirmation_failures(server: Server, alice: Person) -> None:
    assert_error(server.get("/subscriptions/local/confirmation/%20"), 401)
    # an id naming no checkout vouches for nothing: 401, as a missing one (never a 500)
    assert_error(server.get("/subscriptions/local/confirmation/cs_local_" + "0" * 32), 401)
    assert_error(server.get("/subscriptions/local/confirmation/not-a-session"), 401)
    assert_error(server.get("/subscriptions/local/confirmation/" + "x" * 2000), 401)
    # an unknown provider is the caller's mistake, never a server fault
    assert_error(server.get("/subscriptions/nowhere/confirmation/cs_local_" + "0" * 32), 401)


class FakeProvider:
    """A payment provider whose sessions the test controls."""

    code = "fake"

    def __init__(self) -> None:
        self.sessions: dict[str, CheckoutSession] = {}
        self.requests: list[CheckoutRequest] = []
        self.down = False

    def create_checkout(self, request: CheckoutRequest) -> CheckoutSession:
        if self.down:
            raise PaymentError("provider unreachable")
        self.requests.append(request)
        session = CheckoutSession(session_id=f"cs_{len(self.requests)}", url=f"https://pay.example/{len(self.requests)}",
                                  client_reference_id=request.client_reference_id, paid=False,
                                  amount_cents=request.amount_cents, currency=request.currency.lower())
        self.sessions[session.session_id] = session
        return session

    def retrieve(self, session_id: str) -> CheckoutSession | None:
        if self.down:
            raise PaymentError("provider unreachable")
        return self.sessions.get(session_id)

    def pay(self, session_id: str, **changes: Any) -> None:
        self.sessions[session_id] = replace(self.sessions[session_id], paid=True, payment_intent_id="pi_1",
                                            customer_name="Alice", invoice_id="in_1", created_seconds=1_700_000_000,
                                            **changes)


@pytest.fixture
def fake(server: Server) -> FakeProvider:
    provider = FakeProvider()
    payments = server.services.payments
    payments.providers[provider.code] = provider
    payments.settings.prices = {**payments.settings.prices, "OneDayStandard": 1234, "Free": 0}
    payments.settings.currency = "EUR"
    return provider


def test_payment_through_an_injected_provider(server: Server, alice: Person, fake: FakeProvider) -> None:
    sub = create(server, alice, "OneDayStandard", name="Day")
    ws = server.get("/ws/create", alice, name="w").json["stringValue"]
    r = server.get("/subscriptions/fake/paymentUrl", alice, subscription=sub, workspace=ws)
    assert r.json == {"message": "https://pay.example/1"}
    request = fake.requests[0]
    assert request.client_reference_id == f"{sub}_{ws}" and request.product_code == "OneDayStandard"
    assert request.amount_cents == 1234 and request.currency == "EUR"
    assert request.success_url == "http://falconframework.org/subscriptions/fake/confirmation/{CHECKOUT_SESSION_ID}"
    assert "Day" in request.description
    fake.pay("cs_1")
    assert server.get("/subscriptions/fake/confirmation/cs_1").status_code == 200
    assert stored(server, sub)["buySuccess"] is True
    payload = server.messages_of(ws)[0]["payload"]
    assert payload["customerName"] == "Alice" and payload["invoiceId"] == "in_1"
    assert payload["paymentDateInSeconds"] == 1_700_000_000 and payload["paymentCurrency"] == "eur"


def test_confirmation_never_flips_without_a_verified_payment(server: Server, alice: Person,
                                                             fake: FakeProvider) -> None:
    sub = create(server, alice, "OneDayStandard")
    server.get("/subscriptions/fake/paymentUrl", alice, subscription=sub)
    assert_error(server.get("/subscriptions/fake/confirmation/cs_1"), 500)  # unpaid
    assert_error(server.get("/subscriptions/fake/confirmation/cs_404"), 401)  # unknown
    fake.pay("cs_1")
    fake.down = True
    assert_error(server.get("/subscriptions/fake/confirmation/cs_1"), 500)  # cannot verify
    assert stored(server, sub)["buySuccess"] is False
    fake.down = False
    fake.sessions["cs_1"] = replace(fake.sessions["cs_1"], client_reference_id="no-such-subscription")
    assert_error(server.get("/subscriptions/fake/confirmation/cs_1"), 500)
    assert stored(server, sub)["buySuccess"] is False
    fake.down = True
    assert_error(server.get("/subscriptions/fake/paymentUrl", alice, subscription=sub), 500)


def test_confirmation_of_a_future_period_keeps_its_dates(server: Server, alice: Person, fake: FakeProvider) -> None:
    start = int(time.time() * 1000) + 10 * int(DAY_MS)
    sub = create(server, alice, "OneDayStandard", startDate=start)
    server.get("/subscriptions/fake/paymentUrl", alice, subscription=sub)
    fake.pay("cs_1")
    server.get("/subscriptions/fake/confirmation/cs_1")
    doc = stored(server, sub)
    assert doc["startDate"] == start and doc["endDate"] == start + DAY_MS and doc["buySuccess"] is True


# -- bad input never answers 500 ------------------------------------------------------------------------
def test_junk_input_never_answers_500(server: Server, team: dict[str, Any]) -> None:
    from tests.server.test_organizations import check_junk

    people = [team["owner"], team["reader"], team["stranger"], team["admin"]]
    check_junk(server, "subscriptions", people, {"subscription": team["sub"], "userId": team["writer"].user_id})
