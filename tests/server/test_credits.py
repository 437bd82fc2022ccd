"""/credits through the real app: types, totals, listing, creation, payment URL and confirmation."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pytest
from tests.conftest import Person, Server

from wasdi_server.providers.payments import CheckoutRequest, CheckoutSession, PaymentError


def add(server: Server, who: Person, type_: str = "Fifty", name: str | None = "pack", **extra: Any) -> str:
    body: dict[str, Any] = {"type": type_, **extra}
    if name is not None:
        body["name"] = name
    r = server.post("/credits/add", who, json=body)
    assert r.status_code == 200, r.text
    return str(r.json["message"])


def packages(server: Server, who: Person, **params: Any) -> list[dict[str, Any]]:
    r = server.get("/credits/listbyuser", who, **params)
    assert r.status_code == 200, r.text
    return list(r.json)


def package(server: Server, who: Person, package_id: str) -> dict[str, Any]:
    return next(p for p in packages(server, who) if p["creditPackageId"] == package_id)


def total(server: Server, who: Person) -> float:
    r = server.get("/credits/totalbyuser", who)
    assert r.status_code == 200, r.text
    assert isinstance(r.json, float)
    return float(r.json)


def payment_url(server: Server, who: Person, package_id: str, provider: str = "local") -> str:
    r = server.get(f"/credits/{provider}/paymentUrl", who, creditPackageId=package_id)
    assert r.status_code == 200, r.text
    return str(r.json["message"])


def local_path(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def pay_locally(server: Server, url: str) -> str:
    """Press Pay on the local checkout page; the session id."""
    r = server.http.simulate_post(local_path(url), body="action=pay",
                                  headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert r.status_code == 303, r.text
    return url.rsplit("/", 1)[1]


class FakeProvider:
    """A provider whose answers the test decides."""

    code = "fake"

    def __init__(self) -> None:
        self.sessions: dict[str, CheckoutSession] = {}
        self.requests: list[CheckoutRequest] = []
        self.fail: Exception | None = None

    def create_checkout(self, request: CheckoutRequest) -> CheckoutSession:
        if self.fail:
            raise self.fail
        self.requests.append(request)
        session = CheckoutSession(f"cs_fake_{len(self.requests)}", f"https://pay.example/{len(self.requests)}",
                                  request.client_reference_id, paid=False)
        self.sessions[session.session_id] = session
        return session

    def retrieve(self, session_id: str) -> CheckoutSession | None:
        if self.fail:
            raise self.fail
        return self.sessions.get(session_id)

    def settle(self, session_id: str, intent: str = "pi_fake") -> None:
        old = self.sessions[session_id]
        self.sessions[session_id] = CheckoutSession(old.session_id, old.url, old.client_reference_id, paid=True,
                                                    payment_intent_id=intent, amount_cents=5000, currency="eur")


@pytest.fixture
def fake(server: Server) -> FakeProvider:
    provider = FakeProvider()
    server.services.payments.providers["fake"] = provider
    return provider


# -- types ------------------------------------------------------------------------------------------
def test_types_are_public(server: Server) -> None:
    expected = [{"typeId": "Fifty", "name": "Fifty credits", "description": "Fifty credits"},
                {"typeId": "OneHundred", "name": "One hundred credits", "description": "One hundred credits"}]
    assert server.get("/credits/types").json == expected
    r = server.http.simulate_get("/credits/types", headers={"x-session-token": "not-a-session"})
    assert r.status_code == 200 and r.json == expected


# -- total and list ---------------------------------------------------------------------------------
def test_total_counts_paid_packages_only(server: Server, alice: Person, bob: Person, admin: Person) -> None:
    assert total(server, alice) == 0.0
    add(server, alice, "Fifty")  # unpaid
    assert total(server, alice) == 0.0
    gift = add(server, alice, "OneHundred", name="gift")
    server.services.store.collection("credit_packages").update(gift, {"buySuccess": True})
    assert total(server, alice) == 100.0
    server.services.store.collection("credit_packages").update(gift, {"creditsRemaining": 12.5})
    assert total(server, alice) == 12.5
    add(server, bob, "Fifty")
    assert total(server, bob) == 0.0


def test_total_and_list_need_a_session(server: Server) -> None:
    for path in ("/credits/totalbyuser", "/credits/listbyuser"):
        r = server.get(path)
        assert r.status_code == 401 and r.json == {"message": "MSG_ERROR_INVALID_SESSION"}
        r = server.http.simulate_get(path, headers={"x-session-token": "bogus"})
        assert r.status_code == 401


def test_list_order_and_fields(server: Server, alice: Person, bob: Person) -> None:
    clock = iter(range(1_000, 100_000, 1_000))
    import wasdi_server.domains.commerce.credits as credits_module

    original = credits_module.now_ms
    credits_module.now_ms = lambda: float(next(clock))
    try:
        first = add(server, alice, name="first")
        second = add(server, alice, name="second")
        third = add(server, alice, name="third")
    finally:
        credits_module.now_ms = original
    add(server, bob, name="bob's")
    newest_first = [p["creditPackageId"] for p in packages(server, alice)]
    assert newest_first == [third, second, first]
    oldest_first = [p["creditPackageId"] for p in packages(server, alice, ascendingOrder="true")]
    assert oldest_first == [first, second, third]
    assert [p["creditPackageId"] for p in packages(server, alice, ascendingOrder="false")] == newest_first
    item = packages(server, alice)[0]
    assert set(item) == {"creditPackageId", "name", "description", "type", "buyDate", "userId", "buySuccess",
                         "creditsRemaining", "lastUpdate"}
    assert item["buyDate"] == 0.0 and isinstance(item["buyDate"], float) and item["buySuccess"] is False
    assert item["userId"] == alice.user_id and item["creditsRemaining"] == 50.0


def test_list_bad_flag_is_400(server: Server, alice: Person) -> None:
    assert server.get("/credits/listbyuser", alice, ascendingOrder="maybe").status_code == 400


# -- add ----------------------------------------------------------------------------------------------
def test_add_amount_follows_type_and_user_cannot_pay(server: Server, alice: Person) -> None:
    r = server.post("/credits/add", alice, json={"name": "cheat", "type": "OneHundred", "buySuccess": True,
                                                 "creditsRemaining": 1e9, "userId": "bob@example.org",
                                                 "buyDate": 12345.0})
    assert r.status_code == 200
    created = package(server, alice, r.json["message"])
    assert created["creditsRemaining"] == 100.0 and created["buySuccess"] is False and created["buyDate"] == 0.0
    assert created["userId"] == alice.user_id and created["type"] == "OneHundred"
    assert total(server, alice) == 0.0


def test_admin_may_create_paid_packages(server: Server, admin: Person) -> None:
    package_id = add(server, admin, "Fifty", name="grant", buySuccess=True)
    created = package(server, admin, package_id)
    assert created["buySuccess"] is True and created["buyDate"] > 0
    assert total(server, admin) == 50.0
    unpaid = add(server, admin, "Fifty", name="later", buySuccess=False)
    assert package(server, admin, unpaid)["buySuccess"] is False


def test_add_duplicate_names_get_a_suffix_per_user(server: Server, alice: Person, bob: Person) -> None:
    ids = [add(server, alice, name="pack") for _ in range(3)]
    names = {p["creditPackageId"]: p["name"] for p in packages(server, alice)}
    assert [names[i] for i in ids] == ["pack", "pack(1)", "pack(2)"]
    assert package(server, bob, add(server, bob, name="pack"))["name"] == "pack"


def test_add_defaults_name_and_description_and_type_case(server: Server, alice: Person) -> None:
    created = package(server, alice, add(server, alice, "onehundred", name=None))
    assert created["type"] == "OneHundred" and created["name"] == "One hundred credits"
    assert created["description"] == "One hundred credits"


@pytest.mark.parametrize("body", [
    {"name": "x", "type": "Thousand"},
    {"name": "x"},
    {"name": "x", "type": ""},
    {"name": "x" * 500, "type": "Fifty"},
    {"name": "bad\x01name", "type": "Fifty"},
    {"name": "x", "type": "Fifty", "description": "d" * 5000},
    {"name": "x", "type": "Fifty", "buySuccess": "perhaps"},
    {"name": "x", "type": ["Fifty"]},
])
def test_add_bad_input_is_400(server: Server, alice: Person, body: dict[str, Any]) -> None:
    r = server.post("/credits/add", alice, json=body)
    assert r.status_code == 400 and r.json["message"]
    assert packages(server, alice) == []


@pytest.mark.parametrize("raw", ["", "not json", "[1, 2]", "null", "42"])
def test_add_bad_body_is_400(server: Server, alice: Person, raw: str) -> None:
    r = server.post("/credits/add", alice, body=raw, content_type="application/json")
    assert r.status_code == 400


def test_add_needs_a_session(server: Server) -> None:
    r = server.post("/credits/add", None, json={"name": "x", "type": "Fifty"})
    assert r.status_code == 401 and r.json == {"message": "MSG_ERROR_INVALID_SESSION"}


# -- payment URL --------------------------------------------------------------------------------------
def test_payment_url_local(server: Server, alice: Person) -> None:
    package_id = add(server, alice)
    url = payment_url(server, alice, package_id)
    assert url.startswith("http://falconframework.org/payments/local/checkout/cs_local_")
    record = server.services.store.collection("checkout_sessions").get(url.rsplit("/", 1)[1])
    assert record["clientReferenceId"] == package_id and record["amountCents"] == 5000
    assert record["currency"] == "EUR" and record["productCode"] == "Fifty"
    assert record["successUrl"] == "http://falconframework.org/credits/local/confirmation/{CHECKOUT_SESSION_ID}"
    assert record["customerEmail"] == alice.user_id


def test_payment_url_follows_the_legacy_base_path_and_public_url(server: Server, alice: Person, tmp_path) -> None:
    package_id = add(server, alice)
    r = server.http.simulate_get("/wasdiwebserver/rest/credits/local/paymentUrl",
                                 params={"creditPackageId": package_id}, headers=alice.headers)
    assert r.json["message"].startswith("http://falconframework.org/wasdiwebserver/rest/payments/local/checkout/")
    other = Server(tmp_path / "pub", public_url="https://eo.example.org/api/")
    try:
        carol = other.add_user("carol@example.org")
        url = payment_url(other, carol, add(other, carol))
        assert url.startswith("https://eo.example.org/api/payments/local/checkout/cs_local_")
    finally:
        other.close()


def test_payment_url_uses_the_configured_price(tmp_path) -> None:
    s = Server(tmp_path / "d", payments={"currency": "usd", "prices": {"OneHundred": 12345}})
    try:
        alice = s.add_user("alice@example.org")
        url = payment_url(s, alice, add(s, alice, "OneHundred"))
        record = s.services.store.collection("checkout_sessions").get(url.rsplit("/", 1)[1])
        assert (record["amountCents"], record["currency"]) == (12345, "USD")
    finally:
        s.close()


def test_payment_url_refusals(server: Server, alice: Person, bob: Person, admin: Person) -> None:
    package_id = add(server, alice)
    cases = [
        (server.get("/credits/local/paymentUrl", None, creditPackageId=package_id), 401),
        (server.get("/credits/local/paymentUrl", alice), 400),
        (server.get("/credits/local/paymentUrl", alice, creditPackageId=""), 400),
        (server.get("/credits/local/paymentUrl", alice, creditPackageId="missing"), 400),
        (server.get("/credits/local/paymentUrl", alice, creditPackageId="../../x"), 400),
        (server.get("/credits/paypal/paymentUrl", alice, creditPackageId=package_id), 400),
        (server.get("/credits/stripe/paymentUrl", alice, creditPackageId=package_id), 400),  # no key configured
        (server.get("/credits/local/paymentUrl", bob, creditPackageId=package_id), 403),
        (server.get("/credits/local/paymentUrl", admin, creditPackageId=package_id), 403),
    ]
    for response, status in cases:
        assert response.status_code == status, (status, response.text)
        assert response.json["message"]
    assert server.services.store.collection("checkout_sessions").count() == 0


def test_payment_url_for_a_paid_package_is_400(server: Server, admin: Person) -> None:
    paid = add(server, admin, buySuccess=True)
    r = server.get("/credits/local/paymentUrl", admin, creditPackageId=paid)
    assert r.status_code == 400 and "paid" in r.json["message"]


def test_payment_url_provider_failure_is_500(server: Server, alice: Person, fake: FakeProvider) -> None:
    fake.fail = PaymentError("down")
    r = server.get("/credits/fake/paymentUrl", alice, creditPackageId=add(server, alice))
    assert r.status_code == 500 and r.json["message"]


def test_payment_url_request_to_the_provider(server: Server, alice: Person, fake: FakeProvider) -> None:
    package_id = add(server, alice, "OneHundred", name="big")
    assert payment_url(server, alice, package_id, "fake") == "https://pay.example/1"
    sent = fake.requests[0]
    assert sent.client_reference_id == package_id and sent.product_code == "OneHundred"
    assert (sent.amount_cents, sent.currency) == (9000, "EUR")
    assert sent.success_url == "http://falconframework.org/credits/fake/confirmation/{CHECKOUT_SESSION_ID}"
    assert sent.cancel_url.startswith("http://falconframework.org/payments/fake/canceled/")
    assert "big" in sent.description


# -- confirmation -------------------------------------------------------------------------------------
def test_confirmation_marks_paid_once(server: Server, alice: Person, fake: FakeProvider) -> None:
    package_id = add(server, alice)
    payment_url(server, alice, package_id, "fake")
    fake.settle("cs_fake_1", "pi_123")
    r = server.get("/credits/fake/confirmation/cs_fake_1")  # no session: the provider calls it
    assert r.status_code == 200 and r.text == ""
    paid = package(server, alice, package_id)
    assert paid["buySuccess"] is True and paid["buyDate"] > 0 and paid["lastUpdate"] == paid["buyDate"]
    stored = server.services.store.collection("credit_packages").get(package_id)
    assert stored["paymentIntentId"] == "pi_123" and stored["paymentProvider"] == "fake"
    assert total(server, alice) == 50.0
    again = server.get("/credits/fake/confirmation/cs_fake_1")
    assert again.status_code == 200
    assert package(server, alice, package_id) == paid
    assert total(server, alice) == 50.0


def test_confirmation_of_an_unpaid_session_changes_nothing(server: Server, alice: Person,
                                                            fake: FakeProvider) -> None:
    package_id = add(server, alice)
    payment_url(server, alice, package_id, "fake")
    r = server.get("/credits/fake/confirmation/cs_fake_1")
    assert r.status_code == 500 and r.json["message"]
    assert package(server, alice, package_id)["buySuccess"] is False and total(server, alice) == 0.0


def test_confirmation_refusals(server: Server, alice: Person, fake: FakeProvider) -> None:
    package_id = add(server, alice)
    fake.sessions["cs_other"] = CheckoutSession("cs_other", "u", "subscription-id_workspace", paid=True,
                                                payment_intent_id="pi")
    fake.sessions["cs_none"] = CheckoutSession("cs_none", "u", "", paid=True, payment_intent_id="pi")
    assert server.get("/credits/fake/confirmation/%20").status_code == 401  # missing id
    assert server.get("/credits/fake/confirmation/unknown").status_code == 401  # an id naming no checkout
    # a checkout that fails verification is a 500 (contract: "500 verification or database failure")
    for path in ("/credits/fake/confirmation/cs_other", "/credits/fake/confirmation/cs_none"):
        r = server.get(path)
        assert r.status_code == 500, (path, r.text)
    # a provider this server does not have is the caller's mistake: 401, not a server fault
    for path in ("/credits/paypal/confirmation/cs_other", "/credits/stripe/confirmation/cs_other"):
        r = server.get(path)
        assert r.status_code == 401, (path, r.text)
    assert package(server, alice, package_id)["buySuccess"] is False


def test_confirmation_verification_failure_is_500(server: Server, alice: Person, fake: FakeProvider) -> None:
    package_id = add(server, alice)
    payment_url(server, alice, package_id, "fake")
    fake.settle("cs_fake_1")
    fake.fail = PaymentError("timeout")
    assert server.get("/credits/fake/confirmation/cs_fake_1").status_code == 500
    assert package(server, alice, package_id)["buySuccess"] is False


def test_confirmation_database_failure_is_500(server: Server, alice: Person, fake: FakeProvider,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    package_id = add(server, alice)
    payment_url(server, alice, package_id, "fake")
    fake.settle("cs_fake_1")

    def broken(*args: Any, **kwargs: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(server.services.credits.packages, "modify", broken)
    r = server.get("/credits/fake/confirmation/cs_fake_1")
    assert r.status_code == 500 and r.json["message"]
    monkeypatch.undo()
    assert package(server, alice, package_id)["buySuccess"] is False


def test_confirmation_of_a_package_already_granted_keeps_it(server: Server, admin: Person,
                                                             fake: FakeProvider) -> None:
    package_id = add(server, admin, buySuccess=True)
    before = package(server, admin, package_id)
    fake.sessions["cs_x"] = CheckoutSession("cs_x", "u", package_id, paid=True, payment_intent_id="pi_x")
    assert server.get("/credits/fake/confirmation/cs_x").status_code == 200
    assert package(server, admin, package_id) == before


@pytest.mark.parametrize("provider", ["nowhere", "x" * 300])
def test_confirmation_with_an_unknown_provider_is_401_not_500(server: Server, provider: str) -> None:
    r = server.get(f"/credits/{provider}/confirmation/cs_local_" + "0" * 32)
    assert r.status_code == 401 and r.json["message"]


def test_confirmation_with_a_nul_in_the_provider_is_400_not_500(server: Server) -> None:
    r = server.get("/credits/%00/confirmation/cs_local_" + "0" * 32)  # NUL text never reaches a store (issue 28)
    assert r.status_code == 400 and r.json["message"]
