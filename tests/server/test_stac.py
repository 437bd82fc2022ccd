"""The STAC search provider against respx-mocked STAC APIs (Earth Search, Planetary Computer and
Copernicus Data Space styles), directly and through the server's /search endpoints."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from tests.conftest import Person, Server
from tests.server.test_search import S2_JANUARY, make_catalogue

from wasdi_server.providers.search import SearchProviderError, StacProvider
from wasdi_server.providers.search.stac import platform_of_item
from wasdi_server.search_grammar import parse_query

URL = "https://stac.example.test/v1"
S2_QUERY = ('( footprint:"intersects(POLYGON(( 7.0 45.0,7.0 46.0,8.0 46.0,8.0 45.0,7.0 45.0)))") AND '
            "( platformname:Sentinel-2  AND producttype:S2MSI1C AND cloudcoverpercentage:[0 TO 30] AND "
            "relativeorbitnumber:22) AND ( beginPosition:[2023-01-01T00:00:00.000Z TO 2023-01-31T23:59:59.999Z]"
            "AND endPosition:[2023-01-01T00:00:00.000Z TO 2023-01-31T23:59:59.999Z]) ")
S1_QUERY = ('( footprint:"intersects(POLYGON(( 7.0 45.0,7.0 46.0,8.0 46.0,8.0 45.0,7.0 45.0)))") AND '
            "( platformname:Sentinel-1 AND producttype:GRD AND sensoroperationalmode:IW AND relativeorbitnumber:117)"
            " AND ( beginPosition:[2023-01-01T00:00:00.000Z TO 2023-01-10T23:59:59.999Z]AND endPosition:"
            "[2023-01-01T00:00:00.000Z TO 2023-01-10T23:59:59.999Z]) ")


def s2_item(day: int, cloud: float = 12.5, tile: str = "32TMR") -> dict[str, Any]:
    """An Earth Search v1 ``sentinel-2-l2a`` item (trimmed to the members that matter, plus some that do not)."""
    item_id = f"S2A_{tile}_202301{day:02d}_0_L2A"
    cogs = f"https://sentinel-cogs.s3.us-west-2.amazonaws.com/sentinel-s2-l2a-cogs/32/T/MR/2023/1/{item_id}"
    return {
        "type": "Feature", "stac_version": "1.0.0", "id": item_id, "collection": "sentinel-2-l2a",
        "stac_extensions": ["https://stac-extensions.github.io/eo/v1.1.0/schema.json"],
        "bbox": [6.99, 44.96, 8.28, 45.95],
        "geometry": {"type": "Polygon", "coordinates": [[[6.99, 44.96], [8.28, 44.97], [8.27, 45.95],
                                                         [6.99, 45.95], [6.99, 44.96]]]},
        "properties": {
            "created": "2023-01-05T16:37:49.812Z", "platform": "sentinel-2a", "constellation": "sentinel-2",
            "instruments": ["msi"], "eo:cloud_cover": cloud, "proj:epsg": 32632, "mgrs:utm_zone": 32,
            "mgrs:latitude_band": "T", "mgrs:grid_square": "MR", "grid:code": "MGRS-32TMR",
            "view:sun_azimuth": 160.3, "view:sun_elevation": 20.1, "s2:product_type": "S2MSI2A",
            "s2:processing_baseline": "05.09", "sat:relative_orbit": 22,
            "s2:product_uri": f"S2A_MSIL2A_202301{day:02d}T101411_N0509_R022_T32TMR_202301{day:02d}T130000.SAFE",
            "datetime": f"2023-01-{day:02d}T10:24:27.449000Z", "updated": "2023-01-05T16:37:49.812Z",
        },
        "links": [
            {"rel": "self", "type": "application/geo+json",
             "href": f"https://earth-search.aws.element84.com/v1/collections/sentinel-2-l2a/items/{item_id}"},
            {"rel": "parent", "type": "application/json",
             "href": "https://earth-search.aws.element84.com/v1/collections/sentinel-2-l2a"},
        ],
        "assets": {
            "aot": {"href": f"{cogs}/AOT.tif", "type": "image/tiff; application=geotiff; profile=cloud-optimized",
                    "roles": ["data", "reflectance"]},
            "blue": {"href": f"{cogs}/B02.tif", "roles": ["data", "reflectance"], "file:size": 123},
            "visual": {"href": f"{cogs}/TCI.tif", "type": "image/tiff; application=geotiff", "roles": ["visual"],
                       "file:size": 187_654_321},
            "thumbnail": {"href": f"{cogs}/thumbnail.jpg", "type": "image/jpeg", "roles": ["thumbnail"]},
            "granule_metadata": {"href": f"{cogs}/granule_metadata.xml", "roles": ["metadata"]},
        },
    }


def s1_item() -> dict[str, Any]:
    """A Planetary Computer ``sentinel-1-grd`` item."""
    item_id = "S1A_IW_GRDH_1SDV_20230105T052311_20230105T052336_046000_058A2B"
    return {
        "type": "Feature", "stac_version": "1.0.0", "id": item_id, "collection": "sentinel-1-grd",
        "bbox": [6.5, 44.5, 9.9, 46.6],
        "geometry": {"type": "MultiPolygon", "coordinates": [[[[6.5, 44.5], [9.9, 44.9], [9.5, 46.6],
                                                               [6.5, 46.2], [6.5, 44.5]]]]},
        "properties": {
            "datetime": "2023-01-05T05:23:23.500000Z", "start_datetime": "2023-01-05T05:23:11.000000Z",
            "end_datetime": "2023-01-05T05:23:36.000000Z", "platform": "SENTINEL-1A", "constellation": "Sentinel-1",
            "instruments": ["c-sar"], "sar:instrument_mode": "IW", "sar:polarizations": ["VV", "VH"],
            "sar:product_type": "GRD", "sat:orbit_state": "descending", "sat:relative_orbit": 117,
            "sat:absolute_orbit": 46000, "s1:processing_level": "1",
        },
        "links": [{"rel": "self", "href": f"{URL}/collections/sentinel-1-grd/items/{item_id}"}],
        "assets": {
            "vh": {"href": f"https://sentinel1euwest.blob.core.windows.net/s1-grd/{item_id}/vh.tiff",
                   "roles": ["data"]},
            "vv": {"href": f"https://sentinel1euwest.blob.core.windows.net/s1-grd/{item_id}/vv.tiff",
                   "roles": ["data"]},
            "rendered_preview": {"href": f"{URL}/data/item/preview.png?item={item_id}", "roles": ["overview"]},
        },
    }


def collection(features: list[dict[str, Any]], *, matched: int | None = None, next_link: dict[str, Any] | None = None,
               context: bool = False) -> dict[str, Any]:
    page: dict[str, Any] = {"type": "FeatureCollection", "features": features,
                            "links": [{"rel": "root", "href": URL}]}
    if matched is not None:
        if context:
            page["context"] = {"limit": 2, "matched": matched, "returned": len(features)}
        else:
            page["numberMatched"] = matched
            page["numberReturned"] = len(features)
    if next_link:
        page["links"].append({"rel": "next", **next_link})
    return page


def body_of(request: httpx.Request) -> dict[str, Any]:
    return json.loads(request.content or b"{}")


CORE_CONFORMANCE = ["https://api.stacspec.org/v1.0.0/core", "https://api.stacspec.org/v1.0.0/item-search"]
FILTER_CONFORMANCE = [*CORE_CONFORMANCE, "https://api.stacspec.org/v1.0.0-rc.2/item-search#filter",
                      "http://www.opengis.net/spec/cql2/1.0/conf/basic-cql2",
                      "http://www.opengis.net/spec/cql2/1.0/conf/cql2-json"]


@pytest.fixture
def stac() -> Iterator[respx.MockRouter]:
    """A mocked API whose landing page lists no Filter extension (tests of the name filter add their own)."""
    with respx.mock(assert_all_called=False) as router:
        router.get(f"{URL}/").mock(return_value=httpx.Response(200, json={"conformsTo": CORE_CONFORMANCE}))
        yield router


def three_pages_api(stac: respx.MockRouter, *, matched: bool = True) -> list[dict[str, Any]]:
    """An Earth Search style API holding 3 items, 2 a page, paged with POST ``next`` tokens; returns the bodies."""
    items = [s2_item(5), s2_item(15, 40.0), s2_item(25, 3.0)]
    bodies: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = body_of(request)
        bodies.append(body)
        limit = int(body.get("limit", 10))
        start = int(body.get("next", "0"))
        page = items[start:start + limit]
        following = None
        if start + limit < len(items):
            following = {"method": "POST", "href": f"{URL}/search", "merge": False, "type": "application/geo+json",
                         "body": {**body, "next": str(start + limit)}}
        return httpx.Response(200, json=collection(page, matched=3 if matched else None, next_link=following))

    stac.post(f"{URL}/search").mock(side_effect=handler)
    return bodies


# -- the request -------------------------------------------------------------------------------
def test_the_search_request_and_the_result_mapping(stac: respx.MockRouter) -> None:
    route = stac.post(f"{URL}/search").mock(return_value=httpx.Response(
        200, json=collection([s2_item(5), s2_item(15)], matched=2)))
    provider = StacProvider("EARTH", URL)
    results = provider.search(parse_query(S2_QUERY), 0, 25, "ingestiondate", "asc")
    sent = body_of(route.calls.last.request)
    assert sent == {
        "collections": ["sentinel-2-l1c"],  # S2MSI1C is mapped
        "limit": 25, "bbox": [7.0, 45.0, 8.0, 46.0],
        "datetime": "2023-01-01T00:00:00.000Z/2023-01-31T23:59:59.999Z",
        "query": {"eo:cloud_cover": {"gte": 0.0, "lte": 30.0}, "sat:relative_orbit": {"eq": 22}},
        "sortby": [{"field": "properties.datetime", "direction": "asc"}],
    }
    assert route.calls.last.request.headers["accept"].startswith("application/geo+json")
    first = results[0]
    assert first.title == first.id == "S2A_32TMR_20230105_0_L2A"
    assert first.footprint == "POLYGON((6.99 44.96,8.28 44.97,8.27 45.95,6.99 45.95,6.99 44.96))"
    assert first.link is not None and first.link.endswith("/TCI.tif")  # "visual" before the data bands
    assert first.preview is not None and first.preview.endswith("/thumbnail.jpg")
    assert first.provider == "EARTH" and first.platform == "Sentinel-2"
    assert first.properties == {
        "date": "2023-01-05T10:24:27.449Z", "beginposition": "2023-01-05T10:24:27.449Z",
        "endposition": "2023-01-05T10:24:27.449Z", "platform": "sentinel-2a", "platformname": "Sentinel-2",
        "instrument": "msi", "producttype": "S2MSI2A", "cloudcoverpercentage": "12.5", "relativeorbitnumber": "22",
        "collection": "sentinel-2-l2a", "size": "178.96 MB", "sizeInBytes": "187654321", "asset": "visual",
        "title": "S2A_32TMR_20230105_0_L2A",
    }
    assert first.summary == "Date: 2023-01-05T10:24:27.449Z, Instrument: msi, Satellite: Sentinel-2, Size: 178.96 MB"


def test_sentinel_1_request_and_planetary_computer_item(stac: respx.MockRouter) -> None:
    route = stac.post(f"{URL}/search").mock(return_value=httpx.Response(200, json=collection([s1_item()])))
    [result] = StacProvider("PC", URL, asset_keys=["vv"]).search(parse_query(S1_QUERY), 0, 10, None, None)
    sent = body_of(route.calls.last.request)
    assert sent["collections"] == ["sentinel-1-grd"]
    assert sent["query"] == {"sat:relative_orbit": {"eq": 117}, "sar:instrument_mode": {"eq": "IW"}}
    assert "sortby" not in sent
    assert result.link is not None and result.link.endswith("/vv.tiff")
    assert result.preview is not None and "preview.png" in result.preview  # a role, not a known key
    assert result.footprint is not None and result.footprint.startswith("MULTIPOLYGON(((6.5 44.5,")
    props = result.properties or {}
    assert props["beginposition"] == "2023-01-05T05:23:11.000Z" and props["endposition"] == "2023-01-05T05:23:36.000Z"
    assert (props["sensoroperationalmode"], props["polarisationmode"], props["relativeorbitnumber"],
            props["absoluteorbit"], props["orbitdirection"]) == ("IW", "VV VH", "117", "46000", "descending")
    assert result.platform == "Sentinel-1" and props["producttype"] == "GRD"


def test_unmapped_product_type_serial_and_name_filters(stac: respx.MockRouter) -> None:
    route = stac.post(f"{URL}/search").mock(return_value=httpx.Response(200, json=collection([])))
    provider = StacProvider("EARTH", URL, sortable=False)
    query = parse_query("S1A_IW_SLC__1SDV_20230105 ( platformname:Sentinel-1 AND producttype:SLC AND "
                        "filename:S1A_* ) AND ( beginPosition:[2023-01-01T00:00:00Z TO NOW] )")
    assert provider.search(query, 0, 5, "ingestiondate", "asc") == []
    sent = body_of(route.calls.last.request)
    # no Filter extension: the name is matched here, over whole pages, never sent as an exact id
    assert sent["collections"] == ["sentinel-1-grd"] and "ids" not in sent and sent["limit"] == 1000
    assert sent["query"] == {"sar:product_type": {"eq": "SLC"}, "platform": {"eq": "sentinel-1a"}}
    assert sent["datetime"].startswith("2023-01-01T00:00:00.000Z/") and not sent["datetime"].endswith("..")
    assert "sortby" not in sent and "bbox" not in sent


def test_cql2_filter_mode(stac: respx.MockRouter) -> None:
    route = stac.post(f"{URL}/search").mock(return_value=httpx.Response(200, json=collection([])))
    StacProvider("CDSE", URL, filter_mode="cql2", collections={"Sentinel-2": "SENTINEL-2"},
                 product_types={}).search(parse_query(S2_QUERY), 0, 5)
    sent = body_of(route.calls.last.request)
    assert sent["collections"] == ["SENTINEL-2"] and "query" not in sent
    assert sent["filter-lang"] == "cql2-json"
    assert sent["filter"] == {"op": "and", "args": [
        {"op": ">=", "args": [{"property": "eo:cloud_cover"}, 0.0]},
        {"op": "<=", "args": [{"property": "eo:cloud_cover"}, 30.0]},
        {"op": "=", "args": [{"property": "sat:relative_orbit"}, 22]},
        {"op": "=", "args": [{"property": "s2:product_type"}, "S2MSI1C"]},
    ]}


def test_open_date_ends_and_no_dates() -> None:
    provider = StacProvider("EARTH", URL)
    body = provider.search_body(parse_query("( platformname:Sentinel-2 AND beginPosition:[* TO 2023-02-01] )"),
                                limit=5, sortedby=None, order=None)
    assert body["datetime"] == "../2023-02-01T00:00:00.000Z"
    assert "datetime" not in provider.search_body(parse_query("( platformname:Sentinel-2 )"), limit=5,
                                                  sortedby=None, order=None)


def test_a_platform_without_collection_is_the_providers_failure() -> None:
    with pytest.raises(SearchProviderError, match="no STAC collection"):
        StacProvider("EARTH", URL).search_body(parse_query("( platformname:ERA5 )"), limit=1, sortedby=None,
                                               order=None)
    assert StacProvider("EARTH", URL).platforms == frozenset({"Sentinel-1", "Sentinel-2", "Landsat-*", "DEM"})
    assert StacProvider("EARTH", URL).collections_for(parse_query("( platformname:Landsat-* )"))[0] == [
        "landsat-c2-l2"]


@pytest.mark.parametrize(("raw", "platform"), [("sentinel-2b", "Sentinel-2"), ("SENTINEL-1A", "Sentinel-1"),
                                               ("sentinel-5p", "Sentinel-5P"), ("landsat-8", "Landsat-*"),
                                               ("landsat-7", "Landsat-7"), ("cop-dem", "cop-dem"), (None, None)])
def test_platform_of_item(raw: str | None, platform: str | None) -> None:
    assert platform_of_item(raw) == platform


# -- counting and paging -----------------------------------------------------------------------
def test_count_reads_number_matched_or_context(stac: respx.MockRouter) -> None:
    route = stac.post(f"{URL}/search").mock(side_effect=[
        httpx.Response(200, json=collection([s2_item(5)], matched=1234)),
        httpx.Response(200, json=collection([s2_item(5)], matched=77, context=True)),
    ])
    provider = StacProvider("EARTH", URL)
    assert provider.count(parse_query(S2_QUERY)) == 1234
    assert body_of(route.calls[0].request)["limit"] == 1 and "sortby" not in body_of(route.calls[0].request)
    assert provider.count(parse_query(S2_QUERY)) == 77


def test_count_by_paging_when_the_api_does_not_say(stac: respx.MockRouter) -> None:
    bodies = three_pages_api(stac, matched=False)
    provider = StacProvider("EARTH", URL, count_limit=2)
    assert provider.count(parse_query(S2_QUERY)) == 3
    # the one-item probe did not say; then the largest pages, one request each
    assert [(b["limit"], b.get("next")) for b in bodies] == [(2, None), (1000, None)]
    assert StacProvider("EARTH", URL, count_limit=2, max_count=2).count(parse_query(S2_QUERY)) == 2
    bodies.clear()
    assert StacProvider("EARTH", URL, count_limit=2, page_size=2).count(parse_query(S2_QUERY)) == 3
    assert [(b["limit"], b.get("next")) for b in bodies] == [(2, None), (2, None), (2, "2")]


def test_pages_follow_next_links_and_resume_where_they_ended(stac: respx.MockRouter) -> None:
    bodies = three_pages_api(stac)
    provider = StacProvider("EARTH", URL, page_size=2)
    query = parse_query(S2_QUERY)
    first = provider.search(query, 0, 2)
    assert [r.title for r in first] == ["S2A_32TMR_20230105_0_L2A", "S2A_32TMR_20230115_0_L2A"]
    second = provider.search(query, 2, 2)
    assert [r.title for r in second] == ["S2A_32TMR_20230125_0_L2A"]
    assert [b.get("next") for b in bodies] == [None, "2"]  # the second page did not start over
    bodies.clear()
    assert [r.title for r in StacProvider("EARTH", URL, page_size=2).search(query, 1, 2)] == [
        "S2A_32TMR_20230115_0_L2A", "S2A_32TMR_20230125_0_L2A"]  # an offset inside a page, across pages
    assert [b.get("next") for b in bodies] == [None, "2"]


def test_get_next_links_and_merge(stac: respx.MockRouter) -> None:
    merged = stac.post(f"{URL}/search", json__page=3)  # routes match in order: the specific one first
    merged.mock(return_value=httpx.Response(200, json=collection([s2_item(25)])))
    stac.post(f"{URL}/search").mock(return_value=httpx.Response(200, json=collection(
        [s2_item(5)], next_link={"href": f"{URL}/search?token=abc", "method": "GET"})))
    stac.get(f"{URL}/search", params={"token": "abc"}).mock(return_value=httpx.Response(200, json=collection(
        [s2_item(15)], next_link={"href": f"{URL}/search", "method": "POST", "merge": True, "body": {"page": 3}})))
    titles = [r.title for r in StacProvider("CDSE", URL).search(parse_query(S2_QUERY), 0, 10)]
    assert titles == ["S2A_32TMR_20230105_0_L2A", "S2A_32TMR_20230115_0_L2A", "S2A_32TMR_20230125_0_L2A"]
    assert body_of(merged.calls.last.request)["collections"] == ["sentinel-2-l1c"]  # merged into the first body


def test_page_number_paging(stac: respx.MockRouter) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        page = int(body_of(request).get("page", 1))
        items = {1: [s2_item(5), s2_item(6)], 2: [s2_item(7)]}.get(page, [])
        return httpx.Response(200, json=collection(items, matched=3, context=True))

    stac.post(f"{URL}/search").mock(side_effect=handler)
    provider = StacProvider("OLD", URL, paging="page", page_size=2)
    assert [r.title[-14:-6] for r in provider.search(parse_query(S2_QUERY), 0, 10)] == ["20230105", "20230106",
                                                                                         "20230107"]


@pytest.mark.parametrize("answer", [
    httpx.Response(500, text="Internal Server Error"), httpx.Response(200, text="<html>maintenance</html>"),
    httpx.Response(200, json={"type": "Feature"}), httpx.Response(400, json={"code": "BadRequest"}),
    httpx.ConnectError("refused"), httpx.ReadTimeout("slow"),
])
def test_failures_are_provider_errors(stac: respx.MockRouter, answer: Any) -> None:
    route = stac.post(f"{URL}/search")
    if isinstance(answer, Exception):
        route.mock(side_effect=answer)
    else:
        route.mock(return_value=answer)
    provider = StacProvider("EARTH", URL)
    with pytest.raises(SearchProviderError):
        provider.count(parse_query(S2_QUERY))
    with pytest.raises(SearchProviderError):
        provider.search(parse_query(S2_QUERY), 0, 5)


def test_configuration_is_checked() -> None:
    with pytest.raises(ValueError):
        StacProvider("X", "")
    with pytest.raises(ValueError):
        StacProvider("X", URL, filter_mode="sql")
    with pytest.raises(ValueError):
        StacProvider("X", URL, paging="cursor")


# -- through the server ------------------------------------------------------------------------
@pytest.fixture
def stac_server(tmp_path: Path) -> Iterator[Server]:
    make_catalogue(tmp_path / "data" / "catalogue")
    s = Server(tmp_path / "data", search_providers=[
        {"code": "EARTH", "type": "stac", "url": URL, "description": "Earth Search", "page_size": 2,
         "link": "https://earth-search.aws.element84.com/v1"}],
        search_catalogues={"Sentinel-2": ["EARTH", "LOCAL"]})
    yield s
    s.close()


@pytest.fixture
def alice_stac(stac_server: Server) -> Person:
    return stac_server.add_user("alice@example.org")


def test_server_providers_and_querylist_through_stac(stac: respx.MockRouter, stac_server: Server,
                                                     alice_stac: Person) -> None:
    assert stac_server.get("/search/providers", alice_stac).json == [
        {"code": "EARTH", "description": "Earth Search", "link": "https://earth-search.aws.element84.com/v1"},
        {"code": "LOCAL", "description": "Local catalogue",
         "link": (stac_server.settings.data_dir / "catalogue").resolve().as_uri()}]
    bodies = three_pages_api(stac)
    r = stac_server.post("/search/querylist", alice_stac, json=[S2_JANUARY], params={"providers": "AUTO"})
    assert r.status_code == 200
    assert [x["title"] for x in r.json] == ["S2A_32TMR_20230105_0_L2A", "S2A_32TMR_20230115_0_L2A",
                                            "S2A_32TMR_20230125_0_L2A"]
    assert all(x["provider"] == "AUTO" and x["platform"] == "Sentinel-2" and "volumeName" in x for x in r.json)
    # one count, then two pages: the second page follows the first page's next link
    assert [(b["limit"], b.get("next")) for b in bodies] == [(1, None), (2, None), (2, "2")]
    assert stac_server.get("/search/query/count", alice_stac, query=S2_JANUARY).json == 3


def test_server_falls_back_to_local_when_stac_is_down(stac: respx.MockRouter, stac_server: Server,
                                                      alice_stac: Person) -> None:
    stac.post(f"{URL}/search").mock(return_value=httpx.Response(503, text="Service Unavailable"))
    assert stac_server.get("/search/query/count", alice_stac, query=S2_JANUARY).json == 4  # LOCAL's
    results = stac_server.get("/search/query", alice_stac, query=S2_JANUARY).json
    assert len(results) == 4 and all(x["link"].startswith(("file://", "https://data.example.org")) for x in results)
    assert stac_server.get("/search/query/count", alice_stac, query=S2_JANUARY, providers="EARTH").json == -1
    assert stac_server.get("/search/query", alice_stac, query=S2_JANUARY, providers="EARTH").text == "null"


def test_server_platforms_without_catalogue_entry(stac: respx.MockRouter, stac_server: Server,
                                                 alice_stac: Person) -> None:
    route = stac.post(f"{URL}/search").mock(return_value=httpx.Response(200, json=collection([s1_item()],
                                                                                             matched=1)))
    era5 = S2_JANUARY.replace("Sentinel-2 ", "ERA5")
    assert stac_server.get("/search/query/count", alice_stac, query=era5).json == 0  # EARTH lacks ERA5: LOCAL only
    assert not route.called
    s1 = S2_JANUARY.replace("Sentinel-2 ", "Sentinel-1")  # EARTH supports Sentinel-1: asked first
    [found] = stac_server.get("/search/query", alice_stac, query=s1).json
    assert found["title"].startswith("S1A_IW_GRDH") and found["link"].endswith("vv.tiff")
    assert route.called


# -- issue 30: counts past 100, names with a footprint, deadlines --------------------------------
def many_items_api(stac: respx.MockRouter, count: int, *, conformance: list[str] | None = None,
                   like: bool = False) -> list[dict[str, Any]]:
    """An API of ``count`` items that sends no ``numberMatched`` (pgstac's default), paged with ``next``
    tokens at the ``limit`` asked; with ``like`` it answers CQL2 ``like`` filters on ``id``."""
    items = [s2_item(1 + i % 28, tile=f"{'AB'[i % 2]}{i:04d}") for i in range(count)]
    for i, item in enumerate(items):
        item["id"] = f"S2{'AB'[i % 2]}_{i:04d}_L2A"
    bodies: list[dict[str, Any]] = []
    if conformance is not None:
        stac.get(f"{URL}/").mock(return_value=httpx.Response(200, json={"conformsTo": conformance}))

    def handler(request: httpx.Request) -> httpx.Response:
        body = body_of(request)
        bodies.append(body)
        selected = items
        if like and "filter" in body:
            pattern = json.dumps(body["filter"])
            prefix = "S2A" if "S2A" in pattern else "S2B"
            selected = [i for i in items if i["id"].startswith(prefix)]
        limit, start = int(body.get("limit", 10)), int(body.get("next", "0"))
        following = None
        if start + limit < len(selected):
            following = {"method": "POST", "href": f"{URL}/search", "merge": True, "body": {"next": str(start + limit)}}
        return httpx.Response(200, json=collection(selected[start:start + limit], next_link=following))

    stac.post(f"{URL}/search").mock(side_effect=handler)
    return bodies


def test_a_count_past_100_without_number_matched_walks_large_pages(stac: respx.MockRouter) -> None:
    bodies = many_items_api(stac, 2150)
    provider = StacProvider("PGSTAC", URL)
    assert provider.count(parse_query(S2_QUERY)) == 2150
    assert [b["limit"] for b in bodies] == [1, 1000, 1000, 1000]  # the probe, then one request per 1,000 items


def test_querylist_returns_every_item_past_100(stac: respx.MockRouter, tmp_path: Path) -> None:
    make_catalogue(tmp_path / "data" / "catalogue")
    server = Server(tmp_path / "data", search_providers=[{"code": "PGSTAC", "type": "stac", "url": URL}],
                    search_catalogues={"Sentinel-2": ["PGSTAC"]})
    try:
        alice = server.add_user("alice@example.org")
        bodies = many_items_api(stac, 150)
        r = server.post("/search/querylist", alice, json=[S2_JANUARY], params={"providers": "AUTO"})
        assert r.status_code == 200 and len(r.json) == 150
        assert len({x["title"] for x in r.json}) == 150
        assert server.get("/search/query/count", alice, query=S2_JANUARY).json == 150
        assert len(bodies) <= 5  # probe + one page for the count, one page for the list (and again for /count)
    finally:
        server.close()


FOOTPRINT_AND_NAME = ('( footprint:"intersects(POLYGON(( 7.0 45.0,7.0 46.0,8.0 46.0,8.0 45.0,7.0 45.0)))") AND '
                      "{name}( platformname:Sentinel-2 ) AND ( beginPosition:[2023-01-01T00:00:00.000Z TO "
                      "2023-01-31T23:59:59.999Z]AND endPosition:[2023-01-01T00:00:00.000Z TO "
                      "2023-01-31T23:59:59.999Z]) ")


@pytest.mark.parametrize("name", ["S2A_*", "S2A_", "s2a_"])
def test_a_name_with_a_footprint_is_kept_and_filtered_here(stac: respx.MockRouter, name: str) -> None:
    query = parse_query(FOOTPRINT_AND_NAME.format(name=name))
    assert query.product_name == name and query.bbox == (7.0, 45.0, 8.0, 46.0)
    bodies = many_items_api(stac, 30)
    provider = StacProvider("EARTH", URL, page_size=7)
    titles = [r.title for r in provider.search(query, 0, 100)]
    assert len(titles) == 15 and all(t.startswith("S2A_") for t in titles)
    assert provider.count(query) == 15
    assert [r.title for r in provider.search(query, 10, 3)] == titles[10:13]  # offsets count matching items
    assert all("ids" not in b and "filter" not in b for b in bodies)


def conditions(cql2: dict[str, Any]) -> list[dict[str, Any]]:
    return list(cql2["args"]) if cql2["op"] == "and" else [cql2]


def test_a_name_goes_to_the_api_as_cql2_like_where_it_has_the_filter_extension(stac: respx.MockRouter) -> None:
    bodies = many_items_api(stac, 30, conformance=FILTER_CONFORMANCE, like=True)
    provider = StacProvider("PGSTAC", URL)
    query = parse_query(FOOTPRINT_AND_NAME.format(name="S2A_"))
    assert len(provider.search(query, 0, 100)) == 15
    sent = bodies[-1]
    assert sent["filter-lang"] == "cql2-json" and "query" not in sent and "ids" not in sent
    assert {"op": "like", "args": [{"property": "id"}, "%S2A\\_%"]} in conditions(sent["filter"])
    bodies.clear()
    provider.search(parse_query(FOOTPRINT_AND_NAME.format(name="S2?_0*")), 0, 5)
    like = next(a for a in conditions(bodies[-1]["filter"]) if a["op"] == "like")
    assert like["args"][1] == "S2_\\_0%"  # * and ? become % and _; a literal _ is escaped


def test_a_name_goes_case_insensitively_where_the_api_can(stac: respx.MockRouter) -> None:
    bodies = many_items_api(stac, 4, conformance=[
        *FILTER_CONFORMANCE, "http://www.opengis.net/spec/cql2/1.0/conf/case-insensitive-comparison"])
    StacProvider("PGSTAC", URL).search(parse_query(FOOTPRINT_AND_NAME.format(name="s2a")), 0, 5)
    assert {"op": "like", "args": [{"op": "casei", "args": [{"property": "id"}]},
                                   {"op": "casei", "args": ["%s2a%"]}]} in conditions(bodies[-1]["filter"])


def test_a_catalogue_that_never_answers_fails_within_its_read_deadline(tmp_path: Path) -> None:
    import socket
    import threading
    import time

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:  # accepts and never answers
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    try:
        provider = StacProvider("SILENT", url, read_timeout=0.5, name_filter="client")
        started = time.monotonic()
        with pytest.raises(SearchProviderError, match="cannot reach"):
            provider.search(parse_query(S2_QUERY), 0, 5)
        assert time.monotonic() - started < 3
        assert provider.timeout.connect == 5.0 and StacProvider("X", URL).timeout.read == 20.0
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        listener.close()
