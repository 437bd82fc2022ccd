"""The payment-provider registry, prices, and the local provider's checkout page flow, in-process."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from tests.conftest import Person, Server

from wasdi_server import load_settings
from wasdi_server.errors import BadRequest
from wasdi_server.providers.payments import CheckoutRequest, LocalPaymentProvider, PaymentProviders
from wasdi_server.providers.payments.local import server_base
from wasdi_server.settings import DEFAULT_PRICES_CENTS, PaymentSettings

FORM = {"Content-Type": "application/x-www-form-urlencoded"}
HOST = "http://falconframework.org"


def path_of(url: str) -> str:
    parts = urlsplit(url)
    assert f"{parts.scheme}://{parts.netloc}" == HOST, url
    return parts.path


def new_package(server: Server, who: Person, type_: str = "Fifty", name: str = "pack") -> str:
    r = server.post("/credits/add", who, json={"type": type_, "name": name})
    assert r.status_code == 200, r.text
    return str(r.json["message"])


def checkout_url(server: Server, who: Person, package_id: str) -> str:
    r = server.get("/credits/local/paymentUrl", who, creditPackageId=package_id)
    assert r.status_code == 200, r.text
    return str(r.json["message"])


def press(server: Server, url: str, action: str) -> Any:
    return server.http.simulate_post(path_of(url), body=f"action={action}", headers=FORM)


def credits_of(server: Server, who: Person) -> tuple[float, dict[str, bool]]:
    total = server.get("/credits/totalbyuser", who).json
    paid = {p["creditPackageId"]: p["buySuccess"] for p in server.get("/credits/listbyuser", who).json}
    return total, paid


# -- the page flow ----------------------------------------------------------------------------------
def test_pay_on_the_checkout_page_then_confirm(server: Server, alice: Person) -> None:
    package_id = new_package(server, alice)
    url = checkout_url(server, alice, package_id)
    session_id = url.rsplit("/", 1)[1]
    page = server.http.simulate_get(path_of(url))
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "50.00 EUR" in page.text and "Fifty credits" in page.text and "pack" in page.text
    assert 'value="pay"' in page.text and 'value="cancel"' in page.text
    assert page.headers["x-frame-options"] == "DENY" and page.headers["cache-control"] == "no-store"
    assert credits_of(server, alice) == (0.0, {package_id: False})

    paid = press(server, url, "pay")
    assert paid.status_code == 303
    assert paid.headers["location"] == f"{HOST}/credits/local/confirmation/{session_id}"
    record = server.services.store.collection("checkout_sessions").get(session_id)
    assert record["paymentStatus"] == "paid" and record["paymentIntentId"].startswith("pi_local_")

    confirmed = server.http.simulate_get(path_of(paid.headers["location"]))
    assert confirmed.status_code == 200
    assert credits_of(server, alice) == (50.0, {package_id: True})
    stored = server.services.store.collection("credit_packages").get(package_id)
    assert stored["paymentIntentId"] == record["paymentIntentId"] and stored["buyDate"] > 0

    # Paying again keeps the first payment; the page now says it is paid.
    again = press(server, url, "pay")
    assert again.status_code == 303 and again.headers["location"] == paid.headers["location"]
    assert server.services.store.collection("checkout_sessions").get(session_id)["paymentIntentId"] == \
        record["paymentIntentId"]
    assert server.http.simulate_get(path_of(again.headers["location"])).status_code == 200
    assert credits_of(server, alice) == (50.0, {package_id: True})
    shown = server.http.simulate_get(path_of(url))
    assert "Paid" in shown.text and 'value="pay"' not in shown.text and session_id in shown.text


def test_two_packages_add_up(server: Server, alice: Person) -> None:
    for type_ in ("Fifty", "OneHundred"):
        paid = press(server, checkout_url(server, alice, new_package(server, alice, type_)), "pay")
        assert server.http.simulate_get(path_of(paid.headers["location"])).status_code == 200
    assert credits_of(server, alice)[0] == 150.0


def test_cancel_returns_to_the_cancel_page_and_pays_nothing(server: Server, alice: Person) -> None:
    package_id = new_package(server, alice)
    url = checkout_url(server, alice, package_id)
    session_id = url.rsplit("/", 1)[1]
    canceled = press(server, url, "cancel")
    assert canceled.status_code == 303
    assert canceled.headers["location"] == f"{HOST}/payments/local/canceled/{package_id}"
    landing = server.http.simulate_get(path_of(canceled.headers["location"]))
    assert landing.status_code == 200 and "canceled" in landing.text.lower()
    assert server.services.store.collection("checkout_sessions").get(session_id)["paymentStatus"] == "unpaid"
    r = server.get(f"/credits/local/confirmation/{session_id}")
    assert r.status_code == 500
    assert credits_of(server, alice) == (0.0, {package_id: False})
    # The session stays open: the buyer may come back and pay.
    assert press(server, url, "pay").status_code == 303


def test_an_unpaid_session_never_flips(server: Server, alice: Person) -> None:
    package_id = new_package(server, alice)
    session_id = checkout_url(server, alice, package_id).rsplit("/", 1)[1]
    for _ in range(2):
        assert server.get(f"/credits/local/confirmation/{session_id}").status_code == 500
    assert credits_of(server, alice) == (0.0, {package_id: False})


def test_unknown_sessions_are_404_pages(server: Server, alice: Person) -> None:
    for path in ("/payments/local/checkout/cs_local_" + "0" * 32, "/payments/local/checkout/nonsense",
                 "/payments/stripe/checkout/cs_test_1", "/payments/local/elsewhere/x"):
        for response in (server.http.simulate_get(path),
                         server.http.simulate_post(path, body="action=pay", headers=FORM)):
            assert response.status_code == 404, path
            assert response.headers["content-type"].startswith("text/html") and "not found" in response.text
    assert server.http.simulate_get("/payments/local/checkout/..%2F..%2Fetc").status_code == 404


def test_a_bad_action_is_400_and_pays_nothing(server: Server, alice: Person) -> None:
    url = checkout_url(server, alice, new_package(server, alice))
    for body in ("", "action=steal", "x" * 10000):
        r = server.http.simulate_post(path_of(url), body=body, headers=FORM)
        assert r.status_code == 400
    record = server.services.store.collection("checkout_sessions").get(url.rsplit("/", 1)[1])
    assert record["paymentStatus"] == "unpaid"


def test_the_page_escapes_text(server: Server, alice: Person) -> None:
    url = checkout_url(server, alice, new_package(server, alice, name='<script>alert("x")</script>'))
    page = server.http.simulate_get(path_of(url)).text
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_the_page_works_under_the_legacy_base_path(server: Server, alice: Person) -> None:
    package_id = new_package(server, alice)
    r = server.http.simulate_get("/wasdiwebserver/rest/credits/local/paymentUrl",
                                 params={"creditPackageId": package_id}, headers=alice.headers)
    url = r.json["message"]
    assert path_of(url).startswith("/wasdiwebserver/rest/payments/local/checkout/")
    paid = press(server, url, "pay")
    assert path_of(paid.headers["location"]).startswith("/wasdiwebserver/rest/credits/local/confirmation/")
    assert server.http.simulate_get(path_of(paid.headers["location"])).status_code == 200
    assert credits_of(server, alice)[0] == 50.0


def test_local_page_is_404_when_the_provider_is_disabled(tmp_path: Path) -> None:
    s = Server(tmp_path / "d", payments={"providers": []})
    try:
        alice = s.add_user("alice@example.org")
        package_id = new_package(s, alice)
        assert s.get("/credits/local/paymentUrl", alice, creditPackageId=package_id).status_code == 400
        assert s.http.simulate_get("/payments/local/checkout/cs_local_" + "0" * 32).status_code == 404
    finally:
        s.close()


# -- the registry and settings -----------------------------------------------------------------------
def test_registry_get_and_price(server: Server) -> None:
    payments = server.services.payments
    assert payments.codes == ["local"]
    assert isinstance(payments.get("local"), LocalPaymentProvider)
    assert payments.get(" LOCAL ") is payments.get("local")
    for code in ("stripe", "paypal", "", None):
        with pytest.raises(BadRequest, match="unsupported payment provider"):
            payments.get(code)
    assert payments.price("Fifty") == (5000, "EUR") and payments.price("OneHundred") == (9000, "EUR")
    assert payments.price("OneMonthProfessional") == (DEFAULT_PRICES_CENTS["OneMonthProfessional"], "EUR")
    with pytest.raises(BadRequest):
        payments.price("Thousand")
    success, cancel = payments.checkout_urls("http://h/base/", "subscriptions", "local", "sub_ws")
    assert success == "http://h/base/subscriptions/local/confirmation/{CHECKOUT_SESSION_ID}"
    assert cancel == "http://h/base/payments/local/canceled/sub_ws"


def test_enabled_providers_defaults() -> None:
    assert PaymentSettings().enabled == ["local"]
    assert PaymentSettings(stripe_api_key="sk_test_x").enabled == ["stripe"]
    assert PaymentSettings(stripe_api_key="sk_test_x", providers=["local", "Stripe"]).enabled == ["local", "stripe"]
    both = PaymentProviders(PaymentSettings(stripe_api_key="sk_test_x", providers=["local", "stripe"]),
                            checkout_sessions=None)  # type: ignore[arg-type]
    assert both.codes == ["local", "stripe"]
    unconfigured = PaymentProviders(PaymentSettings(providers=["stripe"]), checkout_sessions=None)  # type: ignore[arg-type]
    assert unconfigured.codes == []


def test_payments_settings_from_toml_and_env(tmp_path: Path) -> None:
    config = tmp_path / "server.toml"
    config.write_text('[payments]\ncurrency = "usd"\nproviders = ["local"]\n[payments.prices]\nFifty = 777\n')
    settings = load_settings(config, environ={"WASDI_SERVER_STRIPE_API_KEY": "sk_test_env"}, data_dir=tmp_path)
    payments = settings.payments
    assert payments.currency == "usd" and payments.prices["Fifty"] == 777
    assert payments.prices["OneHundred"] == DEFAULT_PRICES_CENTS["OneHundred"]
    assert payments.stripe_api_key == "sk_test_env" and payments.enabled == ["local"]
    assert payments.stripe_api_base == "https://api.stripe.com"
    assert load_settings(environ={"WASDI_SERVER_STRIPE_API_KEY": "k"}, data_dir=tmp_path).payments.enabled == \
        ["stripe"]


def test_local_checkout_url_base_is_read_from_the_success_url() -> None:
    assert server_base("http://h:1/rest/credits/local/confirmation/{CHECKOUT_SESSION_ID}") == "http://h:1/rest"
    assert server_base("http://h/credits/local/confirmation/{CHECKOUT_SESSION_ID}") == "http://h"
    assert server_base("https://h/somewhere/else?x=1") == "https://h"


def test_local_provider_retrieve(server: Server) -> None:
    provider = server.services.payments.get("local")
    session = provider.create_checkout(CheckoutRequest("ref-1", "Fifty", "desc", 5000, "EUR",
                                                       f"{HOST}/credits/local/confirmation/{{CHECKOUT_SESSION_ID}}",
                                                       f"{HOST}/payments/local/canceled/ref-1", "a@example.org"))
    assert session.url == f"{HOST}/payments/local/checkout/{session.session_id}" and not session.paid
    found = provider.retrieve(session.session_id)
    assert found is not None and found.client_reference_id == "ref-1" and found.amount_cents == 5000
    assert found.customer_email == "a@example.org" and found.currency == "eur"
    assert provider.retrieve("cs_local_" + "f" * 32) is None and provider.retrieve("../x") is None
