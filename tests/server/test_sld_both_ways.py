"""One SLD reader for the style preview and the WMS: each file below is uploaded as a style, then its preview
(the colour bar the styles service writes) and the WMS's drawing of a raster with it (GetMap and
GetLegendGraphic) are compared: the same colours, or the same default grey for what is not an SLD colour."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tests.conftest import Person, Server
from tests.png_decoding import decode_png
from tests.server.geodata import ingested, make_geotiff, new_workspace
from tests.server.test_wms import publish, wms

from wasdi_server.providers.wms.styles import parse_colour, parse_style


def sld(symbolizer: str, version: str = "1.0.0") -> str:
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<StyledLayerDescriptor version="{version}" xmlns="http://www.opengis.net/sld" '
            'xmlns:se="http://www.opengis.net/se" xmlns:ogc="http://www.opengis.net/ogc"><NamedLayer><Name>x</Name>'
            f"<UserStyle><FeatureTypeStyle><Rule><RasterSymbolizer>{symbolizer}</RasterSymbolizer></Rule>"
            "</FeatureTypeStyle></UserStyle></NamedLayer></StyledLayerDescriptor>")


def entries(kind: str, *pairs: tuple[str, int]) -> str:
    inside = "".join(f'<ColorMapEntry color="{c}" quantity="{q}"/>' for c, q in pairs)
    return sld(f'<ColorMap type="{kind}">{inside}</ColorMap>')


RED, GREEN, BLUE, YELLOW, CYAN = (255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0), (0, 255, 255)
CATEGORIZE = ("<se:ColorMap><se:Categorize><se:LookupValue>Rasterdata</se:LookupValue>{v0}<se:Threshold>5000"
              "</se:Threshold>{v1}</se:Categorize></se:ColorMap>")

# name: (SLD, the colours it draws and previews, lowest values first; ramp?) -- None: the default grey
FILES: dict[str, tuple[str, list[tuple[int, int, int]] | None, bool]] = {
    "ramp upper case": (entries("ramp", ("#FF0000", 0), ("#0000Ff", 9999)), [RED, BLUE], True),
    "intervals": (entries("intervals", ("#ff0000", 3000), ("#00ff00", 6000), ("#0000ff", 10000)),
                  [RED, GREEN, BLUE], False),
    "se categorize": (sld(CATEGORIZE.format(v0="<se:Value>#ffff00</se:Value>", v1="<se:Value>#00ffff</se:Value>"),
                          "1.1.0"), [YELLOW, CYAN], False),
    "se literal": (sld(CATEGORIZE.format(v0="<se:Value><ogc:Literal>#ffff00</ogc:Literal></se:Value>",
                                         v1="<se:Value> <ogc:Literal>#00FFFF</ogc:Literal> </se:Value>"), "1.1.0"),
                   [YELLOW, CYAN], False),
    "se interpolate": (sld("<se:ColorMap><se:Interpolate fallbackValue='#000000'><se:LookupValue>Rasterdata"
                           "</se:LookupValue><se:InterpolationPoint><se:Data>0</se:Data><se:Value>#ff0000</se:Value>"
                           "</se:InterpolationPoint><se:InterpolationPoint><se:Data>9999</se:Data>"
                           "<se:Value>#0000ff</se:Value></se:InterpolationPoint></se:Interpolate></se:ColorMap>",
                           "1.1.0"), [RED, BLUE], True),
    # not SLD colours: drawn and previewed alike, in the default grey
    "short hex": (entries("ramp", ("#f00", 0), ("#00f", 9999)), None, True),
    "0x hex": (entries("ramp", ("0xff0000", 0), ("0x0000ff", 9999)), None, True),
    "colour name": (entries("values", ("red", 5000)), None, True),
    "eight digits": (entries("ramp", ("#ffff0000", 0), ("#ff0000ff", 9999)), None, True),
}


@pytest.fixture
def layer(server: Server, alice: Person, tmp_path: Path) -> tuple[str, str]:
    """Alice's workspace and a published band of values 1..9999 over lon 10..11, lat 40..41."""
    ws = new_workspace(server, alice)
    ingested(server, alice, ws, make_geotiff(tmp_path / "scene.tif", count=1))
    return ws, publish(server, alice, ws)


def preview(server: Server, name: str) -> np.ndarray:
    return decode_png((server.settings.images_root / "styles" / f"{name}.png").read_bytes())


def is_grey(pixels: np.ndarray) -> bool:
    rgb = pixels[..., :3].astype(int)
    return bool((rgb[..., 0] == rgb[..., 1]).all() and (rgb[..., 1] == rgb[..., 2]).all())


@pytest.mark.parametrize("name", sorted(FILES))
def test_the_preview_shows_what_the_wms_draws(server: Server, alice: Person, layer: tuple[str, str],
                                              tmp_path: Path, name: str) -> None:
    text, colours, ramp = FILES[name]
    upload = tmp_path / "style.sld"
    upload.write_text(text)
    server.services.styles.create(server.services.users.active_user(alice.user_id), name, None, False, upload)
    _, layer_id = layer
    bar = preview(server, name)[0]  # every row of the bar is the same
    drawn = decode_png(wms(server, alice, service="WMS", request="GetMap", version="1.1.1", layers=layer_id,
                           styles=name, format="image/png", transparent="true", srs="EPSG:4326", bbox="10,40,11,41",
                           width="100", height="100").content)
    legend = decode_png(wms(server, alice, service="WMS", request="GetLegendGraphic", version="1.1.1",
                            layer=layer_id, style=name, format="image/png").content)
    opaque = drawn[drawn[..., 3] == 255][:, :3]
    if colours is None:
        assert parse_style(text).problem
        assert is_grey(bar) and tuple(bar[0][:3]) != tuple(bar[-1][:3])  # the grey ramp
        assert is_grey(drawn) and len({tuple(p) for p in opaque}) > 100  # the grey stretch
        assert is_grey(legend)
        return
    assert not parse_style(text).problem
    ends = [tuple(int(c) for c in bar[0][:3]), tuple(int(c) for c in bar[-1][:3])]
    assert ends == [colours[0], colours[-1]]
    if ramp:  # a blend in the bar, and the same two end colours at the ends of the raster's values
        assert len({tuple(p) for p in bar}) > 50
        assert tuple(drawn[0, 1][:3]) == colours[0] and tuple(drawn[99, 99][:3]) == colours[-1]  # values 1, 9999
        assert {tuple(legend[0][0][:3]), tuple(legend[-1][0][:3])} == set(colours)
    else:  # one block per class in the bar; the map draws those classes and nothing else
        assert [tuple(int(c) for c in p[:3]) for p in dict.fromkeys(map(tuple, bar))] == colours
        assert {tuple(int(c) for c in p) for p in opaque} == set(colours)
        assert {tuple(int(c) for c in p[:3]) for p in legend.reshape(-1, 4) if p[3] == 255} >= set(colours)


def test_sld_colours_are_six_hex_digits_in_either_case() -> None:
    assert parse_colour("#FF8000") == parse_colour(" #ff8000 ") == (255, 128, 0, 255)
    assert parse_colour("#0000ff", 0.5) == (0, 0, 255, 128)
    for wrong in ("#f80", "ff8000", "0xff8000", "orange", "#ff80000", "#gg8000", "", "rgb(255,128,0)"):
        with pytest.raises(ValueError, match="not an SLD colour"):
            parse_colour(wrong)
    with pytest.raises(ValueError, match="opacity"):
        parse_colour("#ff8000", 1.5)


def test_categorize_thresholds_belong_to_the_class_the_style_says() -> None:
    succeeding = parse_style(sld(CATEGORIZE.format(v0="<se:Value>#ff0000</se:Value>",
                                                   v1="<se:Value>#0000ff</se:Value>"), "1.1.0")).colour_map
    preceding = parse_style(sld(CATEGORIZE.replace("<se:Categorize>", '<se:Categorize threshholdsBelongTo='
                                                   '"preceding">').format(v0="<se:Value>#ff0000</se:Value>",
                                                                         v1="<se:Value>#0000ff</se:Value>"),
                                "1.1.0")).colour_map
    assert succeeding is not None and preceding is not None
    from wasdi_server.providers.wms.render import colourise

    values = np.array([[4999.0, 5000.0, 5001.0]])
    valid = np.ones(values.shape, bool)
    assert colourise(values, valid, succeeding)[0, :, :3].tolist() == [[255, 0, 0], [0, 0, 255], [0, 0, 255]]
    assert colourise(values, valid, preceding)[0, :, :3].tolist() == [[255, 0, 0], [255, 0, 0], [0, 0, 255]]


@pytest.mark.parametrize("symbolizer, problem", [
    ("<se:ColorMap><se:Categorize><se:Value>#ff0000</se:Value><se:Threshold>5</se:Threshold></se:Categorize>"
     "</se:ColorMap>", "one more Value"),
    ("<se:ColorMap><se:Categorize><se:Value>#ff0000</se:Value><se:Threshold>5</se:Threshold><se:Value>#00ff00"
     "</se:Value><se:Threshold>1</se:Threshold><se:Value>#0000ff</se:Value></se:Categorize></se:ColorMap>",
     "must rise"),
    ("<se:ColorMap><se:Interpolate mode='cubic'><se:InterpolationPoint><se:Data>0</se:Data><se:Value>#ff0000"
     "</se:Value></se:InterpolationPoint></se:Interpolate></se:ColorMap>", "cubic"),
    ('<ColorMap><ColorMapEntry color="#ff0000" quantity="1" opacity="2"/></ColorMap>', "0..1"),
    ('<ColorMap><ColorMapEntry color="#ff0000"/></ColorMap>', "quantity"),
])
def test_colour_maps_outside_the_standard_say_why(symbolizer: str, problem: str) -> None:
    style = parse_style(sld(symbolizer, "1.1.0"))
    assert style.colour_map is None and problem in style.problem


def test_a_doctype_is_refused_without_reading_it() -> None:
    text = '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e "#ff0000">]>' + sld("<Opacity>1</Opacity>").split(
        "?>", 1)[1]
    assert "DTD" in parse_style(text).problem or "DOCTYPE" in parse_style(text).problem
