"""Server settings: defaults, then a TOML file, then ``WASDI_SERVER_*`` environment variables."""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

ENV_PREFIX = "WASDI_SERVER_"


@dataclass
class SmtpSettings:
    host: str = ""
    port: int = 587
    username: str = ""
    password: str = ""
    starttls: bool = True
    sender: str = "wasdi@localhost"


DEFAULT_PRICES_CENTS: dict[str, int] = {
    # subscription types (gaps §4)
    "Free": 0, "OneDayStandard": 1000, "OneWeekStandard": 5000, "OneMonthStandard": 15000,
    "OneYearStandard": 150000, "OneMonthProfessional": 50000, "OneYearProfessional": 500000,
    # credit package types
    "Fifty": 5000, "OneHundred": 9000,
}


@dataclass
class PaymentSettings:
    """The ``[payments]`` table: prices, currency and the payment providers (``{payprov}``)."""

    currency: str = "EUR"
    prices: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_PRICES_CENTS))
    """Price in cents per product code (subscription type id or credit package type); a TOML
    ``[payments.prices]`` table is merged over these defaults."""
    providers: list[str] | None = None
    """Enabled provider codes.  Unset: ``["local"]``, or ``["stripe"]`` alone once a Stripe key is
    set (the simulated checkout lets anyone mark their own purchase paid)."""
    stripe_api_key: str = ""
    """Secret key; also read from ``WASDI_SERVER_STRIPE_API_KEY``."""
    stripe_api_base: str = "https://api.stripe.com"
    stripe_timeout_seconds: float = 30.0

    @property
    def enabled(self) -> list[str]:
        if self.providers is not None:
            return [str(code).strip().lower() for code in self.providers]
        return ["stripe"] if self.stripe_api_key else ["local"]

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> PaymentSettings:
        values = dict(data)
        prices = {**DEFAULT_PRICES_CENTS, **{str(k): int(v) for k, v in dict(values.pop("prices", {})).items()}}
        return cls(prices=prices, **values)


@dataclass
class Settings:
    """Everything the server reads at start.  Paths are resolved against ``data_dir``."""

    data_dir: Path = Path(".wasdi-data")
    host: str = "127.0.0.1"
    port: int = 8080
    threads: int = 8
    public_url: str = ""
    """Base URL clients reach this server at (``apiUrl`` of workspaces, links in e-mails).
    Empty: derived from each request."""
    node_code: str = "wasdi"
    """Code of this node; ``wasdi`` is the main node."""
    cloud_provider: str = "local"
    sla_link: str = ""
    session_idle_hours: float = 24.0
    """A session expires after this long without use (sliding expiry)."""
    disable_authentication: bool = False
    """Development only: every login succeeds as a fixed admin user and every token maps to it."""
    activate_subscription_checks: bool = True
    admin_email: str = "admin@localhost"
    """Where feedback is mailed."""
    mail_sender: str = "wasdi@localhost"
    smtp: SmtpSettings = field(default_factory=SmtpSettings)
    missions_file: str = ""
    """JSON file of missions (``/auth/config``); empty: the built-in list."""
    default_skin: str = "wasdi"
    skins: dict[str, dict[str, Any]] = field(default_factory=dict)
    max_json_body_bytes: int = 10 * 1024 * 1024
    max_json_depth: int = 64
    """Deepest nesting of arrays and objects a JSON body may have; deeper bodies are refused (400)."""
    answer_cache_bytes: int = 64 * 1024 * 1024
    """Bytes of answers the listing cache may hold (least recently used out first); 0 turns it off."""
    max_param_length: int = 8192
    metrics_max_age_seconds: int = 600
    payments: PaymentSettings = field(default_factory=PaymentSettings)
    cors_allow_origins: list[str] = field(default_factory=list)
    """Origins a browser client may call from (``["*"]`` for any); empty: no CORS headers."""
    launcher_workers: int = 4
    """Operations of this node that may be RUNNING at once."""
    launcher_poll_seconds: float = 0.5
    max_upload_bytes: int = 64 * 1024**3
    """Largest request body the server accepts (product uploads)."""
    import_roots: list[str] = field(default_factory=list)
    """Folders ``file://`` imports may read (besides ``<data_dir>/imports``); env: paths joined by ``:``."""
    import_allowed_hosts: list[str] = field(default_factory=list)
    """Hosts (names, addresses or networks like ``10.0.0.0/24``) that http(s) imports may reach although
    they are loopback, private or link-local; everything else non-public is refused.  Env: comma separated."""
    import_timeout_seconds: float = 60.0
    """Connect/read timeout of http(s) imports (DOWNLOAD operations)."""
    map_server: str = "local"
    """Where bands are published: ``local`` (PNG layers served at ``/layers/{layerId}.png``)."""
    layer_max_pixels: int = 2048
    """Longest side of a layer drawn by the local map server."""
    search_providers: list[dict[str, Any]] = field(default_factory=list)
    """Search providers: ``[[search_providers]]`` tables with ``code``, ``type`` (``local`` or ``stac``)
    and their options (docs/search.md); env: a JSON list."""
    search_catalogues: dict[str, list[str]] = field(default_factory=dict)
    """AUTO order: platform (or ``"*"``) -> provider codes; unlisted platforms use every provider supporting them."""
    search_catalogue_dir: str = ""
    """Folder of the built-in ``LOCAL`` catalogue; empty: ``<data_dir>/catalogue`` when it exists."""
    search_catalogue_index: str = ""
    """JSON index of the built-in ``LOCAL`` catalogue; empty: ``<catalogue dir>/index.json`` when it exists."""
    search_page_size: int = 100
    """Page size of ``/search/querylist`` for providers without their own ``page_size``."""

    @property
    def files_root(self) -> Path:
        """Root of the workspace files: ``<files_root>/<owner>/<workspaceId>/<file>``."""
        return self.data_dir / "files"

    @property
    def uploads_root(self) -> Path:
        """Root of the file-transfer (upload account) folders: ``<uploads_root>/<userId>/``."""
        return self.data_dir / "uploads"

    @property
    def mail_dir(self) -> Path:
        return self.data_dir / "mail"

    @property
    def images_root(self) -> Path:
        """Root of the image collections: ``<images_root>/<collection>/[<folder>/]<name>``."""
        return self.data_dir / "images"

    @property
    def styles_root(self) -> Path:
        """Where the SLD files of the styles live: ``<styles_root>/<name>.sld``."""
        return self.data_dir / "styles"


def _coerce(kind: Any, value: Any) -> Any:
    if kind in (bool, "bool"):
        if isinstance(value, bool):
            return value
        return str(value).strip().lower() in ("1", "true", "yes", "on")
    if kind in (int, "int"):
        return int(value)
    if kind in (float, "float"):
        return float(value)
    if kind in (Path, "Path"):
        return Path(value)
    if isinstance(value, str) and str(kind).startswith(("list[", "dict[")):
        # From the environment: a JSON value, or (lists) a comma separated one.
        text = value.strip()
        if text.startswith(("[", "{")):
            return json.loads(text)
        if str(kind).startswith("list["):
            return [item.strip() for item in text.split(",") if item.strip()]
        raise ValueError(f"expected JSON for a {kind} setting, got {value[:40]!r}")
    return value


def load_settings(config_file: str | Path | None = None, environ: Mapping[str, str] | None = None,
                  **overrides: Any) -> Settings:
    """Defaults < TOML file < environment (``WASDI_SERVER_PORT=9000``) < explicit ``overrides``."""
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    path = config_file or env.get(ENV_PREFIX + "CONFIG")
    if path:
        with open(path, "rb") as handle:
            values.update(tomllib.load(handle))
    types = {f.name: f.type for f in fields(Settings)}
    for name, kind in types.items():
        raw = env.get(ENV_PREFIX + name.upper())
        if raw is not None and name not in ("smtp", "skins", "payments"):
            values[name] = _coerce(kind, raw)
    for name, value in overrides.items():
        if value is not None:
            values[name] = value
    unknown = set(values) - set(types)
    if unknown:
        raise ValueError(f"unknown settings: {', '.join(sorted(unknown))}")
    smtp = values.pop("smtp", None)
    payments = values.pop("payments", None)
    settings = Settings(**{k: _coerce(types[k], v) for k, v in values.items()})
    if isinstance(smtp, Mapping):
        settings.smtp = SmtpSettings(**smtp)
    elif isinstance(smtp, SmtpSettings):
        settings.smtp = smtp
    if isinstance(payments, Mapping):
        settings.payments = PaymentSettings.from_mapping(payments)
    elif isinstance(payments, PaymentSettings):
        settings.payments = payments
    if env.get(ENV_PREFIX + "STRIPE_API_KEY"):
        settings.payments.stripe_api_key = env[ENV_PREFIX + "STRIPE_API_KEY"]
    settings.data_dir = Path(settings.data_dir).expanduser().resolve()
    return settings
