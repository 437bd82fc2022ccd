"""App payments: the on-demand purchase flow with the local provider, isAppPurchased, byAppPaymentId,
getcredits against the gaps §9 formula, and the run-path hooks ``authorize_run`` / ``on_app_delete``."""

from __future__ import annotations

import json
import math
from typing import Any
from urllib.parse import quote, urlsplit

import pytest
from tests.conftest import Person, Server
from tests.server.app_fixtures import make_app, share_app

from wasdi_server.domains.accounts.identity import User
from wasdi_server.errors import BadRequest, Forbidden

FORM = {"Content-Type": "application/x-www-form-urlencoded"}
BUY_DATE = "2026-11-23T10:00:00.000Z"


def user(server: Server, who: Person) -> User:
    found = server.services.users.active_user(who.user_id)
    assert found is not None
    return found


def add_payment(server: Server, who: Person, app: dict[str, Any], **extra: Any) -> Any:
    body = {"paymentName": "one run", "processorId": app["processorId"], "buyDate": BUY_DATE, **extra}
    return server.post("/processors/addAppPayment", who, json=body)


def purchased(server: Server, who: Person, app: dict[str, Any]) -> Any:
    r = server.get("/processors/isAppPurchased", who, processor=app["processorId"])
    assert r.status_code == 200
    return r.json


@pytest.fixture
def paid_app(server: Server, alice: Person) -> dict[str, Any]:
    return make_app(server, alice, "paid", isPublic=1, showInStore=True, ondemandPrice=12.34)


def test_purchase_flow_with_the_local_provider(server: Server, alice: Person, bob: Person,
                                               paid_app: dict[str, Any]) -> None:
    assert purchased(server, bob, paid_app) is False
    assert purchased(server, alice, paid_app) is True  # the owner never pays
    r = add_payment(server, bob, paid_app)
    assert r.status_code == 200
    payment_id = r.json["message"]
    view = server.get("/processors/byAppPaymentId", bob, appPayment=payment_id).json
    assert view["buySuccess"] is False and view["processorId"] == paid_app["processorId"]
    assert view["buyDate"] == "2026-11-23 10:00:00" and "runDate" not in view
    assert purchased(server, bob, paid_app) is False

    r = server.get("/processors/local/onDemandPaymentUrl", bob, processor=paid_app["processorId"],
                   appPayment=payment_id)
    assert r.status_code == 200
    checkout = urlsplit(r.json["message"]).path
    page = server.http.simulate_get(checkout)
    assert page.status_code == 200 and "12.34 EUR" in page.text
    paid = server.http.simulate_post(checkout, body="action=pay", headers=FORM)
    assert paid.status_code == 303
    confirmation = urlsplit(paid.headers["location"]).path
    assert confirmation.startswith("/processors/local/confirmation/")
    done = server.http.simulate_get(confirmation)  # the provider's callback: no session needed
    assert done.status_code == 200 and done.headers["content-type"].startswith("text/html")
    assert "window.close()" in done.text
    assert server.get("/processors/byAppPaymentId", bob, appPayment=payment_id).json["buySuccess"] is True
    assert purchased(server, bob, paid_app) is True
    again = server.http.simulate_get(confirmation)
    assert again.status_code == 200

    server.services.app_payments.authorize_run(user(server, bob), paid_app, "%7B%7D")
    assert server.get("/processors/byAppPaymentId", bob, appPayment=payment_id).json["runDate"]
    assert purchased(server, bob, paid_app) is False
    with pytest.raises(Forbidden, match="has not be paid"):
        server.services.app_payments.authorize_run(user(server, bob), paid_app, "%7B%7D")
    # The URL for a payment already paid is refused.
    r = server.get("/processors/local/onDemandPaymentUrl", bob, processor=paid_app["processorId"],
                   appPayment=payment_id)
    assert r.status_code == 400


def test_confirmation_failures_answer_null(server: Server) -> None:
    for path in ("/processors/local/confirmation/nope", "/processors/martian/confirmation/x"):
        r = server.http.simulate_get(path)
        assert r.status_code == 200 and r.text == "null"


def test_add_payment_failures(server: Server, alice: Person, bob: Person, stranger: Person,
                              paid_app: dict[str, Any]) -> None:
    assert add_payment(server, bob, paid_app, paymentName="").status_code == 400
    assert add_payment(server, bob, paid_app, buyDate="yesterday").status_code == 400
    assert add_payment(server, bob, paid_app, buyDate=None).status_code == 400
    assert add_payment(server, bob, paid_app, processorId="nope").status_code == 404
    assert add_payment(server, None, paid_app).status_code == 401
    free = make_app(server, alice, "free", isPublic=1)
    assert add_payment(server, bob, free).status_code == 400
    private = make_app(server, alice, "private", ondemandPrice=1.0)
    assert add_payment(server, stranger, private).status_code == 403
    assert server.post("/processors/addAppPayment", bob, body="[]", content_type="application/json").status_code == 400


def test_payment_url_failures(server: Server, alice: Person, bob: Person, carol: Person,
                              paid_app: dict[str, Any]) -> None:
    payment_id = add_payment(server, bob, paid_app).json["message"]
    pid = paid_app["processorId"]

    def url(who: Person | None, provider: str = "local", processor: str = pid, payment: str = payment_id) -> int:
        return server.get(f"/processors/{provider}/onDemandPaymentUrl", who, processor=processor,
                          appPayment=payment).status_code

    assert url(carol) == 403
    assert url(bob, processor="other") == 400
    assert url(bob, payment="nope") == 400
    assert url(bob, provider="martian") == 400
    assert url(None) == 401
    assert server.get("/processors/local/onDemandPaymentUrl", bob, processor=pid).status_code == 400
    assert url(bob) == 200


def test_is_purchased_and_by_id_failures(server: Server, alice: Person, bob: Person, carol: Person, admin: Person,
                                         paid_app: dict[str, Any]) -> None:
    assert server.get("/processors/isAppPurchased", bob, processor="nope").status_code == 404
    assert server.get("/processors/isAppPurchased", bob).status_code == 400
    assert server.get("/processors/isAppPurchased", None, processor="x").status_code == 401
    assert purchased(server, admin, paid_app) is True
    share_app(server, alice, paid_app, carol)
    assert purchased(server, carol, paid_app) is True  # any sharing
    assert purchased(server, bob, make_app(server, alice, "free", isPublic=1)) is True
    payment_id = add_payment(server, bob, paid_app).json["message"]
    assert server.get("/processors/byAppPaymentId", carol, appPayment=payment_id).status_code == 404
    assert server.get("/processors/byAppPaymentId", admin, appPayment=payment_id).status_code == 200
    assert server.get("/processors/byAppPaymentId", bob, appPayment="nope").status_code == 404
    assert server.get("/processors/byAppPaymentId", bob).status_code == 400
    assert server.get("/processors/byAppPaymentId", None, appPayment=payment_id).status_code == 401


def expected_credits(price: float, north: float, west: float, south: float, east: float) -> float:
    """Gaps §9 written out independently: the latitude in degrees goes to a radians cosine."""
    width = (east - west) * 111.32 * math.cos((north + south) / 2)
    height = (north - south) * 111.32
    return math.floor(price * abs(width * height) * 100 + 0.5) / 100


def credits(server: Server, who: Person | None, app: dict[str, Any], params: Any) -> Any:
    body = params if isinstance(params, str) else quote(json.dumps(params))
    return server.post("/processors/getcredits", who, body=body, params={"processorId": app["processorId"]},
                       content_type="text/plain")


def test_getcredits_formula(server: Server, alice: Person, bob: Person, carol: Person) -> None:
    app = make_app(server, alice, "area", isPublic=1, squareKilometerPrice=0.5, areaParameterName="bbox")
    box = {"bbox": {"southWest": {"lat": 44.0, "lng": 10.0}, "northEast": {"lat": 45.0, "lng": 11.5}}}
    r = credits(server, bob, app, box)
    assert r.status_code == 200 and r.json == expected_credits(0.5, 45.0, 10.0, 44.0, 11.5)
    assert r.json == 8076.19  # cos(44.5 rad), not cos(44.5°): the original's numbers
    assert credits(server, bob, app, {"AOI": "45,10,44,11.5"}).json == r.json
    assert credits(server, bob, app, json.dumps(box)).json == r.json  # not URL-encoded also works
    assert credits(server, alice, app, box).json == 0.0  # the owner
    share_app(server, alice, app, carol)
    assert credits(server, carol, app, box).json == 0.0  # any sharing
    assert credits(server, bob, app, {"other": 1}).status_code == 400
    assert credits(server, bob, app, {"AOI": "a,b,c,d"}).status_code == 400
    assert credits(server, bob, app, {"AOI": "1e308,-1e308,-1e308,1e308"}).status_code == 400
    assert credits(server, bob, app, {"AOI": "NaN,0,0,1"}).status_code == 400
    assert credits(server, bob, app, "not json").status_code == 400
    assert credits(server, bob, app, "").status_code == 400
    assert credits(server, None, app, box).status_code == 401
    assert credits(server, bob, {"processorId": "nope"}, box).status_code == 400
    free = make_app(server, alice, "free", isPublic=1)
    assert credits(server, bob, free, box).json == 0.0
    private = make_app(server, alice, "private", squareKilometerPrice=1.0, areaParameterName="bbox")
    assert credits(server, bob, private, box).status_code == 403
    # a private app without a price too: the access check comes before the price
    assert credits(server, bob, make_app(server, alice, "privatefree"), box).status_code == 403
    broken = make_app(server, alice, "broken", isPublic=1, squareKilometerPrice=1.0)
    assert credits(server, bob, broken, box).status_code == 500


def test_authorize_run_deducts_area_credits_oldest_first(server: Server, alice: Person, bob: Person,
                                                         admin: Person) -> None:
    payments = server.services.app_payments
    app = make_app(server, alice, "area", isPublic=1, squareKilometerPrice=0.01, areaParameterName="bbox")
    params = quote(json.dumps({"bbox": {"southWest": {"lat": 0.0, "lng": 0.0}, "northEast": {"lat": 1.0, "lng": 1.0}}}))
    cost = expected_credits(0.01, 1.0, 0.0, 0.0, 1.0)
    assert cost == 108.75
    with pytest.raises(Forbidden, match="no credits found"):
        payments.authorize_run(user(server, bob), app, params)
    packages = server.services.store.collection("credit_packages")
    for pid, stamp, left, paid in (("old", 1.0, 100.0, True), ("new", 2.0, 100.0, True), ("unpaid", 0.5, 500, False)):
        packages.insert({"creditPackageId": pid, "userId": bob.user_id, "buySuccess": paid, "buyDate": stamp,
                         "creditsRemaining": left, "type": "OneHundred"})
    payments.authorize_run(user(server, bob), app, params)
    assert packages.get("old")["creditsRemaining"] == 0.0
    assert packages.get("new")["creditsRemaining"] == pytest.approx(91.25)
    assert packages.get("unpaid")["creditsRemaining"] == 500
    with pytest.raises(Forbidden, match="Not enough credits"):
        payments.authorize_run(user(server, bob), app, params)
    assert packages.get("new")["creditsRemaining"] == pytest.approx(91.25)  # all or nothing
    for bad in (quote(json.dumps({"x": 1})), "not json", quote(json.dumps({"AOI": "1e308,-1e308,-1e308,1e308"}))):
        with pytest.raises(BadRequest, match="per square km"):
            payments.authorize_run(user(server, bob), app, bad)
    payments.authorize_run(user(server, alice), app, params)   # the owner pays nothing
    payments.authorize_run(user(server, admin), app, params)
    payments.authorize_run(user(server, bob), make_app(server, alice, "free", isPublic=1), "%7B%7D")


def test_sharers_run_free_strangers_pay(server: Server, alice: Person, writer: Person, reader: Person,
                                       stranger: Person, paid_app: dict[str, Any]) -> None:
    share_app(server, alice, paid_app, writer, "write")
    share_app(server, alice, paid_app, reader, "read")
    for who in (writer, reader):  # what isAppPurchased promised them
        assert purchased(server, who, paid_app) is True
        server.services.app_payments.authorize_run(user(server, who), paid_app, "{}")
    assert purchased(server, stranger, paid_app) is False
    with pytest.raises(Forbidden):
        server.services.app_payments.authorize_run(user(server, stranger), paid_app, "{}")


def test_on_app_delete_and_user_delete(server: Server, alice: Person, bob: Person, paid_app: dict[str, Any]) -> None:
    payments = server.services.app_payments
    collection = server.services.store.collection("app_payments")
    unpaid = add_payment(server, bob, paid_app).json["message"]
    paid = add_payment(server, bob, paid_app).json["message"]
    collection.update(paid, {"buySuccess": True})
    with pytest.raises(BadRequest, match="not used yet"):
        payments.check_app_delete(paid_app)
    payments.authorize_run(user(server, bob), paid_app, "{}")
    payments.check_app_delete(paid_app)
    payments.on_app_delete(paid_app)
    payments.on_app_delete(paid_app)
    assert collection.get(unpaid) is None and collection.get(paid) is not None
    payments.delete_all_of_user(bob.user_id)
    payments.delete_all_of_user(bob.user_id)
    assert collection.all() == []


def test_the_run_and_delete_paths_call_the_payment_rules(server: Server, alice: Person, bob: Person,
                                                        paid_app: dict[str, Any]) -> None:
    """Wiring: /processors/run refuses an unpaid priced run, and the owner's delete waits for paid runs."""
    ws = server.get("/ws/create", bob, name="runs").json["stringValue"]
    server.services.store.collection("processors").update(paid_app["processorId"], {"deployed": True})
    refused = server.post("/processors/run", bob, params={"name": paid_app["name"], "workspace": ws}, body="{}")
    assert refused.status_code == 200 and refused.json["status"] == "ERROR"
    assert "not be paid" in refused.json["message"]
    assert server.get("/process/byws", bob, workspace=ws).json == []
    paid = add_payment(server, bob, paid_app).json["message"]
    server.services.store.collection("app_payments").update(paid, {"buySuccess": True})
    r = server.get("/processors/delete", alice, processorId=paid_app["processorId"])
    assert r.status_code == 400
    assert server.services.store.collection("processors").get(paid_app["processorId"]) is not None
    # An admin deleting the owner's whole estate is not held back by it.
    server.services.apps.delete_all_of_user(alice.user_id)
    assert server.services.store.collection("processors").get(paid_app["processorId"]) is None
