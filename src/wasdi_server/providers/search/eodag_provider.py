"""``eodag``: any provider EODAG knows (the field's library for searching and downloading from many providers;
the optional extra ``[eodag]``), searched through EODAG and downloaded through this server's outbound guard with
EODAG's own credentials.

- The query becomes one ``EODataAccessGateway.search`` of the EODAG provider ``provider``: the collection from the
  product type (``product_types``, e.g. ``S2MSI2A`` → ``S2_MSI_L2A``) or the platform (``collections``, e.g.
  ``Sentinel-2`` → ``S2_MSI_L2A``), ``geom`` from the footprint, ``start``/``end`` from the dates, and the cloud
  cover (``eo:cloud_cover``) as EODAG's queryable; a platform with neither map is this provider's failure.
- ``url`` (optional) adds a STAC API as a provider of EODAG's own under the name ``provider`` (its ``/search``
  endpoint), with ``stac_collections`` mapping EODAG collections to that API's collections and ``auth_plugin``
  the configuration of EODAG's authentication plugin for it (e.g. ``HTTPHeaderAuth``).
- The product name is matched here (plain text contained in the id, ``*``/``?`` patterns), over pages.
- Results are the products' STAC form (``EOProduct.as_dict``), read as the ``stac`` provider reads items, in the
  provider's own order (EODAG sorts only for the providers it knows sortable; this one asks none).
- Counts: EODAG's ``number_matched``, else the products counted over pages up to ``max_count``.
- Downloads: the link is the asset's ``href`` (or the product's remote location); the server fetches it itself,
  through its outbound guard, with the headers and URL EODAG's authentication plugin for that provider and link
  gives (``credentials`` — e.g. ``username``/``password`` — go to EODAG's configuration of the provider).  EODAG's
  own downloader is not used: it would reach the network around the guard.
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ...search_grammar import SearchQuery
from .base import QueryResult, SearchProvider, SearchProviderError, text_matches
from .stac import DEFAULT_ASSET_KEYS, DEFAULT_PREVIEW_KEYS, item_result

log = logging.getLogger("wasdi_server.search.eodag")

DEFAULT_EODAG_COLLECTIONS: dict[str, str] = {
    "Sentinel-1": "S1_SAR_GRD", "Sentinel-2": "S2_MSI_L2A", "Sentinel-3": "S3_OLCI_L1B_EFR",
    "Landsat-*": "LANDSAT_C2L2", "DEM": "COP_DEM_GLO30_DGED",
}
DEFAULT_EODAG_PRODUCT_TYPES: dict[str, str] = {
    "S2MSI1C": "S2_MSI_L1C", "S2MSI2A": "S2_MSI_L2A", "GRD": "S1_SAR_GRD", "SLC": "S1_SAR_SLC",
}
INSTALL = "EODAG is not installed: pip install 'wasdi-toolkit[eodag]'"


class EodagProvider(SearchProvider):
    """A provider of EODAG; see the module docstring."""

    def __init__(self, code: str, provider: str, *, url: str = "", description: str = "", link: str = "",
                 platforms: frozenset[str] | None = None, page_size: int | None = 50,
                 collections: Mapping[str, str] | None = None, product_types: Mapping[str, str] | None = None,
                 stac_collections: Mapping[str, str] | None = None, credentials: Mapping[str, str] | None = None,
                 asset_keys: Sequence[str] | None = None, preview_keys: Sequence[str] | None = None,
                 auth_hosts: Sequence[str] | None = None, auth_plugin: Mapping[str, Any] | None = None,
                 max_count: int = 10_000) -> None:
        if not provider:
            raise ValueError(f"the EODAG provider {code} needs provider (the name EODAG knows it by)")
        try:
            from eodag import EODataAccessGateway
        except ImportError as e:
            raise ValueError(f"search provider {code}: {INSTALL}") from e
        self.code = code
        self.provider = provider
        self.description = description or f"{provider} (EODAG)"
        self.link = link or url
        self.collections = dict(DEFAULT_EODAG_COLLECTIONS if collections is None else collections)
        self.product_types = {k.upper(): v for k, v in
                              (DEFAULT_EODAG_PRODUCT_TYPES if product_types is None else product_types).items()}
        self.platforms = platforms if platforms is not None else frozenset(self.collections)
        self.page_size = page_size
        self.asset_keys = tuple(asset_keys or DEFAULT_ASSET_KEYS)
        self.preview_keys = tuple(preview_keys or DEFAULT_PREVIEW_KEYS)
        self.max_count = max(1, max_count)
        # EODAG writes its configuration under EODAG_CFG_DIR (default ~/.config/eodag): a folder of this server's
        os.environ.setdefault("EODAG_CFG_DIR", tempfile.mkdtemp(prefix="wasdi-eodag-"))
        self._lock = threading.Lock()
        self.dag = EODataAccessGateway()
        if url:
            products = {eodag_name: {"_collection": stac_name} for eodag_name, stac_name in
                        (stac_collections or {}).items()}
            products["GENERIC_COLLECTION"] = {"_collection": "{collection}"}
            extra: dict[str, Any] = {"auth": dict(auth_plugin)} if auth_plugin else {}
            self.dag.add_provider(provider, url.rstrip("/") + "/search", products=products, **extra)
        elif provider not in self.dag.available_providers():
            raise ValueError(f"search provider {code}: EODAG knows no provider {provider!r}")
        if credentials and not auth_hosts:
            raise ValueError(f"search provider {code}: with credentials, auth_hosts must name the hosts its "
                             "downloads come from (the credentials go to no other host)")
        if credentials:
            self.dag.update_providers_config(dict_conf={provider: {"auth": {"credentials": dict(credentials)}}})
        self.download_auth = EodagDownloadAuth(self, tuple(auth_hosts or ()))

    # -- the interface -----------------------------------------------------------------------
    def count(self, query: SearchQuery) -> int:
        if not query.product_name:
            first = self._first_page(query)
            if first.number_matched is not None:
                return int(first.number_matched)
        return sum(1 for _ in self._walk(query, None, None, stop=self.max_count))

    def search(self, query: SearchQuery, offset: int, limit: int, sortedby: str | None = None,
               order: str | None = None) -> list[QueryResult]:
        offset, limit = max(0, offset), max(0, limit)
        if limit == 0:
            return []
        # EODAG follows the API's own paging (next links): the walk starts at the first page
        walked = self._walk(query, sortedby, order, stop=offset + limit)
        return [self._result(feature) for index, feature in enumerate(walked) if index >= offset]

    # -- EODAG -------------------------------------------------------------------------------
    def collection_for(self, query: SearchQuery) -> str:
        if query.product_type and query.product_type.upper() in self.product_types:
            return self.product_types[query.product_type.upper()]
        platform = query.platform_name or ""
        found = next((v for k, v in self.collections.items() if k.lower() == platform.lower()), None)
        if not found:
            raise SearchProviderError(f"{self.code} has no EODAG collection for the platform {platform or '(none)'}")
        return found

    def _arguments(self, query: SearchQuery, sortedby: str | None, order: str | None) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"collection": self.collection_for(query), "provider": self.provider,
                                  "raise_errors": True}
        if query.bbox is not None:
            west, south, east, north = query.bbox
            kwargs["geom"] = {"lonmin": west, "latmin": south, "lonmax": east, "latmax": north}
        try:
            start, end = query.interval()
        except ValueError as e:
            raise SearchProviderError(str(e)) from e
        if start is not None:
            kwargs["start"] = start.strftime("%Y-%m-%dT%H:%M:%SZ")
        if end is not None:
            kwargs["end"] = end.strftime("%Y-%m-%dT%H:%M:%SZ")
        if query.cloud_coverage_to is not None:
            kwargs["eo:cloud_cover"] = query.cloud_coverage_to
        return kwargs

    def _first_page(self, query: SearchQuery) -> Any:
        arguments = {**self._arguments(query, None, None), "limit": 1, "count": True}
        try:
            with self._lock:  # one gateway, its plugins not made for threads
                return self.dag.search(**arguments)
        except Exception as e:  # EODAG's errors are many; any is this provider's failure
            raise SearchProviderError(f"{self.code}: EODAG's search failed: {type(e).__name__}: "
                                      f"{str(e)[:300]}") from e

    def _walk(self, query: SearchQuery, sortedby: str | None, order: str | None, *, stop: int) -> Iterator[Any]:
        """Every product (as a STAC item) passing the name test, page after page as the API links them, until
        ``stop`` of them (or ``max_count`` read)."""
        arguments = self._arguments(query, sortedby, order)
        size = self.page_size or 50
        pages = self.dag.search_iter_page(items_per_page=size, **arguments)
        kept = read = 0
        while read < self.max_count:
            try:
                with self._lock:
                    page = next(pages)
            except StopIteration:
                return
            except Exception as e:
                raise SearchProviderError(f"{self.code}: EODAG's search failed: {type(e).__name__}: "
                                          f"{str(e)[:300]}") from e
            for product in page:
                read += 1
                feature = product.as_dict()
                if text_matches(query.product_name, str(feature.get("id") or ""), contains=True):
                    yield feature
                    kept += 1
                    if kept >= stop:
                        return

    def _result(self, feature: Mapping[str, Any]) -> QueryResult:
        return item_result(feature, code=self.code, asset_keys=self.asset_keys, preview_keys=self.preview_keys)


class EodagDownloadAuth:
    """EODAG's authentication of the provider, as headers and a URL for this server's own download."""

    def __init__(self, owner: EodagProvider, hosts: tuple[str, ...]) -> None:
        self.owner = owner
        self.hosts = hosts

    def __repr__(self) -> str:
        return f"EodagDownloadAuth({self.owner.provider!r})"

    def serves(self, url: str) -> bool:
        from .credentials import host_matches

        return bool(self.hosts) and host_matches(url, self.hosts)

    def _prepared(self, url: str) -> Any:
        import requests

        prepared = requests.Request("GET", url).prepare()
        with self.owner._lock:
            auth = self.owner.dag._plugins_manager.get_auth(self.owner.provider, url)  # EODAG's per-link auth
        if auth is not None and callable(auth):
            prepared = auth(prepared)
        return prepared

    def signed_url(self, url: str) -> str:
        if not self.serves(url):
            return url
        return str(self._prepared(url).url or url)

    def headers_for(self, url: str) -> dict[str, str]:
        if not self.serves(url):
            return {}
        import requests

        plain = requests.Request("GET", url).prepare().headers
        prepared = self._prepared(url)
        return {k: v for k, v in prepared.headers.items() if plain.get(k) != v}  # what the authentication added


__all__ = ["DEFAULT_EODAG_COLLECTIONS", "DEFAULT_EODAG_PRODUCT_TYPES", "EodagDownloadAuth", "EodagProvider"]
