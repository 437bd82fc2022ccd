"""``STAC``: a STAC API (Earth Search, Copernicus Data Space, Planetary Computer style) over httpx.

A query becomes one ``POST {url}/search`` (STAC API - Item Search):

- ``collections``: from the product type when the provider maps it (``product_types``, e.g.
  ``S2MSI1C`` → ``sentinel-2-l1c``), else from the platform (``collections``, e.g. ``Sentinel-2`` →
  ``sentinel-2-l2a``); a platform with neither is this provider's failure (AUTO moves on).  An
  unmapped product type is sent as a property filter (``type_properties``, e.g. Sentinel-1's
  ``sar:product_type``);
- ``bbox`` ``[west, south, east, north]`` and ``datetime`` ``<from>/<to>`` (``..`` when open) from the
  footprint and the begin/end ranges;
- cloud cover (``eo:cloud_cover``), relative and absolute orbit (``sat:relative_orbit``,
  ``sat:absolute_orbit``), sensor mode (``sar:instrument_mode``) and the satellite serial
  (``platform``) as a ``query`` (Query extension, the default) or a CQL2-JSON ``filter``
  (``filter_mode = "cql2"``), or not at all (``"none"``);
- the product name (plain text is contained in the item id, ``*``/``?`` match the whole id, case aside):
  a CQL2 ``like`` on ``id`` where the API has the Filter extension (its landing page's ``conformsTo``;
  ``name_filter = "auto"``, the default) or always (``"cql2"``); otherwise (``"client"``, or an API
  without the extension) the provider walks the pages and keeps the matching items itself;
- ``limit``, and ``sortby`` when the provider is ``sortable``.

Paging follows the ``next`` links (GET, or POST with a ``body`` merged when ``merge`` is true);
an API without them but with ``context`` can page with a ``page`` number (``paging = "page"``).
Where a page ends is remembered, so ``/search/querylist`` walks the results once, not once per
page.  A count is ``numberMatched`` or ``context.matched`` of a one-item search, else the items
counted over pages of ``page_size`` (the API's largest page, 1,000 by default: one request per page) up to
``max_count``.  Each request has a connect and a read deadline (``connect_timeout`` 5 s, ``read_timeout``
20 s): a catalogue that accepts the connection and never answers fails this provider (AUTO moves on).

A result's ``title``/``id`` is the item id, ``footprint`` the WKT of its geometry, ``link`` the
href of the first asset among ``asset_keys`` (else the first asset with the ``data`` role, else the
item's ``self`` link), ``preview`` its thumbnail, and ``properties`` strings: ``date``,
``beginposition``, ``endposition``, ``platform``, ``platformname``, ``instrument``,
``producttype``, ``cloudcoverpercentage``, ``relativeorbitnumber``, ``absoluteorbit``,
``sensoroperationalmode``, ``polarisationmode``, ``orbitdirection``, ``collection`` and ``size``
when the asset has ``file:size``.
"""

from __future__ import annotations

import contextlib
import copy
import fnmatch
import json
import logging
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

import httpx

from wasdi_sdk.units import search_size

from ...bounded_cache import BoundedCache
from ...dates import iso_z
from ...search_grammar import SearchQuery, canonical_platform, parse_instant
from .base import (
    QueryResult,
    SearchProvider,
    SearchProviderError,
    order_is_desc,
    string_properties,
    summary_text,
    text_matches,
    wkt_of_bbox,
    wkt_of_geojson,
)

log = logging.getLogger("wasdi_server.search.stac")

DEFAULT_COLLECTIONS: dict[str, tuple[str, ...]] = {
    "Sentinel-1": ("sentinel-1-grd",),
    "Sentinel-2": ("sentinel-2-l2a",),
    "Landsat-*": ("landsat-c2-l2",),
    "DEM": ("cop-dem-glo-30",),
}
DEFAULT_PRODUCT_TYPES: dict[str, tuple[str, ...]] = {
    "S2MSI1C": ("sentinel-2-l1c",),
    "S2MSI2A": ("sentinel-2-l2a",),
    "GRD": ("sentinel-1-grd",),
}
DEFAULT_TYPE_PROPERTIES: dict[str, str] = {
    "Sentinel-1": "sar:product_type",
    "Sentinel-2": "s2:product_type",
}
DEFAULT_ASSET_KEYS: tuple[str, ...] = ("product", "PRODUCT", "data", "visual", "image", "vv", "elevation", "red",
                                       "B04")
DEFAULT_PREVIEW_KEYS: tuple[str, ...] = ("thumbnail", "rendered_preview", "preview", "QUICKLOOK", "overview")
SORT_FIELDS = {"ingestiondate": "properties.datetime", "beginposition": "properties.datetime",
               "endposition": "properties.datetime", "title": "id",
               "cloudcoverpercentage": "properties.eo:cloud_cover"}
SERIAL_PLATFORMS = {"Sentinel-1": "sentinel-1", "Sentinel-2": "sentinel-2"}
DEFAULT_PAGE_SIZE = 1000
"""The largest page most STAC APIs serve (Earth Search, Planetary Computer, pgstac, Copernicus Data Space)."""
NAME_FILTERS = ("auto", "cql2", "client")
_FILTER_CONFORMANCE = ("/item-search#filter", "/cql2/1.0/conf/basic-cql2", "/filter/1.0/conf/filter")
_CASEI_CONFORMANCE = "/cql2/1.0/conf/case-insensitive-comparison"
CURSOR_CACHE = 64
_STAC_PLATFORM = re.compile(r"^sentinel-?(1|2|3|5p|6)([a-d])?$", re.IGNORECASE)
_LANDSAT = re.compile(r"^landsat-?(\d)$", re.IGNORECASE)


def platform_of_item(raw: str | None) -> str | None:
    """Our platform name of a STAC ``platform`` value (``sentinel-2a`` → ``Sentinel-2``)."""
    if not raw:
        return None
    sentinel = _STAC_PLATFORM.match(raw.strip())
    if sentinel:
        return canonical_platform(f"Sentinel-{sentinel.group(1).upper()}")
    landsat = _LANDSAT.match(raw.strip())
    if landsat:
        return f"Landsat-{landsat.group(1)}" if landsat.group(1) in ("5", "7") else "Landsat-*"
    return canonical_platform(raw)


def _mapping(value: Mapping[str, Any] | None, default: Mapping[str, Sequence[str]]) -> dict[str, tuple[str, ...]]:
    source = default if value is None else value
    out: dict[str, tuple[str, ...]] = {}
    for key, item in source.items():
        out[str(key)] = (item,) if isinstance(item, str) else tuple(str(v) for v in item)
    return out


class StacProvider(SearchProvider):
    """A STAC API; see the module docstring for the request it sends and how it reads the answer."""

    def __init__(self, code: str, url: str, *, description: str = "", link: str = "",
                 platforms: frozenset[str] | None = None, page_size: int | None = DEFAULT_PAGE_SIZE,
                 collections: Mapping[str, Any] | None = None, product_types: Mapping[str, Any] | None = None,
                 type_properties: Mapping[str, str] | None = None, asset_keys: Sequence[str] | None = None,
                 preview_keys: Sequence[str] | None = None, headers: Mapping[str, str] | None = None,
                 timeout: float | None = None, connect_timeout: float = 5.0, read_timeout: float = 20.0,
                 filter_mode: str = "query", name_filter: str = "auto", sortable: bool = True,
                 paging: str = "links", max_pages: int = 100, max_count: int = 10_000, count_limit: int = 1,
                 transport: httpx.BaseTransport | None = None) -> None:
        if not url:
            raise ValueError(f"the STAC provider {code} needs a url")
        if filter_mode not in ("query", "cql2", "none"):
            raise ValueError(f"filter_mode of {code} must be query, cql2 or none")
        if paging not in ("links", "page"):
            raise ValueError(f"paging of {code} must be links or page")
        if name_filter not in NAME_FILTERS:
            raise ValueError(f"name_filter of {code} must be auto, cql2 or client")
        if connect_timeout <= 0 or read_timeout <= 0 or (timeout is not None and timeout <= 0):
            raise ValueError(f"the timeouts of {code} must be positive numbers of seconds")
        self.code = code
        self.url = url.rstrip("/")
        self.description = description or code
        self.link = link or self.url
        self.collections = _mapping(collections, DEFAULT_COLLECTIONS)
        self.product_types = {k.upper(): v for k, v in _mapping(product_types, DEFAULT_PRODUCT_TYPES).items()}
        self.type_properties = dict(DEFAULT_TYPE_PROPERTIES if type_properties is None else type_properties)
        self.platforms = platforms if platforms is not None else frozenset(self.collections)
        self.page_size = page_size
        self.asset_keys = tuple(asset_keys or DEFAULT_ASSET_KEYS)
        self.preview_keys = tuple(preview_keys or DEFAULT_PREVIEW_KEYS)
        self.headers = {"Accept": "application/geo+json, application/json", **dict(headers or {})}
        # ``timeout`` is the older name of the read deadline
        self.timeout = httpx.Timeout(float(timeout if timeout is not None else read_timeout),
                                     connect=float(connect_timeout))
        self.filter_mode = filter_mode
        self.name_filter = name_filter
        self._conformance: frozenset[str] | None = None
        self._client_lock = threading.Lock()
        self._http: httpx.Client | None = None
        self.sortable = sortable
        self.paging = paging
        self.max_pages = max(1, max_pages)
        self.max_count = max(1, max_count)
        self.count_limit = max(1, count_limit)
        self.transport = transport
        self._cursors: BoundedCache[tuple[str, int], tuple[str, str, dict[str, Any] | None, dict[str, Any]]] = \
            BoundedCache(CURSOR_CACHE)

    # -- the interface -----------------------------------------------------------------------
    def count(self, query: SearchQuery) -> int:
        with self._client() as client:
            keep = self._client_name_filter(client, query)
            if keep is None:
                body = self.search_body(query, limit=self.count_limit, sortedby=None, order=None, client=client)
                page = self._request(client, "POST", f"{self.url}/search", body)
                matched = _matched(page)
                if matched is not None:
                    return matched
                if not self._next(page, body):  # one page held it all
                    return len([f for f in page["features"] if isinstance(f, dict)])
            # walk the largest pages the API serves: one request per page, not per item
            body = self.search_body(query, limit=self.page_size or DEFAULT_PAGE_SIZE, sortedby=None, order=None,
                                    client=client)
            page = self._request(client, "POST", f"{self.url}/search", body)
            total = 0
            for _ in self._items(client, body, page, key=None, start=0, keep=keep):
                total += 1
                if total >= self.max_count:
                    log.warning("%s: counting stopped at %d items (max_count)", self.code, total)
                    break
            return total

    def search(self, query: SearchQuery, offset: int, limit: int, sortedby: str | None = None,
               order: str | None = None) -> list[QueryResult]:
        offset, limit = max(0, offset), max(0, limit)
        if limit == 0:
            return []
        out: list[QueryResult] = []
        with self._client() as client:
            keep = self._client_name_filter(client, query)
            # filtering here, the pages are read whole: their size is the API's largest
            page_limit = (self.page_size or DEFAULT_PAGE_SIZE) if keep else min(self.page_size or limit, limit)
            body = self.search_body(query, limit=page_limit, sortedby=sortedby, order=order, client=client)
            key = json.dumps({k: v for k, v in body.items() if k != "limit"}, sort_keys=True)
            start, method, url, request_body, base = self._resume(key, offset, body)
            page = self._request(client, method, url, request_body)
            for index, item in self._items(client, base, page, key=key, start=start, keep=keep):
                if index < offset:
                    continue
                out.append(self.result(item))
                if len(out) >= limit:
                    break
        return out

    # -- the request -------------------------------------------------------------------------
    def collections_for(self, query: SearchQuery) -> tuple[list[str], str | None]:
        """The collections to search, and a product type left to filter on (when not mapped)."""
        product_type = query.product_type
        if product_type and product_type.upper() in self.product_types:
            return list(self.product_types[product_type.upper()]), None
        platform = query.platform_name or ""
        found = next((v for k, v in self.collections.items() if k.lower() == platform.lower()), None)
        if found is None:
            found = next((v for k, v in self.collections.items() if fnmatch.fnmatchcase(platform.lower(), k.lower())),
                         None)
        if not found:
            raise SearchProviderError(f"{self.code} has no STAC collection for the platform {platform or '(none)'}")
        return list(found), product_type or None

    def search_body(self, query: SearchQuery, *, limit: int, sortedby: str | None, order: str | None,
                    client: httpx.Client | None = None) -> dict[str, Any]:
        """The ``POST /search`` body of ``query``; ``client`` lets it ask the API's conformance (for the name)."""
        collections, loose_type = self.collections_for(query)
        body: dict[str, Any] = {"collections": collections, "limit": max(1, limit)}
        if query.bbox is not None:
            body["bbox"] = list(query.bbox)
        try:
            start, end = query.interval()
        except ValueError as e:  # the parser checked the dates; keep the provider total anyway
            raise SearchProviderError(str(e)) from e
        if start is not None or end is not None:
            body["datetime"] = f"{iso_z(start) if start else '..'}/{iso_z(end) if end else '..'}"
        conditions: list[tuple[str, str, Any]] = []
        name_like = self._name_like(client, query)
        if name_like is not None:
            conditions.append(name_like)
        if query.cloud_coverage_from is not None:
            conditions.append(("eo:cloud_cover", "gte", query.cloud_coverage_from))
        if query.cloud_coverage_to is not None:
            conditions.append(("eo:cloud_cover", "lte", query.cloud_coverage_to))
        if query.relative_orbit is not None:
            conditions.append(("sat:relative_orbit", "eq", query.relative_orbit))
        if query.absolute_orbit is not None:
            conditions.append(("sat:absolute_orbit", "eq", query.absolute_orbit))
        if query.sensor_mode:
            conditions.append(("sar:instrument_mode", "eq", query.sensor_mode))
        if loose_type:
            prop = self.type_properties.get(query.platform_name or "", "product:type")
            conditions.append((prop, "eq", loose_type))
        serial_prefix = SERIAL_PLATFORMS.get(query.platform_name or "")
        if query.platform_serial_identifier and serial_prefix:
            conditions.append(("platform", "eq", serial_prefix + query.platform_serial_identifier.lower()))
        if conditions and self.filter_mode == "query" and name_like is None:
            body["query"] = {}
            for prop, op, value in conditions:
                body["query"].setdefault(prop, {})[op] = value
        elif conditions and (self.filter_mode == "cql2" or name_like is not None):
            args = [_cql2(prop, op, value) for prop, op, value in conditions]
            body["filter-lang"] = "cql2-json"
            body["filter"] = args[0] if len(args) == 1 else {"op": "and", "args": args}
        if self.sortable and sortedby:
            field_name = SORT_FIELDS.get(sortedby.strip().lower(), "properties.datetime")
            body["sortby"] = [{"field": field_name, "direction": "desc" if order_is_desc(order) else "asc"}]
        return body

    # -- the product name ----------------------------------------------------------------------
    def _name_on_server(self, client: httpx.Client | None, query: SearchQuery) -> bool:
        if not query.product_name or self.name_filter == "client":
            return False
        if self.name_filter == "cql2":
            return True
        return self.filter_mode != "none" and client is not None and any(
            c.endswith(_FILTER_CONFORMANCE) for c in self.conformance(client))

    def _name_like(self, client: httpx.Client | None, query: SearchQuery) -> tuple[str, str, Any] | None:
        """The CQL2 ``like`` condition on the item id, where the API filters names itself."""
        if not self._name_on_server(client, query):
            return None
        name = str(query.product_name)
        pattern = "".join("%" if c == "*" else "_" if c == "?" else "\\" + c if c in "%_\\" else c for c in name)
        if not any(c in name for c in "*?"):
            pattern = f"%{pattern}%"
        casei = client is not None and any(c.endswith(_CASEI_CONFORMANCE) for c in self.conformance(client))
        return ("id", "like_casei" if casei else "like", pattern)

    def _client_name_filter(self, client: httpx.Client,
                            query: SearchQuery) -> Callable[[Mapping[str, Any]], bool] | None:
        """The test an item must pass here, where the API cannot filter by name (``None``: nothing to test)."""
        if not query.product_name or self._name_on_server(client, query):
            return None
        wanted = str(query.product_name)
        return lambda item: text_matches(wanted, str(item.get("id") or ""), contains=True)

    def conformance(self, client: httpx.Client) -> frozenset[str]:
        """The API's conformance classes (its landing page's ``conformsTo``), asked once; none if it will not say."""
        if self._conformance is None:
            classes: frozenset[str] = frozenset()
            try:
                response = client.get(f"{self.url}/")
                landing = response.json() if response.status_code == 200 else {}
                raw = landing.get("conformsTo") if isinstance(landing, Mapping) else None
                if isinstance(raw, list):
                    classes = frozenset(str(c).rstrip("/") for c in raw)
            except (httpx.HTTPError, ValueError) as e:
                log.info("%s: no conformance classes (%s): names are filtered here", self.code, type(e).__name__)
            self._conformance = classes
        return self._conformance

    def _client(self) -> contextlib.nullcontext[httpx.Client]:
        """The provider's one HTTP client (kept: a new one per search costs its TLS set-up and a connection)."""
        with self._client_lock:
            if self._http is None:
                self._http = httpx.Client(timeout=self.timeout, headers=self.headers, transport=self.transport,
                                          follow_redirects=True)
            return contextlib.nullcontext(self._http)

    def close(self) -> None:
        with self._client_lock:
            if self._http is not None:
                self._http.close()
                self._http = None

    def _request(self, client: httpx.Client, method: str, url: str, body: dict[str, Any] | None) -> dict[str, Any]:
        try:
            response = client.post(url, json=body or {}) if method == "POST" else client.get(url)
        except httpx.HTTPError as e:
            raise SearchProviderError(f"{self.code}: cannot reach {url}: {e}") from e
        if response.status_code >= 400:
            raise SearchProviderError(f"{self.code}: {method} {url} answered {response.status_code}: "
                                      f"{response.text[:300]}")
        try:
            page = response.json()
        except ValueError as e:
            raise SearchProviderError(f"{self.code}: {url} did not answer JSON") from e
        if not isinstance(page, dict) or not isinstance(page.get("features"), list):
            raise SearchProviderError(f"{self.code}: {url} did not answer a STAC ItemCollection")
        return page

    def _items(self, client: httpx.Client, base: dict[str, Any], page: dict[str, Any], *, key: str | None,
               start: int, keep: Callable[[Mapping[str, Any]], bool] | None = None,
               ) -> Iterator[tuple[int, dict[str, Any]]]:
        """Every item from ``page`` on (those ``keep`` passes), with its index in the whole result;
        remembers where pages end.

        ``base`` is the body of the last POST: a POST ``next`` link with ``merge`` is merged into it
        (also after GET pages in between).
        """
        index = start
        for _ in range(self.max_pages):
            received = [f for f in page["features"] if isinstance(f, dict)]
            following = self._next(page, base) if received else None
            features = [f for f in received if keep(f)] if keep is not None else received
            if following is not None:
                method, url, body = following
                if body is not None:
                    base = body
                if key is not None:  # before yielding: the reader may stop mid-page
                    self._remember(key, index + len(features), method, url, body, base)
            for feature in features:
                yield index, feature
                index += 1
            if following is None:
                return
            page = self._request(client, method, url, body)
        log.warning("%s: stopped after %d pages (max_pages)", self.code, self.max_pages)

    def _next(self, page: Mapping[str, Any],
              body: dict[str, Any]) -> tuple[str, str, dict[str, Any] | None] | None:
        for link in page.get("links") or ():
            if not isinstance(link, Mapping) or link.get("rel") != "next" or not link.get("href"):
                continue
            method = str(link.get("method") or "GET").upper()
            if method == "POST":
                raw = link.get("body")
                extra: dict[str, Any] = dict(raw) if isinstance(raw, Mapping) else {}
                merged = {**body, **extra} if link.get("merge") or not extra else dict(extra)
                return "POST", str(link["href"]), merged
            return "GET", str(link["href"]), None
        if self.paging == "page":
            matched = _matched(page)
            returned = len(page.get("features") or ())
            number = int(body.get("page") or 1)
            limit = int(body.get("limit") or returned or 1)
            if returned and (matched is None or number * limit < matched):
                return "POST", f"{self.url}/search", {**body, "page": number + 1}
        return None

    def _remember(self, key: str, index: int, method: str, url: str, body: dict[str, Any] | None,
                  base: dict[str, Any]) -> None:
        self._cursors.put((key, index), (method, url, copy.deepcopy(body), copy.deepcopy(base)))

    def _resume(self, key: str, offset: int,
                body: dict[str, Any]) -> tuple[int, str, str, dict[str, Any] | None, dict[str, Any]]:
        """Where to start reading for ``offset``: the nearest remembered page start at or before it."""
        best = max((i for (k, i) in self._cursors if k == key and i <= offset), default=None)
        cursor = self._cursors.get((key, best)) if best else None
        if best and cursor is not None:
            method, url, saved, base = cursor
            return best, method, url, copy.deepcopy(saved), copy.deepcopy(base)
        return 0, "POST", f"{self.url}/search", body, body

    # -- the answer --------------------------------------------------------------------------
    def result(self, item: Mapping[str, Any]) -> QueryResult:
        return item_result(item, code=self.code, asset_keys=self.asset_keys, preview_keys=self.preview_keys)

    @staticmethod
    def _asset(assets: Mapping[str, Any], keys: Sequence[str],
               roles: Sequence[str]) -> tuple[str | None, Mapping[str, Any] | None]:
        """The first asset named in ``keys``, else the first with each of ``roles`` in turn."""
        for key in keys:
            asset = assets.get(key)
            if isinstance(asset, Mapping) and asset.get("href"):
                return key, asset
        for role in roles:
            for key, asset in assets.items():
                if isinstance(asset, Mapping) and asset.get("href") and role in (asset.get("roles") or ()):
                    return str(key), asset
        return None, None


def item_result(item: Mapping[str, Any], *, code: str, asset_keys: Sequence[str],
                preview_keys: Sequence[str]) -> QueryResult:
    """A STAC item (a GeoJSON Feature, as a STAC API or EODAG gives it) as the contract's search result."""
    props = item.get("properties") if isinstance(item.get("properties"), Mapping) else {}
    assert isinstance(props, Mapping)
    assets = item.get("assets") if isinstance(item.get("assets"), Mapping) else {}
    assert isinstance(assets, Mapping)
    item_id = str(item.get("id") or "")
    geometry = item.get("geometry")
    footprint = wkt_of_geojson(geometry) if isinstance(geometry, Mapping) else None
    if footprint is None and isinstance(item.get("bbox"), list) and len(item["bbox"]) >= 4:
        box = item["bbox"]
        try:
            footprint = wkt_of_bbox((float(box[0]), float(box[1]), float(box[-2]), float(box[-1])))
        except (TypeError, ValueError):
            footprint = None
    # EODAG names assets after their files (TCI, not visual): the roles find them
    data_key, data = StacProvider._asset(assets, asset_keys, ("data", "visual"))
    _, preview = StacProvider._asset(assets, preview_keys, ("thumbnail", "overview"))
    link = _href(data) or _self_link(item)
    begin = _when(props.get("start_datetime") or props.get("datetime"))
    end = _when(props.get("end_datetime") or props.get("datetime"))
    size_bytes = data.get("file:size") if isinstance(data, Mapping) else None
    size = search_size(size_bytes) if isinstance(size_bytes, int | float) else None
    raw_platform = props.get("platform")
    platform = platform_of_item(str(raw_platform)) if raw_platform else None
    instruments = props.get("instruments")
    instrument = " ".join(str(i) for i in instruments) if isinstance(instruments, list) else None
    mode = props.get("sar:instrument_mode")
    product_type = props.get("s2:product_type") or props.get("sar:product_type") or props.get("product:type")
    values = {
        "date": begin, "beginposition": begin, "endposition": end, "platform": raw_platform,
        "platformname": platform, "instrument": instrument, "producttype": product_type,
        "cloudcoverpercentage": props.get("eo:cloud_cover"), "relativeorbitnumber": props.get("sat:relative_orbit"),
        "absoluteorbit": props.get("sat:absolute_orbit"), "sensoroperationalmode": mode,
        "polarisationmode": props.get("sar:polarizations"), "orbitdirection": props.get("sat:orbit_state"),
        "collection": item.get("collection"), "size": size, "sizeInBytes": size_bytes,
        "asset": data_key, "title": item_id,
        "checksum": data.get("file:checksum") if isinstance(data, Mapping) else None,
    }
    return QueryResult(
        id=item_id, title=item_id, link=link, footprint=footprint, provider=code, preview=_href(preview),
        summary=summary_text(begin, instrument, str(mode) if mode else None, platform, size),
        properties=string_properties(values), platform=platform,
    )


def _cql2(prop: str, op: str, value: Any) -> dict[str, Any]:
    """One CQL2-JSON comparison; ``like_casei`` compares both sides with ``casei``."""
    if op == "like_casei":
        return {"op": "like", "args": [{"op": "casei", "args": [{"property": prop}]},
                                       {"op": "casei", "args": [value]}]}
    ops = {"eq": "=", "gte": ">=", "lte": "<=", "like": "like"}
    return {"op": ops[op], "args": [{"property": prop}, value]}


def _href(asset: Mapping[str, Any] | None) -> str | None:
    """The asset's link: its ``href``, or where that is not http(s) (``s3://`` of Copernicus Data Space), the
    http(s) link among its ``alternate`` ones (the Alternate Assets extension)."""
    if not isinstance(asset, Mapping):
        return None
    href = str(asset.get("href") or "")
    if href and not href.lower().startswith(("http://", "https://")):
        alternates = asset.get("alternate")
        for alternate in alternates.values() if isinstance(alternates, Mapping) else ():
            other = str(alternate.get("href") or "") if isinstance(alternate, Mapping) else ""
            if other.lower().startswith(("http://", "https://")):
                return other
    return href or None


def _self_link(item: Mapping[str, Any]) -> str | None:
    for link in item.get("links") or ():
        if isinstance(link, Mapping) and link.get("rel") == "self" and link.get("href"):
            return str(link["href"])
    return None


def _when(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return parse_instant(value)
    except ValueError:
        return None


def _matched(page: Mapping[str, Any]) -> int | None:
    for value in (page.get("numberMatched"), (page.get("context") or {}).get("matched")
                  if isinstance(page.get("context"), Mapping) else None):
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return None


__all__ = ["DEFAULT_COLLECTIONS", "DEFAULT_PRODUCT_TYPES", "StacProvider", "item_result", "platform_of_item"]
