"""``wasdi credits ...`` and ``wasdi nodes ...`` against the in-process server."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import pytest

from tests.cli.conftest import ALICE, BOB, Cli, lines
from wasdi_server.app import WasdiApp

ADMIN = "root@example.org"
ADMIN_PASSWORD = "password-root"


@pytest.fixture
def alice(cli: Cli) -> Cli:
    cli.login()
    return cli


@pytest.fixture
def root(cli: Cli, wasdi_app: WasdiApp) -> Cli:
    wasdi_app.services.users.add(ADMIN, ADMIN_PASSWORD, admin=True, name="Root", surname="Admin")
    cli.login(ADMIN, ADMIN_PASSWORD)
    return cli


def pay(cli: Cli, url: str) -> None:
    """Press Pay on the local checkout page and follow the redirect, as a browser would."""
    with cli.sdk()._http as http:
        path = urlsplit(url).path
        paid = http.post(path, data={"action": "pay"})
        assert paid.status_code == 303
        assert http.get(urlsplit(paid.headers["location"]).path).status_code == 200


# -- credits ------------------------------------------------------------------------------------------
def test_types_need_no_login(cli: Cli) -> None:
    result = cli("credits", "types")
    assert result.exit_code == 0, result.output
    rows = lines(result.stdout)
    assert rows[0].split() == ["type", "name", "description"]
    assert any(r.startswith("Fifty") for r in rows) and any(r.startswith("OneHundred") for r in rows)
    as_json = json.loads(cli("credits", "types", "--json").stdout)
    assert [t["typeId"] for t in as_json] == ["Fifty", "OneHundred"]
    assert cli("credits", "types", "-q").stdout.splitlines() == ["Fifty", "OneHundred"]


def test_buy_prints_the_checkout_url_and_pay_raises_the_total(alice: Cli) -> None:
    assert alice("credits", "total").stdout == "0\n"
    result = alice("credits", "buy", "Fifty", "--name", "first")
    assert result.exit_code == 0, result.output
    url = result.stdout.strip()
    assert result.stdout == url + "\n" and "/payments/local/checkout/cs_local_" in url
    assert "Created credit package" in result.stderr and "open the URL" in result.stderr
    listed = json.loads(alice("credits", "list", "--json").stdout)
    assert [(p["name"], p["buySuccess"], p["creditsRemaining"]) for p in listed] == [("first", False, 50.0)]
    pay(alice, url)
    assert alice("credits", "total").stdout == "50\n"
    listed = json.loads(alice("credits", "list", "--json").stdout)
    assert listed == [p.to_wire() for p in alice.sdk(alice.token()).credits.list()]
    assert listed[0]["buySuccess"] is True
    table = alice("credits", "list")
    row = next(r for r in lines(table.stdout) if listed[0]["creditPackageId"] in r)
    assert row.split()[:5] == [listed[0]["creditPackageId"], "first", "Fifty", "50.0", "yes"]
    assert alice("credits", "list", "-q").stdout.split() == [listed[0]["creditPackageId"]]


def test_confirm_a_payment_whose_redirect_was_lost(alice: Cli) -> None:
    url = alice("credits", "buy", "OneHundred").stdout.strip()
    session_id = url.rsplit("/", 1)[1]
    assert alice("credits", "confirm", session_id).exit_code != 0  # not paid yet
    assert alice("credits", "total").stdout == "0\n"
    alice.app.services.payments.get("local").pay(session_id)
    alice("logout")
    confirmed = alice("credits", "confirm", session_id, "--provider", "local")  # no login needed
    assert confirmed.exit_code == 0, confirmed.output
    assert "counts in 'wasdi credits total'" in confirmed.stderr
    alice.login()
    assert alice("credits", "total").stdout == "100\n"


def test_buy_failures(alice: Cli) -> None:
    bad_type = alice("credits", "buy", "Thousand")
    assert bad_type.exit_code == 1 and "Thousand" in bad_type.stderr and "wasdi credits types" in bad_type.stderr
    bad_provider = alice("credits", "buy", "Fifty", "--provider", "paypal")
    assert bad_provider.exit_code == 1 and "paypal" in bad_provider.stderr
    assert alice("credits", "buy", " ").exit_code == 2


def test_credits_list_empty_and_not_logged_in(cli: Cli) -> None:
    assert cli("credits", "total").exit_code == 4
    assert cli("credits", "list").exit_code == 4
    cli.login()
    empty = cli("credits", "list")
    assert empty.exit_code == 0 and empty.stdout == "" and "No credit packages" in empty.stderr


# -- nodes ---------------------------------------------------------------------------------------------
def test_node_administration(root: Cli) -> None:
    created = root("nodes", "create", "n2", "--api-url", "https://n2.example.org/rest", "--cloud-provider", "ovh",
                   "--description", "second node", "--shared")
    assert created.exit_code == 0, created.output
    assert "Created node n2" in created.stderr
    shown = json.loads(root("nodes", "show", "n2", "--json").stdout)
    assert shown == {"nodeCode": "n2", "cloudProvider": "ovh", "apiUrl": "https://n2.example.org/rest",
                     "nodeDescription": "second node", "nodeGeoserverAddress": "", "active": True, "shared": True}
    table = root("nodes", "show", "n2").stdout
    assert "https://n2.example.org/rest" in table and "second node" in table
    listed = root("nodes", "list")
    assert [r.split()[0] for r in lines(listed.stdout) if not r.startswith("─")] == ["code", "wasdi", "n2"]
    updated = root("nodes", "update", "n2", "--inactive", "--description", "maintenance")
    assert updated.exit_code == 0, updated.output
    after = json.loads(root("nodes", "show", "n2", "--json").stdout)
    assert after["active"] is False and after["nodeDescription"] == "maintenance" and after["cloudProvider"] == "ovh"
    assert root("nodes", "list", "-q").stdout.split() == ["wasdi"]
    assert root("nodes", "list", "--all", "-q").stdout.split() == ["wasdi", "n2"]
    assert root("nodes", "update", "n2").exit_code == 2
    assert root("nodes", "create", "n2").exit_code == 1  # not unique


def test_node_sharing(root: Cli) -> None:
    root("nodes", "create", "n2")
    added = root("nodes", "share", "add", "n2", ALICE)
    assert added.exit_code == 0 and f"Shared node n2 with {ALICE} (read)" in added.stderr
    again = root("nodes", "share", "add", "n2", ALICE, "--rights", "write")
    assert again.exit_code == 0 and "already shared" in again.stderr
    assert json.loads(root("nodes", "share", "list", "n2", "--json").stdout) == [{"nodeCode": "n2", "userId": ALICE}]
    assert root("nodes", "share", "add", "n2", "nobody@example.org").exit_code == 1
    removed = root("nodes", "share", "remove", "n2", ALICE)
    assert removed.exit_code == 0 and "Stopped sharing node n2" in removed.stderr
    empty = root("nodes", "share", "list", "n2")
    assert empty.stdout == "" and "not shared" in empty.stderr


def test_nodes_for_a_user(root: Cli, wasdi_app: WasdiApp) -> None:
    root("nodes", "create", "n2")
    root("nodes", "share", "add", "n2", BOB)
    root.login()  # alice, not an admin
    assert root("nodes", "list", "-q").stdout.split() == ["wasdi"]
    for args in (("nodes", "show", "n2"), ("nodes", "create", "n3"), ("nodes", "update", "n2", "--inactive"),
                 ("nodes", "share", "add", "n2", ALICE), ("nodes", "share", "remove", "n2", BOB)):
        result = root(*args)
        assert result.exit_code == 4, (args, result.output)
        assert result.stderr.startswith("Error: ")
    assert wasdi_app.services.nodes.get("n3") is None
    sharings = wasdi_app.services.store.collection("sharings").find(resourceType="node", resourceId="n2")
    assert [s["userId"] for s in sharings] == [BOB]
