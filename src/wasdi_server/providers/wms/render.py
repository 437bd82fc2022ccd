"""Drawing published layers: the files made at publish time, and the pixels of any map request.

At publish (``prepare``) a layer's folder gets:
- ``layer.vrt``: a VRT over every band of the product (GDAL reads the product where it is, the
  workspace's file is never touched);
- ``layer.vrt.ovr``: external overviews (nearest, so class values stay exact), halving until the
  longest side is at most 256 pixels, so a request over a whole large scene reads a small overview;
- ``layer.json``: what requests need without opening the raster: CRS, bounds (native, EPSG:4326,
  EPSG:3857), overview factors, nodata, the 2nd and 98th percentiles of every band.

A request (``draw``) picks the coarsest overview still as fine as the requested resolution, warps that
level to the requested grid with rasterio's ``WarpedVRT`` (nearest), and colours the values with the
layer's style (``styles.RasterStyle``).  Pixels outside the raster, nodata and NaN are transparent.

Measured against rio-tiler (``bench/maps.py --compare``): the same WarpedVRT reads underneath, no faster
on these requests, and it brings pyproj, morecantile and pystac; see the commit that chose this.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from wasdi_sdk.atomic_files import write_atomic

from ...png import encode_pixels
from .styles import ColourMap, RasterStyle

VRT_NAME = "layer.vrt"
META_NAME = "layer.json"
OVERVIEW_TARGET = 256
"""Overviews halve the raster until its longest side is at most this many pixels."""
STATS_PIXELS = 1024
"""Band statistics are computed on the finest overview whose longest side is at most this (or the raster)."""
MERCATOR_LIMIT = 85.0511287798066
_GDAL_TYPES = {"uint8": "Byte", "int8": "Int8", "uint16": "UInt16", "int16": "Int16", "uint32": "UInt32",
               "int32": "Int32", "uint64": "UInt64", "int64": "Int64", "float32": "Float32", "float64": "Float64",
               "complex64": "CFloat32", "complex128": "CFloat64"}
Bounds = tuple[float, float, float, float]
Opener = Callable[["Layer", "int | None"], AbstractContextManager[Any]]
"""Opens a layer's VRT at an overview level (``None``: full resolution); a reader that keeps datasets open
between tiles passes its own."""


class RenderError(Exception):
    """A layer cannot be prepared or drawn (the message is shown to the user)."""


@dataclass(frozen=True)
class Layer:
    """A prepared layer: its folder and what ``layer.json`` records."""

    folder: Path
    band_index: int
    band_count: int
    width: int
    height: int
    crs: str
    """WKT of the raster's CRS ("" when it has none: not servable as a map)."""
    bounds: Bounds | None
    wgs84: Bounds | None
    mercator: Bounds | None
    resolution: float
    overviews: tuple[int, ...]
    stats: dict[int, tuple[float, float]]
    style: str | None
    version: str
    source_folder: str = ""
    """The folder of the product the layer draws (its workspace's): what a reader of the layer must see."""

    @property
    def vrt(self) -> Path:
        return self.folder / VRT_NAME

    @property
    def georeferenced(self) -> bool:
        return bool(self.crs) and self.wgs84 is not None

    def to_json(self) -> dict[str, Any]:
        return {"bandIndex": self.band_index, "bandCount": self.band_count, "width": self.width,
                "height": self.height, "crs": self.crs,
                "bounds": self.bounds, "wgs84": self.wgs84, "mercator": self.mercator,
                "resolution": self.resolution, "overviews": list(self.overviews),
                "stats": {str(k): list(v) for k, v in self.stats.items()}, "style": self.style,
                "version": self.version, "sourceFolder": self.source_folder}

    @classmethod
    def load(cls, folder: Path) -> Layer:
        data = json.loads((folder / META_NAME).read_text("utf-8"))

        def box(value: Any) -> Bounds | None:
            return (float(value[0]), float(value[1]), float(value[2]), float(value[3])) if value else None

        return cls(folder, int(data["bandIndex"]), int(data["bandCount"]), int(data["width"]), int(data["height"]),
                   str(data["crs"]), box(data["bounds"]),
                   box(data["wgs84"]), box(data["mercator"]), float(data["resolution"]),
                   tuple(int(f) for f in data["overviews"]),
                   {int(k): (float(v[0]), float(v[1])) for k, v in data["stats"].items()},
                   data.get("style"), str(data["version"]), str(data.get("sourceFolder") or ""))

    def with_style(self, style: str | None) -> Layer:
        return dataclasses.replace(self, style=style, version=uuid.uuid4().hex)

    def save(self) -> None:
        write_atomic(self.folder / META_NAME, json.dumps(self.to_json()).encode())


# -- publish -------------------------------------------------------------------------------------
def _vrt_document(src: Any, source: str) -> str:
    parts = [f'<VRTDataset rasterXSize="{src.width}" rasterYSize="{src.height}">']
    if src.crs:
        parts.append(f"<SRS>{escape(src.crs.to_wkt())}</SRS>")
        t = src.transform
        parts.append(f"<GeoTransform>{t.c!r},{t.a!r},{t.b!r},{t.f!r},{t.d!r},{t.e!r}</GeoTransform>")
    for index in range(1, src.count + 1):
        gdal_type = _GDAL_TYPES.get(src.dtypes[index - 1])
        if gdal_type is None:
            raise RenderError(f"bands of type {src.dtypes[index - 1]} cannot be drawn")
        parts.append(f'<VRTRasterBand dataType="{gdal_type}" band="{index}">')
        nodata = src.nodatavals[index - 1]
        if nodata is not None:
            parts.append(f"<NoDataValue>{'nan' if math.isnan(nodata) else repr(float(nodata))}</NoDataValue>")
        block_y, block_x = src.block_shapes[index - 1]
        parts.append(f'<SimpleSource><SourceFilename relativeToVRT="0">{escape(source)}</SourceFilename>'
                     f"<SourceBand>{index}</SourceBand>"
                     f'<SourceProperties RasterXSize="{src.width}" RasterYSize="{src.height}" '
                     f'DataType="{gdal_type}" BlockXSize="{block_x}" BlockYSize="{block_y}"/>'
                     f"</SimpleSource></VRTRasterBand>")
    parts.append("</VRTDataset>")
    return "".join(parts)


def vrt_source(layer: Layer) -> str | None:
    """The product file a layer's VRT reads (an archive's path for a ``/vsizip/`` member); ``None`` if unknown."""
    from xml.etree import ElementTree

    try:
        element = ElementTree.parse(layer.vrt).find(".//SourceFilename")
    except (OSError, ElementTree.ParseError):
        return None
    name = (element.text or "").strip() if element is not None else ""
    if name.startswith(("/vsizip/", "/vsitar/")):
        name = name[name.index("/", 1):]
        while name and not os.path.isfile(name):
            name = name.rsplit("/", 1)[0]
    return name if name.startswith("/") else None


def overview_factors(width: int, height: int) -> list[int]:
    factors, factor = [], 2
    while max(width, height) / (factor // 2) > OVERVIEW_TARGET:
        factors.append(factor)
        factor *= 2
    return factors


def _percentiles(values: Any) -> tuple[float, float]:
    import numpy as np

    data = np.ma.getdata(values).astype(np.float64)
    valid = data[~np.ma.getmaskarray(values) & np.isfinite(data)]
    if valid.size == 0:
        return 0.0, 0.0
    low, high = np.percentile(valid, [2, 98])
    return float(low), float(high)


def _bounds_in(src_crs: Any, dst: str, bounds: Bounds) -> Bounds | None:
    from rasterio.warp import transform_bounds

    try:
        if dst == "EPSG:3857":
            west, south, east, north = transform_bounds(src_crs, "EPSG:4326", *bounds, densify_pts=21)
            south, north = max(south, -MERCATOR_LIMIT), min(north, MERCATOR_LIMIT)
            if south >= north:
                return None
            west, south, east, north = transform_bounds("EPSG:4326", "EPSG:3857", west, south, east, north)
            return west, south, east, north
        west, south, east, north = transform_bounds(src_crs, dst, *bounds, densify_pts=21)
        return west, south, east, north
    except Exception:
        return None


def prepare(source: str, band_index: int, folder: Path, style: str | None, source_folder: str = "") -> Layer:
    """Make ``folder``'s VRT, overviews and statistics for band ``band_index`` (1-based) of ``source``, a
    product of ``source_folder``."""
    try:
        import rasterio
        from rasterio.enums import Resampling
    except ImportError as e:
        raise RenderError("this server cannot draw maps: the 'geo' extra (rasterio) is not installed") from e
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    vrt = folder / VRT_NAME
    # a small block cache: building overviews streams the raster, memory stays flat whatever its size
    with rasterio.Env(CPL_LOG="/dev/null", GDAL_CACHEMAX=64, COMPRESS_OVERVIEW="DEFLATE", ZLEVEL_OVERVIEW=1):
        with rasterio.open(source) as src:
            if not 1 <= band_index <= src.count:
                raise RenderError(f"the product has no band {band_index}")
            # GDAL virtual paths (/vsizip/...) are absolute already; normalising would eat their "//"
            absolute = source if source.startswith("/vsi") or "://" in source else os.path.abspath(source)
            write_atomic(vrt, _vrt_document(src, absolute).encode())
            width, height, count = src.width, src.height, src.count
            crs = src.crs
            bounds: Bounds | None = tuple(src.bounds) if crs else None
            resolution = float(min(abs(src.res[0]), abs(src.res[1])))
        factors = overview_factors(width, height)
        if factors:
            with rasterio.open(vrt, "r+") as dst:
                dst.build_overviews(factors, Resampling.nearest)
        level = None
        for index, factor in enumerate(factors):
            if max(width, height) / factor <= STATS_PIXELS:
                level = index
                break
        options = {} if level is None else {"overview_level": level}
        with rasterio.open(vrt, **options) as src:
            stats = {b: _percentiles(src.read(b, masked=True)) for b in range(1, count + 1)}
    layer = Layer(folder, band_index, count, width, height, crs.to_wkt() if crs else "", bounds,
                  _bounds_in(crs, "EPSG:4326", bounds) if crs and bounds else None,
                  _bounds_in(crs, "EPSG:3857", bounds) if crs and bounds else None,
                  resolution, tuple(factors), stats, style, uuid.uuid4().hex, source_folder)
    layer.save()
    return layer


# -- drawing -------------------------------------------------------------------------------------
def stretch(values: Any, valid: Any, low: float, high: float) -> Any:
    """``uint8`` grey levels: ``low`` black, ``high`` white, clamped outside."""
    import numpy as np

    if high <= low:
        return np.where(valid, 255 if high > 0 or low == high else 0, 0).astype(np.uint8)
    scaled = (values - low) * (255.0 / (high - low))
    return np.clip(np.round(np.where(valid, scaled, 0)), 0, 255).astype(np.uint8)


def colourise(values: Any, valid: Any, colour_map: ColourMap) -> Any:
    """RGBA ``uint8`` pixels of a 2-D float array through a colour map (``valid`` marks the pixels to draw)."""
    import numpy as np

    height, width = values.shape
    rgba = np.zeros((height, width, 4), dtype=np.uint8)
    if not valid.any():
        return rgba
    quantities = np.array(colour_map.quantities, dtype=np.float64)
    colours = np.array(colour_map.colours, dtype=np.float64)
    v = np.where(valid, values, quantities[0]).astype(np.float64)
    if colour_map.kind == "ramp":
        # below the first / above the last entry: the end colours (SLD ramps clamp)
        out = np.stack([np.interp(v, quantities, colours[:, channel]) for channel in range(4)], axis=-1)
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


def bands_of(layer: Layer, style: RasterStyle) -> tuple[int, ...]:
    """The bands a style draws (the layer's band unless its channel selection names existing bands)."""
    if style.channels and all(1 <= b <= layer.band_count for b in style.channels):
        return style.channels
    return (layer.band_index,)


def _level(layer: Layer, wanted_resolution: float) -> int | None:
    """The coarsest overview whose resolution is still at least as fine as the request's (None: full)."""
    chosen = None
    for index, factor in enumerate(layer.overviews):
        if layer.resolution * factor <= wanted_resolution * 1.0001:
            chosen = index
    return chosen


def _intersects(a: Bounds, b: Bounds) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


VALID_AREAS: dict[str, Bounds] = {
    "EPSG:4326": (-180.0, -90.0, 180.0, 90.0),
    "EPSG:3857": (-20037508.342789244, -20048966.1040146, 20037508.342789244, 20048966.1040146),
}
"""Where each CRS of the WMS has meaning (x/y order).  A box is clipped to it before any reprojection: PROJ
and GDAL's warper take time that grows with the numbers (a ``1e20`` box held a thread for minutes)."""
STRIP_PIXELS = 512 * 1024
"""Pixels warped and coloured at a time: memory stays flat whatever the map's size."""


@dataclass(frozen=True)
class Window:
    """The pixels of a map request inside its CRS's valid area, and the box they cover."""

    col: int
    row: int
    width: int
    height: int
    bbox: Bounds


def visible_window(crs: str, bbox: Bounds, width: int, height: int) -> Window | None:
    """The part of the ``width`` x ``height`` grid over ``bbox`` inside the valid area of ``crs`` (``None``:
    nothing of it), its box snapped to the grid and clipped again (a pixel of a huge box is wider than the
    whole area: the box of such a one-pixel window is the area itself)."""
    area = VALID_AREAS.get(crs)
    if area is None:
        return Window(0, 0, width, height, bbox)
    x0, y0, x1, y1 = bbox
    left, bottom, right, top = max(x0, area[0]), max(y0, area[1]), min(x1, area[2]), min(y1, area[3])
    if left >= right or bottom >= top:
        return None
    res_x, res_y = (x1 - x0) / width, (y1 - y0) / height
    col0 = max(0, min(width - 1, math.floor((left - x0) / res_x)))
    col1 = max(col0 + 1, min(width, math.ceil((right - x0) / res_x)))
    row0 = max(0, min(height - 1, math.floor((y1 - top) / res_y)))
    row1 = max(row0 + 1, min(height, math.ceil((y1 - bottom) / res_y)))
    snapped = (x0 + col0 * res_x, y1 - row1 * res_y, x0 + col1 * res_x, y1 - row0 * res_y)
    box = (max(snapped[0], area[0]), max(snapped[1], area[1]), min(snapped[2], area[2]), min(snapped[3], area[3]))
    return Window(col0, row0, col1 - col0, row1 - row0, box)


def open_level(layer: Layer, level: int | None) -> AbstractContextManager[Any]:
    """The layer's VRT opened at overview ``level`` (``None``: full resolution), closed on leaving."""
    import rasterio

    return rasterio.open(layer.vrt, **({} if level is None else {"overview_level": level}))  # type: ignore[no-any-return]


def draw(layer: Layer, style: RasterStyle, crs: str, bbox: Bounds, width: int, height: int,
         opener: Opener = open_level) -> Any:
    """The ``(height, width, 4)`` RGBA pixels of ``bbox`` (in ``crs`` x/y order) at ``width`` x ``height``."""
    import numpy as np

    rgba = np.zeros((height, width, 4), dtype=np.uint8)
    for row, strip in draw_strips(layer, style, crs, bbox, width, height, opener):
        rgba[row:row + strip.shape[0]] = strip
    return rgba


def draw_strips(layer: Layer, style: RasterStyle, crs: str, bbox: Bounds, width: int,
                height: int, opener: Opener = open_level) -> Iterator[tuple[int, Any]]:
    """The map's pixels a band of rows at a time: ``(first row, (rows, width, 4) RGBA)``; rows not yielded are
    transparent (outside the CRS's valid area or the raster)."""
    import numpy as np
    import rasterio
    from rasterio.enums import Resampling
    from rasterio.transform import from_bounds
    from rasterio.vrt import WarpedVRT
    from rasterio.warp import transform_bounds
    from rasterio.windows import Window as ReadWindow

    window = visible_window(crs, bbox, width, height)
    if window is None or not layer.georeferenced or layer.bounds is None:
        return
    try:
        source_box = transform_bounds(crs, rasterio.crs.CRS.from_wkt(layer.crs), *window.bbox, densify_pts=21)
    except Exception:  # a box the projection cannot express: nothing of the raster in it
        return
    if not all(math.isfinite(v) for v in source_box) or not _intersects(source_box, layer.bounds):
        return
    wanted = min((source_box[2] - source_box[0]) / window.width, (source_box[3] - source_box[1]) / window.height)
    level = _level(layer, wanted)
    bands = bands_of(layer, style)
    rows_per_strip = max(1, STRIP_PIXELS // window.width)
    with opener(layer, level) as src, \
            WarpedVRT(src, crs=crs, transform=from_bounds(*window.bbox, window.width, window.height),
                      width=window.width, height=window.height, resampling=Resampling.nearest,
                      add_alpha=True) as warped:
        for top in range(0, window.height, rows_per_strip):
            rows = min(rows_per_strip, window.height - top)
            part = ReadWindow(0, top, window.width, rows)
            data = warped.read(list(bands), masked=True, window=part)
            inside = warped.read(warped.count, window=part) > 0
            strip = np.zeros((rows, width, 4), dtype=np.uint8)
            strip[:, window.col:window.col + window.width] = _colour(layer, style, bands, data, inside)
            yield window.row + top, strip


def _colour(layer: Layer, style: RasterStyle, bands: tuple[int, ...], data: Any, inside: Any) -> Any:
    import numpy as np

    values = np.ma.getdata(data).astype(np.float64)
    valid = inside & ~np.ma.getmaskarray(data).any(axis=0) & np.isfinite(values).all(axis=0)
    rgba = np.zeros((*valid.shape, 4), dtype=np.uint8)
    if style.colour_map is not None and len(bands) == 1:
        rgba[:] = colourise(values[0], valid, style.colour_map)
    else:
        grey: dict[int, Any] = {}
        for channel, band in enumerate(bands if len(bands) == 3 else bands * 3):
            if band not in grey:
                grey[band] = stretch(values[bands.index(band)], valid, *layer.stats.get(band, (0.0, 0.0)))
            rgba[..., channel] = grey[band]
        rgba[..., 3] = np.where(valid, 255, 0)
    if style.opacity < 1:
        rgba[..., 3] = np.round(rgba[..., 3] * style.opacity).astype(np.uint8)
    return rgba


def draw_map(layers: Sequence[tuple[Layer, RasterStyle]], crs: str, bbox: Bounds, width: int, height: int,
             background: tuple[int, int, int] | None = None, opener: Opener = open_level) -> bytes:
    """The PNG of ``layers`` drawn one over the other (the first at the bottom), on ``background`` when given:
    one layer at a time, a band of rows at a time, into one RGBA image (memory: the image, and a strip)."""
    import numpy as np

    image = np.zeros((height, width, 4), dtype=np.uint8)
    for layer, style in layers:
        for row, strip in draw_strips(layer, style, crs, bbox, width, height, opener):
            target = image[row:row + strip.shape[0]]
            target[:] = strip if len(layers) == 1 else over(target, strip)
    if background is not None:
        step = max(1, STRIP_PIXELS // width)
        for top in range(0, height, step):
            image[top:top + step] = flatten(image[top:top + step], background)
    return encode_pixels(image)


def value_at(layer: Layer, crs: str, bbox: Bounds, width: int, height: int, i: int,
             j: int, opener: Opener = open_level) -> tuple[float, float, float | None]:
    """The map coordinates of pixel (``i``, ``j``) of a request, and the layer band's value there."""
    import numpy as np
    import rasterio
    from rasterio.warp import transform
    from rasterio.windows import Window

    x = bbox[0] + (i + 0.5) * (bbox[2] - bbox[0]) / width
    y = bbox[3] - (j + 0.5) * (bbox[3] - bbox[1]) / height
    area = VALID_AREAS.get(crs)
    if not layer.georeferenced or (area is not None and not (area[0] <= x <= area[2] and area[1] <= y <= area[3])):
        return x, y, None
    try:
        xs, ys = transform(crs, rasterio.crs.CRS.from_wkt(layer.crs), [x], [y])
    except Exception:
        return x, y, None
    with opener(layer, None) as src:
        row, col = src.index(xs[0], ys[0])
        if not (0 <= row < src.height and 0 <= col < src.width):
            return x, y, None
        pixel = src.read(layer.band_index, window=Window(col, row, 1, 1), masked=True)
    if np.ma.getmaskarray(pixel).any() or not np.isfinite(np.ma.getdata(pixel)[0, 0]):
        return x, y, None
    return x, y, float(np.ma.getdata(pixel)[0, 0])


def preview(layer: Layer, style: RasterStyle, max_size: int, opener: Opener = open_level) -> Any:
    """A layer's preview pixels: in WGS84 at the raster's own resolution, its longest side at most ``max_size``
    (a raster without a CRS: as it is, scaled to ``max_size``)."""
    import numpy as np

    if layer.georeferenced and layer.wgs84 is not None and layer.bounds is not None:
        from rasterio.crs import CRS
        from rasterio.warp import calculate_default_transform

        _, width, height = calculate_default_transform(CRS.from_wkt(layer.crs), "EPSG:4326", layer.width,
                                                       layer.height, *layer.bounds)
        factor = max(width, height) / max_size
        if factor > 1:
            width, height = max(1, math.ceil(width / factor)), max(1, math.ceil(height / factor))
        return draw(layer, style, "EPSG:4326", layer.wgs84, width, height, opener)
    from rasterio.enums import Resampling

    with opener(layer, None) as src:
        factor = max(1.0, max(src.width, src.height) / max_size)
        shape = (max(1, math.ceil(src.height / factor)), max(1, math.ceil(src.width / factor)))
        data = src.read(layer.band_index, masked=True, out_shape=shape, resampling=Resampling.nearest)
    values = np.ma.getdata(data).astype(np.float64)
    valid = ~np.ma.getmaskarray(data) & np.isfinite(values)
    if style.colour_map is not None:
        return colourise(values, valid, style.colour_map)
    grey = stretch(values, valid, *layer.stats.get(layer.band_index, (0.0, 0.0)))
    return np.stack([grey, grey, grey, np.where(valid, 255, 0).astype(np.uint8)], axis=-1)


def legend(layer: Layer, style: RasterStyle, width: int = 20, height: int = 20) -> Any:
    """A legend: a vertical gradient (ramp, stretch) or one swatch per class (intervals, values, RGB)."""
    import numpy as np

    colour_map = style.colour_map if len(bands_of(layer, style)) == 1 else None
    if len(bands_of(layer, style)) == 3:
        swatches = [(255, 0, 0, 255), (0, 255, 0, 255), (0, 0, 255, 255)]
    elif colour_map is not None and colour_map.kind != "ramp":
        swatches = list(colour_map.colours)
    else:
        steps = max(height * 8, 64)
        if colour_map is not None:
            lo, hi = colour_map.quantities[0], colour_map.quantities[-1]
            column = np.linspace(hi, lo, steps)[:, None]
            pixels = colourise(column, np.ones(column.shape, bool), colour_map)
        else:
            grey = np.linspace(255, 0, steps).round().astype(np.uint8)
            pixels = np.stack([grey, grey, grey, np.full(steps, 255, np.uint8)], axis=-1)[:, None, :]
        return np.repeat(pixels, width, axis=1)
    image = np.zeros((height * len(swatches), width, 4), dtype=np.uint8)
    for index, colour in enumerate(swatches):
        image[index * height:(index + 1) * height] = colour
    return image


def over(base: Any, top: Any) -> Any:
    """``top`` drawn over ``base`` ("over" compositing of two ``uint8`` RGBA arrays of one shape)."""
    import numpy as np

    top_alpha = top[..., 3:4].astype(np.float32) / 255.0
    base_alpha = base[..., 3:4].astype(np.float32) / 255.0 * (1.0 - top_alpha)
    out_alpha = top_alpha + base_alpha
    rgb = (top[..., :3] * top_alpha + base[..., :3] * base_alpha) / np.where(out_alpha > 0, out_alpha, 1.0)
    out = np.empty(base.shape, dtype=np.uint8)
    out[..., :3] = np.clip(np.round(rgb), 0, 255)
    out[..., 3:4] = np.clip(np.round(out_alpha * 255.0), 0, 255)
    return out


def flatten(rgba: Any, background: tuple[int, int, int]) -> Any:
    """An opaque image: ``rgba`` over a ``background`` colour."""
    import numpy as np

    alpha = rgba[..., 3:4].astype(np.float64) / 255.0
    out = rgba.copy()
    out[..., :3] = np.round(rgba[..., :3] * alpha + np.array(background, dtype=np.float64) * (1 - alpha))
    out[..., 3] = 255
    return out
