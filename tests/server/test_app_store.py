"""/processors store endpoints: getdeployed, getprocessor, market list and detail, updatedetails, sharing."""

from __future__ import annotations

from typing import Any

import pytest
from tests.conftest import Person, Server
from tests.server.app_fixtures import make_app, share_app

from wasdi_sdk.models import AppDetailViewModel


def names(rows: list[dict[str, Any]]) -> list[str]:
    return [r["processorName"] for r in rows]


def test_getdeployed_owned_shared_public(server: Server, alice: Person, bob: Person, admin: Person) -> None:
    mine = make_app(server, alice, "mine", minuteTimeout=-1)
    make_app(server, bob, "bobs")
    shared = make_app(server, bob, "shared")
    make_app(server, bob, "open", isPublic=1)
    share_app(server, bob, shared, alice)
    rows = server.get("/processors/getdeployed", alice).json
    assert names(rows) == ["mine", "open", "shared"]
    row = rows[0]
    assert set(row) == {"processorId", "processorName", "processorVersion", "processorDescription", "imgLink",
                        "logo", "publisher", "publisherNickName", "paramsSample", "isPublic", "minuteTimeout",
                        "type", "sharedWithMe", "readOnly", "deploymentOngoing", "lastUpdate"}
    assert row["minuteTimeout"] == 0 and row["isPublic"] == 0 and row["readOnly"] is False
    assert row["imgLink"] == "assets/img/placeholder/placeholder_3.jpg" and row["publisherNickName"] == "Alice"
    by_name = {r["processorName"]: r for r in rows}
    assert by_name["shared"]["sharedWithMe"] is True and by_name["shared"]["readOnly"] is True
    assert by_name["open"]["sharedWithMe"] is False and by_name["open"]["readOnly"] is True
    assert len(server.get("/processors/getdeployed", admin).json) == 4
    r = server.get("/processors/getdeployed")
    assert r.status_code == 200 and r.json == []
    one = server.get("/processors/getprocessor", alice, processorId=mine["processorId"]).json
    assert one["processorName"] == "mine" and one["minuteTimeout"] == -1
    assert server.get("/processors/getprocessor", alice, name="open").json["processorName"] == "open"


@pytest.mark.parametrize("query", [{"processorId": "nope"}, {"name": "bobs"}, {}])
def test_getprocessor_empty_default(server: Server, alice: Person, bob: Person, query: dict[str, str]) -> None:
    make_app(server, bob, "bobs")
    r = server.get("/processors/getprocessor", alice, **query)
    assert r.status_code == 200 and not r.json.get("processorId")


def store(server: Server) -> dict[str, dict[str, Any]]:
    alice, bob = server.add_user("alice@example.org"), server.add_user("bob@example.org")
    server.services.users.users.update(bob.user_id, {"publicNickName": "Bobby"})
    apps = {
        "alpha": make_app(server, alice, "alpha", isPublic=1, showInStore=True, categories=["agriculture"],
                          ondemandPrice=10.0, friendlyName="Zeta crops", uploadDate=3.0, lastUpdate=3.0),
        "beta": make_app(server, bob, "beta", isPublic=1, showInStore=True, categories=["marine"],
                         uploadDate=1.0, lastUpdate=1.0),
        "gamma": make_app(server, bob, "gamma", isPublic=1, showInStore=True, categories=["marine", "urban"],
                          ondemandPrice=2.5, uploadDate=2.0, lastUpdate=2.0),
        "hidden": make_app(server, bob, "hidden", isPublic=1, showInStore=False),
        "private": make_app(server, bob, "private", showInStore=True),
    }
    for who, app, vote in (("bob", "alpha", 5), ("alice", "beta", 2), ("carol", "beta", 4)):
        person = server.add_user(f"{who}2@example.org")
        r = server.post("/processormedia/reviews/add", person, json={"processorId": apps[app]["processorId"],
                                                                      "vote": vote})
        assert r.status_code == 200
    return {"alice": alice, "bob": bob, **apps}  # type: ignore[dict-item]


def market(server: Server, who: Person, **flt: Any) -> list[dict[str, Any]]:
    r = server.post("/processors/getmarketlist", who, json=flt)
    assert r.status_code == 200
    return list(r.json)


def test_market_list_filters_sorts_and_pages(server: Server) -> None:
    s = store(server)
    alice, bob = s["alice"], s["bob"]
    # By title (friendly name, else name); not hidden apps, not others' private ones.
    assert names(market(server, alice)) == ["beta", "gamma", "alpha"]
    assert names(market(server, bob)) == ["beta", "gamma", "private", "alpha"]
    row = market(server, alice)[2]
    assert row == {"processorId": s["alpha"]["processorId"], "processorName": "alpha",
                   "processorDescription": "alpha app", "imgLink": "assets/img/placeholder/placeholder_3.jpg",
                   "publisher": alice.user_id, "publisherNickName": "Alice", "score": 5.0, "votes": 1,
                   "friendlyName": "Zeta crops", "price": 10.0, "squareKilometerPrice": 0.0, "isMine": True,
                   "buyed": False, "logo": "", "readOnly": False}
    assert market(server, alice, name="")[1]["score"] == -1 and market(server, alice)[1]["votes"] == 0
    assert names(market(server, alice, categories=["marine"])) == ["beta", "gamma"]
    assert names(market(server, alice, categories=["urban", "agriculture"])) == ["gamma", "alpha"]
    assert names(market(server, alice, publishers=[bob.user_id])) == ["beta", "gamma"]
    assert names(market(server, alice, name="ZETA")) == ["alpha"]
    assert names(market(server, alice, name="amm")) == ["gamma"]
    assert names(market(server, alice, score=3)) == ["beta", "alpha"]
    assert names(market(server, alice, minPrice=1)) == ["gamma", "alpha"]
    assert names(market(server, alice, maxPrice=5)) == ["beta", "gamma"]
    assert names(market(server, alice, minPrice=-1, maxPrice=-1)) == ["beta", "gamma", "alpha"]
    assert names(market(server, alice, orderBy="price", orderDirection=-1)) == ["alpha", "gamma", "beta"]
    assert names(market(server, alice, orderBy="score")) == ["gamma", "beta", "alpha"]
    assert names(market(server, alice, orderBy="votes", orderDirection=-1)) == ["beta", "alpha", "gamma"]
    assert names(market(server, alice, orderBy="DATE")) == ["beta", "gamma", "alpha"]
    assert names(market(server, alice, orderBy="friendlyName")) == ["beta", "gamma", "alpha"]
    assert names(market(server, alice, orderBy="name", orderDirection=-1)) == ["alpha", "gamma", "beta"]
    assert names(market(server, alice, itemsPerPage=2, page=1)) == ["alpha"]
    assert names(market(server, alice, itemsPerPage=2, page=5)) == []
    # As the original server: an unknown order is by name, any other direction ascending, paging clamped.
    assert names(market(server, alice, orderBy="rm -rf", orderDirection=7)) == ["beta", "gamma", "alpha"]
    assert names(market(server, alice, page=-1, itemsPerPage=0)) == ["beta", "gamma", "alpha"]
    assert len(market(server, alice, itemsPerPage=10**6)) == 3


@pytest.mark.parametrize("body", [{"score": "high"}, {"categories": "x"}, {"page": "first"}, {"name": ["a"]}])
def test_market_list_bad_input_is_an_empty_list(server: Server, alice: Person, body: dict[str, Any]) -> None:
    make_app(server, alice, "alpha", isPublic=1, showInStore=True)
    r = server.post("/processors/getmarketlist", alice, json=body)
    assert r.status_code == 200 and r.json == []


def test_market_list_needs_a_session_and_a_body(server: Server, alice: Person) -> None:
    assert server.post("/processors/getmarketlist", None, json={}).json == []
    assert server.post("/processors/getmarketlist", alice, body="", content_type="application/json").json == []


def test_market_detail(server: Server) -> None:
    s = store(server)
    alice, bob = s["alice"], s["bob"]
    images = server.services.images
    folder = images.folder_path("processors", "alpha")
    folder.mkdir(parents=True)
    (folder / "2.png").write_bytes(b"x")
    (folder / "logo.png").write_bytes(b"x")
    server.services.store.collection("process_workspaces").insert(
        {"processObjId": "p1", "operationType": "RUNPROCESSOR", "productName": "alpha", "status": "DONE"})
    r = server.get("/processors/getmarketdetail", bob, processorname="alpha")
    assert r.status_code == 200
    detail = r.json
    AppDetailViewModel.model_validate(detail)
    assert detail["score"] == 5.0 and detail["reviewsCount"] == 1 and detail["purchased"] == 1
    assert detail["friendlyName"] == "Zeta crops" and detail["ondemandPrice"] == 10.0
    assert detail["categories"] == ["agriculture"] and detail["categoryNames"] == ["Agriculture"]
    assert detail["images"] == ["http://falconframework.org/images/get?collection=processors&folder=alpha&name=2.png"]
    assert detail["isMine"] is False and detail["buyed"] is False and detail["readOnly"] is True
    assert detail["maxImages"] == 6 and detail["totalRuns"] == 0 and detail["showInStore"] is True
    assert "logo" not in detail and detail["publishDate"] == 3.0
    assert server.get("/processors/getmarketdetail", alice, processorname="private").status_code == 403
    assert server.get("/processors/getmarketdetail", alice, processorname="nothing").status_code == 400
    assert server.get("/processors/getmarketdetail", alice).status_code == 400
    assert server.get("/processors/getmarketdetail", None, processorname="alpha").status_code == 401
    # Hidden from the store, but its page still opens for those who can read it.
    assert server.get("/processors/getmarketdetail", alice, processorname="hidden").json["showInStore"] is False


def test_update_details(server: Server, alice: Person, writer: Person, reader: Person, stranger: Person,
                        admin: Person) -> None:
    app = make_app(server, alice, "alpha", isPublic=1)
    share_app(server, alice, app, writer, "write")
    share_app(server, alice, app, reader, "read")
    body = {"friendlyName": "Alpha", "ondemandPrice": 3.5, "squareKilometerPrice": 0.1, "areaParameterName": "bbox",
            "categories": ["marine", "urban"], "showInStore": True, "longDescription": "Long", "link": "https://x"}

    def update(who: Person | None, data: dict[str, Any] = body, pid: str = app["processorId"]) -> int:
        return server.post("/processors/updatedetails", who, json=data, params={"processorId": pid}).status_code

    assert [update(w) for w in (alice, writer, admin, reader, stranger, None)] == [200, 200, 200, 403, 403, 401]
    stored = server.services.store.collection("processors").get(app["processorId"])
    assert stored["friendlyName"] == "Alpha" and stored["ondemandPrice"] == 3.5 and stored["showInStore"] is True
    assert stored["categories"] == ["marine", "urban"] and stored["areaParameterName"] == "bbox"
    assert update(alice, {"friendlyName": "Only"}) == 200
    stored = server.services.store.collection("processors").get(app["processorId"])
    assert stored["friendlyName"] == "Only" and stored["ondemandPrice"] == 3.5  # the rest stays
    for bad in ({"ondemandPrice": -1}, {"categories": ["nope"]}, {"friendlyName": "x" * 500},
                {"showInStore": "maybe"}, {"subscriptionPrice": "free"}):
        assert update(alice, bad) == 400, bad
    assert update(alice, body, "nope") == 400
    assert server.post("/processors/updatedetails", alice, json=body).status_code == 400


def test_sharing_matrix_and_repeat_fails(server: Server, alice: Person, writer: Person, reader: Person,
                                         stranger: Person, admin: Person) -> None:
    app = make_app(server, alice, "alpha")
    pid = app["processorId"]

    def share(who: Person | None, user: str, rights: str = "read", target: str = pid) -> dict[str, Any]:
        r = server.put("/processors/share/add", who, processorId=target, userId=user, rights=rights)
        assert r.status_code == 200
        return dict(r.json)

    assert share(alice, writer.user_id, "write")["stringValue"] == "Done"
    again = share(alice, writer.user_id, "write")
    assert again["boolValue"] is False and again["stringValue"] == "Already shared"
    assert share(writer, reader.user_id)["boolValue"] is True
    carol = server.add_user("carol@example.org")
    assert share(reader, carol.user_id)["intValue"] == 403
    assert share(stranger, carol.user_id)["intValue"] == 403
    assert share(admin, carol.user_id)["boolValue"] is True
    assert share(alice, alice.user_id)["intValue"] == 400
    assert share(writer, alice.user_id)["intValue"] == 400
    assert share(alice, "ghost@example.org")["intValue"] == 400
    assert share(alice, carol.user_id, target="nope")["intValue"] == 400
    assert share(None, carol.user_id)["intValue"] == 401
    listed = server.get("/processors/share/byprocessor", reader, processorId=pid).json
    assert {(s["userId"], s["permissions"]) for s in listed} == {
        (writer.user_id, "write"), (reader.user_id, "read"), (carol.user_id, "read")}
    for who, target in ((stranger, pid), (None, pid), (alice, "nope")):
        r = server.get("/processors/share/byprocessor", who, processorId=target)
        assert r.status_code == 200 and r.json is None

    def unshare(who: Person | None, user: str) -> dict[str, Any]:
        r = server.delete("/processors/share/delete", who, processorId=pid, userId=user)
        assert r.status_code == 200
        return dict(r.json)

    assert unshare(reader, carol.user_id)["intValue"] == 403
    assert unshare(carol, carol.user_id)["boolValue"] is True
    assert unshare(writer, reader.user_id)["boolValue"] is True
    assert unshare(alice, "ghost@example.org")["intValue"] == 400
    assert unshare(None, writer.user_id)["intValue"] == 401
    assert unshare(alice, writer.user_id)["stringValue"] == "Done"
    assert server.get("/processors/share/byprocessor", alice, processorId=pid).json == []
