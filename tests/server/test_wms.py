"""The WMS of the published layers, read by a real WMS client (OWSLib) over a socket, and by raw requests:
capabilities in both versions, pixels checked against the source raster in both CRSs, styles, the web
client's tile request, every ServiceException, visibility, the tile cache and deletion."""

from __future__ import annotations

import json
import logging
import math
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from owslib.util import ServiceException as OwsServiceException
from owslib.wms import WebMapService
from tests.conftest import Person, Server
from tests.png_decoding import decode_png
from tests.server.geodata import ingested, local_map_server, make_geotiff, new_workspace, share, wait_process
from tests.socket_server import on_a_socket

from wasdi_server.providers.wms import render
from wasdi_server.providers.wms.cache import TileCache
from wasdi_server.providers.wms.styles import parse_style

RAMP = """<?xml version="1.0" encoding="UTF-8"?>
<StyledLayerDescriptor xmlns="http://www.opengis.net/sld" version="1.0.0">
 <NamedLayer><UserStyle><FeatureTypeStyle><Rule><RasterSymbolizer>
  <Opacity>{opacity}</Opacity>
  <ColorMap type="{kind}">
   <ColorMapEntry color="#0000ff" quantity="0" />
   <ColorMapEntry color="#ff0000" quantity="9999" />
  </ColorMap>
 </RasterSymbolizer></Rule></FeatureTypeStyle></UserStyle></NamedLayer>
</StyledLayerDescriptor>"""
WEB_CLIENT_TILE = {"service": "WMS", "request": "GetMap", "version": "1.1.1", "styles": "", "format": "image/png",
                   "transparent": "true", "srs": "EPSG:3857", "width": "256", "height": "256"}
"""What WASDI's web client asks for each map tile (plus ``layers`` and ``bbox``)."""
R = 6378137.0


def mercator(lon: float, lat: float) -> tuple[float, float]:
    return R * math.radians(lon), R * math.log(math.tan(math.pi / 4 + math.radians(lat) / 2))


def geographic(x: float, y: float) -> tuple[float, float]:
    return math.degrees(x / R), math.degrees(2 * math.atan(math.exp(y / R)) - math.pi / 2)


def source_value(lon: float, lat: float) -> float | None:
    """The value of ``make_geotiff``'s band 1 (lon 10..11, lat 40..41, 0.01 degree pixels) at a point."""
    col, row = math.floor((lon - 10.0) / 0.01), math.floor((41.0 - lat) / 0.01)
    if not (0 <= col < 100 and 0 <= row < 100) or (row, col) == (0, 0):
        return None
    return float(row * 100 + col)


@pytest.fixture
def served(server: Server) -> Iterator[str]:
    """The test server's app on a real socket (OWSLib speaks HTTP); its WMS address."""
    with on_a_socket(server.app) as base:
        yield f"{base}/wms"


def publish(server: Server, who: Person, ws: str, style: str | None = None) -> str:
    params = {"fileUrl": "scene.tif", "workspace": ws, "band": "red", **({"style": style} if style else {})}
    queued = server.get("/filebuffer/publishband", who, **params).json
    assert wait_process(server, queued["payload"])["status"] == "DONE"
    return str(server.get("/filebuffer/publishband", who, **params).json["payload"]["layerId"])


@pytest.fixture
def scene(server: Server, alice: Person, carol: Person, tmp_path: Path) -> tuple[str, str]:
    """Alice's workspace (shared read with carol) with scene.tif published: (workspace id, layer id)."""
    ws = new_workspace(server, alice)
    ingested(server, alice, ws, make_geotiff(tmp_path / "scene.tif", count=1))
    share(server, alice, ws, carol, "read")
    return ws, publish(server, alice, ws)


def stats(server: Server, layer_id: str) -> tuple[float, float]:
    return render.Layer.load(server.settings.data_dir / "layers" / layer_id).stats[1]


def grey(value: float, low: float, high: float) -> int:
    return int(np.clip(np.round((value - low) * 255.0 / (high - low)), 0, 255))


def wms(server: Server, who: Person | None, **params: str) -> httpx.Response:
    with httpx.Client(transport=httpx.WSGITransport(app=server.app), base_url="http://testserver") as client:
        return client.get("/wms", params=params, headers=who.headers if who else {})


def exception_code(response: httpx.Response) -> str | None:
    assert response.status_code in (400, 401), response.status_code
    assert not response.content.startswith(b"\x89PNG")
    root = ET.fromstring(response.content)
    assert root.tag.rsplit("}", 1)[-1] == "ServiceExceptionReport"
    found = [e for e in root if e.tag.rsplit("}", 1)[-1] == "ServiceException"]
    assert len(found) == 1 and (found[0].text or "").strip()
    return found[0].get("code")


# -- real clients --------------------------------------------------------------------------------
@pytest.mark.parametrize("version", ["1.1.1", "1.3.0"])
def test_owslib_reads_capabilities_and_maps_in_both_versions(server: Server, alice: Person, scene: tuple[str, str],
                                                             served: str, version: str) -> None:
    _, layer_id = scene
    client = WebMapService(served, version=version, headers={"x-session-token": alice.token})
    assert client.identification.type in ("OGC:WMS", "WMS") and client.version == version
    layer = client[layer_id]
    assert layer.title == "scene.tif - red"
    assert layer.boundingBoxWGS84 == pytest.approx((10.0, 40.0, 11.0, 41.0))
    assert {"EPSG:4326", "EPSG:3857"} <= set(layer.crsOptions)
    assert "default" in layer.styles and layer.styles["default"]["legend"]
    assert {op.name for op in client.operations} >= {"GetCapabilities", "GetMap", "GetFeatureInfo"}
    # a box of 10x10 source pixels: rows 70-79, columns 20-29 (OWSLib orders the 1.3.0 box itself)
    image = client.getmap(layers=[layer_id], styles=[""], srs="EPSG:4326", bbox=(10.2, 40.2, 10.3, 40.3),
                          size=(10, 10), format="image/png", transparent=True)
    pixels = decode_png(image.read())
    low, high = stats(server, layer_id)
    expected = [[grey((70 + r) * 100 + 20 + c, low, high) for c in range(10)] for r in range(10)]
    assert pixels[..., 0].tolist() == expected
    assert (pixels[..., 0] == pixels[..., 2]).all() and (pixels[..., 3] == 255).all()
    # EPSG:3857 through OWSLib: the same image as the raw request the mercator test checks pixel by pixel
    x0, y0 = mercator(10.1, 40.1)
    x1, y1 = mercator(10.9, 40.9)
    tile = client.getmap(layers=[layer_id], styles=[""], srs="EPSG:3857", bbox=(x0, y0, x1, y1), size=(256, 256),
                         format="image/png", transparent=True).read()
    raw = wms(server, alice, **WEB_CLIENT_TILE, layers=layer_id, bbox=f"{x0!r},{y0!r},{x1!r},{y1!r}")
    assert decode_png(tile).tolist() == decode_png(raw.content).tolist()


def test_version_1_3_0_takes_epsg_4326_boxes_latitude_first(server: Server, alice: Person,
                                                            scene: tuple[str, str]) -> None:
    _, layer_id = scene
    common = {"service": "WMS", "request": "GetMap", "layers": layer_id, "styles": "", "format": "image/png",
              "width": "10", "height": "10", "transparent": "true"}
    old = wms(server, alice, **common, version="1.1.1", srs="EPSG:4326", bbox="10.2,40.2,10.3,40.3")
    new = wms(server, alice, **common, version="1.3.0", crs="EPSG:4326", bbox="40.2,10.2,40.3,10.3")
    lon_first = wms(server, alice, **common, version="1.3.0", crs="CRS:84", bbox="10.2,40.2,10.3,40.3")
    assert old.status_code == new.status_code == lon_first.status_code == 200
    assert decode_png(old.content).tolist() == decode_png(new.content).tolist() == decode_png(
        lon_first.content).tolist()
    assert (decode_png(old.content)[..., 3] == 255).all()


def test_web_mercator_tiles_match_the_source_raster(server: Server, alice: Person, scene: tuple[str, str]) -> None:
    _, layer_id = scene
    minx, miny = mercator(10.1, 40.1)
    maxx, maxy = mercator(10.9, 40.9)
    answer = wms(server, alice, **WEB_CLIENT_TILE, layers=layer_id, bbox=f"{minx},{miny},{maxx},{maxy}")
    assert answer.status_code == 200 and answer.headers["content-type"] == "image/png"
    pixels = decode_png(answer.content)
    assert pixels.shape == (256, 256, 4)
    low, high = stats(server, layer_id)
    step_x, step_y = (maxx - minx) / 256, (maxy - miny) / 256
    checked = matched = 0
    for j in range(0, 256, 7):
        for i in range(0, 256, 7):
            lon, lat = geographic(minx + (i + 0.5) * step_x, maxy - (j + 0.5) * step_y)
            value = source_value(lon, lat)
            assert value is not None
            checked += 1
            matched += abs(int(pixels[j, i, 0]) - grey(value, low, high)) <= 1 and pixels[j, i, 3] == 255
    assert matched / checked > 0.97  # pixel centres exactly on a source edge may round either way


def test_the_web_clients_exact_tile_request_is_a_256_png_and_outside_the_data_transparent(
        server: Server, alice: Person, scene: tuple[str, str]) -> None:
    _, layer_id = scene
    x0, y0 = mercator(10.0, 40.0)
    x1, y1 = mercator(11.0, 41.0)
    inside = wms(server, alice, **WEB_CLIENT_TILE, layers=layer_id, bbox=f"{x0},{y0},{x1},{y1}")
    assert inside.status_code == 200 and decode_png(inside.content).shape == (256, 256, 4)
    assert decode_png(inside.content)[..., 3].mean() > 250  # all but the nodata pixel
    far = wms(server, alice, **WEB_CLIENT_TILE, layers=layer_id, bbox="-20037508.34,-20037508.34,-10018754.17,0")
    pixels = decode_png(far.content)
    assert far.status_code == 200 and pixels.shape == (256, 256, 4) and (pixels == 0).all()
    # half over the data: the other half transparent, and the nodata pixel (row 0, col 0) too
    half = wms(server, alice, service="WMS", request="GetMap", version="1.1.1", layers=layer_id, styles="",
               format="image/png", transparent="true", srs="EPSG:4326", bbox="9.9,40.9,10.1,41.0", width="20",
               height="10")
    pixels = decode_png(half.content)
    assert (pixels[:, :10, 3] == 0).all() and pixels[0, 10, 3] == 0 and (pixels[1:, 11:, 3] == 255).all()
    opaque = wms(server, alice, service="WMS", request="GetMap", version="1.1.1", layers=layer_id, styles="",
                 format="image/png", transparent="false", bgcolor="0x00FF00", srs="EPSG:4326",
                 bbox="9.9,40.9,10.1,41.0", width="20", height="10")
    assert decode_png(opaque.content)[0, 0].tolist() == [0, 255, 0, 255]


@pytest.mark.parametrize(("kind", "opacity"), [("ramp", "1"), ("values", "0.5")])
def test_a_colour_map_style_maps_values_in_both_crses(server: Server, alice: Person, tmp_path: Path, served: str,
                                                      kind: str, opacity: str) -> None:
    ws = new_workspace(server, alice)
    ingested(server, alice, ws, make_geotiff(tmp_path / "scene.tif", count=1))
    server.settings.styles_root.mkdir(parents=True, exist_ok=True)
    (server.settings.styles_root / "bluered.sld").write_text(RAMP.format(kind=kind, opacity=opacity))
    layer_id = publish(server, alice, ws, style="bluered")
    alpha = round(255 * float(opacity))
    x0, y0 = mercator(10.2, 40.2)
    x1, y1 = mercator(10.3, 40.3)
    for crs, bbox in (("EPSG:4326", "10.2,40.2,10.3,40.3"), ("EPSG:3857", f"{x0},{y0},{x1},{y1}")):
        answer = wms(server, alice, service="WMS", request="GetMap", version="1.1.1", layers=layer_id, styles="",
                     format="image/png", transparent="true", srs=crs, bbox=bbox, width="10", height="10")
        pixels = decode_png(answer.content)
        centre = pixels[5, 5]
        lon, lat = (10.255, 40.245) if crs == "EPSG:4326" else geographic(x0 + 5.5 * (x1 - x0) / 10,
                                                                          y1 - 5.5 * (y1 - y0) / 10)
        value = source_value(lon, lat)
        assert value is not None
        if kind == "ramp":  # blue at 0 to red at 9999, linearly
            assert centre.tolist() == pytest.approx([255 * value / 9999, 0, 255 * (1 - value / 9999), alpha], abs=1)
        else:  # "values": only the exact quantities 0 and 9999 are drawn
            assert (pixels[..., 3] == 0).all()
    client = WebMapService(served, version="1.3.0", headers={"x-session-token": alice.token})
    assert "bluered" in client[layer_id].styles
    through_owslib = client.getmap(layers=[layer_id], styles=["bluered"], srs="EPSG:3857", bbox=(x0, y0, x1, y1),
                                   size=(10, 10), format="image/png", transparent=True).read()
    assert decode_png(through_owslib).tolist() == pixels.tolist()


def test_a_named_style_applies_when_the_caller_may_read_it(server: Server, alice: Person, bob: Person,
                                                           scene: tuple[str, str], tmp_path: Path) -> None:
    ws, layer_id = scene
    sld = tmp_path / "upload.sld"
    sld.write_text(RAMP.format(kind="ramp", opacity="1"))
    server.services.styles.create(server.services.users.active_user(bob.user_id), "bobs", None, False, sld)
    request = {"service": "WMS", "request": "GetMap", "version": "1.1.1", "layers": layer_id,
               "format": "image/png", "srs": "EPSG:4326", "bbox": "10.2,40.2,10.3,40.3", "width": "4",
               "height": "4"}
    assert exception_code(wms(server, alice, **request, styles="bobs")) == "StyleNotDefined"
    share(server, alice, ws, bob, "read")
    coloured = decode_png(wms(server, bob, **request, styles="bobs").content)
    assert coloured[0, 0, 2] > 0 and coloured[0, 0, 0] != coloured[0, 0, 2]
    legend = wms(server, bob, service="WMS", request="GetLegendGraphic", version="1.1.1", layer=layer_id,
                 style="bobs", format="image/png")
    assert legend.status_code == 200 and decode_png(legend.content)[0, 0].tolist() == [255, 0, 0, 255]


# -- styles outside the subset, RGB, opacity -------------------------------------------------------
def test_rgb_channel_selection_and_unsupported_styles(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    tif = make_geotiff(tmp_path / "rgb.tif", count=3)
    styles = {"rgb": """<StyledLayerDescriptor><NamedLayer><UserStyle><FeatureTypeStyle><Rule><RasterSymbolizer>
        <Opacity>0.5</Opacity><ChannelSelection>
        <RedChannel><SourceChannelName>3</SourceChannelName></RedChannel>
        <GreenChannel><SourceChannelName>2</SourceChannelName></GreenChannel>
        <BlueChannel><SourceChannelName>1</SourceChannelName></BlueChannel></ChannelSelection>
        </RasterSymbolizer></Rule></FeatureTypeStyle></UserStyle></NamedLayer></StyledLayerDescriptor>""",
              "relief": """<StyledLayerDescriptor><NamedLayer><UserStyle><FeatureTypeStyle><Rule><RasterSymbolizer>
        <ShadedRelief/></RasterSymbolizer></Rule></FeatureTypeStyle></UserStyle></NamedLayer></StyledLayerDescriptor>"""}
    server = local_map_server(tmp_path / "layers", styles.get)
    server.publish(str(tif), 1, "wasdi_rgb", "rgb", "u", tmp_path)
    layer = server.layer("wasdi_rgb")
    assert layer is not None and layer.band_count == 3
    rgba = server.render_rgba("wasdi_rgb", None, "EPSG:4326", (10.5, 40.5, 10.6, 40.6), 2, 2)
    assert rgba[..., 3].tolist() == [[128, 128], [128, 128]]
    value = 47 * 100 + 52  # the pixel centre lon 10.525, lat 40.525: source row 47, column 52
    expected = [grey(value * band, *layer.stats[band]) for band in (3, 2, 1)]
    assert rgba[1, 0, :3].tolist() == expected
    with caplog.at_level(logging.WARNING):
        fallback = server.render_rgba("wasdi_rgb", "relief", "EPSG:4326", (10.5, 40.5, 10.6, 40.6), 2, 2)
    assert "ShadedRelief" in caplog.text
    assert fallback[1, 0].tolist() == [grey(value, *layer.stats[1])] * 3 + [255]
    assert parse_style(styles["relief"]).problem and not parse_style(styles["rgb"]).problem
    server.close()


# -- GetFeatureInfo and legends -------------------------------------------------------------------
@pytest.mark.parametrize("version", ["1.1.1", "1.3.0"])
def test_feature_info_gives_the_band_value_as_text_html_and_json(server: Server, alice: Person,
                                                                 scene: tuple[str, str], version: str) -> None:
    _, layer_id = scene
    point = {"i": "3", "j": "6"} if version == "1.3.0" else {"x": "3", "y": "6"}
    bbox = "40.2,10.2,40.3,10.3" if version == "1.3.0" else "10.2,40.2,10.3,40.3"
    crs = {"crs" if version == "1.3.0" else "srs": "EPSG:4326"}
    base = {"service": "WMS", "request": "GetFeatureInfo", "version": version, "layers": layer_id,
            "query_layers": layer_id, "styles": "", "bbox": bbox, "width": "10", "height": "10", **crs, **point}
    value = (70 + 6) * 100 + 20 + 3
    as_json = wms(server, alice, **base, info_format="application/json")
    assert as_json.status_code == 200 and as_json.headers["content-type"] == "application/json"
    feature = as_json.json()["features"][0]
    assert feature["properties"] == {"layer": layer_id, "product": "scene.tif", "band": "red", "value": value}
    assert feature["geometry"]["coordinates"] == pytest.approx([10.235, 40.235])
    text = wms(server, alice, **base, info_format="text/plain")
    assert text.headers["content-type"].startswith("text/plain") and f"value = {float(value)!r}" in text.text
    page = wms(server, alice, **base, info_format="text/html")
    assert page.headers["content-type"].startswith("text/html") and f"<td>{float(value)!r}</td>" in page.text
    nodata = wms(server, alice, **{**base, "bbox": "41,10,41.01,10.01" if version == "1.3.0" else "10,41,10.01,41.01",
                                   **({"i": "0", "j": "0"} if version == "1.3.0" else {"x": "0", "y": "0"})},
                 info_format="application/json")
    assert nodata.json()["features"] == []


def test_the_default_legend_is_a_grey_gradient(server: Server, alice: Person, scene: tuple[str, str]) -> None:
    _, layer_id = scene
    answer = wms(server, alice, service="WMS", request="GetLegendGraphic", version="1.1.1", layer=layer_id,
                 format="image/png", width="10", height="20")
    pixels = decode_png(answer.content)
    assert answer.headers["content-type"] == "image/png" and pixels.shape[1] == 10
    assert pixels[0, 0].tolist() == [255, 255, 255, 255] and pixels[-1, 0].tolist() == [0, 0, 0, 255]


# -- ServiceExceptions ----------------------------------------------------------------------------
GOOD = {"service": "WMS", "request": "GetMap", "version": "1.1.1", "styles": "", "format": "image/png",
        "srs": "EPSG:4326", "bbox": "10,40,11,41", "width": "64", "height": "64"}


@pytest.mark.parametrize(("changes", "code"), [
    ({"layers": "wasdi_nope"}, "LayerNotDefined"),
    ({"layers": "../../etc/passwd"}, "LayerNotDefined"),
    ({"srs": "EPSG:32632"}, "InvalidSRS"),
    ({"version": "1.3.0", "srs": None, "crs": "EPSG:32632"}, "InvalidCRS"),
    ({"srs": None}, "MissingParameterValue"),
    ({"format": "image/jpeg"}, "InvalidFormat"),
    ({"format": None}, "MissingParameterValue"),
    ({"bbox": "10,40,11"}, "InvalidParameterValue"),
    ({"bbox": "11,40,10,41"}, "InvalidParameterValue"),
    ({"bbox": "a,b,c,d"}, "InvalidParameterValue"),
    ({"bbox": "10,40,nan,41"}, "InvalidParameterValue"),
    ({"width": "0"}, "InvalidParameterValue"),
    ({"height": "-3"}, "InvalidParameterValue"),
    ({"width": "12.5"}, "InvalidParameterValue"),
    ({"width": "4097"}, "InvalidParameterValue"),
    ({"styles": "no-such-style"}, "StyleNotDefined"),
    ({"styles": ","}, "StyleNotDefined"),
    ({"transparent": "maybe"}, "InvalidParameterValue"),
    ({"version": "2.0.0"}, "InvalidParameterValue"),
    ({"version": None}, "MissingParameterValue"),
    ({"request": "GetTile"}, "OperationNotSupported"),
    ({"request": None}, "MissingParameterValue"),
    ({"service": "WFS"}, "InvalidParameterValue"),
    ({"request": "GetFeatureInfo", "query_layers": "LAYER", "x": "64", "y": "0"}, "InvalidPoint"),
    ({"request": "GetFeatureInfo", "query_layers": "LAYER", "x": "a", "y": "0"}, "InvalidPoint"),
    ({"request": "GetFeatureInfo", "query_layers": "other", "x": "1", "y": "1"}, "LayerNotDefined"),
    ({"request": "GetFeatureInfo", "query_layers": "LAYER", "x": "1", "y": "1", "info_format": "image/gif"},
     "InvalidFormat"),
    ({"request": "GetLegendGraphic", "layer": "wasdi_nope"}, "LayerNotDefined"),
    ({"request": "GetLegendGraphic", "layer": "LAYER", "format": "image/svg"}, "InvalidFormat"),
])
def test_every_malformed_request_is_a_service_exception(server: Server, alice: Person, scene: tuple[str, str],
                                                        changes: dict[str, Any], code: str) -> None:
    _, layer_id = scene
    params = {**GOOD, "layers": layer_id, **changes}
    params = {k: v.replace("LAYER", layer_id) for k, v in params.items() if v is not None}
    answer = wms(server, alice, **params)
    assert answer.status_code == 400
    assert exception_code(answer) == code
    version = params.get("version")
    if version == "1.3.0":
        assert answer.headers["content-type"] == "text/xml"
        assert ET.fromstring(answer.content).tag == "{http://www.opengis.net/ogc}ServiceExceptionReport"
    else:
        assert answer.headers["content-type"] == "application/vnd.ogc.se_xml"


def test_a_failing_raster_is_a_service_exception_not_a_500(server: Server, alice: Person,
                                                            scene: tuple[str, str]) -> None:
    _, layer_id = scene
    (server.settings.data_dir / "layers" / layer_id / "layer.vrt").write_text("<broken")
    answer = wms(server, alice, **GOOD, layers=layer_id)
    assert exception_code(answer) == "NoApplicableCode"


def test_owslib_sees_service_exceptions(server: Server, alice: Person, scene: tuple[str, str], served: str) -> None:
    _, layer_id = scene
    client = WebMapService(served, version="1.1.1", headers={"x-session-token": alice.token})
    with pytest.raises(OwsServiceException):
        client.getmap(layers=[layer_id], styles=[""], srs="EPSG:4326", bbox=(10, 40, 11, 41), size=(5000, 10),
                      format="image/png")


# -- who sees what --------------------------------------------------------------------------------
def test_a_stranger_sees_neither_the_layer_nor_its_tiles(server: Server, alice: Person, bob: Person, carol: Person,
                                                         scene: tuple[str, str], served: str) -> None:
    _, layer_id = scene
    stranger = WebMapService(served + f"?token={bob.token}", version="1.3.0")
    assert layer_id not in stranger.contents
    reader = WebMapService(served + f"?token={carol.token}", version="1.1.1")
    assert layer_id in reader.contents
    tile = {**GOOD, "layers": layer_id}
    assert exception_code(wms(server, bob, **tile)) == "LayerNotDefined"
    with httpx.Client() as client:
        assert client.get(served, params={**tile, "token": carol.token}).status_code == 200
        assert exception_code(client.get(served, params={**tile, "token": bob.token})) == "LayerNotDefined"
        anonymous = client.get(served, params=tile)
        assert anonymous.status_code == 401 and exception_code(anonymous) is None
        assert client.get(served, params={**tile, "token": "bogus"}).status_code == 401
    # the capabilities keep a token given in the URL in their addresses (QGIS reuses them), never a header's
    caps = wms(server, carol, service="WMS", request="GetCapabilities", version="1.1.1").text
    assert carol.token not in caps
    with httpx.Client() as client:
        caps = client.get(served, params={"service": "WMS", "request": "GetCapabilities", "token": carol.token}).text
    assert f"token={carol.token}" in caps


def test_the_old_and_new_server_paths_both_serve_the_wms(server: Server, alice: Person,
                                                         scene: tuple[str, str]) -> None:
    _, layer_id = scene
    with httpx.Client(transport=httpx.WSGITransport(app=server.app), base_url="http://testserver") as client:
        legacy = client.get("/wasdiwebserver/rest/wms", params={**GOOD, "layers": layer_id}, headers=alice.headers)
    assert legacy.status_code == 200 and legacy.content == wms(server, alice, **GOOD, layers=layer_id).content
    caps = wms(server, alice, service="WMS", request="GetCapabilities")
    assert caps.status_code == 200 and b'version="1.3.0"' in caps.content
    with httpx.Client(transport=httpx.WSGITransport(app=server.app), base_url="http://testserver") as client:
        legacy_caps = client.get("/wasdiwebserver/rest/wms", headers=alice.headers,
                                 params={"service": "WMS", "request": "GetCapabilities", "version": "1.1.1"})
    assert "http://testserver/wasdiwebserver/rest/wms?" in legacy_caps.text


# -- the tile cache, restyling and deletion -------------------------------------------------------
def tiles_of(server: Server, layer_id: str) -> list[Path]:
    return sorted((server.settings.data_dir / "layers" / ".tiles" / layer_id).glob("*.png"))


def test_tiles_are_cached_and_dropped_when_the_style_changes(server: Server, alice: Person,
                                                             scene: tuple[str, str]) -> None:
    ws, layer_id = scene
    first = wms(server, alice, **GOOD, layers=layer_id)
    assert len(tiles_of(server, layer_id)) == 1
    assert tiles_of(server, layer_id)[0].read_bytes() == first.content
    assert wms(server, alice, **GOOD, layers=layer_id).content == first.content
    server.settings.styles_root.mkdir(parents=True, exist_ok=True)
    (server.settings.styles_root / "bluered.sld").write_text(RAMP.format(kind="ramp", opacity="1"))
    assert server.post("/product/update", alice, params={"workspace": ws},
                       json={"fileName": "scene.tif", "style": "bluered"}).status_code == 200
    assert tiles_of(server, layer_id) == []
    coloured = decode_png(wms(server, alice, **GOOD, layers=layer_id).content)
    assert (coloured[1:, 1:, 2] > 0).any() and not (coloured[..., 0] == coloured[..., 2]).all()


def test_the_cache_is_bounded_by_bytes(tmp_path: Path) -> None:
    cache = TileCache(tmp_path / "tiles", max_bytes=250)
    for index in range(5):
        cache.put("wasdi_a", f"k{index}", bytes(100))
    assert cache.total_bytes == 200 and cache.get("wasdi_a", "k0") is None and cache.get("wasdi_a", "k4")
    assert len(list((tmp_path / "tiles" / "wasdi_a").iterdir())) == 2
    reopened = TileCache(tmp_path / "tiles", max_bytes=150)  # the bound holds across restarts
    assert reopened.total_bytes == 100 and len(list((tmp_path / "tiles" / "wasdi_a").iterdir())) == 1
    reopened.drop("wasdi_a")
    reopened.drop("wasdi_a")
    assert reopened.total_bytes == 0 and not (tmp_path / "tiles" / "wasdi_a").exists()


@pytest.mark.parametrize("how", ["product", "workspace"])
def test_deleting_with_deletelayer_removes_layer_overviews_and_tiles(server: Server, alice: Person,
                                                                     tmp_path: Path, how: str) -> None:
    ws = new_workspace(server, alice)
    ingested(server, alice, ws, make_geotiff(tmp_path / "scene.tif", count=1, width=600, height=600,
                                             pixel=0.001))
    layer_id = publish(server, alice, ws)
    layers = server.settings.data_dir / "layers"
    assert {p.name for p in (layers / layer_id).iterdir()} == {"layer.vrt", "layer.vrt.ovr", "layer.json"}
    assert json.loads((layers / layer_id / "layer.json").read_text())["overviews"] == [2, 4]
    wms(server, alice, **GOOD, layers=layer_id)
    assert tiles_of(server, layer_id)
    if how == "product":
        assert server.get("/product/delete", alice, name="scene.tif", workspace=ws, deletelayer="true").status_code \
            == 200
    else:
        assert server.delete("/ws/delete", alice, workspace=ws, deletelayer="true",
                             deletefile="true").status_code == 200
    assert not (layers / layer_id).exists() and not (layers / f"{layer_id}.png").exists()
    assert tiles_of(server, layer_id) == [] and server.services.products.layers.get(layer_id) is None
    assert exception_code(wms(server, alice, **GOOD, layers=layer_id)) == "LayerNotDefined"


def test_several_layers_are_drawn_over_each_other(server: Server, alice: Person, scene: tuple[str, str],
                                                  tmp_path: Path) -> None:
    _, layer_id = scene
    sld = tmp_path / "half.sld"
    sld.write_text(RAMP.format(kind="ramp", opacity="0.5"))
    server.services.styles.create(server.services.users.active_user(alice.user_id), "half", None, False, sld)
    request = {**GOOD, "transparent": "true", "bbox": "10.2,40.2,10.3,40.3", "width": "4", "height": "4"}
    bottom = decode_png(wms(server, alice, **{**request, "layers": layer_id}).content).astype(float)
    top = decode_png(wms(server, alice, **{**request, "layers": layer_id, "styles": "half"}).content).astype(float)
    both = decode_png(wms(server, alice, **{**request, "layers": f"{layer_id},{layer_id}",
                                            "styles": ",half"}).content)
    expected = top[..., :3] * 0.5 + bottom[..., :3] * 0.5  # half-transparent colours over opaque grey
    assert np.abs(both[..., :3] - expected).max() <= 1.5 and (both[..., 3] == 255).all()


def test_a_band_inside_a_zip_product_is_served(server: Server, alice: Person, tmp_path: Path) -> None:
    import zipfile

    ws = new_workspace(server, alice)
    archive = tmp_path / "S2A_MSIL2A_test.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.write(make_geotiff(tmp_path / "scene.tif", count=1), "granule/scene.tif")
    ingested(server, alice, ws, archive)
    queued = server.get("/filebuffer/publishband", alice, fileUrl=archive.name, workspace=ws, band="red").json
    assert wait_process(server, queued["payload"])["status"] == "DONE"
    layer_id = server.get("/filebuffer/publishband", alice, fileUrl=archive.name, workspace=ws,
                          band="red").json["payload"]["layerId"]
    pixels = decode_png(wms(server, alice, **{**GOOD, "layers": layer_id, "bbox": "10.2,40.2,10.3,40.3",
                                              "width": "10", "height": "10"}).content)
    low, high = stats(server, layer_id)
    assert pixels[0, 0, 0] == grey(70 * 100 + 20, low, high) and (pixels[..., 3] == 255).all()


def test_a_layer_whose_files_are_gone_is_published_again(server: Server, alice: Person,
                                                         scene: tuple[str, str]) -> None:
    import shutil

    ws, layer_id = scene
    shutil.rmtree(server.settings.data_dir / "layers" / layer_id)  # e.g. published before the WMS existed
    assert exception_code(wms(server, alice, **GOOD, layers=layer_id)) == "LayerNotDefined"
    queued = server.get("/filebuffer/publishband", alice, fileUrl="scene.tif", workspace=ws, band="red").json
    assert queued["messageCode"] == "WAITFORRABBIT"
    assert wait_process(server, queued["payload"])["status"] == "DONE"
    again = server.get("/filebuffer/publishband", alice, fileUrl="scene.tif", workspace=ws, band="red").json
    assert again["messageCode"] == "PUBLISHBAND" and again["payload"]["layerId"] == layer_id
    assert wms(server, alice, **GOOD, layers=layer_id).status_code == 200


def test_the_web_clients_tiles_come_with_its_session_cookie(server: Server, alice: Person, carol: Person,
                                                            stranger: Person, scene: tuple[str, str]) -> None:
    """The map of WASDI's web client asks /wms with no header, only the cookie its login set."""
    _, layer_id = scene
    x0, y0 = mercator(10.2, 40.2)
    x1, y1 = mercator(10.8, 40.8)
    tile = {**WEB_CLIENT_TILE, "layers": layer_id, "bbox": f"{x0!r},{y0!r},{x1!r},{y1!r}"}

    def cookie_of(who: Person) -> str:
        r = server.http.simulate_post("/wasdiwebserver/rest/auth/login",
                                      json={"userId": who.user_id, "userPassword": "correct-horse-1"})
        return str(r.cookies["wasdi_session"].value)

    def ask(cookie: str | None) -> Any:
        return server.http.simulate_get("/wms", params=tile, headers={"Cookie": f"wasdi_session={cookie}"} if cookie
                                        else None)

    answer = ask(cookie_of(alice))
    assert answer.status_code == 200 and answer.headers["content-type"] == "image/png"
    assert decode_png(answer.content)[..., 3].mean() > 250
    assert ask(cookie_of(carol)).status_code == 200  # a reader of the workspace
    refused = ask(cookie_of(stranger))
    assert refused.status_code != 200 and b"LayerNotDefined" in refused.content
    no_cookie = ask(None)
    assert no_cookie.status_code == 401 and b"ServiceException" in no_cookie.content
    # The session ended, the cookie opens nothing.
    cookie = cookie_of(alice)
    assert server.get("/auth/logout", Person(alice.user_id, cookie)).status_code == 200
    assert ask(cookie).status_code == 401
