"""The local map server: band rendering (stretch, colour maps, nodata), SLD parsing, and the layer images
served at /layers/{layerId}.png with their session check."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import pytest
from tests.conftest import Person, Server
from tests.png_decoding import decode_png
from tests.server.geodata import (
    folder,
    http,
    ingested,
    local_map_server,
    make_geotiff,
    new_workspace,
    share,
    wait_process,
)

from wasdi_server.providers import mapserver
from wasdi_server.providers.mapserver import parse_colour_map

SLD = """<?xml version="1.0" encoding="UTF-8"?>
<StyledLayerDescriptor xmlns="http://www.opengis.net/sld" version="1.0.0">
 <NamedLayer><UserStyle><FeatureTypeStyle><Rule><RasterSymbolizer>
  <ColorMap type="{kind}">
   <ColorMapEntry color="#0000ff" quantity="0" />
   <ColorMapEntry color="#ff0000" quantity="9999" opacity="0.5" />
  </ColorMap>
 </RasterSymbolizer></Rule></FeatureTypeStyle></UserStyle></NamedLayer>
</StyledLayerDescriptor>"""


def test_grey_stretch_and_transparent_nodata(tmp_path: Path) -> None:
    tif = make_geotiff(tmp_path / "a.tif", count=1, width=100, height=100)
    server = local_map_server(tmp_path / "layers")
    layer = server.publish(str(tif), 1, "wasdi_a", None, "http://x/layers/wasdi_a.png", tmp_path)
    server.close()
    pixels = decode_png((tmp_path / "layers" / "wasdi_a.png").read_bytes())
    assert pixels.shape == (100, 100, 4)
    assert pixels[0, 0, 3] == 0  # nodata
    assert pixels[0, 1].tolist() == [0, 0, 0, 255]  # the minimum (value 1) is black
    assert pixels[99, 99].tolist() == [255, 255, 255, 255]  # the maximum is white
    assert (pixels[..., 0] == pixels[..., 1]).all()
    box = json.loads(layer.bounding_box)
    assert (box["minx"], box["miny"], box["maxx"], box["maxy"]) == pytest.approx((10, 40, 11, 41))
    assert layer.url == "http://x/layers/wasdi_a.png"


def test_large_rasters_are_drawn_at_a_bounded_size(tmp_path: Path) -> None:
    tif = make_geotiff(tmp_path / "big.tif", count=1, width=3000, height=1500, pixel=0.001)
    server = local_map_server(tmp_path / "layers", max_size=512)
    server.publish(str(tif), 1, "wasdi_big", None, "u", tmp_path)
    server.close()
    assert decode_png((tmp_path / "layers" / "wasdi_big.png").read_bytes()).shape == (256, 512, 4)


def test_projected_rasters_are_warped_to_wgs84(tmp_path: Path) -> None:
    tif = make_geotiff(tmp_path / "utm.tif", crs="EPSG:32632", origin=(500000, 5000000), pixel=100, width=60,
                       height=40, count=1)
    server = local_map_server(tmp_path / "layers")
    layer = server.publish(str(tif), 1, "wasdi_u", None, "u", tmp_path)
    server.close()
    native = json.loads(layer.geoserver_bounding_box)
    assert native == {"minx": 500000.0, "miny": 4996000.0, "maxx": 506000.0, "maxy": 5000000.0, "crs": "EPSG:32632"}
    wgs84 = json.loads(layer.bounding_box)
    assert wgs84["minx"] == pytest.approx(9.0, abs=1e-3) and 45.1 < wgs84["miny"] < wgs84["maxy"] < 45.2


def test_a_raster_without_crs_is_drawn_without_bounding_box(tmp_path: Path) -> None:
    tif = make_geotiff(tmp_path / "plain.tif", crs=None, count=1, width=30, height=20)
    server = local_map_server(tmp_path / "layers")
    layer = server.publish(str(tif), 1, "wasdi_p", None, "u", tmp_path)
    server.close()
    assert layer.bounding_box == "" and layer.geoserver_bounding_box == ""
    assert decode_png((tmp_path / "layers" / "wasdi_p.png").read_bytes()).shape == (20, 30, 4)


def test_colour_maps(tmp_path: Path) -> None:
    ramp = parse_colour_map(SLD.format(kind="ramp"))
    assert ramp is not None and ramp.kind == "ramp" and ramp.quantities == (0.0, 9999.0)
    assert ramp.colours == ((0, 0, 255, 255), (255, 0, 0, 128))
    values = np.array([[0.0, 9999.0, 4999.5, 20000.0]])
    valid = np.array([[True, True, True, False]])
    rgba = mapserver.colourise(values, valid, ramp)
    assert rgba[0, 0].tolist() == [0, 0, 255, 255] and rgba[0, 1].tolist() == [255, 0, 0, 128]
    assert rgba[0, 2].tolist() == [128, 0, 128, 192] and rgba[0, 3].tolist() == [0, 0, 0, 0]
    intervals = parse_colour_map(SLD.format(kind="intervals"))
    rgba = mapserver.colourise(np.array([[-1.0, 5.0, 10000.0]]), np.ones((1, 3), bool), intervals)
    assert rgba[0, 0].tolist() == [0, 0, 255, 255] and rgba[0, 1].tolist() == [255, 0, 0, 128]
    assert rgba[0, 2, 3] == 0
    exact = parse_colour_map(SLD.format(kind="values"))
    rgba = mapserver.colourise(np.array([[0.0, 1.0, 9999.0]]), np.ones((1, 3), bool), exact)
    assert rgba[0, 0, 3] == 255 and rgba[0, 1, 3] == 0 and rgba[0, 2].tolist() == [255, 0, 0, 128]


@pytest.mark.parametrize("sld", [
    None, "", "<not xml", "<StyledLayerDescriptor/>",
    '<!DOCTYPE x [<!ENTITY a "aaaa">]><ColorMap><ColorMapEntry color="#000000" quantity="&a;"/></ColorMap>',
    SLD.format(kind="ramp").replace("</RasterSymbolizer>", '<ColorMap><ColorMapEntry color="#000000" quantity="1"/>'
                                                           '</ColorMap></RasterSymbolizer>'),
    SLD.format(kind="ramp").replace("#0000ff", "blue"),
    SLD.format(kind="weird"),
])
def test_styles_that_are_not_simple_fall_back_to_the_stretch(sld: str | None) -> None:
    assert parse_colour_map(sld) is None


def test_a_style_colours_the_layer_and_a_new_style_redraws_it(server: Server, alice: Person, tmp_path: Path) -> None:
    ws = new_workspace(server, alice)
    ingested(server, alice, ws, make_geotiff(tmp_path / "scene.tif", count=1))
    styles = server.settings.styles_root
    styles.mkdir(parents=True, exist_ok=True)
    (styles / "bluered.sld").write_text(SLD.format(kind="ramp"))
    r = server.get("/filebuffer/publishband", alice, fileUrl="scene.tif", workspace=ws, band="red", style="bluered")
    wait_process(server, r.json["payload"])
    answer = server.get("/filebuffer/publishband", alice, fileUrl="scene.tif", workspace=ws, band="red")
    payload = answer.json["payload"]
    png = server.settings.data_dir / "layers" / f"{payload['layerId']}.png"
    coloured = decode_png(png.read_bytes())
    assert coloured[0, 1].tolist()[:3] == [0, 0, 255] and (coloured[..., 1] == 0).all()
    # the product's style changes: the published layer is drawn again with it (no such style: grey)
    assert server.post("/product/update", alice, params={"workspace": ws},
                       json={"fileName": "scene.tif", "style": "unknown-style"}).status_code == 200
    grey = decode_png(png.read_bytes())
    assert (grey[..., 0] == grey[..., 1]).all() and grey[99, 99].tolist() == [255, 255, 255, 255]
    assert server.services.products.layers.get(payload["layerId"])["style"] == "unknown-style"


def test_layer_images_are_served_to_readers_only(server: Server, alice: Person, bob: Person, carol: Person,
                                                 tmp_path: Path) -> None:
    ws = new_workspace(server, alice)
    tif = make_geotiff(tmp_path / "scene.tif", count=1)
    ingested(server, alice, ws, tif)
    share(server, alice, ws, carol, "read")
    r = server.get("/filebuffer/publishband", alice, fileUrl="scene.tif", workspace=ws, band="red")
    wait_process(server, r.json["payload"])
    payload = server.get("/filebuffer/publishband", alice, fileUrl="scene.tif", workspace=ws,
                         band="red").json["payload"]
    assert urlsplit(payload["geoserverUrl"]).path == "/wms"
    path = f"/layers/{payload['layerId']}.png"
    with http(server, alice) as client:
        ok = client.get(path)
        assert ok.status_code == 200 and ok.headers["content-type"] == "image/png"
        assert decode_png(ok.content).shape == (100, 100, 4)
        assert client.get("/wasdiwebserver/rest" + path).content == ok.content
    with http(server, None) as client:
        assert client.get(path).status_code == 401
        assert client.get(path, params={"token": "bogus"}).status_code == 401
        assert client.get(path, params={"token": carol.token}).status_code == 200
        assert client.get(path, params={"token": bob.token}).status_code == 403
        assert client.get("/layers/wasdi_nope.png", params={"token": alice.token}).status_code == 404
        assert client.get("/layers/..%2F..%2Fusers.png", params={"token": alice.token}).status_code == 404
    # deleting the product with its layers removes the image
    server.get("/product/delete", alice, name="scene.tif", workspace=ws)
    with http(server, alice) as client:
        assert client.get(path).status_code == 404
    assert list((server.settings.data_dir / "layers").glob("*.png")) == []
    assert list(folder(server, ws).iterdir()) == []
