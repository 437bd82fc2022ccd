"""``client.maps`` against the in-process server: the WMS address, GetMap, extents and errors."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from tests.conftest import Person, Server
from tests.png_decoding import decode_png
from tests.server.geodata import ingested, make_geotiff, new_workspace, wait_process

from wasdi_sdk import AuthenticationError, BadRequestError, NotFoundError, WasdiClient


def sdk(server: Server, who: Person | None) -> WasdiClient:
    http = httpx.Client(transport=httpx.WSGITransport(app=server.app), base_url="http://testserver")
    return WasdiClient(base_url="http://testserver", session_token=who.token if who else None, http_client=http,
                       max_retries=0)


@pytest.fixture
def layer_id(server: Server, alice: Person, tmp_path: Path) -> str:
    ws = new_workspace(server, alice)
    ingested(server, alice, ws, make_geotiff(tmp_path / "scene.tif", count=1))
    client = sdk(server, alice)
    queued = client.file_buffer.publish_band("scene.tif", ws, "red")
    wait_process(server, str(queued.payload))
    return str(client.file_buffer.publish_band("scene.tif", ws, "red").payload["layerId"])


def test_wms_url_is_the_published_geoserver_url(server: Server, alice: Person, layer_id: str) -> None:
    client = sdk(server, alice)
    assert client.maps.wms_url() == "http://testserver/wms"
    assert client.maps.wms_url(layer_id) == "http://testserver/wms"
    assert client.maps.wms_url(include_token=True) == f"http://testserver/wms?token={alice.token}"
    with pytest.raises(NotFoundError):
        client.maps.wms_url("wasdi_nope")
    with pytest.raises(AuthenticationError):
        sdk(server, None).maps.wms_url(include_token=True)


def test_get_map_bounds_and_preview(server: Server, alice: Person, bob: Person, layer_id: str) -> None:
    client = sdk(server, alice)
    assert client.maps.bounds(layer_id) == pytest.approx((10.0, 40.0, 11.0, 41.0))
    west, south, east, north = client.maps.bounds(layer_id, crs="EPSG:3857")
    assert west == pytest.approx(1113194.9, abs=1) and east > west and north > south
    tile = decode_png(client.maps.get_map(layer_id, bbox=(10.0, 40.9, 10.1, 41.0), width=10, height=10))
    assert tile.shape == (10, 10, 4) and tile[0, 0, 3] == 0 and (tile[1:, 1:, 3] == 255).all()
    opaque = decode_png(client.maps.get_map(layer_id, bbox=(10.0, 40.9, 10.1, 41.0), width=10, height=10,
                                            transparent=False))
    assert opaque[0, 0].tolist() == [255, 255, 255, 255]
    assert decode_png(client.maps.preview(layer_id, size=64)).shape == (64, 64, 4)
    with pytest.raises(NotFoundError, match="LayerNotDefined"):
        sdk(server, bob).maps.get_map(layer_id, bbox=(10, 40, 11, 41))
    with pytest.raises(NotFoundError, match="StyleNotDefined"):
        client.maps.get_map(layer_id, bbox=(10, 40, 11, 41), style="nope")
    with pytest.raises(BadRequestError, match="InvalidParameterValue"):
        client.maps.get_map(layer_id, bbox=(10, 40, 11, 41), width=5000)
    with pytest.raises(AuthenticationError):
        sdk(server, None).maps.get_map(layer_id, bbox=(10, 40, 11, 41))
