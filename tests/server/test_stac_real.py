"""The ``stac`` provider and imports against a real STAC API (stac-fastapi-pgstac over pgstac, tests/stac_server.py):
what the catalogue holds is what a search through our server finds, counts past 100 items without
``numberMatched``, names beside a footprint, and imports of assets that share a file name."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from tests import environment
from tests.conftest import Person, Server
from tests.server.geodata import folder, new_workspace, wait_process
from tests.server.test_search import footprint_clause
from tests.stac_server import RealStac, asset_bytes, real_stac, stac_providers_setting

from wasdi_server.providers.search import StacProvider
from wasdi_server.search_grammar import parse_query

__all__ = ["real_stac"]  # the fixture, imported for pytest

pytestmark = pytest.mark.e2e


def query(platform: str, begin: str, end: str, *, name: str = "", bbox: tuple[float, ...] | None = None,
          extra: str = "") -> str:
    """A query as the official library writes it (the name glued after the footprint)."""
    text = footprint_clause(*bbox) if bbox else ""
    return (text + name + f"( platformname:{platform}{extra}) AND ( beginPosition:[{begin}T00:00:00.000Z TO "
            f"{end}T23:59:59.999Z]AND endPosition:[{begin}T00:00:00.000Z TO {end}T23:59:59.999Z]) ")


def held(items: list[dict[str, Any]], begin: str, end: str, *, prefix: str = "", bbox: tuple[float, ...] | None = None,
         cloud: float | None = None) -> list[str]:
    """The ids of the items the catalogue holds that match: computed from the loaded items, not asked."""
    low, high = datetime.fromisoformat(begin + "T00:00:00+00:00"), datetime.fromisoformat(end + "T23:59:59+00:00")
    out = []
    for item in items:
        when = datetime.fromisoformat(item["properties"]["datetime"].replace("Z", "+00:00"))
        west, south, east, north = item["bbox"]
        if not low <= when <= high or not item["id"].startswith(prefix):
            continue
        if bbox and (east < bbox[0] or west > bbox[2] or north < bbox[1] or south > bbox[3]):
            continue
        if cloud is not None and item["properties"]["eo:cloud_cover"] > cloud:
            continue
        out.append(item["id"])
    return sorted(out)


@pytest.fixture
def stac_server(tmp_path: Path, real_stac: RealStac) -> Iterator[Server]:
    s = Server(tmp_path / "data", search_providers=stac_providers_setting(real_stac),
               search_catalogues={"Sentinel-2": ["EARTH"], "Sentinel-1": ["EARTH"]},
               import_allowed_hosts=["127.0.0.1"])
    yield s
    s.close()


@pytest.fixture
def alice(stac_server: Server) -> Person:
    return stac_server.add_user("alice@example.org")


def test_a_search_finds_exactly_what_the_catalogue_holds(stac_server: Server, alice: Person,
                                                         real_stac: RealStac) -> None:
    text = query("Sentinel-2 ", "2024-01-05", "2024-01-25", bbox=(7.0, 45.2, 7.5, 45.8),
                 extra=" AND cloudcoverpercentage:[0 TO 50]")
    expected = held(real_stac.s2_items, "2024-01-05", "2024-01-25", bbox=(7.0, 45.2, 7.5, 45.8), cloud=50)
    assert expected and len(expected) < len(real_stac.s2_items)
    found = stac_server.post("/search/querylist", alice, json=[text]).json
    assert sorted(r["title"] for r in found) == expected
    assert stac_server.get("/search/query/count", alice, query=text).json == len(expected)
    first = next(r for r in found if r["title"] == expected[0])
    assert first["link"].endswith("/TCI.tif") and first["footprint"].startswith("POLYGON")


def test_counts_and_querylist_go_past_100_items(stac_server: Server, alice: Person, real_stac: RealStac) -> None:
    text = query("Sentinel-2 ", "2024-01-01", "2024-12-31")
    assert stac_server.get("/search/query/count", alice, query=text).json == len(real_stac.s2_items) == 240
    found = stac_server.post("/search/querylist", alice, json=[text]).json
    assert len(found) == 240 and len({r["title"] for r in found}) == 240
    s1 = query("Sentinel-1", "2024-01-01", "2024-12-31", extra=" AND producttype:GRD AND sensoroperationalmode:IW")
    assert stac_server.get("/search/query/count", alice, query=s1).json == len(real_stac.s1_items)


@pytest.mark.parametrize(("name", "prefix"), [("S2A_", "S2A_"), ("S2B_32TMR*", "S2B_32TMR")])
def test_a_name_beside_a_footprint_is_filtered_by_the_catalogue(stac_server: Server, alice: Person,
                                                                real_stac: RealStac, name: str, prefix: str) -> None:
    text = query("Sentinel-2 ", "2024-01-01", "2024-02-29", name=name, bbox=(7.0, 45.2, 7.9, 45.8))
    assert parse_query(text).product_name == name
    expected = held(real_stac.s2_items, "2024-01-01", "2024-02-29", prefix=prefix, bbox=(7.0, 45.2, 7.9, 45.8))
    assert expected
    assert sorted(r["title"] for r in stac_server.post("/search/querylist", alice, json=[text]).json) == expected
    assert stac_server.get("/search/query/count", alice, query=text).json == len(expected)
    provider = StacProvider("EARTH", real_stac.url)
    with provider._client() as client:  # pgstac lists the Filter extension: the name went to it as CQL2 like
        assert provider._name_on_server(client, parse_query(text))


def test_the_name_filtered_here_agrees_with_the_catalogue(real_stac: RealStac) -> None:
    text = query("Sentinel-2 ", "2024-01-01", "2024-12-31", name="S2A_32TLR")
    on_server = StacProvider("EARTH", real_stac.url)
    here = StacProvider("EARTH", real_stac.url, name_filter="client", page_size=50)
    parsed = parse_query(text)
    expected = held(real_stac.s2_items, "2024-01-01", "2024-12-31", prefix="S2A_32TLR")
    assert on_server.count(parsed) == here.count(parsed) == len(expected)
    assert sorted(r.title for r in here.search(parsed, 0, 1000)) == expected
    assert [r.title for r in here.search(parsed, 5, 4)] == [r.title for r in on_server.search(parsed, 5, 4)]


def test_imports_of_two_scenes_whose_assets_share_a_file_name(stac_server: Server, alice: Person,
                                                              real_stac: RealStac) -> None:
    ws = new_workspace(stac_server, alice, "scenes")
    text = query("Sentinel-2 ", "2024-01-01", "2024-01-01")
    found = stac_server.post("/search/querylist", alice, json=[text]).json
    assert len(found) >= 2 and all(r["link"].endswith("/TCI.tif") for r in found)
    for result in found[:2]:  # as `wasdi import <link>` does: the link alone
        r = stac_server.post("/filebuffer/download", alice, json={"fileUrl": result["link"], "workspace": ws})
        process = wait_process(stac_server, r.json["stringValue"])
        assert process["status"] == "DONE", process
        assert process["productName"] == result["title"] + ".tif"
        path = result["link"].split("127.0.0.1:", 1)[1].split("/", 1)[1]
        assert (folder(stac_server, ws) / process["productName"]).read_bytes() == asset_bytes("/" + path)


# -- imports a user can trust ----------------------------------------------------------------------------------
def import_link(server: Server, who: Person, ws: str, result: dict[str, Any]) -> dict[str, Any]:
    r = server.post("/filebuffer/download", who, json={"fileUrl": result["link"], "workspace": ws})
    assert r.json["boolValue"] is True, r.json
    return wait_process(server, r.json["stringValue"], timeout=60)


def asset_path(link: str) -> str:
    return "/" + link.split("127.0.0.1:", 1)[1].split("/", 1)[1]


def log_rows(server: Server, who: Person, process_id: str) -> list[str]:
    return [row["logRow"] for row in server.get("/processors/logs/list", who, processworkspace=process_id).json]


def test_a_dropped_transfer_continues_with_a_range(stac_server: Server, alice: Person, real_stac: RealStac) -> None:
    ws = new_workspace(stac_server, alice, "resume")
    item = real_stac.s2_items[21]
    day = item["properties"]["datetime"][:10]
    [found] = stac_server.post("/search/querylist", alice,
                               json=[query("Sentinel-2 ", day, day, name=item["id"])]).json
    path = asset_path(found["link"])
    real_stac.assets.cut_after[path] = 100_000  # the first answer stops after 100,000 bytes
    process = import_link(stac_server, alice, ws, found)
    assert process["status"] == "DONE", process
    assert (folder(stac_server, ws) / process["productName"]).read_bytes() == asset_bytes(path)
    asked = [wanted for seen, wanted in real_stac.assets.requests if seen == path]
    assert asked == [None, "bytes=100000-"]  # one more request, from where it stopped
    assert any("continuing from there" in row for row in log_rows(stac_server, alice, process["processObjId"]))


def test_the_item_checksum_is_checked_and_its_properties_kept(stac_server: Server, alice: Person,
                                                             real_stac: RealStac) -> None:
    from tests.stac_server import DAMAGED_ITEM

    ws = new_workspace(stac_server, alice, "checked")
    damaged = real_stac.s2_items[DAMAGED_ITEM]
    day = damaged["properties"]["datetime"][:10]
    found = stac_server.post("/search/querylist", alice, json=[query("Sentinel-2 ", day, day)]).json
    by_title = {r["title"]: r for r in found}
    good = next(r for title, r in by_title.items() if title != damaged["id"])
    process = import_link(stac_server, alice, ws, by_title[damaged["id"]])
    assert process["status"] == "ERROR"
    assert any("does not match its sha256 checksum" in row for row in log_rows(stac_server, alice,
                                                                               process["processObjId"]))
    assert not (folder(stac_server, ws) / f"{damaged['id']}.tif").exists()
    process = import_link(stac_server, alice, ws, good)
    assert process["status"] == "DONE"
    # the catalogue item's properties are the product's metadata
    name = process["productName"]
    assert stac_server.get("/product/metadatabyname", alice, workspace=ws, name=name).json["name"].startswith(
        "Generating")
    deadline = __import__("time").monotonic() + 30
    while (tree := stac_server.get("/product/metadatabyname", alice, workspace=ws, name=name).json)["name"] \
            .startswith("Generating") and __import__("time").monotonic() < deadline:
        __import__("time").sleep(0.2)
    [item] = [e for e in tree["elements"] if e["name"] == "Catalogue item"]
    values = {a["description"]: a["data"] for a in item["attributes"]}
    assert values["cloudcoverpercentage"] == good["properties"]["cloudcoverpercentage"]
    assert values["checksum"].startswith("1220") and values["platform"].startswith("sentinel-2")


def test_downloads_of_one_provider_wait_for_a_slot(tmp_path: Path, real_stac: RealStac) -> None:
    server = Server(tmp_path / "data", search_providers=stac_providers_setting(real_stac),
                    search_catalogues={"Sentinel-2": ["EARTH"]}, import_allowed_hosts=["127.0.0.1"],
                    import_downloads_per_provider=1)
    try:
        alice = server.add_user("alice@example.org")
        ws = new_workspace(server, alice, "slots")
        found = server.post("/search/querylist", alice, json=[query("Sentinel-2 ", "2024-01-05", "2024-01-06")]).json
        assert len(found) >= 3
        real_stac.assets.seconds_per_request, real_stac.assets.most_busy = 0.4, 0
        ids = [server.post("/filebuffer/download", alice, json={"fileUrl": r["link"], "workspace": ws,
                                                               "provider": "EARTH"}).json["stringValue"]
               for r in found[:3]]
        assert all(wait_process(server, pid, timeout=60)["status"] == "DONE" for pid in ids)
        assert real_stac.assets.most_busy == 1
    finally:
        real_stac.assets.seconds_per_request = 0.0
        server.close()


# -- EODAG, pointed at the same real STAC API -----------------------------------------------------------------------
def eodag_entry(stac: RealStac, **options: Any) -> dict[str, Any]:
    return {"code": "EODAG", "type": "eodag", "provider": "local_pgstac", "url": stac.url,
            "stac_collections": {"S2_MSI_L2A": "sentinel-2-l2a", "S1_SAR_GRD": "sentinel-1-grd"}, **options}


@pytest.fixture
def eodag_server(tmp_path: Path, real_stac: RealStac) -> Iterator[Server]:
    if not environment.on_ci():  # CI installs the test extra, which carries EODAG: there a missing one fails
        pytest.importorskip("eodag", reason="the eodag extra is not installed")
    s = Server(tmp_path / "data", search_providers=[eodag_entry(
                   real_stac, auth_hosts=["127.0.0.1"], credentials={"apikey": "eodag-key-1"},
                   auth_plugin={"type": "HTTPHeaderAuth", "headers": {"X-Api-Key": "{apikey}"},
                                "matching_url": "http://127.0.0.1"})],
               search_catalogues={"Sentinel-2": ["EODAG"], "Sentinel-1": ["EODAG"]},
               import_allowed_hosts=["127.0.0.1"])
    yield s
    s.close()


def test_eodag_searches_and_counts_what_the_catalogue_holds(eodag_server: Server, real_stac: RealStac) -> None:
    alice = eodag_server.add_user("alice@example.org")
    text = query("Sentinel-2 ", "2024-01-05", "2024-01-25", bbox=(7.0, 45.2, 7.5, 45.8))
    expected = held(real_stac.s2_items, "2024-01-05", "2024-01-25", bbox=(7.0, 45.2, 7.5, 45.8))
    assert expected
    found = eodag_server.post("/search/querylist", alice, json=[text]).json
    assert sorted(r["title"] for r in found) == expected
    assert all(r["link"].endswith("/TCI.tif") for r in found)
    everything = query("Sentinel-2 ", "2024-01-01", "2024-12-31")
    assert eodag_server.get("/search/query/count", alice, query=everything).json == 240  # past EODAG's pages
    named = query("Sentinel-2 ", "2024-01-01", "2024-12-31", name="S2B_32TMR")
    assert eodag_server.get("/search/query/count", alice, query=named).json == len(
        held(real_stac.s2_items, "2024-01-01", "2024-12-31", prefix="S2B_32TMR"))
    page = eodag_server.get("/search/query", alice, query=everything, offset="130", limit="25").json
    assert len(page) == 25 and not {r["title"] for r in page} & {
        r["title"] for r in eodag_server.get("/search/query", alice, query=everything, limit="25").json}


def test_eodag_downloads_with_its_credentials_through_the_guard(eodag_server: Server, real_stac: RealStac) -> None:
    alice = eodag_server.add_user("alice@example.org")
    ws = new_workspace(eodag_server, alice, "eodag")
    item = real_stac.s2_items[33]
    day = item["properties"]["datetime"][:10]
    [found] = eodag_server.post("/search/querylist", alice,
                                json=[query("Sentinel-2 ", day, day, name=item["id"])]).json
    before = len(real_stac.assets.requests)
    process = import_link(eodag_server, alice, ws, found)
    assert process["status"] == "DONE", process
    assert process["productName"] == item["id"] + ".tif"
    assert (folder(eodag_server, ws) / process["productName"]).read_bytes() == asset_bytes(asset_path(found["link"]))
    assert real_stac.assets.requests[before:] == [(asset_path(found["link"]), None)]
    assert real_stac.assets.api_keys[-1] == "eodag-key-1"  # EODAG's authentication, on our own download


def test_eodag_configuration_mistakes(tmp_path: Path, real_stac: RealStac) -> None:
    if not environment.on_ci():  # CI installs the test extra, which carries EODAG: there a missing one fails
        pytest.importorskip("eodag", reason="the eodag extra is not installed")
    from wasdi_server.providers.search import build_provider

    with pytest.raises(ValueError, match="EODAG knows no provider 'no_such_provider'"):
        build_provider({"code": "E", "type": "eodag", "provider": "no_such_provider"}, tmp_path)
    with pytest.raises(ValueError, match="auth_hosts must name the hosts"):
        build_provider(eodag_entry(real_stac, credentials={"apikey": "k"}), tmp_path)
