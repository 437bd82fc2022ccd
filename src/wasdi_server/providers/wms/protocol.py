"""The OGC WMS 1.1.1 and 1.3.0 protocol: reading requests, writing capabilities and exception reports.

Pure functions over query parameters (keys are case-insensitive, as the standard says); nothing here
knows about sessions, layers on disk or rendering.

Axis order: WMS 1.1.1 (``SRS``) always takes ``BBOX=minx,miny,maxx,maxy`` in longitude/latitude order;
WMS 1.3.0 (``CRS``) takes the CRS's own axis order, which for ``EPSG:4326`` is latitude first
(``BBOX=minlat,minlon,maxlat,maxlon``), while ``CRS:84`` is longitude first.  Requests are normalised to
x/y (longitude/latitude) order here, so the rest never thinks about it.

Exception codes (WMS 1.3.0 annex A, WMS 1.1.1 annex A.3; OWS common names where the WMS lists none):
``MissingParameterValue``, ``InvalidParameterValue`` (bad box, size, number, version, service),
``OperationNotSupported``, ``LayerNotDefined``, ``StyleNotDefined``, ``InvalidFormat``, ``InvalidSRS``
(1.1.1) / ``InvalidCRS`` (1.3.0), ``InvalidPoint``, ``LayerNotQueryable``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

VERSIONS = ("1.1.1", "1.3.0")
CRSES = ("EPSG:4326", "EPSG:3857")
ALIASES = {"EPSG:900913": "EPSG:3857", "EPSG:3785": "EPSG:3857", "EPSG:102100": "EPSG:3857"}
"""Other names clients send for Web Mercator."""
FORMATS = ("image/png",)
INFO_FORMATS = ("text/plain", "text/html", "application/json")
MAX_SIZE = 4096
"""Largest WIDTH or HEIGHT of a GetMap (bigger: InvalidParameterValue)."""
MAX_LAYERS = 10
"""Most layers in one GetMap or GetFeatureInfo (WMS 1.3.0's ``LayerLimit``, in the capabilities)."""
MAX_PIXEL_LAYERS = 2 * MAX_SIZE * MAX_SIZE
"""Budget of WIDTH x HEIGHT x layers of one GetMap: two layers at the largest size, ten 2896 x 2896 ones."""
MAX_LEGEND_SIZE = 512
SE_XML_111 = "application/vnd.ogc.se_xml"
SE_XML_130 = "text/xml"


class ServiceException(Exception):
    """A WMS request that cannot be answered: becomes a ServiceExceptionReport."""

    def __init__(self, message: str, code: str | None = None, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status


def exception_report(error: ServiceException, version: str) -> tuple[bytes, str]:
    """The ServiceExceptionReport document of ``version`` and its content type."""
    code = f" code={quoteattr(error.code)}" if error.code else ""
    body = f"<ServiceException{code}>{escape(error.message)}</ServiceException>"
    if version == "1.3.0":
        return (f'<?xml version="1.0" encoding="UTF-8"?>\n<ServiceExceptionReport version="1.3.0" '
                f'xmlns="http://www.opengis.net/ogc">{body}</ServiceExceptionReport>').encode(), SE_XML_130
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<ServiceExceptionReport version="1.1.1">{body}'
            f"</ServiceExceptionReport>").encode(), SE_XML_111


def lower_keys(params: Mapping[str, object]) -> dict[str, str]:
    """Query parameters with lower-case names; a repeated parameter keeps its first value."""
    out: dict[str, str] = {}
    for key, value in params.items():
        if isinstance(value, list | tuple):
            value = value[0] if value else ""
        out.setdefault(key.lower(), str(value))
    return out


def negotiate(version: str | None) -> str:
    """GetCapabilities version negotiation: the highest supported version not above the asked one."""
    if not version:
        return "1.3.0"
    try:
        asked = tuple(int(p) for p in version.split("."))
    except ValueError:
        return "1.3.0"
    return "1.3.0" if asked >= (1, 3, 0) else "1.1.1"


def version_of(params: Mapping[str, str]) -> str:
    """The version of an operation other than GetCapabilities (it must be one we speak)."""
    version = params.get("version") or params.get("wmtver") or ""
    if not version:
        raise ServiceException("VERSION is required (1.1.1 or 1.3.0)", "MissingParameterValue")
    if version not in VERSIONS:
        raise ServiceException(f"VERSION {version[:20]!r} is not supported: use 1.1.1 or 1.3.0",
                               "InvalidParameterValue")
    return version


def required(params: Mapping[str, str], name: str) -> str:
    value = params.get(name.lower(), "")
    if not value.strip():
        raise ServiceException(f"{name} is required", "MissingParameterValue")
    return value.strip()


def integer(params: Mapping[str, str], name: str, low: int, high: int) -> int:
    text = required(params, name)
    try:
        value = int(text)
    except ValueError:
        raise ServiceException(f"{name} must be a whole number, not {text[:20]!r}", "InvalidParameterValue") from None
    if not low <= value <= high:
        raise ServiceException(f"{name} must be between {low} and {high}", "InvalidParameterValue")
    return value


@dataclass(frozen=True)
class MapRequest:
    version: str
    layers: tuple[str, ...]
    styles: tuple[str, ...]
    """One per layer ("" for the layer's own style)."""
    crs: str
    """``EPSG:4326`` or ``EPSG:3857``."""
    bbox: tuple[float, float, float, float]
    """minx, miny, maxx, maxy in x/y (longitude/latitude) order."""
    width: int
    height: int
    format: str
    transparent: bool
    background: tuple[int, int, int]


def crs_of(params: Mapping[str, str], version: str) -> tuple[str, bool]:
    """The normalised CRS of a request, and whether its BBOX is latitude first."""
    first, second = ("crs", "srs") if version == "1.3.0" else ("srs", "crs")
    text = (params.get(first) or params.get(second) or "").strip().upper()
    if not text:
        raise ServiceException(f"{first.upper()} is required", "MissingParameterValue")
    if text == "CRS:84" and version == "1.3.0":
        return "EPSG:4326", False
    crs = ALIASES.get(text, text)
    if crs not in CRSES:
        code = "InvalidCRS" if version == "1.3.0" else "InvalidSRS"
        raise ServiceException(f"{text[:40]} is not offered: use EPSG:4326 or EPSG:3857", code)
    return crs, version == "1.3.0" and crs == "EPSG:4326"


def bbox_of(params: Mapping[str, str], latitude_first: bool) -> tuple[float, float, float, float]:
    text = required(params, "BBOX")
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        raise ServiceException("BBOX must be four numbers: minx,miny,maxx,maxy", "InvalidParameterValue") from None
    if len(values) != 4 or not all(math.isfinite(v) for v in values):
        raise ServiceException("BBOX must be four numbers: minx,miny,maxx,maxy", "InvalidParameterValue")
    if latitude_first:
        values = [values[1], values[0], values[3], values[2]]
    minx, miny, maxx, maxy = values
    if minx >= maxx or miny >= maxy:
        raise ServiceException("BBOX must have minx < maxx and miny < maxy", "InvalidParameterValue")
    return minx, miny, maxx, maxy


def names(text: str) -> tuple[str, ...]:
    return tuple(n.strip() for n in text.split(",")) if text else ()


def colour(text: str) -> tuple[int, int, int]:
    value = text.strip().lower().removeprefix("0x").removeprefix("#")
    if len(value) != 6:
        raise ServiceException("BGCOLOR must be 0xRRGGBB", "InvalidParameterValue")
    try:
        rgb = int(value, 16)
    except ValueError:
        raise ServiceException("BGCOLOR must be 0xRRGGBB", "InvalidParameterValue") from None
    return (rgb >> 16) & 255, (rgb >> 8) & 255, rgb & 255


def parse_map(params: Mapping[str, str], version: str, layer_param: str = "LAYERS") -> MapRequest:
    layers = names(required(params, layer_param))
    if not all(layers):
        raise ServiceException(f"{layer_param} has an empty name", "LayerNotDefined")
    if len(layers) > MAX_LAYERS:
        raise ServiceException(f"{layer_param} names {len(layers)} layers: at most {MAX_LAYERS} (LayerLimit)",
                               "InvalidParameterValue")
    styles = names(params.get("styles", ""))
    if not styles:
        styles = ("",) * len(layers)
    if len(styles) != len(layers):
        raise ServiceException("STYLES must name one style per layer (or be empty)", "StyleNotDefined")
    crs, latitude_first = crs_of(params, version)
    bbox = bbox_of(params, latitude_first)
    width = integer(params, "WIDTH", 1, MAX_SIZE)
    height = integer(params, "HEIGHT", 1, MAX_SIZE)
    if width * height * len(layers) > MAX_PIXEL_LAYERS:
        raise ServiceException(f"WIDTH x HEIGHT x layers is {width * height * len(layers)}: at most "
                               f"{MAX_PIXEL_LAYERS} (ask for a smaller map or fewer layers)", "InvalidParameterValue")
    fmt = required(params, "FORMAT").lower().split(";")[0].strip()
    if fmt not in FORMATS:
        raise ServiceException(f"FORMAT {fmt[:40]!r} is not offered: use image/png", "InvalidFormat")
    transparent = (params.get("transparent") or "false").strip().lower()
    if transparent not in ("true", "false"):
        raise ServiceException("TRANSPARENT must be TRUE or FALSE", "InvalidParameterValue")
    background = colour(params.get("bgcolor") or "0xFFFFFF")
    return MapRequest(version, layers, styles, crs, bbox, width, height, fmt, transparent == "true", background)


@dataclass(frozen=True)
class InfoRequest:
    map: MapRequest
    query_layers: tuple[str, ...]
    i: int
    j: int
    info_format: str
    feature_count: int


def parse_feature_info(params: Mapping[str, str], version: str) -> InfoRequest:
    view = parse_map({"format": "image/png", **params}, version)
    query_layers = names(required(params, "QUERY_LAYERS"))
    for name in query_layers:
        if name not in view.layers:
            raise ServiceException(f"QUERY_LAYERS names {name[:100]!r}, which is not in LAYERS", "LayerNotDefined")
    info_format = (params.get("info_format") or "text/plain").strip().lower()
    if info_format not in INFO_FORMATS:
        raise ServiceException(f"INFO_FORMAT {info_format[:40]!r} is not offered: use one of "
                               + ", ".join(INFO_FORMATS), "InvalidFormat")
    column, row = ("I", "J") if version == "1.3.0" else ("X", "Y")
    try:
        i = int(required(params, column))
        j = int(required(params, row))
    except ValueError:
        raise ServiceException(f"{column} and {row} must be whole numbers", "InvalidPoint") from None
    if not (0 <= i < view.width and 0 <= j < view.height):
        raise ServiceException(f"{column},{row} must be a pixel of the WIDTH x HEIGHT map", "InvalidPoint")
    count = params.get("feature_count") or "1"
    if not count.isdigit() or int(count) < 1:
        raise ServiceException("FEATURE_COUNT must be a positive whole number", "InvalidParameterValue")
    return InfoRequest(view, query_layers, i, j, info_format, int(count))


@dataclass(frozen=True)
class LegendRequest:
    layer: str
    style: str
    width: int
    height: int


def parse_legend(params: Mapping[str, str]) -> LegendRequest:
    layer = required(params, "LAYER")
    fmt = (params.get("format") or "image/png").lower().split(";")[0].strip()
    if fmt not in FORMATS:
        raise ServiceException(f"FORMAT {fmt[:40]!r} is not offered: use image/png", "InvalidFormat")
    width = integer(params, "WIDTH", 1, MAX_LEGEND_SIZE) if params.get("width") else 20
    height = integer(params, "HEIGHT", 1, MAX_LEGEND_SIZE) if params.get("height") else 20
    return LegendRequest(layer, (params.get("style") or "").strip(), width, height)


# -- capabilities --------------------------------------------------------------------------------
@dataclass(frozen=True)
class LayerEntry:
    name: str
    title: str
    abstract: str
    wgs84: tuple[float, float, float, float]
    mercator: tuple[float, float, float, float] | None
    styles: tuple[tuple[str, str], ...]
    """``(name, title)``: the layer's own style first."""


def _box(tag: str, crs_attr: str, crs: str, box: Sequence[float]) -> str:
    minx, miny, maxx, maxy = box
    return (f'<{tag} {crs_attr}="{crs}" minx="{minx!r}" miny="{miny!r}" maxx="{maxx!r}" maxy="{maxy!r}"/>')


def capabilities(version: str, url: str, layers: Sequence[LayerEntry]) -> bytes:
    """The GetCapabilities document of ``version``; ``url`` is the service address (ends with ``?``)."""
    href = quoteattr(url)
    link = f'<OnlineResource xmlns:xlink="http://www.w3.org/1999/xlink" xlink:type="simple" xlink:href={href}/>'
    dcp = f"<DCPType><HTTP><Get>{link}</Get></HTTP></DCPType>"
    new = version == "1.3.0"
    crs_tag = "CRS" if new else "SRS"
    items = []
    for layer in layers:
        west, south, east, north = layer.wgs84
        parts = [f'<Layer queryable="1" opaque="0"><Name>{escape(layer.name)}</Name>'
                 f"<Title>{escape(layer.title)}</Title><Abstract>{escape(layer.abstract)}</Abstract>"]
        parts.extend(f"<{crs_tag}>{c}</{crs_tag}>" for c in CRSES)
        if new:
            parts.append(f"<EX_GeographicBoundingBox><westBoundLongitude>{west!r}</westBoundLongitude>"
                         f"<eastBoundLongitude>{east!r}</eastBoundLongitude><southBoundLatitude>{south!r}"
                         f"</southBoundLatitude><northBoundLatitude>{north!r}</northBoundLatitude>"
                         f"</EX_GeographicBoundingBox>")
            parts.append(_box("BoundingBox", "CRS", "CRS:84", layer.wgs84))
            parts.append(_box("BoundingBox", "CRS", "EPSG:4326", (south, west, north, east)))  # latitude first
        else:
            parts.append(f'<LatLonBoundingBox minx="{west!r}" miny="{south!r}" maxx="{east!r}" maxy="{north!r}"/>')
            parts.append(_box("BoundingBox", "SRS", "EPSG:4326", layer.wgs84))
        if layer.mercator:
            parts.append(_box("BoundingBox", crs_tag, "EPSG:3857", layer.mercator))
        for style_name, style_title in layer.styles:
            legend = (f"{url}service=WMS&request=GetLegendGraphic&version={version}&format=image/png"
                      f"&layer={layer.name}" + (f"&style={style_name}" if style_name != "default" else ""))
            parts.append(f"<Style><Name>{escape(style_name)}</Name><Title>{escape(style_title)}</Title>"
                         f'<LegendURL width="20" height="20"><Format>image/png</Format>'
                         f'<OnlineResource xmlns:xlink="http://www.w3.org/1999/xlink" xlink:type="simple" '
                         f"xlink:href={quoteattr(legend)}/></LegendURL></Style>")
        parts.append("</Layer>")
        items.append("".join(parts))
    root_crs = "".join(f"<{crs_tag}>{c}</{crs_tag}>" for c in CRSES) + (f"<{crs_tag}>CRS:84</{crs_tag}>" if new else "")
    root_box = (
        "<EX_GeographicBoundingBox><westBoundLongitude>-180</westBoundLongitude><eastBoundLongitude>180"
        "</eastBoundLongitude><southBoundLatitude>-90</southBoundLatitude><northBoundLatitude>90"
        "</northBoundLatitude></EX_GeographicBoundingBox>" if new
        else '<LatLonBoundingBox minx="-180" miny="-90" maxx="180" maxy="90"/>')
    info_formats = "".join(f"<Format>{f}</Format>" for f in INFO_FORMATS)
    capability_xml = "" if new else "application/vnd.ogc.wms_xml"
    caps_format = "text/xml" if new else capability_xml
    exception_formats = "<Format>XML</Format>" if new else f"<Format>{SE_XML_111}</Format>"
    request = (f"<Request><GetCapabilities><Format>{caps_format}</Format>{dcp}</GetCapabilities>"
               f"<GetMap><Format>image/png</Format>{dcp}</GetMap>"
               f"<GetFeatureInfo>{info_formats}{dcp}</GetFeatureInfo>")
    if not new:
        request += f"<GetLegendGraphic><Format>image/png</Format>{dcp}</GetLegendGraphic>"
    request += "</Request>"
    body = (f"<Service><Name>{'WMS' if new else 'OGC:WMS'}</Name><Title>WASDI published bands</Title>"
            f"<Abstract>Bands published in WASDI workspaces the caller may read.</Abstract>{link}"
            + (f"<LayerLimit>{MAX_LAYERS}</LayerLimit><MaxWidth>{MAX_SIZE}</MaxWidth><MaxHeight>{MAX_SIZE}"
               "</MaxHeight>" if new else "")
            + "</Service>"
            f"<Capability>{request}<Exception>{exception_formats}</Exception>"
            f"<Layer><Title>WASDI</Title>{root_crs}{root_box}{''.join(items)}</Layer></Capability>")
    if new:
        return (f'<?xml version="1.0" encoding="UTF-8"?>\n<WMS_Capabilities version="1.3.0" '
                f'xmlns="http://www.opengis.net/wms" xmlns:xlink="http://www.w3.org/1999/xlink">{body}'
                f"</WMS_Capabilities>").encode()
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<WMT_MS_Capabilities version="1.1.1">{body}'
            f"</WMT_MS_Capabilities>").encode()
