"""``wasdi subscriptions``, ``wasdi projects`` and ``wasdi orgs`` against the in-process server."""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import ALICE, BOB, BOB_PASSWORD, Cli, lines
from wasdi_cli import output


@pytest.fixture
def alice(cli: Cli) -> Cli:
    cli.login()
    return cli


def run(cli: Cli, *args: str, code: int = 0) -> str:
    result = cli(*args)
    assert result.exit_code == code, result.output
    return result.stdout


def new_subscription(cli: Cli, *args: str) -> str:
    result = cli("subscriptions", "create", *args)
    assert result.exit_code == 0, result.output
    return result.stdout.strip()


# -- orgs -------------------------------------------------------------------------------------------------
def test_orgs_create_list_show(alice: Cli) -> None:
    result = alice("orgs", "create", "ACME", "--description", "rockets", "--url", "https://acme.example")
    assert result.exit_code == 0, result.output
    org = result.stdout.strip()
    assert result.stdout == org + "\n" and len(org) == 36 and "Created organization 'ACME'" in result.stderr
    data = json.loads(run(alice, "orgs", "list", "--json"))
    assert data == [o.to_wire() for o in alice.sdk(alice.token()).organizations.list()]
    assert data == [{"organizationId": org, "ownerUserId": ALICE, "name": "ACME", "readOnly": False}]
    assert run(alice, "orgs", "list", "-q") == org + "\n"
    table = lines(run(alice, "orgs", "list"))
    assert table[0].split() == ["id", "name", "owner", "read-only"]
    assert [org, "ACME", ALICE, "no"] in [row.split() for row in table]
    shown = json.loads(run(alice, "orgs", "show", "ACME", "--json"))
    assert shown["organizationId"] == org and shown["description"] == "rockets"
    assert any(line.split() == ["url", "https://acme.example"] for line in run(alice, "orgs", "show", org).splitlines())


def test_orgs_duplicate_name_is_an_error(alice: Cli) -> None:
    run(alice, "orgs", "create", "ACME")
    result = alice("orgs", "create", "acme")
    assert result.exit_code == 1 and result.stderr.startswith("Error: An organization with the same name")
    assert alice("orgs", "create", " ").exit_code == 2


def test_orgs_update_share_delete(alice: Cli) -> None:
    org = run(alice, "orgs", "create", "ACME").strip()
    assert alice("orgs", "update", "ACME").exit_code == 2  # nothing to change
    result = alice("orgs", "update", "ACME", "--email", "info@acme.example")
    assert result.exit_code == 0, result.output
    assert alice.sdk(alice.token()).organizations.get(org).email == "info@acme.example"
    run(alice, "orgs", "update", org, "--name", "ACME 2")
    assert alice.sdk(alice.token()).organizations.get(org).name == "ACME 2"

    added = alice("orgs", "share", "add", "ACME 2", BOB, "--rights", "write")
    assert added.exit_code == 0 and BOB in added.stderr and added.stdout == ""
    again = alice("orgs", "share", "add", "ACME 2", BOB)
    assert again.exit_code == 0 and "already" in again.stderr
    shared = json.loads(run(alice, "orgs", "share", "list", org, "--json"))
    assert shared == [{"organizationId": org, "userId": BOB, "ownerId": ALICE, "permissions": "write"}]
    assert alice("orgs", "share", "add", org, BOB, "--rights", "owner").exit_code == 2
    run(alice, "orgs", "share", "remove", org, BOB)
    assert "not shared" in alice("orgs", "share", "list", org).stderr

    refused = alice("orgs", "delete", org, input="y\n")
    assert refused.exit_code == 2 and "--yes" in refused.stderr
    deleted = alice("orgs", "delete", "ACME 2", "--yes")
    assert deleted.exit_code == 0 and "Deleted organization 'ACME 2'" in deleted.stderr
    assert run(alice, "orgs", "list", "--json").strip() == "[]"


def test_orgs_stranger_gets_exit_4(alice: Cli) -> None:
    org = run(alice, "orgs", "create", "ACME").strip()
    alice.login(BOB, BOB_PASSWORD, "--profile", "bob")
    result = alice("orgs", "show", org, "--profile", "bob")
    assert result.exit_code == 4 and result.stderr.startswith("Error: ")
    assert alice("orgs", "list", "--profile", "bob", "--json").stdout.strip() == "[]"


def test_orgs_need_a_login(cli: Cli) -> None:
    result = cli("orgs", "list")
    assert result.exit_code == 4 and "not logged in" in result.stderr


# -- subscriptions --------------------------------------------------------------------------------------
def test_subscription_types(alice: Cli) -> None:
    data = json.loads(run(alice, "subscriptions", "types", "--json"))
    assert [t["typeId"] for t in data][:3] == ["Free", "OneDayStandard", "OneWeekStandard"]
    assert "One Month Professional" in run(alice, "subscriptions", "types")


def test_subscription_create_list_show_update(alice: Cli) -> None:
    sub = new_subscription(alice, "OneWeekStandard", "--name", "Week", "--start", "2999-01-01")
    assert len(sub) == 36
    listed = json.loads(run(alice, "subscriptions", "list", "--json"))
    assert listed == [s.to_wire() for s in alice.sdk(alice.token()).subscriptions.list()]
    assert [(s["subscriptionId"], s["name"], s["reason"], s["buySuccess"]) for s in listed] == \
        [(sub, "Week", "owner", False)]
    assert run(alice, "subscriptions", "list", "--valid", "--json").strip() == "[]"
    shown = json.loads(run(alice, "subscriptions", "show", "Week", "--json"))
    assert shown["startDate"] == "2999-01-01T00:00:00.000Z" and shown["durationDays"] == 7
    table = run(alice, "subscriptions", "show", sub)
    assert any(line.split() == ["type", "OneWeekStandard"] for line in table.splitlines())
    run(alice, "subscriptions", "update", "Week", "--name", "Seven", "--type", "OneDayStandard")
    shown = json.loads(run(alice, "subscriptions", "show", sub, "--json"))
    assert shown["name"] == "Seven" and shown["durationDays"] == 1
    assert alice("subscriptions", "update", sub).exit_code == 2
    bad = alice("subscriptions", "create", "Platinum")
    assert bad.exit_code == 1 and bad.stderr.startswith("Error: invalid subscription type")
    # the default project came with it
    projects = json.loads(run(alice, "projects", "list", "--json"))
    assert [(p["name"], p["subscriptionName"], p["activeProject"]) for p in projects] == [("Week", "Seven", True)]


def test_subscription_list_all_needs_admin_and_flags_need_all(alice: Cli) -> None:
    assert alice("subscriptions", "list", "--name", "x").exit_code == 2
    result = alice("subscriptions", "list", "--all")
    assert result.exit_code == 4
    admin = alice.app.services
    admin.users.add("root@example.org", "root-password", admin=True)
    alice.login("root@example.org", "root-password", "--profile", "root")
    new_subscription(alice, "OneDayStandard", "--name", "Day")
    data = json.loads(run(alice, "subscriptions", "list", "--all", "--user", "alice", "--status", "unpaid",
                          "--sort", "endDate", "--desc", "--json", "--profile", "root"))
    assert [s["name"] for s in data] == ["Day"]
    assert alice("subscriptions", "list", "--all", "--status", "shiny", "--profile", "root").exit_code == 2


def test_subscription_buy_prints_the_checkout_url(alice: Cli) -> None:
    sub = new_subscription(alice, "OneMonthStandard", "--name", "Month")
    result = alice("subscriptions", "buy", "Month")
    assert result.exit_code == 0, result.output
    url = result.stdout.strip()
    assert result.stdout == url + "\n" and "/payments/local/checkout/cs_local_" in url
    assert "Open the URL above" in result.stderr
    session_id = url.rsplit("/", 1)[1]
    unpaid = alice("subscriptions", "confirm", session_id)
    assert unpaid.exit_code != 0
    assert json.loads(run(alice, "subscriptions", "show", sub, "--json"))["buySuccess"] is False
    alice.app.services.payments.get("local").pay(session_id)
    confirmed = alice("subscriptions", "confirm", session_id, "--provider", "local")
    assert confirmed.exit_code == 0, confirmed.output
    assert "is paid" in confirmed.stderr
    assert json.loads(run(alice, "subscriptions", "show", sub, "--json"))["buySuccess"] is True
    again = alice("subscriptions", "buy", sub)
    assert again.exit_code == 1 and "already paid" in again.stderr
    assert alice("subscriptions", "buy", sub, "--provider", "nowhere").exit_code == 1


def test_subscription_share_and_leave(alice: Cli) -> None:
    sub = new_subscription(alice, "OneDayStandard", "--name", "Team")
    added = alice("subscriptions", "share", "add", "Team", BOB, "--rights", "write")
    assert added.exit_code == 0, added.output
    assert json.loads(run(alice, "subscriptions", "share", "list", sub, "--json")) == [
        {"subscriptionId": sub, "userId": BOB, "ownerId": ALICE, "permissions": "write"}]
    assert run(alice, "subscriptions", "share", "list", "Team", "-q") == BOB + "\n"
    alice.login(BOB, BOB_PASSWORD, "--profile", "bob")
    listed = json.loads(run(alice, "subscriptions", "list", "--json", "--profile", "bob"))
    assert [(s["subscriptionId"], s["reason"], s["readOnly"]) for s in listed] == [(sub, "shared by user", False)]
    left = alice("subscriptions", "delete", "Team", "--yes", "--profile", "bob")
    assert left.exit_code == 0 and "Left subscription" in left.stderr
    assert json.loads(run(alice, "subscriptions", "show", sub, "--json"))["name"] == "Team"
    assert alice("subscriptions", "share", "remove", sub, BOB).exit_code == 1  # nothing left to remove


def test_subscription_delete_asks_on_a_terminal(alice: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(output, "stdin_is_tty", lambda: True)
    sub = new_subscription(alice, "OneDayStandard", "--name", "Doomed")
    no = alice("subscriptions", "delete", "Doomed", input="n\n")
    assert no.exit_code == 1 and "Cancelled" in no.stderr and "Delete subscription 'Doomed'" in no.stderr
    yes = alice("subscriptions", "delete", sub, input="y\n")
    assert yes.exit_code == 0 and "Deleted subscription" in yes.stderr
    assert run(alice, "subscriptions", "list", "-q") == ""
    assert run(alice, "projects", "list", "-q") == ""


# -- projects ---------------------------------------------------------------------------------------------
def test_projects_create_activate_update_delete(alice: Cli) -> None:
    sub = new_subscription(alice, "OneDayStandard", "--name", "Main")
    assert alice("projects", "create", "Floods").exit_code == 2  # needs --subscription
    result = alice("projects", "create", "Floods", "--subscription", "Main", "--description", "rivers")
    assert result.exit_code == 0, result.output
    project = result.stdout.strip()
    assert len(project) == 36 and "Created project 'Floods'" in result.stderr
    by_sub = json.loads(run(alice, "projects", "list", "-s", sub, "--json"))
    assert {p["name"] for p in by_sub} == {"Floods", "Main"}
    run(alice, "projects", "activate", "Floods")
    assert json.loads(run(alice, "projects", "show", project, "--json"))["activeProject"] is True
    table = lines(run(alice, "projects", "list"))
    assert table[0].split()[:4] == ["id", "name", "subscription", "active"]
    assert any(row.split()[:4] == [project, "Floods", "Main", "yes"] for row in table)
    run(alice, "projects", "activate", "--clear")
    assert json.loads(run(alice, "projects", "show", "Floods", "--json"))["activeProject"] is False
    assert alice("projects", "activate").exit_code == 2
    assert alice("projects", "activate", "Floods", "--clear").exit_code == 2
    run(alice, "projects", "update", "Floods", "--name", "Rivers", "--activate")
    shown = json.loads(run(alice, "projects", "show", project, "--json"))
    assert shown["name"] == "Rivers" and shown["activeProject"] is True and shown["description"] == "rivers"
    assert alice("projects", "update", project).exit_code == 2
    assert alice("projects", "delete", project, input="y\n").exit_code == 2
    deleted = alice("projects", "delete", "Rivers", "--yes")
    assert deleted.exit_code == 0 and "Deleted project 'Rivers'" in deleted.stderr
    assert [p["name"] for p in json.loads(run(alice, "projects", "list", "--json"))] == ["Main"]


def test_projects_of_another_user_need_admin(alice: Cli) -> None:
    new_subscription(alice, "OneDayStandard", "--name", "Main")
    project = json.loads(run(alice, "projects", "list", "--json"))[0]["projectId"]
    result = alice("projects", "activate", project, "--user", BOB)
    assert result.exit_code == 4 and result.stderr.startswith("Error: ")
    alice.login(BOB, BOB_PASSWORD, "--profile", "bob")
    assert alice("projects", "show", project, "--profile", "bob").exit_code == 4
    assert alice("projects", "list", "--json", "--profile", "bob").stdout.strip() == "[]"


def test_options_naming_an_organization_or_a_workspace_take_names(alice: Cli) -> None:
    org = run(alice, "orgs", "create", "ACME").strip()
    sub = run(alice, "subscriptions", "create", "OneMonthStandard", "--name", "Team", "--org", "ACME").strip()
    assert alice.sdk(alice.token()).subscriptions.get(sub).organization_id == org
    unknown = alice("subscriptions", "update", "Team", "--org", "Nope")
    assert unknown.exit_code == 1 and "no organization has the id or name 'Nope'" in unknown.stderr
    run(alice, "ws", "create", "Floods 2024")
    paid = alice("subscriptions", "buy", "Team", "--ws", "Floods 2024")
    assert paid.exit_code == 0, paid.output
    missing = alice("subscriptions", "buy", "Team", "--ws", "Nope")
    assert missing.exit_code == 1 and "no workspace has the id or name 'Nope'" in missing.stderr


def test_subscription_active_and_count(alice: Cli, wasdi_app: object) -> None:
    none = alice("subscriptions", "active")
    assert none.exit_code == 1 and "no valid subscription" in none.stderr
    sub = new_subscription(alice, "OneMonthStandard", "--name", "Month")
    url = run(alice, "subscriptions", "buy", "Month").strip()
    session_id = url.rsplit("/", 1)[1]
    alice.app.services.payments.get("local").pay(session_id)
    run(alice, "subscriptions", "confirm", session_id)
    assert run(alice, "subscriptions", "active", "-q") == sub + "\n"
    data = json.loads(run(alice, "subscriptions", "active", "--json"))
    assert data == alice.sdk(alice.token()).subscriptions.get_active().to_wire()
    assert "Month" in run(alice, "subscriptions", "active")
    assert alice("subscriptions", "count").exit_code == 4  # admins only
    alice.app.services.users.add("root@example.org", "password-root", admin=True)
    alice.login("root@example.org", "password-root")
    assert run(alice, "subscriptions", "count") == "1\n"
