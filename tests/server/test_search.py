"""/search through the real app, over a LOCAL catalogue of small GeoTIFFs and a JSON index.

The catalogue (``make_catalogue``) is also used by the SDK, CLI and end-to-end search tests.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import Person, Server

from wasdi_sdk.models import QueryResultViewModel
from wasdi_server.providers.search import (
    LocalCatalogue,
    SearchProvider,
    SearchProviderError,
    SearchProviders,
)
from wasdi_server.providers.search import local as local_module
from wasdi_server.search_grammar import SearchQuery

RESULT_MEMBERS = {"preview", "title", "summary", "id", "link", "footprint", "provider", "properties", "volumeName",
                  "volumePath", "platform"}
ALPS = (7.0, 45.0, 8.0, 46.0)
"""(west, south, east, north) of the test area."""

S2_L2A_JAN05 = "S2A_MSIL2A_20230105T101411_N0509_R022_T32TMR_20230105T130000.tif"
S2_L1C_JAN15_UTM = "S2B_MSIL1C_20230115T101411_N0509_R065_T32TMR_20230115T130000.tif"
S2_L2A_FEB10 = "S2A_MSIL2A_20230210T101411_N0509_R022_T32TMR_20230210T130000.tif"
S2_L2A_JAN08_ELSEWHERE = "S2A_MSIL2A_20230108T101411_N0509_R051_T31TCJ_20230108T130000.tif"
S1_GRD_JAN07 = "S1A_IW_GRDH_1SDV_20230107T052311_20230107T052336_046000_058A2B_1234.tif"
FLOOD_JAN20 = "flood_extent.tif"
"""In ``Sentinel-2/``: platform from the folder, date and footprint from its tags and bounds."""
INDEX_S2_JAN25 = "S2B_MSIL2A_20230125T101411_N0509_R022_T32TMR_20230125T130000"
INDEX_DEM = "Copernicus_DSM_COG_10_N45_00_E007_00_DEM"


def geotiff(path: Path, bounds: tuple[float, float, float, float], *, crs: str = "EPSG:4326",
            tags: dict[str, str] | None = None) -> Path:
    """A 4x4 single-band GeoTIFF covering ``bounds`` (west, south, east, north, in ``crs``)."""
    import numpy as np
    import rasterio
    from rasterio.transform import from_bounds

    path.parent.mkdir(parents=True, exist_ok=True)
    with rasterio.open(path, "w", driver="GTiff", width=4, height=4, count=1, dtype="uint8", crs=crs,
                       transform=from_bounds(*bounds, 4, 4)) as dst:
        dst.write(np.arange(16, dtype="uint8").reshape(1, 4, 4))
        if tags:
            dst.update_tags(**tags)
    return path


def utm_bounds(west: float, south: float, east: float, north: float) -> tuple[float, float, float, float]:
    from rasterio.warp import transform_bounds

    return tuple(transform_bounds("EPSG:4326", "EPSG:32632", west, south, east, north))  # type: ignore[return-value]


def make_catalogue(folder: Path) -> Path:
    """The test catalogue: six rasters, one non-raster file and a two-entry index (``index.json``)."""
    folder.mkdir(parents=True, exist_ok=True)
    geotiff(folder / S2_L2A_JAN05, (7.2, 45.2, 7.8, 45.8), tags={"CLOUD_COVER": "12.5"})
    geotiff(folder / S2_L1C_JAN15_UTM, utm_bounds(7.3, 45.3, 7.7, 45.7), crs="EPSG:32632",
            tags={"CLOUD_COVER": "50"})
    geotiff(folder / S2_L2A_FEB10, (7.2, 45.2, 7.8, 45.8), tags={"CLOUD_COVER": "1"})
    geotiff(folder / S2_L2A_JAN08_ELSEWHERE, (2.0, 43.0, 3.0, 44.0), tags={"CLOUD_COVER": "0"})
    geotiff(folder / S1_GRD_JAN07, (7.1, 45.1, 7.9, 45.9))
    geotiff(folder / "Sentinel-2" / FLOOD_JAN20, (7.4, 45.4, 7.6, 45.6),
            tags={"datetime": "2023-01-20T00:00:00Z", "cloudCover": "0"})
    (folder / "README.txt").write_text("not a product of any platform")
    (folder / "index.json").write_text(json.dumps([
        {"title": INDEX_S2_JAN25, "bbox": [7.0, 45.0, 8.0, 46.0], "platform": "Sentinel-2",
         "beginPosition": "2023-01-25T10:14:11.000Z", "cloudCover": 3, "size": 123456789,
         "link": "https://data.example.org/S2B_MSIL2A_20230125.zip", "preview": "https://data.example.org/q.jpg",
         "volumeName": "eodata", "volumePath": "/eodata/Sentinel-2/2023/01/25"},
        {"title": INDEX_DEM, "footprint": "POLYGON((7 45,7 46,8 46,8 45,7 45))", "platform": "DEM",
         "date": "2021-01-01", "path": "dem/N45E007.tif"},
        {"no": "title"},  # skipped (logged)
    ]))
    return folder


def footprint_clause(west: float, south: float, east: float, north: float) -> str:
    return (f'( footprint:"intersects(POLYGON(( {west} {south},{west} {north},{east} {north},{east} {south},'
            f'{west} {south})))") AND ')


def waspy_query(platform: str, date_from: str, date_to: str, *, bbox: tuple[float, ...] | None = ALPS,
                extra: str = "") -> str:
    """A query in the official library's form (``platform`` is the service's name)."""
    text = footprint_clause(*bbox) if bbox else ""
    text += f"( platformname:{platform}{extra}) "
    text += (f"AND ( beginPosition:[{date_from}T00:00:00.000Z TO {date_to}T23:59:59.999Z]"
             f"AND endPosition:[{date_from}T00:00:00.000Z TO {date_to}T23:59:59.999Z]) ")
    return text


S2_JANUARY = waspy_query("Sentinel-2 ", "2023-01-01", "2023-01-31")
S1_JANUARY = waspy_query("Sentinel-1", "2023-01-01", "2023-01-31")


@pytest.fixture
def search_server(tmp_path: Path) -> Iterator[Server]:
    make_catalogue(tmp_path / "data" / "catalogue")
    s = Server(tmp_path / "data")
    yield s
    s.close()


@pytest.fixture
def user(search_server: Server) -> Person:
    return search_server.add_user("alice@example.org")


def titles(results: list[dict[str, Any]]) -> list[str]:
    return sorted(r["title"] for r in results)


def query_list(server: Server, who: Person, queries: list[str], providers: str | None = "AUTO") -> Any:
    r = server.post("/search/querylist", who, json=queries, params={"providers": providers} if providers else None)
    assert r.status_code == 200, r.text
    return r.json


# -- the endpoints over the LOCAL catalogue --------------------------------------------------------
def test_providers_lists_the_builtin_local_catalogue(search_server: Server, user: Person) -> None:
    r = search_server.get("/search/providers", user)
    assert r.status_code == 200
    folder = search_server.settings.data_dir / "catalogue"
    assert r.json == [{"code": "LOCAL", "description": "Local catalogue", "link": folder.resolve().as_uri()}]


def test_count_and_query_by_footprint_dates_and_platform(search_server: Server, user: Person) -> None:
    expected = [FLOOD_JAN20, INDEX_S2_JAN25, S2_L1C_JAN15_UTM, S2_L2A_JAN05]  # not Feb 10, not elsewhere, not S1
    assert search_server.get("/search/query/count", user, query=S2_JANUARY).json == 4
    r = search_server.get("/search/query", user, query=S2_JANUARY)
    assert r.status_code == 200
    assert titles(r.json) == sorted(expected)
    assert search_server.get("/search/query/count", user, query=S1_JANUARY).json == 1
    everywhere = waspy_query("Sentinel-2 ", "2023-01-01", "2023-01-31", bbox=None)
    assert search_server.get("/search/query/count", user, query=everywhere).json == 5  # + the other tile


def test_a_utm_raster_is_found_by_its_reprojected_footprint(search_server: Server, user: Person) -> None:
    north_of_it = waspy_query("Sentinel-2 ", "2023-01-15", "2023-01-15", bbox=(7.3, 45.75, 7.7, 45.9))
    assert search_server.get("/search/query/count", user, query=north_of_it).json == 0
    inside = waspy_query("Sentinel-2 ", "2023-01-15", "2023-01-15", bbox=(7.45, 45.45, 7.55, 45.55))
    [found] = search_server.get("/search/query", user, query=inside).json
    assert found["title"] == S2_L1C_JAN15_UTM
    west, south, east, north = _box_of(found["footprint"])
    assert abs(west - 7.3) < 0.02 and abs(north - 45.7) < 0.02 and abs(south - 45.3) < 0.02 and abs(east - 7.7) < 0.02


def _box_of(wkt: str) -> tuple[float, float, float, float]:
    from wasdi_server.providers.search.base import bbox_of_wkt

    box = bbox_of_wkt(wkt)
    assert box is not None
    return box


def test_filters_type_cloud_orbit_mode_and_name(search_server: Server, user: Person) -> None:
    def count(extra: str, platform: str = "Sentinel-2 ") -> int:
        return int(search_server.get("/search/query/count", user,
                                     query=waspy_query(platform, "2023-01-01", "2023-01-31", extra=extra)).json)

    assert count(" AND producttype:S2MSI1C") == 1
    assert count(" AND producttype:S2MSI2A") == 2  # Jan 5 (name) and the index entry (its name)
    assert count(" AND cloudcoverpercentage:[0 TO 30]") == 3  # 12.5, 3, 0 (flood); 50 is out
    assert count(" AND relativeorbitnumber:65") == 1
    assert count(" AND relativeorbitnumber:78", "Sentinel-1") == 1  # computed from the absolute orbit
    assert count(" AND sensoroperationalmode:IW AND polarisationmode:VV", "Sentinel-1") == 1
    assert count(" AND sensoroperationalmode:EW", "Sentinel-1") == 0
    assert count(" AND filename:S2B_*") == 2
    assert count(" AND cloudcoverpercentage:[30 TO 0]") == 0  # backwards: matches nothing (not a failure)
    named = "S2A_MSIL2A_2023" + S2_JANUARY
    assert search_server.get("/search/query/count", user, query=named).json == 1


def test_every_result_member_is_present_volume_keys_included(search_server: Server, user: Person) -> None:
    answers = (search_server.get("/search/query", user, query=S2_JANUARY).json,
               query_list(search_server, user, [S2_JANUARY]))
    for r in answers:
        assert r and all(set(item) == RESULT_MEMBERS for item in r)
        by_title = {item["title"]: item for item in r}
        local = by_title[S2_L2A_JAN05]
        assert local["volumeName"] is None and local["volumePath"] is None  # present, null
        path = search_server.settings.data_dir / "catalogue" / S2_L2A_JAN05
        assert local["link"] == path.resolve().as_uri() and local["link"].startswith("file:///")
        assert local["platform"] == "Sentinel-2"
        assert local["footprint"].startswith("POLYGON((7.2 45.2,")
        props = local["properties"]
        assert all(isinstance(v, str) for v in props.values())
        assert props["date"] == "2023-01-05T10:14:11.000Z" and props["platformname"] == "Sentinel-2"
        assert props["cloudcoverpercentage"] == "12.5" and props["relativeorbitnumber"] == "22"
        assert props["producttype"] == "S2MSI2A" and props["size"].endswith("B")
        assert local["summary"].startswith("Date: 2023-01-05T10:14:11.000Z") and local["id"]
        indexed = by_title[INDEX_S2_JAN25]
        assert indexed["volumeName"] == "eodata" and indexed["volumePath"] == "/eodata/Sentinel-2/2023/01/25"
        assert indexed["preview"] == "https://data.example.org/q.jpg"
        assert indexed["properties"]["size"] == "117.74 MB"


def test_query_tags_platform_and_resets_the_provider_to_auto(search_server: Server, user: Person) -> None:
    auto = search_server.get("/search/query", user, query=S2_JANUARY).json
    assert {r["provider"] for r in auto} == {"AUTO"} and {r["platform"] for r in auto} == {"Sentinel-2"}
    explicit = search_server.get("/search/query", user, query=S2_JANUARY, providers="LOCAL").json
    assert {r["provider"] for r in explicit} == {"LOCAL"}
    lower = search_server.get("/search/query", user, query=S2_JANUARY, providers="local").json
    assert {r["provider"] for r in lower} == {"LOCAL"}  # codes are case-insensitive; the provider's own code


def test_query_paging_sorting_and_bad_numbers(search_server: Server, user: Person) -> None:
    def page(**params: str) -> list[str]:
        return [r["title"] for r in search_server.get("/search/query", user, query=S2_JANUARY, **params).json]

    by_date = [S2_L2A_JAN05, S2_L1C_JAN15_UTM, FLOOD_JAN20, INDEX_S2_JAN25]
    assert page() == by_date  # defaults: offset 0, limit 25, ingestiondate asc
    assert page(offset="1", limit="2") == by_date[1:3]
    assert page(order="desc") == by_date[::-1]
    assert page(sortedby="cloudcoverpercentage") == [FLOOD_JAN20, INDEX_S2_JAN25, S2_L2A_JAN05, S2_L1C_JAN15_UTM]
    assert page(offset="abc", limit="x", order="sideways") == by_date  # bad values take the defaults
    assert page(offset="-3", limit="0") == by_date
    assert page(offset="10") == []
    legacy = "offset=2 limit=1 " + S2_JANUARY  # the legacy words do not drive REST paging
    assert len(search_server.get("/search/query", user, query=legacy).json) == 4


def test_querylist_merges_dedups_and_sets_the_requested_provider(search_server: Server, user: Person) -> None:
    first_half = waspy_query("Sentinel-2 ", "2023-01-01", "2023-01-16")
    second_half = waspy_query("Sentinel-2 ", "2023-01-10", "2023-01-31")
    merged = query_list(search_server, user, [first_half, second_half, first_half])
    assert titles(merged) == sorted([S2_L2A_JAN05, S2_L1C_JAN15_UTM, FLOOD_JAN20, INDEX_S2_JAN25])  # Jan 15 once
    assert {r["provider"] for r in merged} == {"AUTO"} and {r["platform"] for r in merged} == {"Sentinel-2"}
    assert {r["provider"] for r in query_list(search_server, user, [first_half], "local")} == {"local"}
    both = query_list(search_server, user, [S2_JANUARY, S1_JANUARY])
    assert {r["platform"] for r in both} == {"Sentinel-1", "Sentinel-2"} and len(both) == 5
    assert search_server.post("/search/query/countlist", user, json=[S2_JANUARY, S1_JANUARY]).json == 5
    assert search_server.post("/search/query/countlist", user, json=[S2_JANUARY, S1_JANUARY],
                              params={"providers": "LOCAL"}).json == 5


def test_querylist_without_providers_parameter_is_auto(search_server: Server, user: Person) -> None:
    results = query_list(search_server, user, [S2_JANUARY], providers=None)
    assert len(results) == 4 and {r["provider"] for r in results} == {"AUTO"}


def test_the_legacy_base_path(search_server: Server, user: Person) -> None:
    r = search_server.post("/wasdiwebserver/rest/search/querylist", user, json=[S2_JANUARY],
                           params={"providers": "AUTO"})
    assert r.status_code == 200 and len(r.json) == 4


# -- paging inside querylist -------------------------------------------------------------------
class Spy(SearchProvider):
    """A provider serving ``items`` (or failing), recording its calls."""

    def __init__(self, code: str, items: list[str], *, count: int | None = None, page_size: int | None = None,
                 fail: str | None = None, repeat: bool = False) -> None:
        self.code = code
        self.description = ""
        self.items = items
        self.total = len(items) if count is None else count
        self.page_size = page_size
        self.fail = fail
        self.repeat = repeat
        self.calls: list[tuple[str, int, int]] = []

    def count(self, query: SearchQuery) -> int:
        self.calls.append(("count", 0, 0))
        if self.fail == "count":
            raise SearchProviderError("down")
        return self.total

    def search(self, query: SearchQuery, offset: int, limit: int, sortedby: str | None = None,
               order: str | None = None) -> list[QueryResultViewModel]:
        self.calls.append(("search", offset, limit))
        if self.fail == "search" or (self.fail == "second-page" and offset > 0):
            raise SearchProviderError("down")
        chosen = self.items[:1] if self.repeat else self.items[offset:offset + limit]
        return [QueryResultViewModel(title=t, link=f"https://{self.code}.example/{t}", provider=self.code)
                for t in chosen]


def use(server: Server, *providers: SearchProvider, catalogues: dict[str, list[str]] | None = None,
        page_size: int = 100) -> None:
    server.services.search.providers = SearchProviders(providers, catalogues, page_size)


def test_querylist_pages_with_the_providers_page_size(search_server: Server, user: Person) -> None:
    spy = Spy("PAGED", [f"p{i}" for i in range(5)], page_size=2)
    use(search_server, spy)
    results = query_list(search_server, user, [S2_JANUARY])
    assert [r["title"] for r in results] == [f"p{i}" for i in range(5)]
    assert spy.calls == [("count", 0, 0), ("search", 0, 2), ("search", 2, 2), ("search", 4, 1)]


def test_querylist_default_page_size_and_server_setting(search_server: Server, user: Person) -> None:
    spy = Spy("BIG", [f"p{i}" for i in range(250)])
    use(search_server, spy)
    assert len(query_list(search_server, user, [S2_JANUARY])) == 250
    assert [c for c in spy.calls if c[0] == "search"] == [("search", 0, 100), ("search", 100, 100),
                                                          ("search", 200, 50)]
    spy.calls.clear()
    use(search_server, spy, page_size=120)
    query_list(search_server, user, [S2_JANUARY])
    assert [c[2] for c in spy.calls if c[0] == "search"] == [120, 120, 10]


def test_querylist_safety_cap_and_dedup(search_server: Server, user: Person) -> None:
    # A provider that claims 10 results but serves the same one on every page: the loop stops after
    # 2 * ceil(10 / 100) = 2 pages, and the duplicate is removed.
    spy = Spy("STUCK", ["same"], count=10, repeat=True)
    use(search_server, spy)
    results = query_list(search_server, user, [S2_JANUARY])
    assert [r["title"] for r in results] == ["same"]
    assert [c for c in spy.calls if c[0] == "search"] == [("search", 0, 10), ("search", 1, 9)]


def test_querylist_stops_on_an_empty_page(search_server: Server, user: Person) -> None:
    spy = Spy("SHORT", ["a", "b"], count=7)
    use(search_server, spy)
    assert [r["title"] for r in query_list(search_server, user, [S2_JANUARY])] == ["a", "b"]
    assert len([c for c in spy.calls if c[0] == "search"]) == 2


# -- AUTO: the configured providers in order, moving on when one fails -----------------------------
def test_auto_falls_back_when_the_first_provider_fails(tmp_path: Path) -> None:
    make_catalogue(tmp_path / "data" / "catalogue")
    s = Server(tmp_path / "data", search_providers=[
        {"code": "BROKEN", "type": "local", "index": "missing/index.json", "description": "Gone"},
    ], search_catalogues={"Sentinel-2": ["BROKEN", "LOCAL"], "*": ["LOCAL"]})
    try:
        who = s.add_user("alice@example.org")
        assert [p["code"] for p in s.get("/search/providers", who).json] == ["BROKEN", "LOCAL"]
        assert s.get("/search/query/count", who, query=S2_JANUARY).json == 4
        assert len(s.get("/search/query", who, query=S2_JANUARY).json) == 4
        assert len(query_list(s, who, [S2_JANUARY])) == 4
        assert s.post("/search/query/countlist", who, json=[S2_JANUARY, S1_JANUARY]).json == 5
        # Asked for explicitly, the broken provider is a failure: -1 / null.
        assert s.get("/search/query/count", who, query=S2_JANUARY, providers="BROKEN").json == -1
        assert s.get("/search/query", who, query=S2_JANUARY, providers="BROKEN").text == "null"
        assert s.post("/search/querylist", who, json=[S2_JANUARY], params={"providers": "BROKEN"}).text == "null"
        # A comma list is tried in order, like AUTO.
        assert s.get("/search/query/count", who, query=S2_JANUARY, providers="BROKEN,LOCAL").json == 4
    finally:
        s.close()


def test_auto_moves_on_after_an_invalid_count_or_a_failing_page(search_server: Server, user: Person) -> None:
    negative = Spy("NEGATIVE", ["x"], count=-1)
    flaky = Spy("FLAKY", ["f1", "f2", "f3"], page_size=2, fail="second-page")
    good = Spy("GOOD", ["g1", "g2"])
    use(search_server, negative, flaky, good)
    assert search_server.get("/search/query/count", user, query=S2_JANUARY).json == 3  # NEGATIVE skipped, FLAKY counts
    results = query_list(search_server, user, [S2_JANUARY])
    assert [r["title"] for r in results] == ["g1", "g2"]  # FLAKY's partial page is dropped
    assert {r["provider"] for r in results} == {"AUTO"}
    down = Spy("DOWN", [], fail="search")
    use(search_server, down, good)
    [first, second] = search_server.get("/search/query", user, query=S2_JANUARY).json
    assert (first["title"], first["provider"]) == ("g1", "AUTO") and second["link"] == "https://GOOD.example/g2"


def test_every_provider_failing_is_a_failure(search_server: Server, user: Person) -> None:
    use(search_server, Spy("A", [], fail="count"), Spy("B", [], fail="search"))
    assert search_server.get("/search/query/count", user, query=S2_JANUARY).json == 3 - 3  # B's count works: 0
    use(search_server, Spy("A", [], fail="count"), Spy("B", [], fail="count"))
    assert search_server.get("/search/query/count", user, query=S2_JANUARY).json == -1
    assert search_server.post("/search/query/countlist", user, json=[S2_JANUARY]).json == -1
    assert search_server.post("/search/querylist", user, json=[S2_JANUARY]).text == "null"
    use(search_server, Spy("A", [], fail="search"))
    assert search_server.get("/search/query", user, query=S2_JANUARY).text == "null"


def test_no_provider_for_the_platform_finds_nothing(server: Server, alice: Person) -> None:
    # The default server has no catalogue: AUTO has nobody to ask, which is not a failure.
    assert server.get("/search/providers", alice).json == []
    assert server.get("/search/query/count", alice, query=S2_JANUARY).json == 0
    assert server.get("/search/query", alice, query=S2_JANUARY).json == []
    assert server.post("/search/querylist", alice, json=[S2_JANUARY]).json == []
    assert server.post("/search/query/countlist", alice, json=[S2_JANUARY]).json == 0
    assert server.get("/search/query/count", alice, query=S2_JANUARY, providers="NOPE").json == -1  # unknown code


# -- mission access ----------------------------------------------------------------------------
def test_mission_access(tmp_path: Path) -> None:
    make_catalogue(tmp_path / "data" / "catalogue")
    (tmp_path / "data" / "catalogue" / "SECRET").mkdir()
    geotiff(tmp_path / "data" / "catalogue" / "SECRET" / "secret_scene.tif", (7.2, 45.2, 7.8, 45.8),
            tags={"platform": "SECRET", "datetime": "2023-01-10T00:00:00Z"})
    missions = tmp_path / "missions.json"
    missions.write_text(json.dumps({"missions": [
        {"name": "Sentinel-2", "indexname": "platformname", "indexvalue": "Sentinel-2", "ispublic": True},
        {"name": "Secret", "indexname": "platformname", "indexvalue": "SECRET", "ispublic": False,
         "userid": "alice@example.org"}], "orbitsearch": {}}))
    s = Server(tmp_path / "data", missions_file=str(missions))
    try:
        alice, bob = s.add_user("alice@example.org"), s.add_user("bob@example.org")
        admin = s.add_user("root@example.org", admin=True)
        secret = waspy_query("SECRET", "2023-01-01", "2023-01-31")
        assert s.get("/search/query/count", alice, query=secret).json == 1  # the owner
        assert s.get("/search/query/count", admin, query=secret).json == 1
        assert s.get("/search/query/count", bob, query=secret).json == -1
        assert s.get("/search/query", bob, query=secret).text == "null"
        assert s.post("/search/querylist", bob, json=[S2_JANUARY, secret]).text == "null"  # one denied: all fail
        assert s.post("/search/query/countlist", bob, json=[S2_JANUARY, secret]).json == -1
        from wasdi_server.domains.accounts.sharing import Resource

        s.services.sharing.share(s.services.users.active_user("alice@example.org"),
                                 Resource("mission", "SECRET", "alice@example.org", "Secret"), "bob@example.org")
        assert [r["title"] for r in query_list(s, bob, [secret])] == ["secret_scene.tif"]
        # Sentinel-1 has no entry in this missions file: denied, for everybody.
        assert s.get("/search/query/count", admin, query=S1_JANUARY).json == -1
        assert s.get("/search/query/count", alice, query=S2_JANUARY).json == 4
    finally:
        s.close()


def test_a_query_without_a_platform_is_denied(search_server: Server, user: Person) -> None:
    no_platform = footprint_clause(*ALPS) + "( beginPosition:[2023-01-01T00:00:00.000Z TO NOW] )"
    assert search_server.get("/search/query/count", user, query=no_platform).json == -1
    assert search_server.get("/search/query", user, query="*").text == "null"
    unknown = waspy_query("NoSuchMission", "2023-01-01", "2023-01-31")
    assert search_server.get("/search/query/count", user, query=unknown).json == -1


# -- malformed input: -1 / null, never a 500 --------------------------------------------------------
BAD_QUERIES = [
    "( platformname:Sentinel-2", '( footprint:"intersects(POLYGON((a b)))") AND ( platformname:Sentinel-2 )',
    "( platformname:Sentinel-2 AND beginPosition:[yesterday TO NOW] )", "]]]", "(" * 100,
    "( platformname:Sentinel-1 AND relativeorbitnumber:many )", "NOT ( platformname:Sentinel-2 )",
    '"', "( platformname:Sentinel-2 AND cloudcoverpercentage:[ninety TO 10] )",
]


@pytest.mark.parametrize("text", BAD_QUERIES)
def test_malformed_queries_fail_in_style_c(search_server: Server, user: Person, text: str) -> None:
    r = search_server.get("/search/query/count", user, query=text)
    assert (r.status_code, r.text) == (200, "-1")
    r = search_server.get("/search/query", user, query=text)
    assert (r.status_code, r.text) == (200, "null")
    r = search_server.post("/search/querylist", user, json=[S2_JANUARY, text])
    assert (r.status_code, r.text) == (200, "null")
    r = search_server.post("/search/query/countlist", user, json=[text])
    assert (r.status_code, r.text) == (200, "-1")


@pytest.mark.parametrize("body", [b"[]", b"not json", b'{"q": 1}', b"[1, 2]", b"[null]", b'"text"', b""])
def test_malformed_list_bodies(search_server: Server, user: Person, body: bytes) -> None:
    r = search_server.post("/search/querylist", user, body=body, content_type="application/json")
    assert (r.status_code, r.text) == (200, "null")
    r = search_server.post("/search/query/countlist", user, body=body, content_type="application/json")
    assert (r.status_code, r.text) == (200, "-1")


def test_missing_query_and_session(search_server: Server, user: Person) -> None:
    assert search_server.get("/search/query/count", user).text == "-1"
    assert search_server.get("/search/query", user).text == "null"
    assert search_server.get("/search/query/count", query=S2_JANUARY).text == "-1"
    assert search_server.get("/search/providers").text == "null"
    assert search_server.post("/search/querylist", json=[S2_JANUARY]).text == "null"


def test_endpoint_fuzzing_never_answers_500(search_server: Server, user: Person) -> None:
    import random

    from tests.server.test_search_query import FRAGMENTS

    rng = random.Random(7)
    for _ in range(60):
        text = "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 20)))
        r = search_server.get("/search/query/count", user, query=text)
        assert r.status_code == 200 and isinstance(r.json, int) and r.json >= -1
        r = search_server.post("/search/querylist", user, json=[text])
        assert r.status_code == 200 and (r.json is None or isinstance(r.json, list))


# -- the LOCAL catalogue itself ----------------------------------------------------------------
def test_local_catalogue_rereads_a_file_only_when_it_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = make_catalogue(tmp_path / "catalogue")
    opened: list[str] = []
    real = local_module.read_raster

    def spy(path: Path) -> Any:
        opened.append(path.name)
        return real(path)

    monkeypatch.setattr(local_module, "read_raster", spy)
    catalogue = LocalCatalogue(folder=folder, index=folder / "index.json")
    first = {p.title for p in catalogue.products()}
    assert len(opened) == 6 and S2_L2A_JAN05 in first and INDEX_DEM in first and "README.txt" in first
    catalogue.products()
    assert len(opened) == 6  # nothing changed: nothing re-read
    geotiff(folder / S2_L2A_JAN05, (0.0, 0.0, 1.0, 1.0), tags={"CLOUD_COVER": "99"})
    stamp = time.time() + 5
    os.utime(folder / S2_L2A_JAN05, (stamp, stamp))
    (folder / S2_L2A_FEB10).unlink()
    products = {p.title: p for p in catalogue.products()}
    assert opened[6:] == [S2_L2A_JAN05]
    assert products[S2_L2A_JAN05].cloud == 99.0 and products[S2_L2A_JAN05].bbox == (0.0, 0.0, 1.0, 1.0)
    assert S2_L2A_FEB10 not in products


def test_local_catalogue_facts_of_names_tags_and_index(tmp_path: Path) -> None:
    folder = make_catalogue(tmp_path / "catalogue")
    products = {p.title: p for p in LocalCatalogue(folder=folder, index=folder / "index.json").products()}
    s1 = products[S1_GRD_JAN07]
    assert (s1.platform, s1.product_type, s1.sensor_mode, s1.polarisation) == ("Sentinel-1", "GRD", "IW", "VV+VH")
    assert (s1.absolute_orbit, s1.relative_orbit, s1.serial) == (46000, 78, "A")
    assert s1.end is not None and s1.begin is not None and s1.end > s1.begin
    flood = products[FLOOD_JAN20]
    assert flood.platform == "Sentinel-2" and flood.begin is not None and flood.begin.day == 20
    assert products["README.txt"].platform is None and products["README.txt"].bbox is None
    dem = products[INDEX_DEM]
    assert dem.platform == "DEM" and dem.link == (folder / "dem" / "N45E007.tif").resolve().as_uri()
    assert dem.bbox == (7.0, 45.0, 8.0, 46.0)


def test_local_catalogue_failures(tmp_path: Path) -> None:
    query = SearchQuery(platform_name="Sentinel-2")
    with pytest.raises(SearchProviderError):
        LocalCatalogue(folder=tmp_path / "nowhere").count(query)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(SearchProviderError):
        LocalCatalogue(index=bad).count(query)
    bad.write_text('{"products": 3}')
    with pytest.raises(SearchProviderError):
        LocalCatalogue(index=bad).count(query)
    with pytest.raises(ValueError):
        LocalCatalogue()


def test_local_catalogue_geojson_index_and_default_platform(tmp_path: Path) -> None:
    index = tmp_path / "items.json"
    index.write_text(json.dumps({"type": "FeatureCollection", "features": [
        {"type": "Feature", "id": "scene-1", "geometry": {"type": "Polygon", "coordinates": [
            [[7, 45], [8, 45], [8, 46], [7, 46], [7, 45]]]},
         "properties": {"platform": "Sentinel-2", "datetime": "2023-01-03T00:00:00Z", "eo:cloud_cover": 7,
                        "link": "https://example.org/scene-1.tif"}}]}))
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "anything.bin").write_bytes(b"x")
    catalogue = LocalCatalogue(folder=tmp_path / "files", index=index, default_platform="s2")
    found = catalogue.search(SearchQuery(platform_name="Sentinel-2", west=7.5, south=45.5, east=7.6, north=45.6,
                                         cloud_coverage_from=0, cloud_coverage_to=10), 0, 10)
    assert [r.title for r in found] == ["scene-1"]
    assert found[0].footprint == "POLYGON((7 45,8 45,8 46,7 46,7 45))" and found[0].link.endswith("scene-1.tif")
    everything = catalogue.search(SearchQuery(platform_name="Sentinel-2"), 0, 10, "title", "desc")
    assert [r.title for r in everything] == ["scene-1", "anything.bin"]


# -- the configuration -------------------------------------------------------------------------
def test_configuration_mistakes_stop_the_server(tmp_path: Path) -> None:
    for settings in (
        {"search_providers": [{"code": "X", "type": "ftp"}]},
        {"search_providers": [{"code": "X", "type": "local", "index": "i.json", "colour": "red"}]},
        {"search_providers": [{"code": "X", "type": "local", "index": "a"}, {"code": "x", "type": "local",
                                                                             "index": "b"}]},
        {"search_providers": [{"code": "AUTO", "type": "local", "index": "a"}]},
        {"search_providers": [{"code": "S", "type": "stac"}]},
        {"search_catalogues": {"Sentinel-2": ["NOBODY"]}},
        {"search_providers": "[not json"},
    ):
        with pytest.raises(ValueError):
            Server(tmp_path / f"d{len(str(settings))}", **settings)


def test_configured_catalogue_paths_and_json_settings(tmp_path: Path) -> None:
    make_catalogue(tmp_path / "elsewhere")
    s = Server(tmp_path / "data", search_catalogue_dir=str(tmp_path / "elsewhere"),
               search_providers=json.dumps([{"code": "DEMS", "type": "local", "index": str(tmp_path / "elsewhere" /
                                                                                             "index.json"),
                                             "platforms": ["DEM"], "page_size": 5}]))
    try:
        who = s.add_user("alice@example.org")
        assert [p["code"] for p in s.get("/search/providers", who).json] == ["DEMS", "LOCAL"]
        assert s.get("/search/query/count", who, query=S2_JANUARY).json == 4  # DEMS does not hold Sentinel-2
        dem = "( platformname:DEM ) AND ( beginPosition:[2020-01-01T00:00:00.000Z TO NOW] )"
        [found] = s.get("/search/query", who, query=dem).json
        assert found["title"] == INDEX_DEM and found["provider"] == "AUTO"
        assert s.get("/search/query", who, query=dem, providers="DEMS").json[0]["provider"] == "DEMS"
    finally:
        s.close()


def test_settings_from_environment_json(tmp_path: Path) -> None:
    from wasdi_server import load_settings

    make_catalogue(tmp_path / "data" / "catalogue")
    settings = load_settings(data_dir=tmp_path / "data", environ={
        "WASDI_SERVER_SEARCH_PROVIDERS": json.dumps([{"code": "S", "type": "stac", "url": "https://stac.test"}]),
        "WASDI_SERVER_SEARCH_CATALOGUES": json.dumps({"Sentinel-2": ["LOCAL", "S"]}),
    })
    registry = SearchProviders.from_settings(settings)
    assert [p.code for p in registry.providers] == ["S", "LOCAL"]
    assert [p.code for p in registry.for_platform("Sentinel-2")] == ["LOCAL", "S"]
    assert [p.code for p in registry.for_platform("Sentinel-1")] == ["S", "LOCAL"]  # both support it
    assert [p.code for p in registry.for_platform("ERA5")] == ["LOCAL"]
