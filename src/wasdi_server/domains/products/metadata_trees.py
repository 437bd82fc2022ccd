"""Metadata trees: the metadata of a product as the MetadataViewModel tree clients show (file facts, archive
members, and what GDAL tells of the raster: its tags, its bands' statistics and tags)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from ...dates import SECONDS_Z, format_ms
from .readers import MAX_TAGS, MAX_TEXT, OpenGuard, ProductInfo, read_product, short_error


def attribute(description: str, data: Any) -> dict[str, Any]:
    """An AttributeViewModel (``dataType``/``numElems`` are always 0, as the original readers leave them)."""
    text = data if isinstance(data, str) else repr(data) if isinstance(data, float) else str(data)
    return {"description": str(description)[:MAX_TEXT], "data": text[:MAX_TEXT], "dataType": 0, "numElems": 0}


def element(name: str, attributes: list[dict[str, Any]] | None = None,
            elements: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A MetadataViewModel (empty lists are left out, as the original server does with nulls)."""
    out: dict[str, Any] = {"name": name}
    if elements:
        out["elements"] = elements
    if attributes:
        out["attributes"] = attributes
    return out


def metadata_tree(path: Path, guard: OpenGuard | None = None) -> dict[str, Any]:
    """The metadata of a product as a MetadataViewModel dict (root name = the file name)."""
    info = read_product(path, guard)
    file_element = element("File", [
        attribute("name", info.file_name), attribute("size", info.size),
        attribute("lastModified", format_ms(info.modified_ms, SECONDS_Z)),
        attribute("format", info.driver or "unknown"),
    ])
    children = [file_element]
    if info.members:
        children.append(element("Archive members", [attribute(str(i + 1), m) for i, m in
                                                     enumerate(info.members[:MAX_TAGS])]))
    if not info.readable:
        note = info.note or "not a raster format this server can read"
        children.insert(0, element(f"File-level metadata only: {note}"))
        return element(info.file_name, [attribute("description", f"File-level metadata only: {note}")], children)
    sources = list(dict.fromkeys(b.source for b in info.bands))
    try:
        children += _raster_elements(sources[0], info, guard)
    except Exception as e:  # the bands were readable a moment ago; keep what we have
        children.append(element(f"Raster details unavailable: {short_error(e, path)}"))
    if len(sources) > 1:  # SNAP products: one source per band
        children.append(element("Band files", [attribute(b.name, Path(b.source).name) for b in info.bands]))
    return element(info.file_name, [attribute("format", info.driver)], children)


def _tags_element(name: str, tags: dict[str, str]) -> dict[str, Any] | None:
    items = sorted(tags.items())[:MAX_TAGS]
    return element(name, [attribute(k, v) for k, v in items]) if items else None


def _raster_elements(gdal_path: str, info: ProductInfo, guard: OpenGuard | None = None) -> list[dict[str, Any]]:
    import rasterio

    if guard is not None:
        guard(gdal_path)

    out: list[dict[str, Any]] = []
    with rasterio.Env(CPL_LOG="/dev/null"), rasterio.open(gdal_path) as src:
        out.append(element("Dataset", [
            attribute("driver", src.driver), attribute("width", src.width), attribute("height", src.height),
            attribute("count", src.count), attribute("dtypes", ",".join(sorted(set(src.dtypes)))),
        ]))
        for domain in [None, *[d for d in (src.tag_namespaces() or []) if d not in ("DERIVED_SUBDATASETS",)]]:
            with contextlib.suppress(Exception):
                tags = src.tags(ns=domain) if domain else src.tags()
                built = _tags_element(f"Tags ({domain})" if domain else "Tags", tags)
                if built:
                    out.append(built)
        crs_attrs = [attribute("crs", info.crs or "none")]
        if src.crs:
            epsg = src.crs.to_epsg()
            if epsg:
                crs_attrs.append(attribute("epsg", epsg))
            crs_attrs.append(attribute("wkt", src.crs.to_wkt()))
        out.append(element("CRS", crs_attrs))
        t = src.transform
        out.append(element("Transform", [attribute(k, v) for k, v in zip("abcdef", (t.a, t.b, t.c, t.d, t.e, t.f),
                                                                          strict=True)]))
        bound_elements = []
        if info.bounds:
            bound_elements.append(element("Native", [attribute(k, v) for k, v in
                                                     zip(("left", "bottom", "right", "top"), info.bounds,
                                                         strict=True)]))
        if info.wgs84_bounds:
            bound_elements.append(element("WGS84", [attribute(k, v) for k, v in
                                                    zip(("west", "south", "east", "north"), info.wgs84_bounds,
                                                        strict=True)]))
            bound_elements.append(element("Footprint", [attribute("bbox", info.bbox)]))
        if bound_elements:
            out.append(element("Bounds", elements=bound_elements))
        bands = []
        for i in range(src.count):
            index = i + 1
            attrs = [attribute("index", index), attribute("dtype", src.dtypes[i]),
                     attribute("description", src.descriptions[i] or "")]
            if src.nodatavals[i] is not None:
                attrs.append(attribute("nodata", src.nodatavals[i]))
            if src.scales and src.scales[i] not in (None, 1.0):
                attrs.append(attribute("scale", src.scales[i]))
            if src.offsets and src.offsets[i] not in (None, 0.0):
                attrs.append(attribute("offset", src.offsets[i]))
            if src.units and src.units[i]:
                attrs.append(attribute("units", src.units[i]))
            with contextlib.suppress(Exception):
                attrs.append(attribute("colorinterp", src.colorinterp[i].name))
            band_tags = _tags_element("Tags", src.tags(index))
            name = info.bands[i].name if i < len(info.bands) else f"band_{index}"
            bands.append(element(name, attrs, [band_tags] if band_tags else None))
        if bands:
            out.append(element("Bands", elements=bands))
    return out

