"""Map servers: where published bands become map layers.

``MapServer`` is the interface the PUBLISHBAND operation, product updates (a new style) and deletions
use.  ``LocalMapServer`` is the default: publishing a band prepares it for drawing (``wms.render``: a VRT
over the product, overviews, band statistics) under ``<data_dir>/layers/<layerId>/`` and draws a
preview ``<data_dir>/layers/<layerId>.png`` (served at ``GET /layers/{layerId}.png``); this server's WMS
(``GET /wms``, ``api/layers.py`` and ``domains/products/maps.py``) draws any box of it, and ``geoserverUrl`` points
there.  Every read of the product (preparing, the preview, each map, each value) is a ``ReadJob`` run by
the ``RasterReads`` the server is given (boxed readers that see the product's workspace folder and the
layer's folder only, ``launcher/box/readers.py``): this process never opens a user's raster.  Drawn map
images are kept in a disk cache bounded by bytes (``wms.cache``) under ``<data_dir>/layers/.tiles/``,
dropped when the layer is published again, restyled or removed, or when its style's SLD changes.  A
GeoServer REST implementation can be added beside it: publish a coverage store and layer, set the layer's
default style, delete them.

Preview rules: the band is drawn in WGS84 (``EPSG:4326``, so a map client can drape it over the layer's
WGS84 bounding box) with its longest side at most ``max_size`` pixels, from the overviews; a raster
without a CRS is drawn as is, with no bounding box.  Styles: ``wms.styles``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from wasdi_sdk.atomic_files import write_atomic

from ..png import encode_pixels
from .raster_reads import RasterReads, ReadJob, ReadRefused
from .wms import render
from .wms.cache import TileCache, cache_key
from .wms.styles import MAX_SLD_BYTES, ColourMap, RasterStyle, parse_style

log = logging.getLogger(__name__)
__all__ = ["MAX_SLD_BYTES", "ColourMap", "LocalMapServer", "MapServer", "MapServerError", "PublishedLayer",
           "ReadRefused"]


class MapServerError(Exception):
    """A band could not be published (the message is shown to the user)."""


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

    def publish(self, source: str, band_index: int, layer_id: str, style: str | None, url: str,
                folder: Path) -> PublishedLayer:
        """Publish band ``band_index`` (1-based) of the GDAL-readable ``source``, a product of the workspace
        folder ``folder``, as layer ``layer_id``."""

    def restyle(self, source: str, band_index: int, layer_id: str, style: str | None, folder: Path) -> None:
        """Give a published layer a new style."""

    def remove(self, layer_id: str) -> None:
        """Delete a layer (nothing happens if it does not exist)."""

    def layer_file(self, layer_id: str) -> Path | None:
        """The file a layer is served from by this server, if it serves it itself."""

    def has_layer(self, layer_id: str) -> bool:
        """Whether a published layer can still be drawn (False: its files are gone, publish it again)."""

    def publish_style(self, name: str, sld_path: Path) -> None:
        """Add or replace a style (the styles service calls this when an SLD changes)."""

    def remove_style(self, name: str) -> None:
        """Forget a style."""

    def close(self) -> None:
        """Stop what the map server runs (the local one's drawing processes)."""


def new_layer_id() -> str:
    return "wasdi_" + uuid.uuid4().hex


def bbox_json(bounds: tuple[float, float, float, float] | None, crs: str | None) -> str:
    if bounds is None:
        return ""
    minx, miny, maxx, maxy = bounds
    return json.dumps({"minx": minx, "miny": miny, "maxx": maxx, "maxy": maxy, "crs": crs or ""})


# -- styles (kept here for the callers that drew with a colour map before the WMS) ----------------
def parse_colour_map(sld: str | None) -> ColourMap | None:
    """The colour map of an SLD inside the drawable subset, or ``None``."""
    style = parse_style(sld)
    return None if style.problem else style.colour_map


def colourise(values: Any, valid: Any, colour_map: ColourMap) -> Any:
    return render.colourise(values, valid, colour_map)


class LocalMapServer:
    """Layers prepared under ``root`` that this server draws itself (preview PNG and WMS)."""

    def __init__(self, root: Path, reads: RasterReads, styles: StyleSource | None = None, max_size: int = 2048,
                 cache_bytes: int = 256 * 1024 * 1024) -> None:
        self.root = root
        self.reads = reads
        """Where layers are prepared and drawn (boxed readers, with a queue and a deadline)."""
        self.styles = styles
        self.max_size = max_size
        self.tiles = TileCache(root / ".tiles", cache_bytes)

    def close(self) -> None:
        self.reads.close()

    @staticmethod
    def reader_folders(layer: render.Layer) -> tuple[Path, ...]:
        """What a reader of ``layer`` sees: its folder and its product's workspace folder (for a layer published
        before layers recorded it: the folder of the product its VRT reads)."""
        if layer.source_folder:
            return layer.folder, Path(layer.source_folder)
        source = render.vrt_source(layer)
        return (layer.folder, Path(source).parent) if source else (layer.folder,)

    # -- files -------------------------------------------------------------------------------
    @staticmethod
    def valid_id(layer_id: str | None) -> bool:
        return bool(re.fullmatch(r"[A-Za-z0-9_-]{1,100}", layer_id or ""))

    def layer_file(self, layer_id: str) -> Path | None:
        if not self.valid_id(layer_id):
            return None
        return self.root / f"{layer_id}.png"

    def has_layer(self, layer_id: str) -> bool:
        """Preview and prepared files both there (a layer published before the WMS existed has no VRT)."""
        path = self.layer_file(layer_id)
        return path is not None and path.is_file() and (self.root / layer_id / render.META_NAME).is_file()

    def folder(self, layer_id: str) -> Path:
        if not self.valid_id(layer_id):
            raise MapServerError("invalid layer id")
        return self.root / layer_id

    def layer(self, layer_id: str) -> render.Layer | None:
        """The prepared layer, or ``None`` (unknown, removed, or published before the WMS existed)."""
        if not self.valid_id(layer_id):
            return None
        try:
            return render.Layer.load(self.root / layer_id)
        except (OSError, ValueError, KeyError, TypeError):
            return None

    # -- styles ------------------------------------------------------------------------------
    def sld(self, name: str | None) -> str | None:
        if not name or self.styles is None:
            return None
        try:
            return self.styles(name)
        except Exception:
            return None

    def style(self, name: str | None) -> RasterStyle:
        """The drawable style of ``name``; the default stretch (and a log line) when it is outside the subset."""
        text = self.sld(name)
        style = parse_style(text)
        if name and text is None:
            log.warning("style %s is not on this server: drawn with the default stretch", name)
        elif style.problem:
            log.warning("style %s is drawn with the default stretch: %s", name, style.problem)
        return style

    # -- publishing --------------------------------------------------------------------------
    def _prepare(self, source: str, band_index: int, layer_id: str, style: str | None, folder: Path,
                 restyle: bool) -> render.Layer:
        """Prepare a layer (or give it ``style``) in a reader that may write only its folder; write its preview."""
        target = self.folder(layer_id)
        target.mkdir(parents=True, exist_ok=True)
        answer = self.reads.read(ReadJob("prepare", (source, band_index, target, style, self.style(style),
                                                      str(folder), self.max_size, restyle)),
                                 read_only=(folder,), read_write=(target,))
        layer = render.Layer.load(target)
        path = self.layer_file(layer_id)
        if path is None:
            raise MapServerError("invalid layer id")
        write_atomic(path, answer.payload)
        return layer

    def publish(self, source: str, band_index: int, layer_id: str, style: str | None, url: str,
                folder: Path) -> PublishedLayer:
        self.tiles.drop(layer_id)
        try:
            layer = self._prepare(source, band_index, layer_id, style, folder, restyle=False)
        except ReadRefused as e:
            log.warning("publishing band %s of %s was refused: %s", band_index, source, e.message)
            raise MapServerError(e.message if e.refused or e.busy else "Looks we cannot show\nthis file on map") \
                from e
        except Exception as e:
            log.warning("publishing band %s of %s failed: %s", band_index, source, e)
            raise MapServerError("Looks we cannot show\nthis file on map") from e
        crs_name = None
        if layer.crs:
            from rasterio.crs import CRS

            crs = CRS.from_wkt(layer.crs)
            crs_name = crs.to_string() if crs.to_epsg() else crs.to_wkt()
        return PublishedLayer(layer_id, url, bbox_json(layer.wgs84, "EPSG:4326") if layer.georeferenced else "",
                              bbox_json(layer.bounds, crs_name))

    def restyle(self, source: str, band_index: int, layer_id: str, style: str | None, folder: Path) -> None:
        # published before this server prepared layers: prepare it now
        self._prepare(source, band_index, layer_id, style, folder, restyle=self.layer(layer_id) is not None)
        self.tiles.drop(layer_id)

    def remove(self, layer_id: str) -> None:
        if not self.valid_id(layer_id):
            return
        self.tiles.drop(layer_id)
        shutil.rmtree(self.root / layer_id, ignore_errors=True)
        path = self.layer_file(layer_id)
        if path is not None:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    def _layers_with_style(self, name: str) -> list[str]:
        if not self.root.is_dir():
            return []
        wanted = name.casefold()
        return [entry.name for entry in os.scandir(self.root)
                if entry.is_dir() and not entry.name.startswith(".")
                and ((self.layer(entry.name) or _NO_STYLE).style or "").casefold() == wanted]

    def publish_style(self, name: str, sld_path: Path) -> None:
        """A changed SLD: the cached images of the layers drawn with it go (they are drawn again on request)."""
        self.tiles.drop_where(self._layers_with_style(name))

    def remove_style(self, name: str) -> None:
        """A removed style: its layers are drawn with the default stretch from now on."""
        self.tiles.drop_where(self._layers_with_style(name))

    # -- drawing -----------------------------------------------------------------------------
    def render_png(self, layer_id: str, style_name: str | None, crs: str, bbox: tuple[float, float, float, float],
                   width: int, height: int, background: tuple[int, int, int] | None = None) -> bytes:
        """A PNG of one layer over ``bbox`` (x/y order in ``crs``), transparent where there is no data or on
        ``background``; from the cache when it is there."""
        layer = self.layer(layer_id)
        if layer is None:
            raise MapServerError("no such layer")
        name = style_name or layer.style
        key = cache_key(layer.version, name, self.sld(name), crs, bbox, width, height, background)
        cached = self.tiles.get(layer_id, key)
        if cached is not None:
            return cached
        job = ReadJob("draw", (((layer, self.style(name)),), crs, bbox, width, height, background))
        png = self.reads.read(job, read_only=self.reader_folders(layer)).payload
        self.tiles.put(layer_id, key, png)
        return png

    def render_map(self, chosen: list[tuple[str, str | None]], crs: str, bbox: tuple[float, float, float, float],
                   width: int, height: int, background: tuple[int, int, int] | None = None) -> bytes:
        """A PNG of several ``(layer id, style name)`` drawn in order (the first at the bottom)."""
        layers = []
        for layer_id, style_name in chosen:
            layer = self.layer(layer_id)
            if layer is None:
                raise MapServerError("no such layer")
            layers.append((layer, self.style(style_name or layer.style)))
        workspaces = {layer.source_folder for layer, _ in layers}
        if len(workspaces) == 1:  # one reader sees them all
            folders = tuple(dict.fromkeys(f for layer, _ in layers for f in self.reader_folders(layer)))
            job = ReadJob("draw", (tuple(layers), crs, bbox, width, height, background))
            return self.reads.read(job, read_only=folders).payload
        return self._composite(layers, crs, bbox, width, height, background)

    def _composite(self, layers: list[tuple[render.Layer, RasterStyle]], crs: str,
                   bbox: tuple[float, float, float, float], width: int, height: int,
                   background: tuple[int, int, int] | None) -> bytes:
        """Layers of several workspaces: each drawn by a reader of its own workspace, composited here."""
        import numpy as np

        image = np.zeros((height, width, 4), dtype=np.uint8)
        for layer, style in layers:
            answer = self.reads.read(ReadJob("pixels", (layer, style, crs, bbox, width, height)),
                                     read_only=self.reader_folders(layer))
            if len(answer.payload) != height * width * 4:
                raise ReadRefused("the map could not be drawn")
            image = render.over(image, np.frombuffer(answer.payload, dtype=np.uint8).reshape(height, width, 4))
        if background is not None:
            image = render.flatten(image, background)
        return encode_pixels(image)

    def value_at(self, layer: render.Layer, crs: str, bbox: tuple[float, float, float, float], width: int,
                 height: int, i: int, j: int) -> tuple[float, float, float | None]:
        """The map coordinates of pixel (``i``, ``j``) of a map request and the layer band's value there."""
        answer = self.reads.read(ReadJob("value_at", (layer, crs, bbox, width, height, i, j)),
                                 read_only=self.reader_folders(layer))
        x, y, value = answer.value
        return float(x), float(y), None if value is None else float(value)

    def warm(self, count: int) -> None:
        """Start readers for the ``count`` layers published last, so their first tiles need not wait for one."""
        if not self.root.is_dir():
            return
        folders = sorted((e for e in os.scandir(self.root) if e.is_dir() and not e.name.startswith(".")),
                         key=lambda e: e.stat().st_mtime, reverse=True)
        for entry in folders[:count]:
            layer = self.layer(entry.name)
            if layer is not None:
                self.reads.warm(self.reader_folders(layer))

    def render_rgba(self, layer_id: str, style_name: str | None, crs: str, bbox: tuple[float, float, float, float],
                    width: int, height: int) -> Any:
        """The RGBA pixels of one layer (for tools and tests), drawn by a reader."""
        import numpy as np

        layer = self.layer(layer_id)
        if layer is None:
            raise MapServerError("no such layer")
        answer = self.reads.read(ReadJob("pixels", (layer, self.style(style_name or layer.style), crs, bbox, width,
                                                     height)), read_only=self.reader_folders(layer))
        return np.frombuffer(answer.payload, dtype=np.uint8).reshape(height, width, 4).copy()


_NO_STYLE = render.Layer(Path(), 1, 1, 0, 0, "", None, None, None, 0.0, (), {}, None, "")


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


def make_map_server(kind: str, data_dir: Path, reads: RasterReads, styles_root: Path | None = None,
                    max_size: int = 2048, cache_bytes: int = 256 * 1024 * 1024) -> MapServer:
    """The map server the settings name (``local`` is the only one so far), reading rasters with ``reads``."""
    if kind in ("", "local"):
        return LocalMapServer(data_dir / "layers", reads, sld_files(styles_root) if styles_root else None, max_size,
                              cache_bytes)
    raise ValueError(f"unknown map server {kind!r} (known: local)")
