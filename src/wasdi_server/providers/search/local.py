"""``LOCAL``: an offline catalogue of products the admin points the server at.

Two sources, either or both:

- a folder: every file (and every ``*.SAFE``/``*.SEN3`` folder) under it is a product.  Rasters
  GDAL can read are opened with rasterio (when installed) for their footprint (bounds reprojected
  to WGS84) and tags; everything else is known by its name.  What a product is comes from, in
  order: its tags (``platform``, ``productType``, ``beginPosition``/``endPosition``/``datetime``,
  ``TIFFTAG_DATETIME``, ``cloudCover``, ``relativeOrbit`` …), its name (Sentinel-1/2 names give
  platform, type, sensing times, orbit, mode, polarisation; other prefixes the platform), the
  first sub-folder when it is named after a platform (``<folder>/Sentinel-2/x.tif``), the
  provider's ``default_platform``, and for the date the file's modification time.  Read lazily,
  cached by (mtime, size): a folder is re-listed on every call, a file re-read only when it changes.
- a JSON index: a list of entries (or ``{"products": [...]}``, or a GeoJSON FeatureCollection), each
  with ``title`` and any of ``footprint`` (WKT), ``geometry`` (GeoJSON), ``bbox`` (``[west, south,
  east, north]``), ``platform``, ``productType``, ``productLevel``, ``beginPosition``,
  ``endPosition`` (or ``date``), ``cloudCover``, ``relativeOrbit``, ``absoluteOrbit``,
  ``sensorMode``, ``polarisation``, ``timeliness``, ``instrument``, ``size`` (bytes), ``link`` or
  ``path`` (relative to the index's folder), ``preview``, ``summary``, ``id``, ``properties``,
  ``volumeName``, ``volumePath``.  Re-read when the file changes; an unreadable index makes the
  provider fail (so AUTO moves on); a malformed entry is skipped and logged.

Each result's ``link`` is the entry's ``link``, else the product's ``file://`` URL, which
``/filebuffer/download`` imports.  Footprints are compared by their bounding boxes.  A product
without a platform matches no query (every query has one: mission access is checked on it).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import threading
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from wasdi_sdk.units import search_size

from ...dates import from_epoch_ms, now_utc, parse_utc
from ...search_grammar import (
    PLATFORMS,
    SearchQuery,
    canonical_platform,
    parse_instant,
    platform_from_name,
    platform_matches,
    serial_from_name,
)
from .base import (
    BBox,
    QueryResult,
    SearchProvider,
    SearchProviderError,
    bbox_of_geojson,
    bbox_of_wkt,
    intersects,
    order_is_desc,
    string_properties,
    summary_text,
    text_matches,
    wkt_of_bbox,
    wkt_of_geojson,
)

log = logging.getLogger("wasdi_server.search.local")

RASTER_SUFFIXES = frozenset({".tif", ".tiff", ".jp2", ".img", ".vrt", ".nc", ".hdf", ".h5", ".he5", ".grib",
                             ".grb", ".grib2", ".dem", ".asc", ".bil"})
PRODUCT_FOLDER_SUFFIXES = (".safe", ".sen3", ".sen2")
DEFAULT_MAX_FILES = 100_000
_STAMP = re.compile(r"(\d{8}T\d{6})")
_S1 = re.compile(r"^S1([A-D])_([A-Z0-9]{2})_(SLC|GRD|OCN|RAW)[A-Z_]?_?\d?S([SD])([HV])", re.IGNORECASE)
_S1_ORBIT = re.compile(r"^S1[A-D]_\w{2}_\w{4}_\w{4}_\d{8}T\d{6}_\d{8}T\d{6}_(\d{6})_", re.IGNORECASE)
_S2 = re.compile(r"^S2([A-D])_MSI(L1C|L2A)_", re.IGNORECASE)
_S2_ORBIT = re.compile(r"_R(\d{3})_")
_POLARISATIONS = {("S", "V"): "VV", ("S", "H"): "HH", ("D", "V"): "VV+VH", ("D", "H"): "HH+HV"}


@dataclass
class Product:
    """One catalogue entry, with what the search filters on."""

    title: str
    link: str
    id: str = ""
    footprint: str | None = None
    bbox: BBox | None = None
    platform: str | None = None
    product_type: str | None = None
    product_level: str | None = None
    begin: datetime | None = None
    end: datetime | None = None
    cloud: float | None = None
    relative_orbit: int | None = None
    absolute_orbit: int | None = None
    sensor_mode: str | None = None
    polarisation: str | None = None
    timeliness: str | None = None
    serial: str | None = None
    instrument: str | None = None
    size: int | None = None
    preview: str | None = None
    summary: str | None = None
    volume_name: str | None = None
    volume_path: str | None = None
    file_name: str | None = None
    extra: dict[str, str] = field(default_factory=dict)

    def result(self, provider: str) -> QueryResult:
        size = search_size(self.size)
        begin = self.begin
        props = {
            "title": self.title, "date": begin, "beginposition": begin, "endposition": self.end or begin,
            "platformname": self.platform, "platform": self.platform, "producttype": self.product_type,
            "productlevel": self.product_level, "cloudcoverpercentage": self.cloud,
            "relativeorbitnumber": self.relative_orbit, "absoluteorbit": self.absolute_orbit,
            "sensoroperationalmode": self.sensor_mode, "polarisationmode": self.polarisation,
            "timeliness": self.timeliness, "platformserialidentifier": self.serial, "instrument": self.instrument,
            "size": size, "sizeInBytes": self.size, "filename": self.file_name, "link": self.link,
        }
        properties = {**string_properties(props), **self.extra}
        return QueryResult(
            id=self.id or _digest(self.link or self.title), title=self.title, link=self.link,
            footprint=self.footprint or (wkt_of_bbox(self.bbox) if self.bbox else None), provider=provider,
            preview=self.preview,
            summary=self.summary or summary_text(begin, self.instrument, self.sensor_mode, self.platform, size),
            properties=properties, volume_name=self.volume_name, volume_path=self.volume_path,
            platform=self.platform,
        )


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()


# -- reading names, tags and rasters --------------------------------------------------------------
def title_of(name: str) -> str:
    """A product's title: its file name, less a ``.zip``/``.SAFE`` extension (as WASDI names Sentinel products)."""
    for suffix in (".zip", ".safe", ".sen3"):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name


def facts_from_name(name: str) -> dict[str, Any]:
    """Platform, type, sensing times, orbits, mode and polarisation readable from a product name."""
    facts: dict[str, Any] = {}
    platform = platform_from_name(name)
    if platform:
        facts["platform"] = platform
    serial = serial_from_name(name)
    if serial:
        facts["serial"] = serial
    stamps = _STAMP.findall(name)
    if stamps:
        facts["begin"] = _stamp(stamps[0])
        if platform == "Sentinel-1" and len(stamps) > 1:
            facts["end"] = _stamp(stamps[1])
    s1 = _S1.match(name)
    if s1:
        facts.update(sensor_mode=s1.group(2).upper(), product_type=s1.group(3).upper(),
                     polarisation=_POLARISATIONS.get((s1.group(4).upper(), s1.group(5).upper())))
        orbit = _S1_ORBIT.match(name)
        if orbit:
            absolute = int(orbit.group(1))
            facts["absolute_orbit"] = absolute
            offset = {"A": 73, "B": 27}.get(s1.group(1).upper())
            if offset is not None:
                facts["relative_orbit"] = (absolute - offset) % 175 + 1
    s2 = _S2.match(name)
    if s2:
        facts["product_type"] = "S2MSI1C" if s2.group(2).upper() == "L1C" else "S2MSI2A"
        facts["instrument"] = "MSI"
        orbit = _S2_ORBIT.search(name)
        if orbit:
            facts["relative_orbit"] = int(orbit.group(1))
    return {k: v for k, v in facts.items() if v is not None}


def _stamp(text: str) -> datetime | None:
    try:
        return parse_utc(text)  # the basic ISO form of product names, 20230101T102030
    except ValueError:
        return None


def _date(value: Any) -> datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return from_epoch_ms(value if value > 1e11 else value * 1000)
        except ValueError:
            return None
    text = str(value).strip()
    tiff = re.fullmatch(r"(\d{4}):(\d{2}):(\d{2})[ T](\d{2}):(\d{2}):(\d{2})", text)  # TIFFTAG_DATETIME
    if tiff:
        text = "{}-{}-{}T{}:{}:{}".format(*tiff.groups())
    if re.fullmatch(r"\d{8}T\d{6}", text):
        return _stamp(text)
    try:
        return parse_instant(text)
    except ValueError:
        return None


def _float(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number == number else None  # NaN → None


def _int(value: Any) -> int | None:
    number = _float(value)
    return int(number) if number is not None and number.is_integer() else None


_TAG_KEYS: dict[str, tuple[str, ...]] = {
    "platform": ("platform", "platformname", "wasdi_platform", "mission"),
    "product_type": ("producttype", "product_type", "wasdi_product_type"),
    "product_level": ("productlevel", "product_level", "processing_level"),
    "begin": ("beginposition", "start_datetime", "datetime", "acquisition_date", "acquisitiondate", "date",
              "sensing_time", "tifftag_datetime"),
    "end": ("endposition", "end_datetime"),
    "cloud": ("cloudcover", "cloud_cover", "cloudcoverpercentage", "eo:cloud_cover", "cloudy_pixel_percentage"),
    "relative_orbit": ("relativeorbit", "relativeorbitnumber", "relative_orbit", "sat:relative_orbit"),
    "absolute_orbit": ("absoluteorbit", "absolute_orbit", "sat:absolute_orbit"),
    "sensor_mode": ("sensormode", "sensoroperationalmode", "sar:instrument_mode"),
    "polarisation": ("polarisation", "polarisationmode"),
    "timeliness": ("timeliness",),
    "instrument": ("instrument", "instrumentshortname"),
}


def facts_from_tags(tags: Mapping[str, Any]) -> dict[str, Any]:
    """The facts a raster's (or an index entry's) tags state, by their usual names (any case)."""
    lowered = {str(k).lower(): v for k, v in tags.items()}
    facts: dict[str, Any] = {}
    for name, keys in _TAG_KEYS.items():
        raw = next((lowered[k] for k in keys if lowered.get(k) not in (None, "")), None)
        if raw is None:
            continue
        value: Any
        if name in ("begin", "end"):
            value = _date(raw)
        elif name == "cloud":
            value = _float(raw)
        elif name in ("relative_orbit", "absolute_orbit"):
            value = _int(raw)
        elif name == "platform":
            value = canonical_platform(str(raw))
        else:
            value = str(raw).strip() or None
        if value is not None:
            facts[name] = value
    return facts


def read_raster(path: Path) -> dict[str, Any] | None:
    """Footprint box (WGS84) and tags of a GDAL-readable raster; ``None`` when it cannot be read."""
    try:
        import rasterio
        from rasterio.warp import transform_bounds
    except ImportError:  # optional: without rasterio, rasters are known by name only
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with rasterio.open(path) as src:
                tags = dict(src.tags())
                box: BBox | None = None
                if src.crs is not None:
                    west, south, east, north = transform_bounds(src.crs, "EPSG:4326", *src.bounds, densify_pts=21)
                    box = (max(-180.0, west), max(-90.0, south), min(180.0, east), min(90.0, north))
                return {"bbox": box, "tags": tags}
    except Exception as e:  # rasterio raises many kinds; an unreadable file is known by name
        log.debug("cannot read %s as a raster: %s", path, e)
        return None


# -- the provider ------------------------------------------------------------------------------
class LocalCatalogue(SearchProvider):
    """Products in a folder and/or a JSON index; see the module docstring."""

    def __init__(self, code: str = "LOCAL", *, folder: str | Path | None = None, index: str | Path | None = None,
                 description: str = "", link: str = "", platforms: frozenset[str] | None = None,
                 page_size: int | None = None, default_platform: str | None = None,
                 max_files: int = DEFAULT_MAX_FILES) -> None:
        if folder is None and index is None:
            raise ValueError("a local catalogue needs a folder or an index")
        self.code = code
        self.description = description or "Local catalogue"
        self.folder = Path(folder).expanduser().resolve() if folder else None
        self.index = Path(index).expanduser().resolve() if index else None
        self.link = link or (self.folder.as_uri() if self.folder else "")
        self.platforms = platforms
        self.page_size = page_size
        self.default_platform = canonical_platform(default_platform)
        self.max_files = max_files
        self._lock = threading.Lock()
        self._files: dict[Path, tuple[tuple[int, int], Product]] = {}
        self._index_key: tuple[int, int] | None = None
        self._index_products: list[Product] = []

    # -- the interface -----------------------------------------------------------------------
    def count(self, query: SearchQuery) -> int:
        return len(self._matching(query))

    def search(self, query: SearchQuery, offset: int, limit: int, sortedby: str | None = None,
               order: str | None = None) -> list[QueryResult]:
        found = self._matching(query)
        found.sort(key=_sort_key(sortedby), reverse=order_is_desc(order))
        start = max(0, offset)
        return [p.result(self.code) for p in found[start:start + max(0, limit)]]

    # -- matching ----------------------------------------------------------------------------
    def products(self) -> list[Product]:
        """Every product of the catalogue, freshly listed."""
        with self._lock:
            out: list[Product] = []
            if self.index is not None:
                out.extend(self._load_index())
            if self.folder is not None:
                out.extend(self._scan_folder())
            return out

    def _matching(self, query: SearchQuery) -> list[Product]:
        now = now_utc()
        begin_lo, begin_hi = query.begin_range(now=now)
        end_lo, end_hi = query.end_range(now=now)
        box = query.bbox
        out = []
        for p in self.products():
            if not platform_matches(query.platform_name, p.platform) or query.platform_name is None:
                continue
            if box is not None and (p.bbox is None or not intersects(box, p.bbox)):
                continue
            if not _within(p.begin, begin_lo, begin_hi) or not _within(p.end or p.begin, end_lo, end_hi):
                continue
            if not text_matches(query.product_name, p.title, contains=True):
                continue
            if not all(text_matches(want, have) for want, have in (
                    (query.product_type, p.product_type), (query.product_level, p.product_level),
                    (query.sensor_mode, p.sensor_mode), (query.timeliness, p.timeliness),
                    (query.platform_serial_identifier, p.serial), (query.instrument, p.instrument))):
                continue
            if query.polarisation and not _polarisation_matches(query.polarisation, p.polarisation):
                continue
            if query.relative_orbit is not None and p.relative_orbit != query.relative_orbit:
                continue
            if query.absolute_orbit is not None and p.absolute_orbit != query.absolute_orbit:
                continue
            if query.cloud_coverage_from is not None or query.cloud_coverage_to is not None:
                lo = query.cloud_coverage_from if query.cloud_coverage_from is not None else 0.0
                hi = query.cloud_coverage_to if query.cloud_coverage_to is not None else 100.0
                if p.cloud is None or not lo <= p.cloud <= hi:
                    continue
            out.append(p)
        return out

    # -- the folder --------------------------------------------------------------------------
    def _scan_folder(self) -> list[Product]:
        folder = self.folder
        assert folder is not None
        if not folder.is_dir():
            raise SearchProviderError(f"the catalogue folder {folder} does not exist")
        seen: dict[Path, tuple[tuple[int, int], Product]] = {}
        for path, is_dir in self._walk(folder):
            try:
                st = path.stat()
            except OSError:
                continue
            key = (st.st_mtime_ns, 0 if is_dir else st.st_size)
            cached = self._files.get(path)
            if cached is not None and cached[0] == key:
                seen[path] = cached
                continue
            product = self._product_of_file(folder, path, st.st_mtime, None if is_dir else st.st_size)
            seen[path] = (key, product)
        self._files = seen
        return [product for _, product in seen.values()]

    def _walk(self, folder: Path) -> Iterator[tuple[Path, bool]]:
        count = 0
        for root, dirs, files in os.walk(folder):
            dirs.sort()
            keep = []
            for d in dirs:
                if d.startswith("."):
                    continue
                if d.lower().endswith(PRODUCT_FOLDER_SUFFIXES):
                    count += 1
                    yield Path(root) / d, True
                else:
                    keep.append(d)
            dirs[:] = keep
            for name in sorted(files):
                if name.startswith(".") or name.endswith((".aux.xml", ".ovr")):
                    continue
                path = Path(root) / name
                if self.index is not None and path == self.index:
                    continue
                count += 1
                if count > self.max_files:
                    log.warning("the catalogue folder %s has more than %d products; the rest is ignored",
                                folder, self.max_files)
                    return
                yield path, False

    def _product_of_file(self, folder: Path, path: Path, mtime: float, size: int | None) -> Product:
        facts: dict[str, Any] = {}
        box: BBox | None = None
        tags: dict[str, Any] = {}
        if path.suffix.lower() in RASTER_SUFFIXES and path.is_file():
            raster = read_raster(path)
            if raster is not None:
                box, tags = raster["bbox"], raster["tags"]
        facts.update(facts_from_name(path.name))
        facts.update(facts_from_tags(tags))
        if "platform" not in facts:
            relative = path.relative_to(folder).parts
            top = canonical_platform(relative[0]) if len(relative) > 1 else None
            if top in PLATFORMS:
                facts["platform"] = top
            elif self.default_platform:
                facts["platform"] = self.default_platform
        if "begin" not in facts:
            facts["begin"] = from_epoch_ms(mtime * 1000)
        return Product(title=title_of(path.name), link=path.as_uri(), id=_digest(str(path)), bbox=box,
                       size=size, file_name=path.name, **facts)

    # -- the index ---------------------------------------------------------------------------
    def _load_index(self) -> list[Product]:
        index = self.index
        assert index is not None
        try:
            st = index.stat()
        except OSError as e:
            raise SearchProviderError(f"cannot read the catalogue index {index}: {e.strerror}") from e
        key = (st.st_mtime_ns, st.st_size)
        if key == self._index_key:
            return self._index_products
        try:
            data = json.loads(index.read_text("utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as e:
            raise SearchProviderError(f"the catalogue index {index} is not readable JSON: {e}") from e
        if isinstance(data, dict):
            data = data.get("products", data.get("features"))
        if not isinstance(data, list):
            raise SearchProviderError(f"the catalogue index {index} must hold a list of products")
        products = []
        for number, entry in enumerate(data):
            try:
                products.append(self._product_of_entry(entry))
            except (TypeError, ValueError, KeyError) as e:
                log.warning("catalogue index %s: entry %d skipped: %s", index, number, e)
        self._index_key, self._index_products = key, products
        return products

    def _product_of_entry(self, entry: Any) -> Product:
        if not isinstance(entry, Mapping):
            raise TypeError("not an object")
        if entry.get("type") == "Feature":  # GeoJSON feature: properties beside the geometry
            entry = {**dict(entry.get("properties") or {}), "geometry": entry.get("geometry"),
                     "id": entry.get("id")}
        title = entry.get("title") or entry.get("name") or entry.get("id")
        if not title:
            raise KeyError("no title")
        title = str(title)
        footprint = entry.get("footprint")
        box: BBox | None = None
        if footprint:
            footprint = str(footprint)
            box = bbox_of_wkt(footprint)
        elif entry.get("geometry"):
            footprint = wkt_of_geojson(entry["geometry"])
            box = bbox_of_geojson(entry["geometry"])
        elif entry.get("bbox") is not None:
            raw = entry["bbox"]
            parts = raw.split(",") if isinstance(raw, str) else list(raw)
            if len(parts) != 4:
                raise ValueError("bbox must be [west, south, east, north]")
            w, s, e, n = (float(v) for v in parts)
            box = (w, s, e, n)
        link = entry.get("link") or entry.get("url") or entry.get("href")
        path = entry.get("path") or entry.get("file")
        file_name = None
        if not link and path:
            base = self.index.parent if self.index else Path.cwd()
            full = (base / str(path)).resolve()
            link, file_name = full.as_uri(), full.name
        if not link:
            raise KeyError("no link or path")
        facts = facts_from_name(title)
        facts.update(facts_from_tags({k: v for k, v in entry.items() if not isinstance(v, Mapping | list)}))
        facts.setdefault("serial", serial_from_name(title))
        if "date" in entry and "begin" not in facts:
            facts["begin"] = _date(entry["date"])
        size = entry.get("size")
        extra = entry.get("properties")
        return replace(Product(
            title=title, link=str(link), id=str(entry.get("id") or ""), footprint=footprint, bbox=box,
            size=_int(size), preview=_opt(entry.get("preview")), summary=_opt(entry.get("summary")),
            volume_name=_opt(entry.get("volumeName")), volume_path=_opt(entry.get("volumePath")),
            file_name=file_name or _opt(entry.get("fileName")),
            extra={str(k): str(v) for k, v in extra.items() if v is not None} if isinstance(extra, Mapping) else {},
        ), **{k: v for k, v in facts.items() if v is not None})


def _opt(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def _within(moment: datetime | None, lo: datetime | None, hi: datetime | None) -> bool:
    if lo is None and hi is None:
        return True
    if moment is None:
        return False
    return (lo is None or moment >= lo) and (hi is None or moment <= hi)


def _polarisation_matches(wanted: str, have: str | None) -> bool:
    if not have:
        return False
    want = {p for p in re.split(r"[+ ,&]+", wanted.upper()) if p}
    got = {p for p in re.split(r"[+ ,&]+", have.upper()) if p}
    return want <= got


def _sort_key(sortedby: str | None) -> Any:
    field_name = (sortedby or "").strip().lower()
    floor = datetime.min.replace(tzinfo=UTC)
    if field_name == "title":
        return lambda p: (p.title.lower(), p.link)
    if field_name == "cloudcoverpercentage":
        return lambda p: (p.cloud if p.cloud is not None else 101.0, p.title.lower())
    if field_name == "size":
        return lambda p: (p.size or 0, p.title.lower())
    if field_name == "endposition":
        return lambda p: (p.end or p.begin or floor, p.title.lower())
    return lambda p: (p.begin or floor, p.title.lower(), p.link)


__all__ = ["LocalCatalogue", "Product", "facts_from_name", "facts_from_tags", "read_raster", "title_of"]
