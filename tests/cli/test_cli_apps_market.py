"""``wasdi market``, ``wasdi reviews``, and ``wasdi apps templates`` / ``wasdi apps share``, against the
in-process server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from tests.cli.conftest import ALICE, BOB, BOB_PASSWORD, Cli, lines
from tests.server.app_fixtures import app_record


def run_apps(cli: Cli, *args: str, input: str | None = None) -> Result:
    return cli("apps", *args, input=input)


def store_app(cli: Cli, owner: str, name: str, **fields: Any) -> dict[str, Any]:
    return cli.app.services.store.collection("processors").insert(app_record(owner, name, **fields))


@pytest.fixture
def alice(cli: Cli) -> Cli:
    cli.login()
    store_app(cli, ALICE, "ndvi", isPublic=1, showInStore=True, categories=["agriculture"], ondemandPrice=2.0,
              friendlyName="NDVI maps")
    store_app(cli, BOB, "floods", isPublic=1, showInStore=True, categories=["hydrology"])
    store_app(cli, BOB, "secret")
    return cli


def test_market_list_and_show(alice: Cli) -> None:
    result = alice("market", "list")
    assert result.exit_code == 0, result.output
    assert "ndvi" in result.stdout and "floods" in result.stdout and "secret" not in result.stdout
    assert alice("market", "list", "-q", "--category", "hydrology").stdout == "floods\n"
    assert alice("market", "list", "-q", "--sort", "price", "--desc").stdout == "ndvi\nfloods\n"
    rows = json.loads(alice("market", "list", "--json", "--name", "NDVI").stdout)
    assert [r["processorName"] for r in rows] == ["ndvi"] and rows[0]["price"] == 2.0
    assert "No apps match." in alice("market", "list", "--name", "zzz").stderr
    assert alice("market", "list", "-q", "--category", "Hydrology").stdout == "floods\n"  # its name works too
    unknown = alice("market", "list", "--category", "nosuchcat")
    assert unknown.exit_code == 2 and "No apps match" not in unknown.stderr
    assert "no category 'nosuchcat'; the categories are: " in unknown.stderr and "hydrology (Hydrology)" in \
        unknown.stderr
    assert alice("market", "list", "--sort", "size").exit_code == 2
    shown = alice("market", "show", "ndvi")
    assert shown.exit_code == 0 and "NDVI maps" in shown.stdout and "Agriculture" in shown.stdout
    detail = json.loads(alice("market", "show", "ndvi", "--json").stdout)
    assert detail["processorName"] == "ndvi" and detail["categories"] == ["agriculture"]
    missing = alice("market", "show", "secret")
    assert missing.exit_code == 1 and "no app has the id or name 'secret'" in missing.stderr
    cats = alice("market", "categories", "--json")
    assert {"id": "hydrology", "category": "Hydrology", "count": 1} in json.loads(cats.stdout)
    assert set(lines(alice("market", "publishers", "-q").stdout)) == {ALICE, BOB}


def test_reviews_and_comments(alice: Cli) -> None:
    added = alice("reviews", "add", "floods", "--vote", "4", "--title", "useful")
    assert added.exit_code == 0, added.output
    assert alice("reviews", "add", "floods", "--vote", "3").exit_code == 1
    assert alice("reviews", "add", "floods", "--vote", "9").exit_code == 2
    listed = alice("reviews", "list", "floods")
    assert "Average 4" in listed.stderr and "useful" in listed.stdout
    (review_id,) = lines(alice("reviews", "list", "floods", "-q").stdout)
    assert alice("reviews", "update", "floods", review_id, "--vote", "5").exit_code == 0
    assert json.loads(alice("reviews", "list", "floods", "--json").stdout)["avgVote"] == 5.0
    assert alice("reviews", "comment", review_id, "nice").exit_code == 0
    (comment_id,) = lines(alice("reviews", "comments", review_id, "-q").stdout)
    assert alice("reviews", "comment", review_id, "nicer", "--edit", comment_id).exit_code == 0
    assert "nicer" in alice("reviews", "comments", review_id).stdout
    assert alice("reviews", "uncomment", review_id, comment_id).exit_code == 0
    assert "No comments." in alice("reviews", "comments", review_id).stderr
    assert alice("reviews", "list", "nothing").exit_code == 1
    assert alice("reviews", "delete", "floods", review_id).exit_code == 0
    assert "No reviews of floods yet." in alice("reviews", "list", "floods").stderr


def test_templates(alice: Cli, tmp_path: Path) -> None:
    params = tmp_path / "params.json"
    params.write_text('{"bbox": [1, 2, 3, 4]}')
    added = run_apps(alice, "templates", "add", "ndvi", "summer", "--params", str(params), "--description", "d")
    assert added.exit_code == 0, added.output
    assert run_apps(alice, "templates", "add", "ndvi", "bad", "--params", "{oops").exit_code == 2
    assert run_apps(alice, "templates", "add", "missing", "x").exit_code == 1
    assert "summer" in run_apps(alice, "templates", "list", "ndvi").stdout
    shown = json.loads(run_apps(alice, "templates", "show", "summer", "--json").stdout)
    assert shown["jsonParameters"] == '{"bbox": [1, 2, 3, 4]}' and shown["description"] == "d"
    assert run_apps(alice, "templates", "update", "summer", "--params", '{"x": 1}').exit_code == 0
    shown = json.loads(run_apps(alice, "templates", "show", "summer", "--app", "ndvi", "--json").stdout)
    assert shown["jsonParameters"] == '{"x": 1}' and shown["description"] == "d" and shown["name"] == "summer"
    assert run_apps(alice, "templates", "update", "summer").exit_code == 2
    shared = run_apps(alice, "templates", "share", "add", "summer", BOB)
    assert shared.exit_code == 0 and "Shared template" in shared.stderr
    again = run_apps(alice, "templates", "share", "add", "summer", BOB)
    assert "already shared" in again.stderr
    assert run_apps(alice, "templates", "share", "list", "summer", "-q").stdout == BOB + "\n"
    assert run_apps(alice, "templates", "share", "remove", "summer", BOB).exit_code == 0
    assert run_apps(alice, "templates", "delete", "summer").exit_code == 2  # no --yes, no terminal
    assert run_apps(alice, "templates", "delete", "summer", "--yes").exit_code == 0
    assert "No templates of ndvi." in run_apps(alice, "templates", "list", "ndvi").stderr


def test_app_sharing(alice: Cli) -> None:
    result = run_apps(alice, "share", "add", "ndvi", BOB, "--rights", "write")
    assert result.exit_code == 0, result.output
    again = run_apps(alice, "share", "add", "ndvi", BOB)
    assert again.exit_code == 1 and "Already shared" in again.stderr
    assert run_apps(alice, "share", "list", "ndvi", "-q").stdout == BOB + "\n"
    alice.login(BOB, BOB_PASSWORD)
    assert "ndvi" in alice("market", "list", "-q").stdout
    assert run_apps(alice, "share", "remove", "ndvi", BOB).exit_code == 0
    assert run_apps(alice, "share", "list", "floods", "-q").stdout == ""


def test_market_buy_publish_and_credits(alice: Cli, tmp_path: Path) -> None:
    from urllib.parse import urlsplit

    published = alice("market", "publish", "ndvi", "--title", "NDVI", "--price", "5", "--km-price", "0",
                      "--category", "urban", "--hide")
    assert published.exit_code == 0, published.output
    stored = alice.app.services.store.collection("processors").find_one(name="ndvi")
    assert (stored["friendlyName"], stored["ondemandPrice"], stored["categories"], stored["showInStore"]) == \
        ("NDVI", 5.0, ["urban"], False)
    assert alice("market", "publish", "ndvi").exit_code == 2
    assert alice("market", "publish", "floods", "--price", "1").exit_code == 4  # bob's app: permission
    alice.login(BOB, BOB_PASSWORD)
    assert alice("market", "purchased", "ndvi").stdout == "false\n"
    bought = alice("market", "buy", "ndvi", "--provider", "local")
    assert bought.exit_code == 0, bought.output
    url = bought.stdout.strip()
    paid = alice.app  # pay on the local provider's checkout page, as a browser would
    from falcon import testing

    page = testing.TestClient(paid).simulate_post(urlsplit(url).path, body="action=pay",
                                                   headers={"Content-Type": "application/x-www-form-urlencoded"})
    checkout = page.headers["location"].rsplit("/", 1)[1]
    assert alice("market", "confirm", checkout, "--provider", "local").exit_code == 0
    assert alice("market", "confirm", "nope", "--provider", "local").exit_code == 1
    assert alice("market", "purchased", "ndvi").stdout == "true\n"
    payment_id = alice.app.services.store.collection("app_payments").all()[0]["appPaymentId"]
    shown = json.loads(alice("market", "payment", payment_id, "--json").stdout)
    assert shown["buySuccess"] is True and shown["userId"] == BOB
    assert alice("market", "payment", "nope").exit_code == 1
    store_app(alice, ALICE, "area", isPublic=1, squareKilometerPrice=1.0, areaParameterName="bbox")
    params = tmp_path / "p.json"
    params.write_text('{"AOI": "1,0,0,1"}')
    assert alice("market", "credits", "area", "--params", str(params)).stdout == "10875.13\n"
    assert alice("market", "credits", "area", "--params", "{bad").exit_code == 2
