"""Build /search query strings exactly as the official ``wasdi`` library (``searchEOImages``) does.

>>> build_query("S2", "2023-01-01", "2023-01-31", bbox="46.0,7.0,45.0,8.0", product_type="S2MSI1C",
...             cloud_coverage="[0 TO 30]", orbit=22)  # doctest: +ELLIPSIS
'( footprint:"intersects(POLYGON(( 7.0 45.0,7.0 46.0,8.0 46.0,8.0 45.0,7.0 45.0)))") AND ( platformname:Sentinel-2  ...'

The result is byte for byte what the library sends, quirks included, so a server sees the same
text whichever client built it:

- the platform's short names map to the service's names (``S2`` → ``"Sentinel-2 "``, with a trailing
  space that gives a double space before ``AND``; ``L8`` → ``Landsat-*``; ``ENVI`` → ``Envisat``);
  any other value is used as given;
- the sensor mode is sent only for Sentinel-1 and the cloud cover only for Sentinel-2 (others are
  dropped silently, as the library does); VIIRS without a product type asks for
  ``VIIRS_1d_composite``;
- the date block has no space between ``]`` and ``AND endPosition`` and the query ends with ``") "``;
- coordinates are written with ``str()``: ``7.0`` stays ``7.0``, ``7`` stays ``7``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date, datetime
from typing import Any

PLATFORM_NAMES: dict[str, str] = {
    "S1": "Sentinel-1",
    "S2": "Sentinel-2 ",
    "S3": "Sentinel-3",
    "S5P": "Sentinel-5P",
    "VIIRS": "VIIRS",
    "L8": "Landsat-*",
    "ENVI": "Envisat",
    "ERA5": "ERA5",
}
"""The library's short platform names and what it writes for them (note ``"Sentinel-2 "``)."""
FIRST_DATE = "1957-10-04"
"""The library's start date when none is given (Sputnik 1)."""
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")

BoundingBox = str | tuple[float, float, float, float] | list[float] | Mapping[str, Mapping[str, float]]
"""``"N,W,S,E"``, ``(north, west, south, east)`` or ``{"northEast": {"lat", "lng"}, "southWest": {...}}``."""


def day(value: str | date | datetime | None, default: str) -> str:
    """A ``YYYY-MM-DD`` day; ``ValueError`` for anything else."""
    if value is None:
        return default
    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    text = str(value).strip()
    try:
        if not _DAY.fullmatch(text):
            raise ValueError(text)
        date.fromisoformat(text)  # the pattern lets 2024-13-01 through
    except ValueError:
        raise ValueError(f"{text!r} is not a date: give it as YYYY-MM-DD, e.g. 2024-01-31") from None
    return text


def corners(bbox: BoundingBox) -> tuple[Any, Any, Any, Any]:
    """``(north, west, south, east)`` of a bounding box given the ways the library accepts it.

    A ``"N,W,S,E"`` string is read as floats (so ``"46,7,45,8"`` writes ``46.0``), as the library does;
    a mapping's and a sequence's values are written as given.
    """
    if isinstance(bbox, str):
        parts = bbox.split(",")
        if len(parts) != 4:
            raise ValueError(f"a bounding box string is 'N,W,S,E', not {bbox!r}")
        north, west, south, east = (float(p) for p in parts)
        return north, west, south, east
    if isinstance(bbox, Mapping):
        return bbox["northEast"]["lat"], bbox["southWest"]["lng"], bbox["southWest"]["lat"], bbox["northEast"]["lng"]
    values = list(bbox)
    if len(values) != 4:
        raise ValueError("a bounding box is (north, west, south, east)")
    return values[0], values[1], values[2], values[3]


def footprint(north: Any, west: Any, south: Any, east: Any) -> str:
    """The library's footprint clause (ring SW → NW → NE → SE → SW, longitude first)."""
    w, s, n, e = str(west), str(south), str(north), str(east)
    return f'( footprint:"intersects(POLYGON(( {w} {s},{w} {n},{e} {n},{e} {s},{w} {s})))") AND '


def build_query(platform: str, date_from: str | date | datetime | None = None,
                date_to: str | date | datetime | None = None, *, bbox: BoundingBox | None = None,
                product_type: str | None = None, orbit: int | str | None = None, sensor_mode: str | None = None,
                cloud_coverage: str | tuple[float, float] | None = None, params: Mapping[str, str] | None = None,
                file_name: str | None = None, today: date | None = None) -> str:
    """The query string ``searchEOImages`` sends for these arguments.

    ``platform``: ``S1``, ``S2``, ``S3``, ``S5P``, ``VIIRS``, ``L8``, ``ENVI``, ``ERA5`` or a service
    platform name.  ``date_from``/``date_to``: days (default 1957-10-04 and today).  ``bbox``: see
    ``corners``.  ``cloud_coverage``: ``"[0 TO 30]"`` or ``(0, 30)`` (Sentinel-2 only).  ``orbit``:
    the relative orbit (an int, or a string of digits).  ``sensor_mode``: Sentinel-1 only.
    ``params``: extra ``key:value`` filters, in order.  ``file_name``: a product-name prefix glued in
    front of the platform block.
    """
    if not platform:
        raise ValueError("a platform is required")
    first = day(date_from, FIRST_DATE)
    last = day(date_to, (today or date.today()).isoformat())
    if first > last:
        raise ValueError(f"the first day, {first}, is after the last day, {last}: swap them")
    query = file_name or ""
    query += "( platformname:" + PLATFORM_NAMES.get(platform, platform)
    if product_type is not None:
        query += " AND producttype:" + str(product_type)
    elif platform == "VIIRS":
        query += " AND producttype:VIIRS_1d_composite"
    if sensor_mode is not None and platform == "S1":
        query += " AND sensoroperationalmode:" + str(sensor_mode)
    if cloud_coverage is not None and platform == "S2":
        if isinstance(cloud_coverage, tuple | list):
            lo, hi = cloud_coverage
            cloud_coverage = f"[{lo} TO {hi}]"
        query += " AND cloudcoverpercentage:" + str(cloud_coverage).upper()
    if orbit is not None:
        if isinstance(orbit, bool) or not (isinstance(orbit, int) or str(orbit).strip().isdigit()):
            raise ValueError(f"the orbit must be an integer, not {orbit!r}")
        query += " AND relativeorbitnumber:" + str(int(orbit))
    for key, value in (params or {}).items():
        query += " AND " + key + ":" + value
    query += ") "
    query += "AND ( beginPosition:[" + first + "T00:00:00.000Z TO " + last + "T23:59:59.999Z]"
    query += "AND endPosition:[" + first + "T00:00:00.000Z TO " + last + "T23:59:59.999Z]"
    query += ") "
    if bbox is not None:
        query = footprint(*corners(bbox)) + query
    return query


def request_body(*queries: str) -> str:
    """The JSON array body of ``/search/querylist`` and ``/search/query/countlist``, as the library writes it."""
    return "[" + ",".join('"' + q.replace('"', '\\"') + '"' for q in queries) + "]"


__all__ = ["FIRST_DATE", "PLATFORM_NAMES", "BoundingBox", "build_query", "corners", "day", "footprint",
           "request_body"]
