"""Map servers: where published bands become map layers.

``MapServer`` is the interface the PUBLISHBAND operation, product updates (a new style) and deletions
use.  ``LocalMapServer`` is the default: it renders the band to a PNG in WGS84 (``EPSG:4326``, so a map
client can drape it over the layer's WGS84 bounding box) under ``<data_dir>/layers/`` and this server
serves it at ``GET /layers/{layerId}.png`` (``api/layers.py``).  A GeoServer REST implementation can
be added beside it: publish a coverage store and layer, set the layer's default style, delete them.

Rendering rules (local):
- The band is warped to WGS84 and scaled so its longest side is at most ``max_size`` pixels (GDAL
  reads overviews or decimates, so memory stays bounded whatever the raster size).  A raster
  without a CRS is drawn as is, with no bounding box.
- Nodata, NaN and pixels outside the footprint are transparent.
- A style whose SLD has a simple ``ColorMap`` (``ColorMapEntry color quantity [opacity]``, types
  ``ramp`` (default), ``intervals`` or ``values``) colours the values with it; otherwise, or when the
  style is unknown or not simple, the band is stretched linearly from its minimum to its maximum in
  grey.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import uuid
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from wasdi_sdk.atomic_files import write_atomic

MAX_SLD_BYTES = 1024 * 1024
_HEX_COLOUR = re.compile(r"^#?([0-9a-fA-F]{6})$")


class MapServerError(Exception):
    """A band could not be published (the message is shown to the user)."""


@dataclass(frozen=True)
class ColourMap:
    """A simple SLD colour map: sorted quantities with their RGBA colours."""

    kind: str
    """``ramp``, ``intervals`` or ``values``."""
    quantities: tuple[float, ...]
    colours: tuple[tuple[int, int, int, int], ...]


@dataclass(frozen=True)
class PublishedLayer:
    """Where a published band can be seen (the PublishBandResultViewModel fields)."""

    layer_id: str
    url: str
    """``geoserverUrl``: what a map client loads."""
    bounding_box: str
    """WGS84 bounds as JSON text ``{"minx","miny","maxx","maxy","crs":"EPSG:4326"}`` ("" when unknown)."""
    geoserver_bounding_box: str
    """The same in the raster's own CRS ("" when it has none)."""


StyleSource = Callable[[str], str | None]
"""Gives the SLD text of a style by name (``None`` when there is no such style)."""


class MapServer(Protocol):
    """What the rest of the server needs from a map server."""

    def publish(self, source: str, band_index: int, layer_id: str, style: str | None, url: str) -> PublishedLayer:
        """Publish band ``band_index`` (1-based) of the GDAL-readable ``source`` as layer ``layer_id``."""

    def restyle(self, source: str, band_index: int, layer_id: str, style: str | None) -> None:
        """Give a published layer a new style."""

    def remove(self, layer_id: str) -> None:
        """Delete a layer (nothing happens if it does not exist)."""

    def layer_file(self, layer_id: str) -> Path | None:
        """The file a layer is served from by this server, if it serves it itself."""

    def publish_style(self, name: str, sld_path: Path) -> None:
        """Add or replace a style (the styles service calls this when an SLD changes)."""

    def remove_style(self, name: str) -> None:
        """Forget a style."""


def new_layer_id() -> str:
    return "wasdi_" + uuid.uuid4().hex


def bbox_json(bounds: tuple[float, float, float, float] | None, crs: str | None) -> str:
    if bounds is None:
        return ""
    minx, miny, maxx, maxy = bounds
    return json.dumps({"minx": minx, "miny": miny, "maxx": maxx, "maxy": maxy, "crs": crs or ""})


# -- styles --------------------------------------------------------------------------------------
def parse_colour_map(sld: str | None) -> ColourMap | None:
    """The colour map of a simple SLD, or ``None`` (not simple, unreadable, or unsafe XML)."""
    if not sld or len(sld) > MAX_SLD_BYTES or "<!DOCTYPE" in sld.upper() or "<!ENTITY" in sld.upper():
        return None
    try:
        try:
            from defusedxml.ElementTree import fromstring
        except ImportError:  # DOCTYPE and ENTITY were refused above
            from xml.etree.ElementTree import fromstring
        root = fromstring(sld)
    except Exception:
        return None
    maps = [el for el in root.iter() if str(el.tag).rsplit("}", 1)[-1] == "ColorMap"]
    if len(maps) != 1:
        return None
    colour_map = maps[0]
    kind = (colour_map.get("type") or "ramp").strip().lower()
    if kind not in ("ramp", "intervals", "values"):
        return None
    entries = []
    for entry in colour_map:
        if str(entry.tag).rsplit("}", 1)[-1] != "ColorMapEntry":
            continue
        match = _HEX_COLOUR.match((entry.get("color") or "").strip())
        try:
            quantity = float(entry.get("quantity", "nan"))
            opacity = float(entry.get("opacity", "1"))
        except ValueError:
            return None
        if match is None or not math.isfinite(quantity) or not 0 <= opacity <= 1:
            return None
        rgb = int(match.group(1), 16)
        entries.append((quantity, ((rgb >> 16) & 255, (rgb >> 8) & 255, rgb & 255, round(opacity * 255))))
    if not entries:
        return None
    entries.sort(key=lambda e: e[0])
    return ColourMap(kind, tuple(q for q, _ in entries), tuple(c for _, c in entries))


def colourise(values: Any, valid: Any, colour_map: ColourMap | None) -> Any:
    """RGBA ``uint8`` pixels of a 2-D float array (``valid`` marks the pixels to draw)."""
    import numpy as np

    height, width = values.shape
    rgba = np.zeros((height, width, 4), dtype=np.uint8)
    if not valid.any():
        return rgba
    if colour_map is None:
        lo = float(values[valid].min())
        hi = float(values[valid].max())
        scaled = np.zeros(values.shape, dtype=np.float64)
        if hi > lo:
            scaled[valid] = (values[valid] - lo) / (hi - lo) * 255.0
        grey = np.clip(np.round(scaled), 0, 255).astype(np.uint8)
        rgba[..., 0] = rgba[..., 1] = rgba[..., 2] = grey
        rgba[..., 3] = np.where(valid, 255, 0).astype(np.uint8)
        return rgba
    quantities = np.array(colour_map.quantities, dtype=np.float64)
    colours = np.array(colour_map.colours, dtype=np.float64)
    v = np.where(valid, values, quantities[0]).astype(np.float64)
    if colour_map.kind == "ramp":
        out = np.stack([np.interp(v, quantities, colours[:, channel]) for channel in range(4)], axis=-1)
        # below the first / above the last entry: the end colours (SLD ramps clamp)
    elif colour_map.kind == "intervals":
        # an entry colours the values below its quantity (and not below the previous one)
        index = np.searchsorted(quantities, v, side="right")
        inside = index < len(quantities)
        out = colours[np.clip(index, 0, len(quantities) - 1)]
        out[~inside] = 0
    else:  # values: exact matches only
        index = np.clip(np.searchsorted(quantities, v), 0, len(quantities) - 1)
        exact = np.isclose(quantities[index], v)
        out = colours[index]
        out[~exact] = 0
    rgba[:] = np.clip(np.round(out), 0, 255).astype(np.uint8)
    rgba[~valid] = 0
    return rgba


def encode_png(rgba: Any) -> bytes:
    """A PNG (8-bit RGBA, no filtering) of an ``(h, w, 4)`` ``uint8`` array."""
    import numpy as np

    height, width, _ = rgba.shape
    rows = np.zeros((height, 1 + width * 4), dtype=np.uint8)  # filter byte 0 before every row
    rows[:, 1:] = rgba.reshape(height, width * 4)

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return len(data).to_bytes(4, "big") + body + zlib.crc32(body).to_bytes(4, "big")

    header = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes([8, 6, 0, 0, 0])
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows.tobytes(), 6))
            + chunk(b"IEND", b""))


# -- rendering -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Rendering:
    png: bytes
    wgs84_bounds: tuple[float, float, float, float] | None
    native_bounds: tuple[float, float, float, float] | None
    crs: str | None


def render_band(source: str, band_index: int, colour_map: ColourMap | None, max_size: int = 2048) -> Rendering:
    """Draw one band of ``source`` (warped to WGS84 when it has a CRS) as a PNG."""
    try:
        import numpy as np
        import rasterio
        from rasterio.enums import Resampling
        from rasterio.transform import Affine
        from rasterio.vrt import WarpedVRT
        from rasterio.warp import calculate_default_transform
    except ImportError as e:
        raise MapServerError("this server cannot draw maps: the 'geo' extra (rasterio) is not installed") from e
    with rasterio.Env(CPL_LOG="/dev/null"), rasterio.open(source) as src:
        if not 1 <= band_index <= src.count:
            raise MapServerError(f"the product has no band {band_index}")
        native = tuple(src.bounds) if src.crs else None
        crs = src.crs.to_string() if src.crs else None
        if src.crs:
            transform, width, height = calculate_default_transform(src.crs, "EPSG:4326", src.width, src.height,
                                                                   *src.bounds)
            factor = max(width, height) / max_size
            if factor > 1:
                width, height = max(1, math.ceil(width / factor)), max(1, math.ceil(height / factor))
                transform = transform @ Affine.scale(factor, factor)
            with WarpedVRT(src, crs="EPSG:4326", transform=transform, width=width, height=height,
                           resampling=Resampling.nearest, add_alpha=True) as vrt:
                data = vrt.read(band_index, masked=True)
                alpha = vrt.read(vrt.count) > 0
                left, top = transform.c, transform.f
                right, bottom = left + transform.a * width, top + transform.e * height
                wgs84 = (left, bottom, right, top)
        else:
            factor = max(src.width, src.height) / max_size
            shape = (max(1, math.ceil(src.height / max(factor, 1))), max(1, math.ceil(src.width / max(factor, 1))))
            data = src.read(band_index, masked=True, out_shape=shape, resampling=Resampling.nearest)
            alpha = np.ones(shape, dtype=bool)
            wgs84 = None
    values = np.ma.getdata(data).astype(np.float64)
    valid = alpha & ~np.ma.getmaskarray(data) & np.isfinite(values)
    return Rendering(encode_png(colourise(values, valid, colour_map)), wgs84, native, crs)


class LocalMapServer:
    """Layers are PNG files under ``root`` that this server serves itself."""

    def __init__(self, root: Path, styles: StyleSource | None = None, max_size: int = 2048) -> None:
        self.root = root
        self.styles = styles
        self.max_size = max_size

    def layer_file(self, layer_id: str) -> Path | None:
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,100}", layer_id or ""):
            return None
        return self.root / f"{layer_id}.png"

    def _colour_map(self, style: str | None) -> ColourMap | None:
        if not style or self.styles is None:
            return None
        try:
            return parse_colour_map(self.styles(style))
        except Exception:
            return None

    def _write(self, layer_id: str, rendering: Rendering) -> None:
        path = self.layer_file(layer_id)
        if path is None:
            raise MapServerError("invalid layer id")
        self.root.mkdir(parents=True, exist_ok=True)
        write_atomic(path, rendering.png)

    def publish(self, source: str, band_index: int, layer_id: str, style: str | None, url: str) -> PublishedLayer:
        try:
            rendering = render_band(source, band_index, self._colour_map(style), self.max_size)
        except MapServerError:
            raise
        except Exception as e:
            raise MapServerError("Looks we cannot show\nthis file on map") from e
        self._write(layer_id, rendering)
        return PublishedLayer(layer_id, url, bbox_json(rendering.wgs84_bounds, "EPSG:4326"),
                              bbox_json(rendering.native_bounds, rendering.crs))

    def restyle(self, source: str, band_index: int, layer_id: str, style: str | None) -> None:
        self._write(layer_id, render_band(source, band_index, self._colour_map(style), self.max_size))

    def remove(self, layer_id: str) -> None:
        path = self.layer_file(layer_id)
        if path is not None:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    def publish_style(self, name: str, sld_path: Path) -> None:
        """Nothing to do: the SLD is read when a layer is drawn."""

    def remove_style(self, name: str) -> None:
        """Nothing to do: a layer drawn with a removed style keeps its colours until it is drawn again."""


def sld_files(styles_root: Path) -> StyleSource:
    """Styles as the styles service keeps them: ``<styles_root>/<name>.sld`` (at most ``MAX_SLD_BYTES``)."""

    def read(name: str) -> str | None:
        if not re.fullmatch(r"[\w][\w .-]{0,99}", name or "") or ".." in name:
            return None
        path = styles_root / f"{name}.sld"
        try:
            if not path.is_file() or path.stat().st_size > MAX_SLD_BYTES:
                return None
            return path.read_text("utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    return read


def make_map_server(kind: str, data_dir: Path, styles_root: Path | None = None, max_size: int = 2048) -> MapServer:
    """The map server the settings name (``local`` is the only one so far)."""
    if kind in ("", "local"):
        return LocalMapServer(data_dir / "layers", sld_files(styles_root) if styles_root else None, max_size)
    raise ValueError(f"unknown map server {kind!r} (known: local)")
