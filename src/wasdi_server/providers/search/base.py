"""The search-provider interface, and the geometry and formatting helpers the providers share."""

from __future__ import annotations

import fnmatch
import math
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from wasdi_sdk.models import DataProviderViewModel, QueryResultViewModel

from ...dates import iso_z
from ...search_grammar import SearchQuery

QueryResult = QueryResultViewModel
"""What a provider finds: the contract's ``QueryResultViewModel``."""

BBox = tuple[float, float, float, float]
"""``(west, south, east, north)`` in degrees (GeoJSON order)."""

SORT_KEYS = ("ingestiondate", "beginposition", "endposition", "title", "cloudcoverpercentage", "size")


@dataclass(frozen=True)
class LinkFacts:
    """What a search result tells an import of its link: the product name of its item (when the link's file
    name does not say it), the asset's checksum (a ``file:checksum`` multihash, hex), and the item's properties."""

    name: str | None = None
    checksum: str | None = None
    properties: dict[str, str] = field(default_factory=dict)
    provider: str | None = None
    """The code of the provider that found it (whose credentials a download of it uses)."""


class DownloadAuth(Protocol):
    """How a provider's downloads authenticate: a signed URL (Planetary Computer) or headers for its own hosts
    (a bearer token for Copernicus Data Space).  Neither is ever logged."""

    def serves(self, url: str) -> bool:
        """Whether ``url`` is on one of the provider's own hosts (its credentials are for those only)."""

    def signed_url(self, url: str) -> str:
        """The URL to fetch for ``url`` (``url`` itself where nothing is to be signed)."""

    def headers_for(self, url: str) -> dict[str, str]:
        """Headers for a request to ``url`` (only for the provider's own hosts: none for any other)."""


class SearchProviderError(Exception):
    """The provider could not answer (unreachable, refused, answered something unreadable, misconfigured)."""


class SearchProvider(ABC):
    """One data provider: counts and pages through the products matching a ``SearchQuery``.

    ``platforms`` is the set of platforms the provider holds (``None``: any); with AUTO the
    server asks, in order, the providers configured for the query's platform.  ``page_size`` is
    how many results ``/search/querylist`` asks for at a time (``None``: the server's default).
    A provider signals failure by raising ``SearchProviderError`` (or returning a negative count);
    the server then moves to the next provider.
    """

    code: str = ""
    description: str = ""
    link: str = ""
    platforms: frozenset[str] | None = None
    page_size: int | None = None
    download_auth: DownloadAuth | None = None
    """How downloads of this provider's links authenticate (``None``: they need nothing)."""

    def supports(self, platform: str | None) -> bool:
        if self.platforms is None:
            return True
        return platform is not None and platform.lower() in {p.lower() for p in self.platforms}

    def view_model(self) -> DataProviderViewModel:
        return DataProviderViewModel(code=self.code, description=self.description or self.code, link=self.link or None)

    @abstractmethod
    def count(self, query: SearchQuery) -> int:
        """How many products match ``query``."""

    @abstractmethod
    def search(self, query: SearchQuery, offset: int, limit: int, sortedby: str | None = None,
               order: str | None = None) -> list[QueryResult]:
        """The page ``[offset, offset + limit)`` of the products matching ``query``.

        ``sortedby`` is one of ``SORT_KEYS`` (``ingestiondate`` by default; a provider that cannot
        sort that way keeps its own order), ``order`` is ``asc`` or ``desc``.
        """

    def close(self) -> None:  # noqa: B027  (optional hook: most providers hold nothing)
        """Release what the provider holds (nothing by default)."""


# -- geometry ----------------------------------------------------------------------------------
_NUMBER_PAIR = re.compile(r"(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s+(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)")


def bbox_of_wkt(wkt: str | None) -> BBox | None:
    """The bounding box of every ``x y`` pair in a WKT text; ``None`` when there is none."""
    if not wkt:
        return None
    xs: list[float] = []
    ys: list[float] = []
    for x, y in _NUMBER_PAIR.findall(wkt):
        xs.append(float(x))
        ys.append(float(y))
    if not xs:
        return None
    return min(xs), min(ys), max(xs), max(ys)


def wkt_of_bbox(box: BBox) -> str:
    """``POLYGON((w s,w n,e n,e s,w s))``."""
    w, s, e, n = (_fmt(v) for v in box)
    return f"POLYGON(({w} {s},{w} {n},{e} {n},{e} {s},{w} {s}))"


def _fmt(value: float) -> str:
    return f"{value:.6f}".rstrip("0").rstrip(".") if math.isfinite(value) else "0"


def _ring(coords: Iterable[Any]) -> str:
    return "(" + ",".join(f"{_fmt(float(p[0]))} {_fmt(float(p[1]))}" for p in coords) + ")"


def wkt_of_geojson(geometry: Mapping[str, Any] | None) -> str | None:
    """The WKT of a GeoJSON geometry (Point, LineString, Polygon, Multi*); ``None`` when unreadable."""
    if not isinstance(geometry, Mapping):
        return None
    kind = geometry.get("type")
    coords = geometry.get("coordinates")
    try:
        if kind == "Point":
            return f"POINT({_fmt(float(coords[0]))} {_fmt(float(coords[1]))})"  # type: ignore[index]
        if kind == "LineString":
            return "LINESTRING" + _ring(coords)  # type: ignore[arg-type]
        if kind == "Polygon":
            return "POLYGON(" + ",".join(_ring(r) for r in coords) + ")"  # type: ignore[union-attr]
        if kind == "MultiPolygon":
            return "MULTIPOLYGON(" + ",".join("(" + ",".join(_ring(r) for r in poly) + ")"
                                              for poly in coords) + ")"  # type: ignore[union-attr]
        if kind == "MultiPoint":
            return "MULTIPOINT" + _ring(coords)  # type: ignore[arg-type]
    except (TypeError, ValueError, IndexError, KeyError):
        return None
    return None


def bbox_of_geojson(geometry: Mapping[str, Any] | None) -> BBox | None:
    return bbox_of_wkt(wkt_of_geojson(geometry))


def intersects(a: BBox, b: BBox) -> bool:
    return a[0] <= b[2] and b[0] <= a[2] and a[1] <= b[3] and b[1] <= a[3]


def query_bbox(query: SearchQuery) -> BBox | None:
    return query.bbox


# -- formatting --------------------------------------------------------------------------------
def summary_text(date: datetime | None, instrument: str | None, mode: str | None, platform: str | None,
                 size: str | None) -> str:
    """``Date: ..., Instrument: ..., Mode: ..., Satellite: ..., Size: ...`` (the original's summary)."""
    parts = [("Date", iso_z(date) if date else None), ("Instrument", instrument), ("Mode", mode),
             ("Satellite", platform), ("Size", size)]
    return ", ".join(f"{label}: {value}" for label, value in parts if value)


def string_properties(values: Mapping[str, Any]) -> dict[str, str]:
    """A properties map of strings (``None`` members left out, lists joined with spaces)."""
    out: dict[str, str] = {}
    for key, value in values.items():
        if value is None or value == "":
            continue
        if isinstance(value, bool):
            out[key] = "true" if value else "false"
        elif isinstance(value, float) and value.is_integer():
            out[key] = str(int(value)) if key in ("relativeorbitnumber", "absoluteorbit") else str(value)
        elif isinstance(value, Sequence) and not isinstance(value, str):
            out[key] = " ".join(str(v) for v in value)
        elif isinstance(value, datetime):
            out[key] = iso_z(value)
        else:
            out[key] = str(value)
    return out


def order_is_desc(order: str | None) -> bool:
    return (order or "").strip().lower() == "desc"


def text_matches(wanted: str | None, have: str | None, *, contains: bool = False) -> bool:
    """The providers' one text rule, case-insensitive: a pattern with ``*``/``?`` must match the whole
    text; plain text must equal it (or, with ``contains``, be contained in it, as a product name is)."""
    if not wanted:
        return True
    if not have:
        return False
    w, h = wanted.lower(), have.lower()
    if any(c in w for c in "*?["):
        return fnmatch.fnmatchcase(h, w)
    return w in h if contains else w == h
