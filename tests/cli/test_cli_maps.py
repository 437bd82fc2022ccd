"""``wasdi maps ...`` against the in-process server: publish a band, its WMS address, a preview image."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import Cli
from tests.png_decoding import decode_png
from tests.server.geodata import make_geotiff

SLD = (b'<?xml version="1.0"?><StyledLayerDescriptor xmlns="http://www.opengis.net/sld" version="1.0.0">'
       b'<NamedLayer><UserStyle><FeatureTypeStyle><Rule><RasterSymbolizer><ColorMap>'
       b'<ColorMapEntry color="#0000ff" quantity="0"/><ColorMapEntry color="#ff0000" quantity="9999"/>'
       b"</ColorMap></RasterSymbolizer></Rule></FeatureTypeStyle></UserStyle></NamedLayer></StyledLayerDescriptor>")


@pytest.fixture
def alice(cli: Cli, tmp_path: Path) -> Cli:
    cli.login()
    assert cli("ws", "create", "floods").exit_code == 0
    result = cli("products", "upload", str(make_geotiff(tmp_path / "scene.tif")), "--ws", "floods")
    assert result.exit_code == 0, result.output
    return cli


def test_publish_waits_and_prints_the_wms_address(alice: Cli) -> None:
    result = alice("maps", "publish", "scene.tif", "red", "--ws", "floods", "--wait")
    assert result.exit_code == 0, result.output
    assert result.stdout == "http://testserver/wms\n"
    assert "Published as layer wasdi_" in result.stderr and "Add WMS Layer" in result.stderr
    again = alice("maps", "publish", "scene.tif", "red", "--ws", "floods", "--json")
    payload = json.loads(again.stdout)
    assert payload["messageCode"] == "PUBLISHBAND" and payload["payload"]["geoserverUrl"] == "http://testserver/wms"


def test_publish_without_waiting_says_what_to_do_next(alice: Cli) -> None:
    result = alice("maps", "publish", "scene.tif", "red", "--ws", "floods")
    assert result.exit_code == 0, result.output
    assert result.stdout == "http://testserver/wms\n" and "--wait" in result.stderr


def test_publish_errors_are_sentences(alice: Cli) -> None:
    no_band = alice("maps", "publish", "scene.tif", "nir", "--ws", "floods")
    assert no_band.exit_code == 1 and "has no band 'nir'" in no_band.stderr and "red" in no_band.stderr
    assert alice("ws", "create", "Floods 2024").exit_code == 0
    no_product = alice("maps", "publish", "nosuch.tif", "B04", "--ws", "Floods 2024")
    assert no_product.exit_code == 1 and "no band" not in no_product.stderr
    assert "there is no product 'nosuch.tif' in workspace 'Floods 2024'" in no_product.stderr
    # the suggested command is pasteable: the name with a space is quoted
    assert no_product.stderr.rstrip().endswith("list them with: wasdi products list --ws 'Floods 2024'")
    no_style = alice("maps", "publish", "scene.tif", "red", "--ws", "floods", "--style", "nope")
    assert no_style.exit_code == 1 and "no style has the id or name 'nope'" in no_style.stderr


def test_preview_writes_the_layer_with_a_style_by_name(alice: Cli, tmp_path: Path) -> None:
    sld = tmp_path / "bluered.sld"
    sld.write_bytes(SLD)
    assert alice("styles", "upload", str(sld)).exit_code == 0
    result = alice("maps", "publish", "scene.tif", "red", "--ws", "floods", "--wait", "--json")
    layer_id = json.loads(result.stdout)["payload"]["layerId"]
    grey = tmp_path / "grey.png"
    result = alice("maps", "preview", layer_id, "-o", str(grey), "--size", "50")
    assert result.exit_code == 0, result.output
    assert result.stdout == f"{grey}\n"
    pixels = decode_png(grey.read_bytes())
    assert pixels.shape == (50, 50, 4) and (pixels[..., 0] == pixels[..., 2]).all()
    coloured = tmp_path / "coloured.png"
    assert alice("maps", "preview", layer_id, "-o", str(coloured), "--size", "50", "--style", "bluered").exit_code == 0
    pixels = decode_png(coloured.read_bytes())
    assert pixels[49, 49, 0] > 240 and pixels[49, 49, 2] < 15 and pixels[..., 1].max() == 0  # high values: red
    missing = alice("maps", "preview", "wasdi_nope", "-o", str(tmp_path / "x.png"))
    assert missing.exit_code == 1 and "no layer 'wasdi_nope'" in missing.stderr
    assert not (tmp_path / "x.png").exists()


def test_url_checks_the_layer_and_can_carry_the_token(alice: Cli) -> None:
    assert alice("maps", "url").stdout == "http://testserver/wms\n"
    with_token = alice("maps", "url", "--with-token").stdout.strip()
    assert with_token == f"http://testserver/wms?token={alice.token()}"
    missing = alice("maps", "url", "wasdi_nope")
    assert missing.exit_code == 1 and "no layer 'wasdi_nope'" in missing.stderr


def test_maps_list_shows_the_layers_of_a_workspace(alice: Cli) -> None:
    empty = alice("maps", "list", "--ws", "floods")
    assert empty.exit_code == 0 and empty.stdout == "" and "No map layers in workspace 'floods'" in empty.stderr
    published = alice("maps", "publish", "scene.tif", "red", "--ws", "floods", "--wait")
    layer_id = published.stderr.split("Published as layer ", 1)[1].split(":", 1)[0]
    assert layer_id.startswith("wasdi_")
    table = alice("maps", "list", "--ws", "floods")
    assert table.exit_code == 0, table.output
    header, row = [line.split() for line in table.stdout.splitlines() if line.strip() and "───" not in line][:2]
    assert header == ["layer", "product", "band", "style"] and row[:3] == [layer_id, "scene.tif", "red"]
    assert alice("maps", "list", "--ws", "floods", "-q").stdout == f"{layer_id}\n"
    rows = json.loads(alice("maps", "list", "--ws", "floods", "--json").stdout)
    assert [(r["layerId"], r["productName"], r["bandName"]) for r in rows] == [(layer_id, "scene.tif", "red")]
    shown = alice("products", "show", "scene.tif", "--ws", "floods")
    assert f"red: layer {layer_id}" in shown.stdout
    missing = alice("maps", "preview", "wasdi_nope", "-o", "x.png")
    assert "'wasdi maps list --ws WORKSPACE'" in missing.stderr
