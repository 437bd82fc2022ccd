"""Junk input to every endpoint of the store, reviews, templates and app payments: never a 500, only the statuses
the contract lists for the endpoint (or 400/403) in its own failure style."""

from __future__ import annotations

from typing import Any

from tests.conftest import Person, Server
from tests.server.app_fixtures import make_app

from wasdi_sdk.catalog import ENDPOINTS, BodyKind, Style

MINE = {"processors.list", "processors.get", "processors.market_list", "processors.market_detail",
        "processors.update_details", "processors.share_add", "processors.share_list", "processors.share_delete",
        "processors.add_app_payment", "processors.payment_url", "processors.confirm_payment",
        "processors.is_app_purchased", "processors.get_app_payment", "processors.credits_for_run"}
JUNK = ["", " ", "../..", "a/b", "null", "ünïcødé", "x" * 5000, "%00", "' OR 1=1 --", "-1", "1e999", "true"]
JUNK_BODIES: list[Any] = [{}, [], "text", 5, None, {"vote": "NaN"}, {"processorId": ["x"]}, {"name": {"a": 1}},
                          {"categories": [1, 2]}, {"page": -5, "itemsPerPage": 10**12}, {"minPrice": "x"},
                          {"buyDate": "2026-13-45T99:00:00Z", "paymentName": "p", "processorId": "x"},
                          {"jsonParameters": "{", "name": "n", "processorId": "../x"}, {"text": "x" * 100000},
                          {"ondemandPrice": 1e400}, {"showInStore": [True]}]
TEXT_BODIES = ["", "%7B%7D", "not json", '{"AOI": "1,2"}', '{"AOI": "90,-180,-90,180"}', "%ZZ"]


def test_junk_never_answers_500(server: Server, alice: Person, bob: Person, admin: Person) -> None:
    app = make_app(server, alice, "paid", isPublic=1, showInStore=True, ondemandPrice=1.0,
                   squareKilometerPrice=1.0, areaParameterName="bbox")
    real = {"processorId": app["processorId"], "processor": app["processorId"], "processorname": "paid",
            "processorName": "paid", "name": "paid", "userId": bob.user_id}
    endpoints = [e for e in ENDPOINTS if e.name in MINE or e.group in ("param_templates", "processor_media")]
    assert len(endpoints) == 32
    for ep in sorted(endpoints, key=lambda e: e.method == "DELETE"):
        allowed = set(ep.statuses) | {400, 403} if ep.style is Style.STATUS else {200}
        path = ep.path.replace("{payprov}", "local").replace("{CHECKOUT_SESSION_ID}", "cs_junk")
        names = [p.name for p in ep.query]
        for who in (alice, bob, admin):
            for junk in JUNK:
                combos = [dict.fromkeys(names, junk), {n: real.get(n, junk) for n in names}]
                for params in combos:
                    if ep.body.kind is BodyKind.JSON:
                        bodies: list[Any] = [("json", b) for b in JUNK_BODIES]
                    elif ep.body.kind is BodyKind.TEXT:
                        bodies = [("text", b) for b in TEXT_BODIES]
                    else:
                        bodies = [("none", None)]
                    for kind, body in bodies:
                        if kind == "json":
                            r = server.http.simulate_request(ep.method, path, params=params, headers=who.headers,
                                                             json=body)
                        else:
                            r = server.http.simulate_request(ep.method, path, params=params, headers=who.headers,
                                                             body=body)
                        assert r.status_code in allowed, (ep.name, params, body, r.status_code, r.text[:200])
                        if ep.style is Style.STATUS and r.status_code >= 400:
                            assert set(r.json) == {"message"}, (ep.name, r.text[:200])
