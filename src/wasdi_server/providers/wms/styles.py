"""The raster subset of SLD that the local map server draws.

A ``RasterSymbolizer`` with any of:
- ``ColorMap`` (``ColorMapEntry color quantity [opacity]``, ``type`` ``ramp`` (default), ``intervals``
  or ``values``): the band's values coloured through it;
- ``Opacity``: multiplies every pixel's alpha;
- ``ChannelSelection``: ``RedChannel``/``GreenChannel``/``BlueChannel`` (an RGB composite of three bands of
  the product) or ``GrayChannel`` (one band in grey), each ``SourceChannelName`` a 1-based band number;
  each channel is stretched between its own 2nd and 98th percentiles;
- ``ContrastEnhancement``, ``Geometry``, ``OverlapBehavior``: accepted; the stretch is always the
  percentile one, so they change nothing.

Anything else (``ShadedRelief``, ``ImageOutline``, several symbolizers or colour maps, vector styles,
unreadable or unsafe XML) is "not supported": the layer is drawn with the default grey stretch and the
reason is logged, never an error.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

MAX_SLD_BYTES = 1024 * 1024
_HEX_COLOUR = re.compile(r"^#?([0-9a-fA-F]{6})$")
_IGNORED = frozenset({"ContrastEnhancement", "Geometry", "OverlapBehavior", "Normalize", "Histogram",
                      "GammaValue", "Logarithmic", "Exponential"})
"""RasterSymbolizer children that do not change how this server draws (the stretch is percentile based)."""


@dataclass(frozen=True)
class ColourMap:
    """A simple SLD colour map: sorted quantities with their RGBA colours."""

    kind: str
    """``ramp``, ``intervals`` or ``values``."""
    quantities: tuple[float, ...]
    colours: tuple[tuple[int, int, int, int], ...]


@dataclass(frozen=True)
class RasterStyle:
    """How to draw a layer: a colour map, channels, opacity; ``problem`` says why a style fell back."""

    colour_map: ColourMap | None = None
    channels: tuple[int, ...] = ()
    """Three band numbers (RGB), one (grey), or empty (the layer's own band)."""
    opacity: float = 1.0
    problem: str = ""


DEFAULT = RasterStyle()


def _local(tag: object) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _parse_xml(sld: str) -> object:
    if len(sld) > MAX_SLD_BYTES or "<!DOCTYPE" in sld.upper() or "<!ENTITY" in sld.upper():
        raise ValueError("refused XML (too large, DOCTYPE or ENTITY)")
    try:
        from defusedxml.ElementTree import fromstring
    except ImportError:  # DOCTYPE and ENTITY were refused above
        from xml.etree.ElementTree import fromstring
    return fromstring(sld)


def _colour_map(element: object) -> ColourMap:
    kind = (element.get("type") or "ramp").strip().lower()  # type: ignore[attr-defined]
    if kind not in ("ramp", "intervals", "values"):
        raise ValueError(f"ColorMap type {kind!r}")
    entries = []
    for entry in element:  # type: ignore[attr-defined]
        if _local(entry.tag) != "ColorMapEntry":
            continue
        match = _HEX_COLOUR.match((entry.get("color") or "").strip())
        quantity = float(entry.get("quantity", "nan"))
        opacity = float(entry.get("opacity", "1"))
        if match is None or not math.isfinite(quantity) or not 0 <= opacity <= 1:
            raise ValueError("a ColorMapEntry needs a #rrggbb color, a quantity and an opacity in 0..1")
        rgb = int(match.group(1), 16)
        entries.append((quantity, ((rgb >> 16) & 255, (rgb >> 8) & 255, rgb & 255, round(opacity * 255))))
    if not entries:
        raise ValueError("an empty ColorMap")
    entries.sort(key=lambda e: e[0])
    return ColourMap(kind, tuple(q for q, _ in entries), tuple(c for _, c in entries))


def _channels(element: object) -> tuple[int, ...]:
    found: dict[str, int] = {}
    for channel in element:  # type: ignore[attr-defined]
        name = _local(channel.tag)
        if name not in ("RedChannel", "GreenChannel", "BlueChannel", "GrayChannel"):
            raise ValueError(f"ChannelSelection child {name}")
        sources = [c for c in channel if _local(c.tag) == "SourceChannelName"]
        if len(sources) != 1 or not (sources[0].text or "").strip().isdigit():
            raise ValueError(f"{name} needs a SourceChannelName that is a band number")
        found[name] = int((sources[0].text or "").strip())
    if set(found) == {"RedChannel", "GreenChannel", "BlueChannel"}:
        return found["RedChannel"], found["GreenChannel"], found["BlueChannel"]
    if set(found) == {"GrayChannel"}:
        return (found["GrayChannel"],)
    raise ValueError("ChannelSelection needs Red, Green and Blue channels, or one Gray channel")


def parse_style(sld: str | None) -> RasterStyle:
    """The raster style of an SLD; ``DEFAULT`` with a ``problem`` when it is outside the subset."""
    if not sld:
        return DEFAULT
    try:
        root = _parse_xml(sld)
        symbolizers = [el for el in root.iter() if _local(el.tag) == "RasterSymbolizer"]  # type: ignore[attr-defined]
        if len(symbolizers) != 1:
            raise ValueError(f"{len(symbolizers)} RasterSymbolizer elements (one is drawn)")
        colour_map, channels, opacity = None, (), 1.0
        for child in symbolizers[0]:
            name = _local(child.tag)
            if name == "ColorMap":
                if colour_map is not None:
                    raise ValueError("several ColorMap elements")
                colour_map = _colour_map(child)
            elif name == "ChannelSelection":
                channels = _channels(child)
            elif name == "Opacity":
                opacity = float((child.text or "").strip())
                if not 0 <= opacity <= 1:
                    raise ValueError("Opacity must be within 0..1")
            elif name not in _IGNORED:
                raise ValueError(f"{name} is not drawn by this server")
        if colour_map is not None and len(channels) == 3:
            raise ValueError("a ColorMap with an RGB ChannelSelection")
        return RasterStyle(colour_map, channels, opacity)
    except Exception as e:  # any unreadable style is drawn with the default stretch
        return RasterStyle(problem=str(e)[:200] or type(e).__name__)
