"""``client.credits`` and ``client.nodes``: against the in-process server, and against mocked answers."""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx
import pytest
import respx
from tests.conftest import Person, Server

from wasdi_sdk import (
    AuthenticationError,
    BadRequestError,
    EmptyResultError,
    PermissionDeniedError,
    ServerError,
    WasdiClient,
)
from wasdi_sdk.catalog import Style
from wasdi_sdk.models import CreditsPackageViewModel, NodeFullViewModel

BASE = "http://wasdi.test/rest"


def pay_on_local_page(client: WasdiClient, url: str) -> httpx.Response:
    """What a browser does on the local checkout page: press Pay, follow the redirect to the confirmation."""
    http = client._http
    page = http.get(url)
    assert page.status_code == 200 and 'value="pay"' in page.text
    paid = http.post(url, data={"action": "pay"})
    assert paid.status_code == 303
    return http.get(paid.headers["location"])


# -- credits, in-process ---------------------------------------------------------------------------------
def test_buy_credits_end_to_end(server: Server, alice: Person) -> None:
    client = server.sdk(alice)
    assert [t.type_id for t in server.sdk().credits.list_types()] == ["Fifty", "OneHundred"]  # no session
    assert client.credits.total() == 0.0 and client.credits.list() == []
    created = client.credits.create(type="OneHundred", name="big")
    package_id = created.message
    assert package_id
    url = client.credits.payment_url(package_id, payprov="local").message
    assert url and urlsplit(url).path.startswith("/payments/local/checkout/cs_local_")
    confirmation = pay_on_local_page(client, url)
    assert confirmation.status_code == 200
    assert client.credits.total() == 100.0
    [package] = client.credits.list()
    assert isinstance(package, CreditsPackageViewModel)
    assert package.credit_package_id == package_id and package.buy_success is True and package.name == "big"
    assert package.credits_remaining == 100.0 and package.buy_date and package.buy_date > 0
    # The callback may be repeated through the SDK: nothing changes.
    session_id = url.rsplit("/", 1)[1]
    assert client.credits.confirm_payment(session_id, payprov="local") is None
    assert client.credits.total() == 100.0


def test_create_with_a_model_and_listing_order(server: Server, alice: Person) -> None:
    client = server.sdk(alice)
    first = client.credits.create(CreditsPackageViewModel(type="Fifty", name="a", description="first")).message
    second = client.credits.create(type="Fifty", name="a").message
    newest = [p.credit_package_id for p in client.credits.list()]
    assert set(newest) == {first, second}
    assert [p.credit_package_id for p in client.credits.list(ascending_order=True)] == list(reversed(newest))
    names = {p.credit_package_id: p.name for p in client.credits.list()}
    assert names == {first: "a", second: "a(1)"}


def test_credits_errors_by_meaning(server: Server, alice: Person, bob: Person) -> None:
    owner, stranger = server.sdk(alice), server.sdk(bob)
    with pytest.raises(BadRequestError) as bad_type:
        owner.credits.create(type="Thousand")
    assert bad_type.value.status == 400 and bad_type.value.style is Style.STATUS
    package_id = owner.credits.create(type="Fifty").message
    assert package_id
    with pytest.raises(PermissionDeniedError):
        stranger.credits.payment_url(package_id, payprov="local")
    with pytest.raises(BadRequestError):
        owner.credits.payment_url(package_id, payprov="paypal")
    with pytest.raises(BadRequestError):
        owner.credits.payment_url("missing", payprov="local")
    with pytest.raises(AuthenticationError):  # an id naming no checkout vouches for nothing: 401
        owner.credits.confirm_payment("cs_local_" + "0" * 32, payprov="local")
    unpaid = str(owner.credits.payment_url(package_id, payprov="local").message).rsplit("/", 1)[-1]
    with pytest.raises(ServerError):  # a checkout that fails verification (not paid) is a 500 (contract)
        owner.credits.confirm_payment(unpaid, payprov="local")
    with pytest.raises(AuthenticationError):
        server.sdk().credits.total()
    with pytest.raises(BadRequestError):  # checked by the SDK before sending
        owner.credits.payment_url(package_id, payprov="")


# -- nodes, in-process -----------------------------------------------------------------------------------
def test_node_administration(server: Server, alice: Person, admin: Person) -> None:
    root, user = server.sdk(admin), server.sdk(alice)
    root.nodes.create(NodeFullViewModel(node_code="n2", api_url="https://n2.example.org/rest", cloud_provider="ovh"))
    node = root.nodes.get("n2")
    assert isinstance(node, NodeFullViewModel)
    assert (node.node_code, node.active, node.shared, node.api_url) == ("n2", True, False, "https://n2.example.org/rest")
    assert [n.node_code for n in user.nodes.list()] == ["wasdi"]
    assert root.nodes.share_add(node="n2", user_id=alice.user_id).string_value == "Done"
    assert root.nodes.share_add(node="n2", user_id=alice.user_id).string_value == "Already Shared."
    assert [n.node_code for n in user.nodes.list()] == ["wasdi", "n2"]
    assert [(s.node_code, s.user_id) for s in root.nodes.share_list("n2")] == [("n2", alice.user_id)]
    node.active = False
    root.nodes.update(node)
    assert [n.node_code for n in user.nodes.list()] == ["wasdi"]
    assert [n.node_code for n in user.nodes.list(all=True)] == ["wasdi", "n2"]
    assert root.nodes.share_delete(node="n2", user_id=alice.user_id).string_value == "Done"
    assert root.nodes.share_list("n2") == []


def test_node_errors_by_meaning(server: Server, alice: Person, bob: Person, admin: Person) -> None:
    root, user = server.sdk(admin), server.sdk(alice)
    root.nodes.create(NodeFullViewModel(node_code="n2"))
    with pytest.raises(AuthenticationError) as not_admin:
        user.nodes.get("n2")
    assert not_admin.value.status == 401 and not_admin.value.style is Style.STATUS
    with pytest.raises(AuthenticationError):
        user.nodes.create(NodeFullViewModel(node_code="n3"))
    with pytest.raises(BadRequestError):
        root.nodes.create(NodeFullViewModel(node_code="n2"))
    with pytest.raises(BadRequestError):
        root.nodes.get("missing")
    with pytest.raises(PermissionDeniedError) as share_denied:
        user.nodes.share_add(node="n2", user_id=bob.user_id)
    assert share_denied.value.style is Style.MARKER and share_denied.value.status == 403
    with pytest.raises(BadRequestError) as bad_user:
        root.nodes.share_add(node="n2", user_id="nobody@example.org")
    assert bad_user.value.style is Style.MARKER
    root.nodes.share_add(node="n2", user_id=bob.user_id)
    with pytest.raises(AuthenticationError):
        user.nodes.share_delete(node="n2", user_id=bob.user_id)
    with pytest.raises(EmptyResultError):
        server.sdk(token="not-a-session").nodes.list()
    assert server.sdk(token="not-a-session").nodes.share_list("n2") == []
    raw = root.nodes.with_raw_response.share_add(node="n2", user_id=bob.user_id)
    assert raw.status_code == 200 and raw.parse().string_value == "Already Shared."


# -- against mocked answers ------------------------------------------------------------------------------
@pytest.fixture
def client() -> WasdiClient:
    return WasdiClient(base_url=BASE, session_token="tok", max_retries=0)


@respx.mock
def test_requests_on_the_wire(client: WasdiClient) -> None:
    url_route = respx.get(f"{BASE}/credits/stripe/paymentUrl").mock(
        return_value=httpx.Response(200, json={"message": "https://checkout.stripe.com/c/pay/cs_1"}))
    assert client.credits.payment_url("p 1", payprov="stripe").message == "https://checkout.stripe.com/c/pay/cs_1"
    sent = url_route.calls.last.request
    assert sent.url.params["creditPackageId"] == "p 1" and sent.headers["x-session-token"] == "tok"
    confirm = respx.get(f"{BASE}/credits/stripe/confirmation/cs%2F1").mock(return_value=httpx.Response(200))
    client.credits.confirm_payment("cs/1", payprov="stripe")
    assert confirm.called and "x-session-token" not in confirm.calls.last.request.headers  # public callback
    types = respx.get(f"{BASE}/credits/types").mock(return_value=httpx.Response(200, json=[]))
    client.credits.list_types()
    assert "x-session-token" not in types.calls.last.request.headers
    total = respx.get(f"{BASE}/credits/totalbyuser").mock(return_value=httpx.Response(200, json=150))
    assert client.credits.total() == 150.0 and isinstance(client.credits.total(), float)
    assert total.call_count == 2
    listed = respx.get(f"{BASE}/credits/listbyuser").mock(return_value=httpx.Response(200, json=[]))
    client.credits.list(ascending_order=True)
    assert listed.calls.last.request.url.params["ascendingOrder"] == "true"
    nodes = respx.get(f"{BASE}/node/allnodes").mock(return_value=httpx.Response(200, json=[]))
    client.nodes.list(all=True)
    assert nodes.calls.last.request.url.params["all"] == "true"
    created = respx.post(f"{BASE}/node").mock(return_value=httpx.Response(200))
    client.nodes.create(NodeFullViewModel(node_code="n", active=False))
    assert created.calls.last.request.content == b'{"nodeCode": "n", "active": false}'


@respx.mock
def test_failure_styles_of_the_mocked_answers(client: WasdiClient) -> None:
    respx.get(f"{BASE}/node/allnodes").mock(return_value=httpx.Response(200, json=None))
    with pytest.raises(EmptyResultError):
        client.nodes.list()
    respx.get(f"{BASE}/node/allnodes").mock(return_value=httpx.Response(204))
    with pytest.raises(EmptyResultError):
        client.nodes.list()
    respx.delete(f"{BASE}/node/share/delete").mock(return_value=httpx.Response(
        200, json={"boolValue": False, "intValue": 500, "stringValue": "MSG_ERROR_IN_DELETE_PROCESS"}))
    with pytest.raises(ServerError) as failed:
        client.nodes.share_delete(node="n", user_id="u")
    assert failed.value.style is Style.MARKER and failed.value.code == "MSG_ERROR_IN_DELETE_PROCESS"
    respx.get(f"{BASE}/node/share/bynode").mock(return_value=httpx.Response(200, json=[]))
    assert client.nodes.share_list("n") == []
    respx.get(f"{BASE}/credits/local/confirmation/cs_1").mock(return_value=httpx.Response(500))
    with pytest.raises(ServerError):
        client.credits.confirm_payment("cs_1", payprov="local")
    respx.post(f"{BASE}/credits/add").mock(return_value=httpx.Response(400, json={"message": "bad type"}))
    with pytest.raises(BadRequestError, match="bad type"):
        client.credits.create(type="Nope")
