"""Reading products: the bands and footprint of the files in a workspace (their metadata trees are
``metadata_trees``', their names and sidecars ``product_files``').

Rasters are read through rasterio (GDAL), imported lazily: it is the optional ``geo`` extra, and the
server runs without it.  What this module cannot read (no rasterio, or a format GDAL does not know)
still becomes a product, with file-level metadata only, and says so plainly in the metadata.

Rules:
- Band names come from the band descriptions, else ``band_1``, ``band_2`` ...; a repeated
  description gets a ``_<n>`` suffix so every band of a product has its own name.
- The bounding box is the raster's bounds transformed to WGS84 (densified edges), written as the
  original server does: ten comma separated numbers with six decimals,
  ``minLat,minLon,minLat,maxLon,maxLat,maxLon,maxLat,minLon,minLat,minLon``.  A raster without a CRS
  has no bounding box.
- A ``.zip`` is one product whose file is the zip: its first member GDAL can read gives the bands and
  the footprint (through ``/vsizip/``); otherwise it is a file-level product listing its members.
- A SNAP product (``.dim`` with its ``.data`` folder) has one band per ENVI ``.img`` of the folder.
"""

from __future__ import annotations

import logging
import math
import os
import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...files_beneath import open_regular

log = logging.getLogger("wasdi_server.readers")

NOT_A_RASTER = "not recognized as being in a supported file format"
"""GDAL's words for a file that is no raster it knows (a text or JSON output, a zip)."""


class NotARasterChatter(logging.Filter):
    """Drops rasterio's relay of GDAL's "not recognized as being in a supported file format": every non-raster
    file a product is made of (an app's .txt or .json output) would put one in the server log.  The reader says
    it itself, as a debug line, and the product records it in its note."""

    def filter(self, record: logging.LogRecord) -> bool:
        return NOT_A_RASTER not in record.getMessage()


def quiet_gdal_about_non_rasters() -> None:
    """Keep GDAL's reports about files that are not rasters out of the log (once per process)."""
    gdal = logging.getLogger("rasterio._env")  # where rasterio relays GDAL's errors
    if not any(isinstance(each, NotARasterChatter) for each in gdal.filters):
        gdal.addFilter(NotARasterChatter())


quiet_gdal_about_non_rasters()  # every reader of rasters in the server imports this module

NODE_NAME = "Bands"
"""``bandsGroups.nodeName`` of every product (the original server's group name)."""
RASTER_SUFFIXES = frozenset({
    ".tif", ".tiff", ".gtiff", ".jp2", ".img", ".nc", ".nc4", ".hdf", ".h5", ".he5", ".grib", ".grb", ".grib2",
    ".vrt", ".asc", ".bil", ".bsq", ".bip", ".dem", ".png", ".jpg", ".jpeg", ".ntf", ".envi", ".dt2", ".hgt",
    ".safe", ".xml", ".kea", ".rst",
})
MAX_ZIP_PROBES = 20
"""Members of a zip tried with GDAL before giving up."""
MAX_TAGS = 500
"""Tags of one domain kept in a metadata tree (some formats carry thousands)."""
MAX_TEXT = 4000
OpenGuard = Callable[[str], None]
"""Called with every GDAL path before it is opened (a boxed reader refuses references outside its folders)."""


@dataclass
class Band:
    name: str
    width: int
    height: int
    index: int = 1
    """1-based band index in ``source``."""
    source: str = ""
    """The GDAL path the band is read from (the product file, a zip member, a ``.data/*.img``)."""


@dataclass
class ProductInfo:
    """What a product file is, as far as this server can tell."""

    file_name: str
    size: int
    modified_ms: float
    readable: bool = False
    """Whether GDAL could read it (bands and georeferencing are known)."""
    driver: str = ""
    bands: list[Band] = field(default_factory=list)
    crs: str | None = None
    bounds: tuple[float, float, float, float] | None = None
    """Native bounds ``(left, bottom, right, top)`` in ``crs``."""
    wgs84_bounds: tuple[float, float, float, float] | None = None
    """``(west, south, east, north)`` in degrees."""
    note: str = ""
    """Why the file is only known at file level (when ``readable`` is false)."""
    members: list[str] = field(default_factory=list)
    """Members of a zip."""

    @property
    def bbox(self) -> str | None:
        return format_bbox(self.wgs84_bounds) if self.wgs84_bounds else None


def _box(value: Any) -> tuple[float, float, float, float] | None:
    if not isinstance(value, list | tuple) or len(value) != 4:
        return None
    numbers = tuple(float(v) for v in value)
    return numbers if all(math.isfinite(v) for v in numbers) else None  # type: ignore[return-value]


def product_info_from(data: Any) -> ProductInfo:
    """A ``ProductInfo`` from the JSON a reader sent (``dataclasses.asdict`` of one), checked field by field:
    a reader runs GDAL on users' files and what it sends is not trusted."""
    if not isinstance(data, dict):
        raise ValueError("a product's description is not an object")
    bands = []
    for band in data.get("bands") or []:
        if not isinstance(band, dict):
            raise ValueError("a band's description is not an object")
        bands.append(Band(str(band["name"])[:MAX_TEXT], int(band["width"]), int(band["height"]),
                          int(band.get("index") or 1), str(band.get("source") or "")))
    crs = data.get("crs")
    return ProductInfo(str(data["file_name"]), int(data["size"]), float(data["modified_ms"]),
                       readable=bool(data.get("readable")), driver=str(data.get("driver") or "")[:200], bands=bands,
                       crs=None if crs is None else str(crs)[:MAX_TEXT], bounds=_box(data.get("bounds")),
                       wgs84_bounds=_box(data.get("wgs84_bounds")), note=str(data.get("note") or "")[:MAX_TEXT],
                       members=[str(m) for m in data.get("members") or []])


# -- helpers -------------------------------------------------------------------------------------
def rasterio_available() -> bool:
    """Whether rasterio is installed.  Found, not imported: the server's own process never opens a raster, and
    importing GDAL there would cost a second and tens of MB for nothing."""
    import importlib.util

    try:
        return importlib.util.find_spec("rasterio") is not None
    except (ImportError, ValueError):
        return False


def format_bbox(bounds: tuple[float, float, float, float]) -> str:
    """``(west, south, east, north)`` as the original server's ten-number footprint string."""
    w, s, e, n = bounds
    points = [(s, w), (s, e), (n, e), (n, w), (s, w)]
    return ",".join(f"{lat:.6f},{lon:.6f}" for lat, lon in points)


def parse_bbox(text: str | None) -> tuple[float, float, float, float] | None:
    """The ``(west, south, east, north)`` of a ten-number footprint string, or ``None``."""
    if not text:
        return None
    try:
        numbers = [float(v) for v in text.split(",")]
    except ValueError:
        return None
    if len(numbers) < 4 or len(numbers) % 2:
        return None
    lats, lons = numbers[0::2], numbers[1::2]
    return min(lons), min(lats), max(lons), max(lats)


_WKT_NUMBERS = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def footprint_bounds(text: str | None) -> tuple[float, float, float, float] | None:
    """WGS84 bounds of a footprint given by an import: WKT (``POLYGON((lon lat, ...))``), the ten-number
    string, or ``N,W,S,E``; ``None`` when it cannot be read or is out of range."""
    if not text or len(text) > 100_000:
        return None
    bounds: tuple[float, float, float, float] | None = None
    if "(" in text:
        numbers = [float(v) for v in _WKT_NUMBERS.findall(text)]
        if len(numbers) >= 4 and len(numbers) % 2 == 0:
            lons, lats = numbers[0::2], numbers[1::2]
            bounds = min(lons), min(lats), max(lons), max(lats)
    else:
        parts = text.split(",")
        if len(parts) == 4:
            try:
                n, w, s, e = (float(p) for p in parts)
            except ValueError:
                return None
            bounds = w, s, e, n
        else:
            bounds = parse_bbox(text)
    if bounds is None:
        return None
    w, s, e, n = bounds
    if not (-180 <= w <= e <= 180 and -90 <= s <= n <= 90):
        return None
    return bounds


# -- reading -------------------------------------------------------------------------------------
def read_product(path: Path, guard: OpenGuard | None = None) -> ProductInfo:
    """Bands, CRS and footprint of ``path``; file-level facts when it cannot be read as a raster (``guard``
    sees every GDAL path first: a path it refuses leaves a file-level product whose note says why)."""
    stat = path.stat()
    info = ProductInfo(path.name, folder_or_file_size(path), stat.st_mtime * 1000.0)
    suffix = path.suffix.lower()
    if suffix == ".zip":
        info.members = zip_members(path)
    if not rasterio_available():
        info.note = "this server has no raster reader (the 'geo' extra, rasterio, is not installed)"
        return info
    try:
        if suffix == ".zip":
            _read_zip(path, info, guard)
        elif suffix == ".dim":
            _read_dim(path, info, guard)
        elif path.is_file():
            _read_raster(str(path), info, guard)
        else:
            info.note = "not a regular file"
    except Exception as e:  # any reader failure leaves a file-level product
        log.debug("cannot read %s as a raster: %s", path, e)
        info.readable = False
        info.bands = []
        if not info.note:
            info.note = f"not a raster format this server can read ({short_error(e, path)})"
    return info


SELF_CONTAINED_SUFFIXES = frozenset({".tif", ".tiff", ".zip", ".nc", ".nc4", ".jp2", ".h5", ".hdf", ".he5",
                                     ".grib", ".grib2", ".grb", ".png", ".jpg", ".jpeg"})
"""Formats that never name another file (a VRT, an ENVI header, a BEAM-DIMAP header do), sidecars aside."""


def stands_alone(path: Path) -> bool:
    """Whether GDAL reads ``path`` without any other file: a regular file (not a link) of a self-contained format
    with no other entry of its folder named after it (``x.tfw``, ``x.tif.aux.xml``, ``x.tif.ovr``,
    ``x.tif.msk``), and not text (GDAL knows a VRT by its content, whatever its name).  Such a file can be read
    by a reader that sees it alone."""
    if path.suffix.lower() not in SELF_CONTAINED_SUFFIXES:
        return False
    stem = path.name.split(".", 1)[0]
    try:
        with open_regular(path.parent, path.name) as file:  # a link, a folder, a FIFO: OSError
            if file.read(256).lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<"):
                return False
        with os.scandir(path.parent) as entries:
            return not any(e.name != path.name and (e.name == stem or e.name.startswith(stem + "."))
                           for e in entries)
    except OSError:
        return False


def folder_or_file_size(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    size = path.stat().st_size
    if path.suffix.lower() == ".dim":
        data = path.with_suffix(".data")
        if data.is_dir():
            size += sum(p.stat().st_size for p in data.rglob("*") if p.is_file())
    return size


def zip_members(path: Path, limit: int = 1000) -> list[str]:
    try:
        with zipfile.ZipFile(path) as archive:
            return [i.filename for i in archive.infolist()[:limit]]
    except (zipfile.BadZipFile, OSError):
        return []


def short_error(error: BaseException, path: Path | None = None) -> str:
    """The first line of an error, without server paths (metadata is shown to users)."""
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    if path is not None:
        text = text.replace(f"/vsizip/{path}", path.name).replace(str(path.parent) + os.sep, "")
        text = text.replace(str(path), path.name)
    return text[:200]


def _unique_names(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for name in names:
        if name in seen:
            seen[name] += 1
            out.append(f"{name}_{seen[name]}")
        else:
            seen[name] = 1
            out.append(name)
    return out


def _read_raster(gdal_path: str, info: ProductInfo, guard: OpenGuard | None = None) -> None:
    import rasterio

    if guard is not None:
        guard(gdal_path)

    with rasterio.Env(CPL_LOG="/dev/null"), rasterio.open(gdal_path) as src:
        names = [(d or "").strip() or f"band_{i + 1}" for i, d in enumerate(src.descriptions)]
        info.bands = [Band(n, src.width, src.height, i + 1, gdal_path)
                      for i, n in enumerate(_unique_names(names))]
        info.driver = src.driver
        info.readable = True
        if src.crs:
            info.crs = src.crs.to_string()
            info.bounds = tuple(src.bounds)
            info.wgs84_bounds = wgs84_bounds(src.crs, src.bounds)


def wgs84_bounds(crs: Any, bounds: Any) -> tuple[float, float, float, float] | None:
    from rasterio.warp import transform_bounds

    try:
        w, s, e, n = transform_bounds(crs, "EPSG:4326", *bounds, densify_pts=21)
    except Exception as error:
        log.debug("cannot transform bounds to WGS84: %s", error)
        return None
    if not all(math.isfinite(v) for v in (w, s, e, n)):
        return None
    return max(-180.0, w), max(-90.0, s), min(180.0, e), min(90.0, n)


def _read_zip(path: Path, info: ProductInfo, guard: OpenGuard | None = None) -> None:
    candidates = [m for m in info.members if Path(m).suffix.lower() in RASTER_SUFFIXES and not m.endswith("/")
                  and ".." not in m and not m.startswith("/") and "\\" not in m]
    for member in candidates[:MAX_ZIP_PROBES]:
        try:
            _read_raster(f"/vsizip/{path}/{member}", info, guard)
        except Exception as e:
            log.debug("zip member %s is not readable: %s", member, e)
            continue
        return
    info.note = "a zip archive with no member this server can read as a raster"


def _read_dim(path: Path, info: ProductInfo, guard: OpenGuard | None = None) -> None:
    data = path.with_suffix(".data")
    images = sorted(data.glob("*.img")) if data.is_dir() else []
    if not images:
        info.note = "a SNAP product whose .data folder holds no ENVI band images"
        return
    bands: list[Band] = []
    for image in images:
        probe = ProductInfo(image.name, 0, 0)
        _read_raster(str(image), probe, guard)
        if not bands:
            info.crs, info.bounds, info.wgs84_bounds = probe.crs, probe.bounds, probe.wgs84_bounds
            info.driver = "BEAM-DIMAP (ENVI bands)"
        bands.append(Band(image.stem, probe.bands[0].width, probe.bands[0].height, 1, str(image)))
    info.bands = bands
    info.readable = True
