"""Search providers (``LOCAL``, ``STAC``) and the registry that picks them per platform.

``services.search`` holds a ``SearchProviders`` built from the settings (``docs/search.md``):

- ``search_providers``: a list of tables, each ``code`` (unique), ``type`` (``local``, ``stac`` or ``eodag``,
  ``eodag_provider.py``; a
  ``preset`` of ``presets.py`` — ``earth-search``, ``planetary-computer``, ``copernicus-dataspace`` — fills a
  ``stac`` provider's options, so two lines make one),
  optional ``description``, ``link``, ``platforms`` (what AUTO may ask it for; default: any for
  ``local``, the mapped platforms for ``stac``), ``page_size`` (``/search/querylist`` paging),
  ``enabled`` (default true) and the options of its type (``LocalCatalogue``: ``folder``,
  ``index``, ``default_platform``, ``max_files``; ``StacProvider``: ``url``, ``collections``,
  ``product_types``, ``type_properties``, ``asset_keys``, ``preview_keys``, ``headers``,
  ``timeout``, ``filter_mode``, ``sortable``, ``paging``, ``max_pages``, ``max_count``, and how downloads
  authenticate: ``auth`` ``oidc`` with ``token_url``, ``client_id``, ``username``, ``password`` or
  ``password_env``, ``auth_hosts``; ``auth`` ``sas`` with ``sign_url``, ``auth_hosts``).  Relative
  paths are relative to the data directory.  A JSON string is accepted too (for an environment
  variable).
- ``search_catalogues``: platform → ordered provider codes, the AUTO order (``"*"``: every other
  platform).  A platform with no entry gets every provider that supports it, in the order above.
- The built-in ``LOCAL`` catalogue: ``search_catalogue_dir`` (default ``<data_dir>/catalogue`` when
  that folder exists) and ``search_catalogue_index`` (default ``<catalogue dir>/index.json`` when it
  exists).  It is added after the configured providers unless one of them is called ``LOCAL``, and
  supports every platform, so a server with a local catalogue can search any mission.

A mistake in this configuration (an unknown type or option, a duplicate code, a catalogue naming an
unknown provider) stops the server at start with a ``ValueError`` that says what is wrong.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .base import DownloadAuth, QueryResult, SearchProvider, SearchProviderError
from .credentials import OidcPasswordToken, SasSigner
from .local import LocalCatalogue
from .presets import PRESETS, with_preset
from .stac import StacProvider

if TYPE_CHECKING:
    from ...settings import Settings

log = logging.getLogger("wasdi_server.search")

AUTO = "AUTO"
LOCAL = "LOCAL"
DEFAULT_PAGE_SIZE = 100
COMMON_OPTIONS = frozenset({"code", "type", "description", "link", "platforms", "page_size", "enabled"})
EODAG_OPTIONS = frozenset({"provider", "url", "collections", "product_types", "stac_collections", "credentials",
                           "asset_keys", "preview_keys", "auth_hosts", "auth_plugin", "max_count"})
AUTH_OPTIONS = frozenset({"auth", "token_url", "client_id", "username", "password", "password_env", "sign_url",
                          "auth_hosts"})
LOCAL_OPTIONS = frozenset({"folder", "path", "index", "default_platform", "max_files"})
STAC_OPTIONS = frozenset({"url", "collections", "product_types", "type_properties", "asset_keys", "preview_keys",
                          "headers", "timeout", "connect_timeout", "read_timeout", "filter_mode", "name_filter",
                          "sortable", "paging", "max_pages", "max_count",
                          "count_limit"})

__all__ = [
    "AUTO",
    "LOCAL",
    "PRESETS",
    "DownloadAuth",
    "LocalCatalogue",
    "QueryResult",
    "SearchProvider",
    "SearchProviderError",
    "SearchProviders",
    "StacProvider",
]


class SearchProviders:
    """The configured providers, in order, and the AUTO order per platform."""

    def __init__(self, providers: Sequence[SearchProvider] = (), catalogues: Mapping[str, Sequence[str]] | None = None,
                 default_page_size: int = DEFAULT_PAGE_SIZE) -> None:
        self.providers = list(providers)
        self.by_code: dict[str, SearchProvider] = {}
        for provider in self.providers:
            key = provider.code.upper()
            if not provider.code or key == AUTO or key in self.by_code:
                raise ValueError(f"search provider code {provider.code!r} is empty, reserved or used twice")
            self.by_code[key] = provider
        self.catalogues: dict[str, list[str]] = {}
        for platform, codes in (catalogues or {}).items():
            listed = [codes] if isinstance(codes, str) else list(codes)
            unknown = [c for c in listed if str(c).upper() not in self.by_code]
            if unknown:
                names = ", ".join(map(str, unknown))
                raise ValueError(f"search_catalogues[{platform!r}] names unknown providers: {names}")
            self.catalogues[str(platform).lower()] = [str(c).upper() for c in listed]
        self.default_page_size = default_page_size if default_page_size > 0 else DEFAULT_PAGE_SIZE

    def get(self, code: str) -> SearchProvider | None:
        return self.by_code.get(code.strip().upper())

    def for_platform(self, platform: str | None) -> list[SearchProvider]:
        """The AUTO order for ``platform``: its catalogue entry, else ``"*"``, else every provider supporting it."""
        codes = self.catalogues.get((platform or "").lower())
        if codes is None:
            codes = self.catalogues.get("*")
        if codes is not None:
            return [self.by_code[c] for c in codes]
        return [p for p in self.providers if p.supports(platform)]

    def page_size(self, provider: SearchProvider) -> int:
        size = provider.page_size
        return size if isinstance(size, int) and size > 0 else self.default_page_size

    def close(self) -> None:
        for provider in self.providers:
            try:
                provider.close()
            except Exception:  # closing must reach every provider
                log.exception("closing search provider %s", provider.code)

    # -- from the settings -------------------------------------------------------------------
    @classmethod
    def from_settings(cls, settings: Settings) -> SearchProviders:
        data_dir = Path(settings.data_dir)
        raw = _json_or(getattr(settings, "search_providers", None) or [], "search_providers")
        if not isinstance(raw, list):
            raise ValueError("search_providers must be a list of provider tables")
        providers = [build_provider(entry, data_dir) for entry in raw
                     if not (isinstance(entry, Mapping) and entry.get("enabled") is False)]
        builtin = builtin_local(settings)
        if builtin is not None and not any(p.code.upper() == LOCAL for p in providers):
            providers.append(builtin)
        catalogues = _json_or(getattr(settings, "search_catalogues", None) or {}, "search_catalogues")
        if not isinstance(catalogues, Mapping):
            raise ValueError("search_catalogues must map platforms to lists of provider codes")
        return cls(providers, catalogues, int(getattr(settings, "search_page_size", DEFAULT_PAGE_SIZE) or 0))


def _json_or(value: Any, name: str) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError as e:
            raise ValueError(f"{name} is not valid JSON: {e}") from e
    return value


def _resolve(data_dir: Path, value: Any) -> Path:
    path = Path(str(value)).expanduser()
    return path if path.is_absolute() else data_dir / path


def builtin_local(settings: Settings) -> LocalCatalogue | None:
    """The ``LOCAL`` catalogue of ``search_catalogue_dir`` / ``search_catalogue_index`` (or their defaults)."""
    data_dir = Path(settings.data_dir)
    folder_setting = getattr(settings, "search_catalogue_dir", "") or ""
    index_setting = getattr(settings, "search_catalogue_index", "") or ""
    folder: Path | None = _resolve(data_dir, folder_setting) if folder_setting else data_dir / "catalogue"
    if not folder_setting and not folder.is_dir():  # type: ignore[union-attr]
        folder = None
    index: Path | None = _resolve(data_dir, index_setting) if index_setting else None
    if index is None and folder is not None and (folder / "index.json").is_file():
        index = folder / "index.json"
    if folder is None and index is None:
        return None
    return LocalCatalogue(LOCAL, folder=folder, index=index, description="Local catalogue")


def build_provider(entry: Any, data_dir: Path) -> SearchProvider:
    """One provider from its settings table; ``ValueError`` naming the mistake."""
    if not isinstance(entry, Mapping):
        raise ValueError("each search provider must be a table with code and type")
    entry = with_preset(dict(entry))
    code = str(entry.get("code") or "").strip()
    kind = str(entry.get("type") or "").strip().lower()
    if not code:
        raise ValueError("a search provider has no code")
    kinds: dict[str, frozenset[str]] = {"local": LOCAL_OPTIONS, "stac": STAC_OPTIONS | AUTH_OPTIONS,
                                        "eodag": EODAG_OPTIONS}
    if kind not in kinds:
        raise ValueError(f"search provider {code}: type must be local, stac or eodag, not {kind!r}")
    allowed = COMMON_OPTIONS | kinds[kind]
    unknown = sorted(set(entry) - allowed)
    if unknown:
        raise ValueError(f"search provider {code}: unknown options {', '.join(unknown)}")
    options = {k: v for k, v in entry.items() if k not in COMMON_OPTIONS}
    common: dict[str, Any] = {"description": str(entry.get("description") or ""),
                              "link": str(entry.get("link") or "")}
    platforms = entry.get("platforms")
    if platforms is not None:
        common["platforms"] = frozenset([platforms] if isinstance(platforms, str) else map(str, platforms))
    if entry.get("page_size") is not None:
        common["page_size"] = int(entry["page_size"])
    try:
        if kind == "local":
            folder = options.pop("folder", None) or options.pop("path", None)
            index = options.pop("index", None)
            return LocalCatalogue(code, folder=_resolve(data_dir, folder) if folder else None,
                                  index=_resolve(data_dir, index) if index else None, **common, **options)
        if kind == "eodag":
            from .eodag_provider import EodagProvider  # EODAG is an optional extra, and slow to import

            return EodagProvider(code, str(options.pop("provider", "") or ""), **common, **options)
        auth = download_auth(code, {k: options.pop(k) for k in AUTH_OPTIONS if k in options},
                             float(options.get("read_timeout") or options.get("timeout") or 20.0))
        provider = StacProvider(code, str(options.pop("url", "") or ""), **common, **options)
        provider.download_auth = auth
        return provider
    except TypeError as e:
        raise ValueError(f"search provider {code}: {e}") from e


def download_auth(code: str, options: dict[str, Any], timeout: float) -> DownloadAuth | None:
    """How the provider's downloads authenticate, from its ``auth`` options; ``ValueError`` naming what is missing."""
    kind = str(options.get("auth") or "none").strip().lower()
    hosts = options.get("auth_hosts") or []
    hosts = [hosts] if isinstance(hosts, str) else [str(h) for h in hosts]
    if kind == "none":
        return None
    if kind == "oidc":
        password = str(options.get("password") or "")
        variable = str(options.get("password_env") or "")
        if not password and variable:
            password = os.environ.get(variable, "")
        missing = [name for name, value in (("username", options.get("username")), ("password", password),
                                            ("token_url", options.get("token_url")), ("auth_hosts", hosts))
                   if not value]
        if missing:
            where = f" (the environment variable {variable} is empty)" if variable and not password else ""
            raise ValueError(f"search provider {code}: its downloads need {', '.join(missing)}{where}")
        return OidcPasswordToken(str(options["token_url"]), str(options.get("client_id") or ""),
                                 str(options["username"]), password, hosts, timeout=timeout)
    if kind == "sas":
        if not options.get("sign_url") or not hosts:
            raise ValueError(f"search provider {code}: signed links need sign_url and auth_hosts")
        return SasSigner(str(options["sign_url"]), hosts, timeout=timeout)
    raise ValueError(f"search provider {code}: auth must be none, oidc or sas, not {kind!r}")
