"""The one SLD reader: what the map server draws and what a style's preview shows both come from
``parse_style`` reading the same file, so they cannot disagree.

Drawn, in a single ``RasterSymbolizer`` (SLD 1.0, or SLD 1.1 with Symbology Encoding 1.1):
- ``ColorMap`` of SLD 1.0 ``ColorMapEntry`` elements (``color``, ``quantity``, optional ``opacity`` in 0..1),
  ``type`` ``ramp`` (default), ``intervals`` or ``values``;
- ``ColorMap`` holding an SE 1.1 ``Categorize`` (``Value``, then ``Threshold``/``Value`` pairs, thresholds
  rising; ``threshholdsBelongTo`` ``succeeding``, the default, or ``preceding``) or ``Interpolate``
  (``InterpolationPoint`` ``Data``/``Value`` pairs, data rising; ``mode`` linear, ``method`` color);
- ``Opacity``: multiplies every pixel's alpha;
- ``ChannelSelection``: ``RedChannel``/``GreenChannel``/``BlueChannel`` (an RGB composite of three bands of
  the product) or ``GrayChannel`` (one band in grey), each ``SourceChannelName`` a 1-based band number;
  each channel is stretched between its own 2nd and 98th percentiles;
- ``ContrastEnhancement``, ``Geometry``, ``OverlapBehavior``: accepted; the stretch is always the
  percentile one, so they change nothing.

Colours are written as the SLD 1.0 and SE 1.1 standards define them: ``#`` and six hexadecimal digits
(either case), as text or as an ``ogc:Literal``.  Any other spelling (``#f00``, ``0xff0000``, a colour
name) is not an SLD colour: the style is "not supported", exactly like ``ShadedRelief``, ``ImageOutline``,
several symbolizers or colour maps, vector styles and unreadable or unsafe XML.  Such a style is drawn
with the default grey stretch (the reason is logged, never an error) and previewed in the same grey.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from defusedxml.ElementTree import fromstring

MAX_SLD_BYTES = 1024 * 1024
_SLD_COLOUR = re.compile(r"#([0-9a-fA-F]{6})")
_IGNORED = frozenset({"ContrastEnhancement", "Geometry", "OverlapBehavior", "Normalize", "Histogram",
                      "GammaValue", "Logarithmic", "Exponential"})
"""RasterSymbolizer children that do not change how this server draws (the stretch is percentile based)."""

RGBA = tuple[int, int, int, int]


@dataclass(frozen=True)
class ColourMap:
    """A colour map: rising quantities with their RGBA colours.

    ``ramp``: interpolated between entries, clamped outside; ``intervals``: an entry colours the values
    below its quantity and not below the previous entry's; ``values``: exact matches only.
    """

    kind: str
    quantities: tuple[float, ...]
    colours: tuple[RGBA, ...]


@dataclass(frozen=True)
class RasterStyle:
    """How to draw a layer: a colour map, channels, opacity; ``problem`` says why a style fell back."""

    colour_map: ColourMap | None = None
    channels: tuple[int, ...] = ()
    """Three band numbers (RGB), one (grey), or empty (the layer's own band)."""
    opacity: float = 1.0
    problem: str = ""


DEFAULT = RasterStyle()


def parse_colour(text: str | None, opacity: float = 1.0) -> RGBA:
    """An SLD colour (``#rrggbb``) with an opacity in 0..1 as RGBA; ``ValueError`` for any other form."""
    match = _SLD_COLOUR.fullmatch((text or "").strip())
    if match is None:
        raise ValueError(f"{(text or '').strip()[:40]!r} is not an SLD colour (#RRGGBB)")
    if not 0 <= opacity <= 1:
        raise ValueError("an opacity must be within 0..1")
    rgb = int(match.group(1), 16)
    return (rgb >> 16) & 255, (rgb >> 8) & 255, rgb & 255, round(opacity * 255)


def _local(tag: object) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _children(element: Any, name: str) -> list[Any]:
    return [child for child in element if _local(child.tag) == name]


def _text(element: Any) -> str:
    """An element's value: its text or an ``ogc:Literal`` inside it (SE's ParameterValueType)."""
    return "".join(element.itertext()).strip()


def _number(text: str | None, what: str) -> float:
    value = float((text or "").strip() or "nan")
    if not math.isfinite(value):
        raise ValueError(f"{what} must be a finite number")
    return value


def _parse_xml(sld: str | bytes) -> Any:
    """The root element; refused: more than ``MAX_SLD_BYTES``, a DOCTYPE, entities, external references."""
    if len(sld) > MAX_SLD_BYTES:
        raise ValueError("refused XML (larger than 1 MiB)")
    return fromstring(sld, forbid_dtd=True)


def _rising(values: list[float], what: str) -> None:
    if any(b <= a for a, b in pairwise(values)):
        raise ValueError(f"{what} must rise")


def _colour_map_entries(element: Any) -> ColourMap:
    kind = (element.get("type") or "ramp").strip().lower()
    if kind not in ("ramp", "intervals", "values"):
        raise ValueError(f"ColorMap type {kind!r}")
    entries = []
    for entry in _children(element, "ColorMapEntry"):
        quantity = _number(entry.get("quantity"), "a ColorMapEntry quantity")
        entries.append((quantity, parse_colour(entry.get("color"), _number(entry.get("opacity", "1"), "opacity"))))
    if not entries:
        raise ValueError("an empty ColorMap")
    entries.sort(key=lambda e: e[0])
    return ColourMap(kind, tuple(q for q, _ in entries), tuple(c for _, c in entries))


def _categorize(element: Any) -> ColourMap:
    """SE 1.1 ``Categorize`` as intervals: the i-th value colours the values below the i-th threshold."""
    values = [parse_colour(_text(v)) for v in _children(element, "Value")]
    thresholds = [_number(_text(t), "a Threshold") for t in _children(element, "Threshold")]
    if not values or len(values) != len(thresholds) + 1:
        raise ValueError("a Categorize needs one more Value than Thresholds")
    _rising(thresholds, "Categorize thresholds")
    # SE 1.1's schema spells the attribute with two h; accept the one-h spelling too
    belongs = (element.get("threshholdsBelongTo") or element.get("thresholdsBelongTo") or "succeeding").strip()
    if belongs not in ("succeeding", "preceding"):
        raise ValueError(f"threshholdsBelongTo {belongs!r}")
    if belongs == "preceding":  # a value equal to a threshold takes the class below it
        thresholds = [math.nextafter(t, math.inf) for t in thresholds]
    return ColourMap("intervals", (*thresholds, math.inf), tuple(values))


def _interpolate(element: Any) -> ColourMap:
    """SE 1.1 ``Interpolate`` (linear, of colours) as a ramp."""
    mode = (element.get("mode") or "linear").strip().lower()
    method = (element.get("method") or "color").strip().lower()
    if mode != "linear" or method != "color":
        raise ValueError(f"Interpolate mode {mode!r} method {method!r} (linear colours are drawn)")
    points = []
    for point in _children(element, "InterpolationPoint"):
        (data,), (value,) = _children(point, "Data"), _children(point, "Value")
        points.append((_number(_text(data), "an InterpolationPoint's Data"), parse_colour(_text(value))))
    if not points:
        raise ValueError("an Interpolate without InterpolationPoint")
    _rising([d for d, _ in points], "Interpolate data")
    return ColourMap("ramp", tuple(d for d, _ in points), tuple(c for _, c in points))


def _colour_map(element: Any) -> ColourMap:
    functions = [child for child in element if _local(child.tag) in ("Categorize", "Interpolate")]
    if not functions:
        return _colour_map_entries(element)
    if len(functions) != 1 or _children(element, "ColorMapEntry"):
        raise ValueError("a ColorMap holds ColorMapEntry elements or one Categorize or Interpolate")
    return _categorize(functions[0]) if _local(functions[0].tag) == "Categorize" else _interpolate(functions[0])


def _channels(element: Any) -> tuple[int, ...]:
    found: dict[str, int] = {}
    for channel in element:
        name = _local(channel.tag)
        if name not in ("RedChannel", "GreenChannel", "BlueChannel", "GrayChannel"):
            raise ValueError(f"ChannelSelection child {name}")
        sources = _children(channel, "SourceChannelName")
        if len(sources) != 1 or not _text(sources[0]).isdigit():
            raise ValueError(f"{name} needs a SourceChannelName that is a band number")
        found[name] = int(_text(sources[0]))
    if set(found) == {"RedChannel", "GreenChannel", "BlueChannel"}:
        return found["RedChannel"], found["GreenChannel"], found["BlueChannel"]
    if set(found) == {"GrayChannel"}:
        return (found["GrayChannel"],)
    raise ValueError("ChannelSelection needs Red, Green and Blue channels, or one Gray channel")


def _raster_style(root: Any) -> RasterStyle:
    symbolizers = [el for el in root.iter() if _local(el.tag) == "RasterSymbolizer"]
    if len(symbolizers) != 1:
        raise ValueError(f"{len(symbolizers)} RasterSymbolizer elements (one is drawn)")
    colour_map: ColourMap | None = None
    channels: tuple[int, ...] = ()
    opacity = 1.0
    for child in symbolizers[0]:
        name = _local(child.tag)
        if name == "ColorMap":
            if colour_map is not None:
                raise ValueError("several ColorMap elements")
            colour_map = _colour_map(child)
        elif name == "ChannelSelection":
            channels = _channels(child)
        elif name == "Opacity":
            opacity = _number(_text(child), "Opacity")
            if not 0 <= opacity <= 1:
                raise ValueError("Opacity must be within 0..1")
        elif name not in _IGNORED:
            raise ValueError(f"{name} is not drawn by this server")
    if colour_map is not None and len(channels) == 3:
        raise ValueError("a ColorMap with an RGB ChannelSelection")
    return RasterStyle(colour_map, channels, opacity)


def parse_style(sld: str | bytes | None) -> RasterStyle:
    """The raster style of an SLD; ``DEFAULT`` with a ``problem`` when it is outside the subset (never raises)."""
    if not sld:
        return DEFAULT
    try:
        return _raster_style(_parse_xml(sld))
    except Exception as e:  # unreadable XML or a style outside the subset: the default stretch
        return RasterStyle(problem=str(e)[:200] or type(e).__name__)
