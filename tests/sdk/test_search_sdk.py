"""client.search and the query builder: byte for byte the official library's strings, the five
endpoints against the in-process server (LOCAL catalogue), and the requests they send (respx)."""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
import respx
from tests.conftest import Person, Server
from tests.server.test_search import (
    FLOOD_JAN20,
    INDEX_S2_JAN25,
    S1_JANUARY,
    S2_JANUARY,
    S2_L1C_JAN15_UTM,
    S2_L2A_JAN05,
    make_catalogue,
)
from tests.server.test_search_query import S1_QUERY, S2_BODY, S2_NO_BBOX, S2_QUERY

from wasdi_sdk import EmptyResultError, WasdiClient, build_query
from wasdi_sdk.models import DataProviderViewModel, QueryResultViewModel
from wasdi_sdk.search_query import corners, request_body
from wasdi_server.search_grammar import parse_query

DATES_10 = ("AND ( beginPosition:[2023-01-01T00:00:00.000Z TO 2023-01-10T23:59:59.999Z]"
            "AND endPosition:[2023-01-01T00:00:00.000Z TO 2023-01-10T23:59:59.999Z]) ")


# -- the builder: the literal examples of clients.md, byte for byte ---------------------------------
def test_s2_example_query_and_body_bytes() -> None:
    query = build_query("S2", "2023-01-01", "2023-01-31", bbox=(46.0, 7.0, 45.0, 8.0), product_type="S2MSI1C",
                        cloud_coverage="[0 TO 30]", orbit=22)
    assert query == S2_QUERY
    assert request_body(query).encode() == S2_BODY
    assert json.dumps([query]).encode() == S2_BODY  # what client.search.query_list sends


def test_s1_example() -> None:
    assert build_query("S1", "2023-01-01", "2023-01-10", bbox="46.0,7.0,45.0,8.0", product_type="GRD",
                       sensor_mode="IW", orbit=117) == S1_QUERY


def test_s2_without_bbox_or_type() -> None:
    assert build_query("S2", "2023-01-01", "2023-01-10") == S2_NO_BBOX


def test_s3_with_params_and_file_name() -> None:
    assert build_query("S3", "2023-01-01", "2023-01-10", params={"timeliness": "NTC", "producttype": "SL_2_LST___"},
                       file_name="S3A_SL_2_LST") == (
        "S3A_SL_2_LST( platformname:Sentinel-3 AND timeliness:NTC AND producttype:SL_2_LST___) " + DATES_10)


def test_viirs_default_type_and_landsat() -> None:
    assert build_query("VIIRS", "2023-01-01", "2023-01-10") == (
        "( platformname:VIIRS AND producttype:VIIRS_1d_composite) " + DATES_10)
    assert build_query("L8", "2023-01-01", "2023-01-10", product_type="L1TP") == (
        "( platformname:Landsat-* AND producttype:L1TP) " + DATES_10)


def test_dropped_options_defaults_and_number_formatting() -> None:
    # cloud cover only for S2, sensor mode only for S1 (silently dropped otherwise)
    assert build_query("S1", "2023-01-01", "2023-01-10", cloud_coverage="[0 TO 30]") == build_query(
        "S1", "2023-01-01", "2023-01-10")
    assert "sensoroperationalmode" not in build_query("S2", "2023-01-01", "2023-01-10", sensor_mode="IW")
    assert build_query("S2", None, None, today=date(2024, 2, 3)).endswith(
        "[1957-10-04T00:00:00.000Z TO 2024-02-03T23:59:59.999Z]) ")
    assert build_query("S2", "2023-01-01", "2023-01-10", bbox=(46, 7, 45, 8)).startswith(
        '( footprint:"intersects(POLYGON(( 7 45,7 46,8 46,8 45,7 45)))") AND ')
    assert build_query("S2", "2023-01-01", "2023-01-10", bbox="46,7,45,8").startswith(
        '( footprint:"intersects(POLYGON(( 7.0 45.0,7.0 46.0,8.0 46.0,8.0 45.0,7.0 45.0)))") AND ')
    assert "cloudcoverpercentage:[0 TO 20.5]" in build_query("S2", "2023-01-01", "2023-01-10",
                                                             cloud_coverage=(0, 20.5))
    assert corners({"northEast": {"lat": 46, "lng": 8}, "southWest": {"lat": 45, "lng": 7}}) == (46, 7, 45, 8)
    assert build_query("Sentinel-1", date(2023, 1, 1), date(2023, 1, 10)).startswith("( platformname:Sentinel-1)")


@pytest.mark.parametrize("kwargs", [{"date_from": "01/01/2023"}, {"bbox": "1,2,3"}, {"orbit": "x"},
                                    {"orbit": True}, {"platform": ""}])
def test_builder_rejects_bad_arguments(kwargs: dict[str, Any]) -> None:
    args = {"platform": "S2", **kwargs}
    with pytest.raises(ValueError):
        build_query(**args)


@pytest.fixture
def waspy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The official library with pristine globals and ``requests.post`` captured (no network)."""
    import wasdi

    for name in list(os.environ):
        if name.startswith("WASDI_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))
    module = importlib.reload(wasdi)
    yield module
    importlib.reload(wasdi)


CALLS = [
    (dict(sPlatform="S2", sDateFrom="2023-01-01", sDateTo="2023-01-31", fULLat=46.0, fULLon=7.0, fLRLat=45.0,
          fLRLon=8.0, sProductType="S2MSI1C", sCloudCoverage="[0 TO 30]", iOrbitNumber=22),
     dict(platform="S2", date_from="2023-01-01", date_to="2023-01-31", bbox=(46.0, 7.0, 45.0, 8.0),
          product_type="S2MSI1C", cloud_coverage="[0 TO 30]", orbit=22)),
    (dict(sPlatform="S1", sDateFrom="2023-01-01", sDateTo="2023-01-10", oBoundingBox="46,7,45,8",
          sProductType="GRD", sSensorOperationalMode="IW", iOrbitNumber=117),
     dict(platform="S1", date_from="2023-01-01", date_to="2023-01-10", bbox="46,7,45,8", product_type="GRD",
          sensor_mode="IW", orbit=117)),
    (dict(sPlatform="S3", sDateFrom="2023-01-01", sDateTo="2023-01-10",
          aoParams={"timeliness": "NTC", "producttype": "SL_2_LST___"}, sFileName="S3A_SL_2_LST"),
     dict(platform="S3", date_from="2023-01-01", date_to="2023-01-10",
          params={"timeliness": "NTC", "producttype": "SL_2_LST___"}, file_name="S3A_SL_2_LST")),
    (dict(sPlatform="VIIRS", sDateFrom="2023-01-01", sDateTo="2023-01-10",
          oBoundingBox={"northEast": {"lat": 46, "lng": 8}, "southWest": {"lat": 45, "lng": 7}}),
     dict(platform="VIIRS", date_from="2023-01-01", date_to="2023-01-10",
          bbox={"northEast": {"lat": 46, "lng": 8}, "southWest": {"lat": 45, "lng": 7}})),
    (dict(sPlatform="L8", sDateFrom="2023-01-01", sDateTo="2023-01-10", sProductType="L1TP", sCloudCoverage="[0 TO 5]"),
     dict(platform="L8", date_from="2023-01-01", date_to="2023-01-10", product_type="L1TP",
          cloud_coverage="[0 TO 5]")),
    (dict(sPlatform="ENVI", sDateFrom="2023-01-01", sDateTo="2023-01-10", sProductType="ASA_IM__0P"),
     dict(platform="ENVI", date_from="2023-01-01", date_to="2023-01-10", product_type="ASA_IM__0P")),
    (dict(sPlatform="ERA5", sDateFrom="2023-01-01", sDateTo="2023-01-10", aoParams={"dataset": "reanalysis-era5"}),
     dict(platform="ERA5", date_from="2023-01-01", date_to="2023-01-10", params={"dataset": "reanalysis-era5"})),
]


@pytest.mark.parametrize(("library_args", "builder_args"), CALLS)
def test_builder_matches_the_official_library(waspy: ModuleType, monkeypatch: pytest.MonkeyPatch,
                                              library_args: dict[str, Any], builder_args: dict[str, Any]) -> None:
    sent: list[tuple[str, str]] = []

    class Answer:
        @staticmethod
        def json() -> list[Any]:
            return []

    def post(url: str, data: Any = None, **kwargs: Any) -> Answer:
        sent.append((url, data))
        return Answer()

    monkeypatch.setattr(waspy.requests, "post", post)
    waspy.searchEOImages(**library_args)
    [(url, body)] = sent
    assert url.endswith("/search/querylist?providers=AUTO")
    query = build_query(**builder_args)
    assert body == request_body(query)  # the same bytes
    assert parse_query(query).platform_name  # and the server reads a platform from it


# -- the five endpoints against the in-process server ------------------------------------------------
@pytest.fixture
def search_server(tmp_path: Path) -> Iterator[Server]:
    make_catalogue(tmp_path / "data" / "catalogue")
    s = Server(tmp_path / "data")
    yield s
    s.close()


@pytest.fixture
def client(search_server: Server) -> Iterator[WasdiClient]:
    who: Person = search_server.add_user("alice@example.org")
    with search_server.sdk(who) as c:
        yield c


def test_list_providers(client: WasdiClient) -> None:
    [local] = client.search.list_providers()
    assert isinstance(local, DataProviderViewModel) and (local.code, local.description) == ("LOCAL", "Local catalogue")


def test_count_and_query(client: WasdiClient) -> None:
    assert client.search.count(S2_JANUARY) == 4
    assert client.search.count(S2_JANUARY, providers=["LOCAL"]) == 4
    page = client.search.query(S2_JANUARY, offset=1, limit=2)
    assert [r.title for r in page] == [S2_L1C_JAN15_UTM, FLOOD_JAN20]
    assert all(isinstance(r, QueryResultViewModel) and r.provider == "AUTO" and r.platform == "Sentinel-2"
               for r in page)
    assert page[0].properties and page[0].properties["producttype"] == "S2MSI1C"
    assert client.search.query(S2_JANUARY, offset="0", limit="1", sortedby="title", order="desc")[0].title == \
        INDEX_S2_JAN25


def test_count_list_and_query_list(client: WasdiClient) -> None:
    assert client.search.count_list([S2_JANUARY, S1_JANUARY]) == 5
    results = client.search.query_list([S2_JANUARY, S1_JANUARY], providers="LOCAL")
    assert len(results) == 5 and {r.provider for r in results} == {"LOCAL"}
    indexed = next(r for r in results if r.title == INDEX_S2_JAN25)
    assert indexed.volume_name == "eodata" and indexed.link == "https://data.example.org/S2B_MSIL2A_20230125.zip"


def test_eo_images_is_search_eo_images(client: WasdiClient) -> None:
    found = client.search.eo_images("S2", "2023-01-01", "2023-01-31", bbox="46,7,45,8", product_type="S2MSI2A",
                                    cloud_coverage="[0 TO 30]")
    assert sorted(r.title for r in found) == sorted([S2_L2A_JAN05, INDEX_S2_JAN25])
    assert client.search.eo_images("S1", "2023-01-01", "2023-01-31", orbit=78)[0].title.startswith("S1A_IW_GRDH")
    assert client.search.eo_images("S2", "2030-01-01", "2030-01-31") == []  # nothing found is a list


def test_failures_raise_empty_result(client: WasdiClient) -> None:
    for call in (lambda: client.search.count("( platformname:Sentinel-2"),
                 lambda: client.search.query("( platformname:Sentinel-2"),
                 lambda: client.search.count_list([]),
                 lambda: client.search.query_list([]),
                 lambda: client.search.query_list([S2_JANUARY], providers="NOBODY"),
                 lambda: client.search.count(S2_JANUARY.replace("Sentinel-2 ", "Unlisted"))):
        with pytest.raises(EmptyResultError):
            call()


def test_providers_needs_a_session(search_server: Server) -> None:
    with search_server.sdk(token="not-a-session") as anonymous, pytest.raises(EmptyResultError):
        anonymous.search.list_providers()


# -- what goes on the wire (respx) -------------------------------------------------------------
def test_requests_on_the_wire() -> None:
    with respx.mock(base_url="http://wasdi.test") as mock:
        count = mock.get("/search/query/count").mock(return_value=httpx.Response(200, json=7))
        page = mock.get("/search/query").mock(return_value=httpx.Response(200, json=[{"title": "a",
                                                                                     "volumeName": None}]))
        lst = mock.post("/search/querylist").mock(return_value=httpx.Response(200, json=[]))
        cl = mock.post("/search/query/countlist").mock(return_value=httpx.Response(200, json=-1))
        with WasdiClient(base_url="http://wasdi.test", session_token="tok", max_retries=0) as c:
            assert c.search.count(S2_QUERY, providers=["A", "B"]) == 7
            assert c.search.query(S2_QUERY, limit=5)[0].title == "a"
            assert c.search.query_list([S2_QUERY]) == []
            with pytest.raises(EmptyResultError):
                c.search.count_list([S2_QUERY])
        request = count.calls.last.request
        assert request.url.params["query"] == S2_QUERY and request.url.params["providers"] == "A,B"
        assert request.headers["x-session-token"] == "tok"
        assert page.calls.last.request.url.params["limit"] == "5"
        assert "offset" not in page.calls.last.request.url.params
        sent = lst.calls.last.request
        assert sent.content == S2_BODY  # json.dumps of the one-query list: the library's bytes
        assert "providers" not in sent.url.params  # the server's default, AUTO
        assert sent.headers["content-type"] == "application/json"
        assert "providers" not in cl.calls.last.request.url.params


def test_build_query_refuses_impossible_and_swapped_days() -> None:
    from wasdi_sdk.search_query import build_query

    with pytest.raises(ValueError, match="'2024-13-01' is not a date"):
        build_query("S2", "2024-13-01", "2024-12-31")
    with pytest.raises(ValueError, match="is after the last day"):
        build_query("S2", "2024-02-01", "2024-01-01")
    assert "2024-01-01T00:00:00.000Z TO 2024-01-01T23:59:59.999Z" in build_query("S2", "2024-01-01", "2024-01-01")
