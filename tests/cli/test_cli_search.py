"""``wasdi search`` against the in-process server over the LOCAL test catalogue."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import ALICE, ALICE_PASSWORD, BOB, BOB_PASSWORD, Cli, lines
from tests.server.test_search import (
    FLOOD_JAN20,
    INDEX_S2_JAN25,
    S1_GRD_JAN07,
    S2_L1C_JAN15_UTM,
    S2_L2A_JAN05,
    make_catalogue,
)
from wasdi_server import create_app, load_settings
from wasdi_server.app import WasdiApp

JANUARY_ALPS = ("--from", "2023-01-01", "--to", "2023-01-31", "--bbox", "46,7,45,8")


@pytest.fixture
def wasdi_app(tmp_path: Path) -> Iterator[WasdiApp]:
    """The CLI tests' app, with the test catalogue in ``<data_dir>/catalogue`` (made before the app starts)."""
    make_catalogue(tmp_path / "data" / "catalogue")
    app = create_app(load_settings(data_dir=tmp_path / "data", environ={}))
    app.services.users.add(ALICE, ALICE_PASSWORD, name="Alice", surname="Liddell")
    app.services.users.add(BOB, BOB_PASSWORD, name="Bob", surname="Builder")
    yield app
    app.services.close()


@pytest.fixture
def alice(cli: Cli) -> Cli:
    cli.login()
    return cli


def test_search_table(alice: Cli) -> None:
    result = alice("search", "--platform", "S2", *JANUARY_ALPS)
    assert result.exit_code == 0, result.output
    rows = lines(result.stdout)
    assert rows[0].split() == ["title", "date", "platform", "type", "cloud", "%", "orbit", "size", "provider"]
    body = rows[2:] if set(rows[1].strip()) <= {"─", "-", " "} else rows[1:]
    assert [r.split()[0] for r in body] == [S2_L2A_JAN05, S2_L1C_JAN15_UTM, FLOOD_JAN20, INDEX_S2_JAN25]
    first = body[0].split()
    assert first[1:6] == ["2023-01-05", "10:14:11", "UTC", "Sentinel-2", "S2MSI2A"] and first[-1] == "AUTO"
    assert result.stderr == ""


def test_search_json_is_the_wire_list(alice: Cli) -> None:
    result = alice("search", "--platform", "S2", *JANUARY_ALPS, "--type", "S2MSI2A", "--cloud", "0,30", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert sorted(d["title"] for d in data) == sorted([S2_L2A_JAN05, INDEX_S2_JAN25])
    query = ('( footprint:"intersects(POLYGON(( 7.0 45.0,7.0 46.0,8.0 46.0,8.0 45.0,7.0 45.0)))") AND '
             "( platformname:Sentinel-2  AND producttype:S2MSI2A AND cloudcoverpercentage:[0 TO 30]) AND "
             "( beginPosition:[2023-01-01T00:00:00.000Z TO 2023-01-31T23:59:59.999Z]AND endPosition:"
             "[2023-01-01T00:00:00.000Z TO 2023-01-31T23:59:59.999Z]) ")
    expected = alice.sdk(alice.token()).search.query_list([query], providers="AUTO")
    assert data == [r.to_wire() for r in expected]


def test_search_quiet_orbit_mode_and_show_query(alice: Cli) -> None:
    result = alice("search", "--platform", "S1", *JANUARY_ALPS, "--orbit", "78", "--mode", "IW", "-q",
                   "--show-query")
    assert result.exit_code == 0, result.output
    assert result.stdout == S1_GRD_JAN07 + "\n"
    assert "sensoroperationalmode:IW AND relativeorbitnumber:78" in result.stderr
    assert alice("search", "--platform", "S1", *JANUARY_ALPS, "--orbit", "5", "-q").stdout == ""


def test_search_count_and_limit(alice: Cli) -> None:
    count = alice("search", "--platform", "S2", *JANUARY_ALPS, "--count")
    assert count.exit_code == 0 and count.stdout == "4\n"
    limited = alice("search", "--platform", "S2", *JANUARY_ALPS, "--limit", "2", "-q")
    assert limited.exit_code == 0 and limited.stdout.splitlines() == [S2_L2A_JAN05, S2_L1C_JAN15_UTM]


def test_search_provider_name_and_param(alice: Cli) -> None:
    result = alice("search", "--platform", "S2", *JANUARY_ALPS, "--provider", "LOCAL", "--name", "S2B_",
                   "--param", "producttype=S2MSI1C", "--json")
    assert result.exit_code == 0, result.output
    [found] = json.loads(result.stdout)
    assert found["title"] == S2_L1C_JAN15_UTM and found["provider"] == "LOCAL"


def test_search_nothing_found(alice: Cli) -> None:
    result = alice("search", "--platform", "S2", "--from", "2030-01-01", "--to", "2030-01-31")
    assert result.exit_code == 0 and result.stdout == "" and "No products found" in result.stderr


@pytest.mark.parametrize("args", [
    ("--bbox", "46,7,45"), ("--bbox", "a,b,c,d"), ("--bbox", "45,7,46,8"), ("--cloud", "30"), ("--cloud", "50,10"),
    ("--from", "01/01/2023"), ("--param", "novalue"), ("--limit", "0"),
])
def test_search_usage_errors(alice: Cli, args: tuple[str, ...]) -> None:
    result = alice("search", "--platform", "S2", *args)
    assert result.exit_code == 2, result.output


def test_impossible_and_swapped_dates_are_refused_as_such(alice: Cli) -> None:
    impossible = alice("search", "--platform", "S2", "--from", "2024-13-01")
    assert impossible.exit_code == 2 and "no access" not in impossible.stderr
    assert "--from: '2024-13-01' is not a date: give it as YYYY-MM-DD" in impossible.stderr
    feb30 = alice("search", "--platform", "S2", "--from", "2024-01-01", "--to", "2024-02-30")
    assert feb30.exit_code == 2 and "--to: '2024-02-30' is not a date" in feb30.stderr
    swapped = alice("search", "--platform", "S2", "--from", "2024-01-31", "--to", "2024-01-01")
    assert swapped.exit_code == 2 and "--from 2024-01-31 is after --to 2024-01-01" in swapped.stderr
    assert "No products found" not in swapped.stderr


def test_search_failures(alice: Cli) -> None:
    unknown = alice("search", "--platform", "S2", *JANUARY_ALPS, "--provider", "NOBODY")
    assert unknown.exit_code == 1 and unknown.stderr.startswith("Error: the search failed")
    no_mission = alice("search", "--platform", "NoSuchMission", "--count")
    assert no_mission.exit_code == 1 and "the search failed" in no_mission.stderr


def test_search_needs_a_login(cli: Cli) -> None:
    result = cli("search", "--platform", "S2")
    assert result.exit_code == 4 and "not logged in" in result.stderr


def test_search_is_in_the_help(cli: Cli) -> None:
    assert "search" in cli("--help").stdout


def test_search_several_types_together(alice: Cli) -> None:
    count = alice("search", "--platform", "S2", *JANUARY_ALPS, "--type", "S2MSI2A,S2MSI1C", "--count")
    assert count.exit_code == 0, count.output
    assert count.stdout == "3\n"
    found = alice("search", "--platform", "S2", *JANUARY_ALPS, "--type", "S2MSI2A, S2MSI1C", "-q")
    assert found.exit_code == 0, found.output
    assert sorted(found.stdout.splitlines()) == sorted([S2_L2A_JAN05, S2_L1C_JAN15_UTM, INDEX_S2_JAN25])
    paged = alice("search", "--platform", "S2", *JANUARY_ALPS, "--type", "S2MSI2A,S2MSI1C", "--limit", "2")
    assert paged.exit_code == 2 and "--limit takes one --type" in paged.stderr


def test_providers(alice: Cli) -> None:
    expected = alice.sdk(alice.token()).search.list_providers()
    assert expected
    quiet = alice("providers", "-q")
    assert quiet.exit_code == 0, quiet.output
    assert quiet.stdout.splitlines() == [p.code for p in expected]
    data = json.loads(alice("providers", "--json").stdout)
    assert data == [p.to_wire() for p in expected]
    assert "LOCAL" in alice("providers").stdout
