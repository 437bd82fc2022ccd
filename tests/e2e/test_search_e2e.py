"""The official ``wasdi`` library's ``searchEOImages`` against a real server process with a LOCAL catalogue.

The catalogue (GeoTIFFs and a JSON index, ``tests.server.test_search.make_catalogue``) is put in
``<data_dir>/catalogue`` before the server starts, which is where the server looks by default.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
from tests.server.test_search import (
    FLOOD_JAN20,
    INDEX_S2_JAN25,
    S1_GRD_JAN07,
    S2_L1C_JAN15_UTM,
    S2_L2A_JAN05,
    make_catalogue,
)

from wasdi_sdk import build_query

pytestmark = pytest.mark.e2e

LEGACY = "/wasdiwebserver/rest"


@pytest.fixture
def search_server(servers: Any, data_dir: Path) -> Any:
    make_catalogue(data_dir / "catalogue")
    return servers.start(data_dir)


def logged_in(waspy: ModuleType, server: Any, accounts: Any, tmp_path: Path, base_url: str | None = None) -> None:
    config = {"BASEURL": base_url or server.base_url, "USER": accounts.alice, "PASSWORD": accounts.password,
              "BASEPATH": str(tmp_path / "waspy-data") + "/", "REQUESTSTIMEOUT": 30, "VERBOSE": False}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    assert waspy.init(str(path)) is True


def test_search_eo_images_sentinel_2(waspy: ModuleType, search_server: Any, accounts: Any, tmp_path: Path) -> None:
    logged_in(waspy, search_server, accounts, tmp_path)
    found = waspy.searchEOImages("S2", "2023-01-01", "2023-01-31", fULLat=46.0, fULLon=7.0, fLRLat=45.0, fLRLon=8.0)
    assert sorted(r["title"] for r in found) == sorted([S2_L2A_JAN05, S2_L1C_JAN15_UTM, FLOOD_JAN20, INDEX_S2_JAN25])
    by_title = {r["title"]: r for r in found}
    first = by_title[S2_L2A_JAN05]
    assert first["fileName"] == S2_L2A_JAN05 + ".zip"  # the library's own S1/S2 rule
    assert first["relativeOrbit"] == "22" and first["provider"] == "AUTO" and first["platform"] == "Sentinel-2"
    assert "volumeName" in first and "volumePath" in first  # importProduct reads both without checking
    assert first["link"] == (search_server.data_dir / "catalogue" / S2_L2A_JAN05).resolve().as_uri()
    assert first["footprint"].startswith("POLYGON((") and first["properties"]["cloudcoverpercentage"] == "12.5"
    assert waspy.getFoundProductName(first) == S2_L2A_JAN05

    filtered = waspy.searchEOImages("S2", "2023-01-01", "2023-01-31", oBoundingBox="46,7,45,8",
                                    sProductType="S2MSI2A", sCloudCoverage="[0 TO 30]", iOrbitNumber=22)
    assert sorted(r["title"] for r in filtered) == sorted([S2_L2A_JAN05, INDEX_S2_JAN25])
    assert waspy.searchEOImages("S2", "2030-01-01", "2030-01-31", oBoundingBox="46,7,45,8") == []


def test_search_eo_images_sentinel_1_and_an_explicit_provider(waspy: ModuleType, search_server: Any, accounts: Any,
                                                              tmp_path: Path) -> None:
    logged_in(waspy, search_server, accounts, tmp_path)
    [found] = waspy.searchEOImages("S1", "2023-01-01", "2023-01-10",
                                   oBoundingBox={"northEast": {"lat": 46, "lng": 8},
                                                 "southWest": {"lat": 45, "lng": 7}},
                                   sProductType="GRD", sSensorOperationalMode="IW", sProvider="LOCAL")
    assert found["title"] == S1_GRD_JAN07 and found["provider"] == "LOCAL" and found["relativeOrbit"] == "78"


def test_the_legacy_base_path_and_the_sdk_agree(waspy: ModuleType, search_server: Any, accounts: Any,
                                                tmp_path: Path) -> None:
    logged_in(waspy, search_server, accounts, tmp_path, base_url=search_server.base_url + LEGACY)
    found = waspy.searchEOImages("S2", "2023-01-01", "2023-01-31", fULLat=46.0, fULLon=7.0, fLRLat=45.0, fLRLon=8.0)
    with search_server.sdk(accounts.alice) as sdk:
        same = sdk.search.query_list([build_query("S2", "2023-01-01", "2023-01-31", bbox=(46.0, 7.0, 45.0, 8.0))])
        assert sorted(r["title"] for r in found) == sorted(str(r.title) for r in same)
        assert sdk.search.count(build_query("S2", "2023-01-01", "2023-01-31", bbox="46,7,45,8")) == len(found)


def test_failures_over_http(search_server: Any, accounts: Any) -> None:
    with search_server.http(accounts.alice) as client:
        r = client.post("/search/querylist", params={"providers": "AUTO"}, content=b'["( platformname:Sentinel-2"]',
                        headers={"Content-Type": "application/json"})
        assert (r.status_code, r.text) == (200, "null")
        r = client.get("/search/query/count", params={"query": "( platformname:NoSuchMission )"})
        assert (r.status_code, r.text) == (200, "-1")
    r = httpx.get(search_server.url("/search/providers"), timeout=30)
    assert (r.status_code, r.text) == (200, "null")
