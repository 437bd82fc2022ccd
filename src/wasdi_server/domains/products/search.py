"""Search: parse the query, check mission access, ask the providers (AUTO: in order, with fallback).

Rules (the contract's "Search", gaps §6, and our choices where both are silent):

- The platform is the parsed query's; the caller must have access to the mission whose
  ``indexvalue`` is that platform (public, owned, shared, or the caller is an admin).  No platform,
  or one with no mission entry: denied (Forbidden).
- ``providers``: omitted, empty or ``AUTO`` → the providers configured for the platform, tried in
  order, moving on when one fails (raises) or gives a negative count.  A comma-separated list
  (the web client's ``providers=a,b``) is tried in that order the same way; ``AUTO`` inside it
  expands to the platform's providers.  An unknown code: BadRequest.
- AUTO with no provider for the platform is not a failure: nothing can hold such products, so the
  count is 0, a page is empty and ``querylist`` adds nothing for that query.  Every candidate
  failing is a failure (ServerFailure).
- ``/search/query``: offset/limit/sortedby/order arrive as strings; defaults 0, 25,
  ``ingestiondate``, ``asc``; a value that is not a number (or a negative offset, a limit below 1)
  takes the default; the limit is capped at ``MAX_PAGE_LIMIT``.  Every result is tagged with the
  detected platform; with AUTO requested its provider is ``AUTO``.
- ``/search/querylist``: for each query, the provider's count, then pages of the provider's page size
  (or the server's, default 100) until the count is reached, a page comes back empty, or the safety
  cap of ``2 * ceil(total / pageSize)`` pages; a page failing moves to the next provider (that
  provider's partial results are dropped).  Results of all queries are merged, duplicates (same
  provider, link and title) removed, each tagged with its query's platform and its provider set to
  the requested string.
- Any malformed query, any denied one, an empty list: the whole call fails.
- What an import of a found link should know is remembered per link (the last ``LINKS_REMEMBERED`` links):
  the item's product name when the link's file name does not name it (every Earth Search scene's true colour
  asset is ``TCI.tif``: an import of the link alone is then named ``<item id>.tif``), the asset's checksum,
  and the item's properties (kept as the product's metadata).
"""

from __future__ import annotations

import logging
import math
import re
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote, urlsplit

from wasdi_sdk.models import DataProviderViewModel, QueryResultViewModel

from ...bounded_cache import BoundedCache
from ...errors import BadRequest, Forbidden, ServerFailure
from ...providers.search import AUTO, SearchProvider, SearchProviders
from ...providers.search.base import LinkFacts
from ...search_grammar import SearchQuery, parse_query
from ..accounts.identity import User
from .missions import MissionService

log = logging.getLogger("wasdi_server.search")

DEFAULT_OFFSET = 0
DEFAULT_LIMIT = 25
DEFAULT_SORTED_BY = "ingestiondate"
DEFAULT_ORDER = "asc"
MAX_PAGE_LIMIT = 1000
MAX_QUERIES = 100
"""Query strings one countlist/querylist call may carry."""
LINKS_REMEMBERED = 20_000
"""Links remembered with what an import of them should know (see the module docstring)."""
LINK_FACTS_BYTES = 32 * 1024**2


def item_product_name(link: str | None, title: str | None) -> str | None:
    """``<title><extension of the link>`` when the link's file name does not contain the item's title."""
    if not link or not title:
        return None
    file_name = unquote(PurePosixPath(urlsplit(link).path).name)
    if not file_name or title.lower() in file_name.lower():
        return None
    suffix = PurePosixPath(file_name).suffix
    if suffix and re.fullmatch(r"\.[A-Za-z0-9]{1,10}", suffix) and not title.lower().endswith(suffix.lower()):
        return title + suffix
    return title


def page_params(offset: str | None, limit: str | None, sortedby: str | None,
                order: str | None) -> tuple[int, int, str, str]:
    """The paging of ``/search/query`` from its string parameters, defaults where a value is bad."""
    start = _number(offset, DEFAULT_OFFSET, minimum=0)
    size = min(_number(limit, DEFAULT_LIMIT, minimum=1), MAX_PAGE_LIMIT)
    sort = (sortedby or "").strip() or DEFAULT_SORTED_BY
    direction = (order or "").strip().lower()
    return start, size, sort, direction if direction in ("asc", "desc") else DEFAULT_ORDER


def _number(text: str | None, default: int, *, minimum: int) -> int:
    try:
        value = int(str(text).strip())
    except (TypeError, ValueError):
        return default
    return value if value >= minimum else default


class SearchService:
    def __init__(self, missions: MissionService, providers: SearchProviders) -> None:
        self.missions = missions
        self.providers = providers
        self._links: BoundedCache[str, LinkFacts] = BoundedCache(LINKS_REMEMBERED, max_weight=LINK_FACTS_BYTES)

    def facts_for_link(self, link: str) -> LinkFacts | None:
        """What a search found at ``link``: its item's product name, checksum and properties."""
        return self._links.get(link)

    def _remember_links(self, results: list[QueryResultViewModel]) -> None:
        for result in results:
            if not result.link:
                continue
            properties = {k: v for k, v in (result.properties or {}).items() if isinstance(v, str) and v}
            facts = LinkFacts(name=item_product_name(result.link, result.title), checksum=properties.get("checksum"),
                              properties=properties, provider=result.provider)
            self._links.put(result.link, facts, weight=sum(len(k) + len(v) for k, v in properties.items()) + 64)

    # -- the endpoints -----------------------------------------------------------------------
    def list_providers(self) -> list[DataProviderViewModel]:
        return [p.view_model() for p in self.providers.providers]

    def count(self, user: User, text: Any, providers: str | None) -> int:
        query = self.prepare(user, text)
        return self._count(query, providers)

    def query(self, user: User, text: Any, providers: str | None, offset: str | None = None, limit: str | None = None,
              sortedby: str | None = None, order: str | None = None) -> list[QueryResultViewModel]:
        query = self.prepare(user, text)
        start, size, sort, direction = page_params(offset, limit, sortedby, order)
        candidates = self.candidates(providers, query.platform_name)
        errors: list[str] = []
        for provider in candidates:
            try:
                found = provider.search(query, start, size, sort, direction)
            except Exception as e:  # any provider failure moves on to the next one
                errors.append(self._failed(provider, "search", e))
                continue
            auto = _is_auto(providers)
            self._remember_links(found)
            for result in found:
                result.platform = query.platform_name
                if auto:
                    result.provider = AUTO
            return found
        if errors:
            raise ServerFailure("every provider failed: " + "; ".join(errors))
        return []

    def count_list(self, user: User, texts: Any, providers: str | None) -> int:
        queries = self.prepare_all(user, texts)
        return sum(self._count(query, providers) for query in queries)

    def query_list(self, user: User, texts: Any, providers: str | None) -> list[QueryResultViewModel]:
        queries = self.prepare_all(user, texts)
        requested = (providers or "").strip() or AUTO
        merged: list[QueryResultViewModel] = []
        seen: set[tuple[str | None, str | None, str | None]] = set()
        for query in queries:
            found = self._all_pages(query, providers)
            self._remember_links(found)  # before the provider is set to the requested string
            for result in found:
                result.platform = query.platform_name
                result.provider = requested
                key = (result.provider, result.link, result.title)
                if key not in seen:
                    seen.add(key)
                    merged.append(result)
        return merged

    # -- the steps ---------------------------------------------------------------------------
    def prepare(self, user: User, text: Any) -> SearchQuery:
        """The parsed query, once the caller may search its mission (BadRequest / Forbidden otherwise)."""
        query = parse_query(text)
        self.check_mission(user, query.platform_name)
        return query

    def prepare_all(self, user: User, texts: Any) -> list[SearchQuery]:
        if not isinstance(texts, list) or not texts:
            raise BadRequest("expected a non-empty JSON array of query strings")
        if len(texts) > MAX_QUERIES:
            raise BadRequest(f"at most {MAX_QUERIES} queries in one call")
        return [self.prepare(user, text) for text in texts]

    def check_mission(self, user: User, platform: str | None) -> None:
        if not platform:
            raise Forbidden("the query names no platform (mission)")
        for mission in self.missions.all():
            if str(mission.get("indexvalue")) == platform:
                if self.missions.can_access(user, mission):
                    return
                raise Forbidden(f"no access to the mission {platform}")
        raise Forbidden(f"no mission for the platform {platform}")

    def candidates(self, providers: str | None, platform: str | None) -> list[SearchProvider]:
        """The providers to try, in order (see the module docstring)."""
        codes = [c.strip() for c in (providers or "").split(",") if c.strip()] or [AUTO]
        out: list[SearchProvider] = []
        for code in codes:
            if code.upper() == AUTO:
                found = self.providers.for_platform(platform)
            else:
                provider = self.providers.get(code)
                if provider is None:
                    raise BadRequest(f"unknown search provider {code[:60]!r}")
                found = [provider]
            out.extend(p for p in found if p not in out)
        return out

    def _count(self, query: SearchQuery, providers: str | None) -> int:
        errors: list[str] = []
        for provider in self.candidates(providers, query.platform_name):
            try:
                found = provider.count(query)
            except Exception as e:
                errors.append(self._failed(provider, "count", e))
                continue
            if isinstance(found, int) and found >= 0:
                return found
            errors.append(f"{provider.code}: invalid count {found!r}")
        if errors:
            raise ServerFailure("every provider failed: " + "; ".join(errors))
        return 0

    def _all_pages(self, query: SearchQuery, providers: str | None) -> list[QueryResultViewModel]:
        """Every result of one query from the first provider that answers it whole."""
        errors: list[str] = []
        for provider in self.candidates(providers, query.platform_name):
            try:
                return self._pages(provider, query)
            except Exception as e:
                errors.append(self._failed(provider, "querylist", e))
        if errors:
            raise ServerFailure("every provider failed: " + "; ".join(errors))
        return []

    def _pages(self, provider: SearchProvider, query: SearchQuery) -> list[QueryResultViewModel]:
        total = provider.count(query)
        if not isinstance(total, int) or total < 0:
            raise ValueError(f"invalid count {total!r}")
        page_size = self.providers.page_size(provider)
        max_pages = 2 * math.ceil(total / page_size)
        results: list[QueryResultViewModel] = []
        pages = 0
        while len(results) < total and pages < max_pages:
            limit = min(page_size, total - len(results))
            page = provider.search(query, len(results), limit, None, None)
            pages += 1
            if not page:
                break
            results.extend(page)
        return results

    @staticmethod
    def _failed(provider: SearchProvider, what: str, error: Exception) -> str:
        log.warning("search provider %s failed (%s): %s", provider.code, what, error)
        return f"{provider.code}: {error}"


def _is_auto(providers: str | None) -> bool:
    text = (providers or "").strip()
    return not text or text.upper() == AUTO
