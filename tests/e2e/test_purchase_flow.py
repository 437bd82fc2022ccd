"""Buying over real HTTP: a real ``python -m wasdi_server serve`` on 127.0.0.1, the local checkout page,
the provider's 303 redirect to the confirmation callback, and the purchase taking effect."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.e2e


def pay_in_browser(base_url: str, checkout_url: str) -> httpx.Response:
    """What a person does: open the checkout page, press Pay, let the browser follow the redirect."""
    assert checkout_url.startswith(base_url + "/payments/local/checkout/cs_local_"), checkout_url
    with httpx.Client(timeout=30) as browser:  # no session: the page and the callback need none
        page = browser.get(checkout_url)
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert 'value="pay"' in page.text
        paid = browser.post(checkout_url, data={"action": "pay"})
        assert paid.status_code == 303
        location = paid.headers["location"]
        session_id = checkout_url.rsplit("/", 1)[1]
        assert location.startswith(base_url) and location.endswith("/confirmation/" + session_id)
        return browser.get(location)


def test_buy_credits(server: Any, accounts: Any) -> None:
    with server.http(accounts.alice) as alice:
        assert alice.get("/credits/totalbyuser").json() == 0.0
        created = alice.post("/credits/add", json={"name": "e2e", "type": "OneHundred"})
        assert created.status_code == 200, created.text
        package_id = created.json()["message"]
        [listed] = alice.get("/credits/listbyuser").json()
        assert listed["creditPackageId"] == package_id and listed["buySuccess"] is False

        # Another user may not pay for it; an unsupported provider is refused.
        with server.http(accounts.bob) as bob:
            assert bob.get("/credits/local/paymentUrl", params={"creditPackageId": package_id}).status_code == 403
        assert alice.get("/credits/stripe/paymentUrl", params={"creditPackageId": package_id}).status_code == 400

        r = alice.get("/credits/local/paymentUrl", params={"creditPackageId": package_id})
        assert r.status_code == 200, r.text
        checkout_url = r.json()["message"]
        # Before paying, the callback proves nothing.
        unpaid = httpx.get(f"{server.base_url}/credits/local/confirmation/{checkout_url.rsplit('/', 1)[1]}", timeout=30)
        assert unpaid.status_code == 500  # a failed verification (contract)
        assert alice.get("/credits/totalbyuser").json() == 0.0

        confirmation = pay_in_browser(server.base_url, checkout_url)
        assert confirmation.status_code == 200, confirmation.text
        [paid] = alice.get("/credits/listbyuser").json()
        assert paid["buySuccess"] is True and paid["buyDate"] > 0 and paid["creditsRemaining"] == 100.0
        assert alice.get("/credits/totalbyuser").json() == 100.0

        # The provider may call back again: nothing changes.
        again = httpx.get(confirmation.url, timeout=30)
        assert again.status_code == 200
        assert alice.get("/credits/listbyuser").json() == [paid]
        assert alice.get("/credits/totalbyuser").json() == 100.0


def test_buy_credits_with_the_sdk(server: Any, accounts: Any) -> None:
    with server.sdk(accounts.carol) as client:
        package_id = client.credits.create(type="Fifty", name="sdk").message
        assert package_id
        url = client.credits.payment_url(package_id, payprov="local").message
        assert url
        assert pay_in_browser(server.base_url, url).status_code == 200
        assert client.credits.total() == 50.0
        assert [p.buy_success for p in client.credits.list()] == [True]


def test_buy_a_subscription(server: Any, accounts: Any) -> None:
    with server.http(accounts.alice) as alice:
        created = alice.post("/subscriptions/add", json={"name": "e2e monthly", "typeId": "OneMonthStandard",
                                                         "description": "bought end to end"})
        assert created.status_code == 200, created.text
        subscription_id = created.json()["message"]
        before = alice.get("/subscriptions/byId", params={"subscription": subscription_id})
        assert before.status_code == 200 and before.json()["buySuccess"] is False

        r = alice.get("/subscriptions/local/paymentUrl", params={"subscription": subscription_id})
        assert r.status_code == 200, r.text
        confirmation = pay_in_browser(server.base_url, r.json()["message"])
        assert confirmation.status_code == 200, confirmation.text
        assert "/subscriptions/local/confirmation/" in str(confirmation.url)

        after = alice.get("/subscriptions/byId", params={"subscription": subscription_id}).json()
        assert after["buySuccess"] is True and after["buyDate"]
        listed = {s["subscriptionId"]: s for s in alice.get("/subscriptions/byuser").json()}
        assert listed[subscription_id]["buySuccess"] is True
