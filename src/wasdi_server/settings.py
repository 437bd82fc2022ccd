"""Server settings: defaults, then a TOML file, then ``WASDI_SERVER_*`` environment variables, then flags.

Every setting is a typed, validated field (pydantic dataclasses: the same ``name: type = default`` lines
as plain dataclasses, followed by a docstring that is its documentation, generated into docs/server.md).
A table's fields are set from the environment as ``WASDI_SERVER_<TABLE>_<FIELD>`` (``WASDI_SERVER_SMTP_HOST``).
A bad value or an unknown key is one ``SettingsError`` naming the key.

To add a setting: one typed field with a default and a docstring in the right class below; nothing else.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import field
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field, ValidationError, field_validator
from pydantic.dataclasses import dataclass

ENV_PREFIX = "WASDI_SERVER_"
VALIDATED = ConfigDict(extra="forbid", use_attribute_docstrings=True, arbitrary_types_allowed=True)


class SettingsError(ValueError):
    """Settings that cannot be used: the message names the key and says what is wrong."""


@dataclass(config=VALIDATED)
class SmtpSettings:
    """The ``[smtp]`` table: sending mail through an SMTP server instead of the Maildir outbox."""

    host: str = ""
    """SMTP server; empty: mail goes to the outbox folder ``<data_dir>/mail``."""
    port: int = 587
    """SMTP port."""
    username: str = ""
    """Login name (empty: no login)."""
    password: str = ""
    """Login password."""
    starttls: bool = True
    """Upgrade the connection with STARTTLS."""
    sender: str = "wasdi@localhost"
    """The From address of the mails sent."""


DEFAULT_PRICES_CENTS: dict[str, int] = {
    # subscription types (gaps §4)
    "Free": 0, "OneDayStandard": 1000, "OneWeekStandard": 5000, "OneMonthStandard": 15000,
    "OneYearStandard": 150000, "OneMonthProfessional": 50000, "OneYearProfessional": 500000,
    # credit package types
    "Fifty": 5000, "OneHundred": 9000,
}


@dataclass(config=VALIDATED)
class PaymentSettings:
    """The ``[payments]`` table: prices, currency and the payment providers (``{payprov}``)."""

    currency: str = "EUR"
    """Currency of the prices."""
    prices: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_PRICES_CENTS))
    """Price in cents per product code (subscription type id or credit package type); a TOML
    ``[payments.prices]`` table is merged over these defaults."""
    providers: list[str] | None = None
    """Enabled provider codes.  Unset: ``["local"]``, or ``["stripe"]`` alone once a Stripe key is
    set (the simulated checkout lets anyone mark their own purchase paid)."""
    stripe_api_key: str = ""
    """Secret key; also read from ``WASDI_SERVER_STRIPE_API_KEY``."""
    stripe_api_base: str = "https://api.stripe.com"
    """Base URL of Stripe's REST API."""
    stripe_timeout_seconds: float = 30.0
    """Timeout of the calls to Stripe."""

    @field_validator("prices", mode="before")
    @classmethod
    def _merge_prices(cls, value: Any) -> Any:
        # A TOML [payments.prices] table changes some prices; the others keep their defaults.
        if isinstance(value, Mapping):
            return {**DEFAULT_PRICES_CENTS, **value}
        return value

    @property
    def enabled(self) -> list[str]:
        if self.providers is not None:
            return [str(code).strip().lower() for code in self.providers]
        return ["stripe"] if self.stripe_api_key else ["local"]

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> PaymentSettings:
        return cls(**dict(data))


@dataclass(config=VALIDATED)
class Settings:
    """Everything the server reads at start.  Paths are resolved against ``data_dir``."""

    data_dir: Path = Path(".wasdi-data")
    """Everything the server keeps: the store, the files, the catalogue."""
    store_engine: str = "tinydb"
    """How ``<data_dir>/db`` is kept: ``tinydb`` (a journaled document store in TinyDB's file format) or
    ``sqlite`` (one SQLite file)."""
    host: str = "127.0.0.1"
    """Address waitress binds."""
    port: int = 8080
    """Port waitress binds."""
    threads: int = 8
    """Waitress worker threads."""
    http_connections: int = Field(default=4096, ge=1)
    """Connections the API's port holds at once; past it the idlest is closed to make room (docs/operating.md,
    "Connections")."""
    http_connections_per_address: int = Field(default=256, ge=1)
    """Connections one client address (an IPv6 /64) may hold on the API's port; past it that address's idlest
    is closed.  Behind a reverse proxy every client has the proxy's address: raise it to ``http_connections``."""
    http_header_seconds: float = Field(default=10.0, gt=0)
    """Longest time a request's headers may take to arrive, from its first byte; then the connection is closed."""
    broker_connections: int = Field(default=4096, ge=1)
    """Connections the built-in broker's port holds at once; past it the idlest (not logged in) is closed."""
    broker_connections_per_address: int = Field(default=256, ge=1)
    """Connections one client address may hold on the built-in broker's port."""
    broker_handshake_seconds: float = Field(default=10.0, gt=0)
    """Longest time a WebSocket handshake with the built-in broker may take, and then its STOMP CONNECT."""
    sftp_connections: int = Field(default=256, ge=1)
    """Connections the SFTP port holds at once; past it the oldest one not logged in is closed."""
    sftp_connections_per_address: int = Field(default=16, ge=1)
    """Connections one client address may hold on the SFTP port."""
    sftp_handshake_seconds: float = Field(default=30.0, gt=0)
    """Longest time an SSH connection may take to log in (key exchange and password)."""
    public_url: str = ""
    """Base URL clients reach this server at (``apiUrl`` of workspaces, links in e-mails).
    Empty: derived from each request."""
    node_code: str = "wasdi"
    """Code of this node; ``wasdi`` is the main node."""
    store_url: str = ""
    """PostgreSQL database the nodes of a deployment share (``postgresql://user:password@host:5432/wasdi``,
    docs/nodes.md); empty: one node, everything in the embedded store of ``data_dir``."""
    node_secret: str = ""
    """Secret the nodes of a deployment share (the same on each, 16 characters or more): every node-to-node call
    carries it.  Needed with ``store_url``."""
    main_url: str = ""
    """Address compute nodes reach the main node at; empty: the ``apiUrl`` registered for node ``wasdi`` (the
    main node registers its ``public_url`` at start)."""
    store_timeout_seconds: float = 5.0
    """Longest wait for a connection to the shared database (``store_url``); a request that waits longer (the
    database is down or restarting) fails in its endpoint's failure style."""
    node_call_timeout_seconds: float = 10.0
    """Longest wait for another node (to connect, and for each read of its answer)."""
    node_urls: list[str] = field(default_factory=list)
    """Addresses of the other nodes of the deployment (``http://10.0.0.2:8080``; scheme, host and port count):
    node calls, which carry ``node_secret`` and the caller's session, go only to these and to ``main_url``, not to
    any ``apiUrl`` an admin registers.  Env: comma separated."""
    cloud_provider: str = "local"
    """Cloud provider code of this node (NodeViewModel ``cloudProvider``)."""
    sla_link: str = ""
    """Link to this node's service level agreement (NodeViewModel ``slaLink``)."""
    session_idle_hours: float = 24.0
    """A session expires after this long without use (sliding expiry)."""
    disable_authentication: bool = False
    """Development only: every login succeeds as a fixed admin user and every token maps to it."""
    activate_subscription_checks: bool = True
    """Check subscriptions and storage quotas on imports and runs."""
    admin_email: str = "admin@localhost"
    """Where feedback is mailed."""
    mail_sender: str = "wasdi@localhost"
    """Sender of the mails written to the outbox."""
    smtp: SmtpSettings = field(default_factory=SmtpSettings)
    """The ``[smtp]`` table."""
    missions_file: str = ""
    """JSON file of missions (``/auth/config``); empty: the built-in list."""
    app_categories_file: str = ""
    """JSON file of the app-store categories (a list of ``{"id", "category"}``); empty: the built-in list."""
    default_skin: str = "wasdi"
    """Skin of users who have none."""
    skins: dict[str, dict[str, Any]] = field(default_factory=dict)
    """``[skins.<name>]`` tables: SkinViewModel values per skin."""
    max_json_body_bytes: int = 10 * 1024 * 1024
    """Largest JSON request body."""
    max_json_depth: int = 64
    """Deepest nesting of arrays and objects a JSON body may have; deeper bodies are refused (400)."""
    answer_cache_bytes: int = 64 * 1024 * 1024
    """Bytes of answers the listing cache may hold (least recently used out first); 0 turns it off."""
    max_param_length: int = 8192
    """Longest query parameter."""
    metrics_max_age_seconds: int = 600
    """Node metrics older than this are not used to choose a node."""
    metrics_interval_seconds: float = 60.0
    """How often this node records its own metrics (CPU, memory, disk, processes); 0 turns it off."""
    stale_process_minutes: float = 1440.0
    """``/admin/cleanOldProcesses`` closes a RUNNING/WAITING/READY record unchanged for this long,
    even one a live worker runs (docs/server.md, "Stale processes")."""
    stale_process_grace_seconds: float = 30.0
    """A record whose state changed more recently than this is never stale (a worker may be starting it)."""
    payments: PaymentSettings = field(default_factory=PaymentSettings)
    """The ``[payments]`` table."""
    cors_allow_origins: list[str] = field(default_factory=list)
    """Origins a browser client may call from (``["*"]`` for any); empty: no CORS headers."""
    launcher_workers: int = 4
    """Operations of this node that may be RUNNING at once."""
    launcher_poll_seconds: float = 0.5
    """How often the launcher looks for queued operations."""
    max_upload_bytes: int = 64 * 1024**3
    """Largest request body the server accepts (product uploads)."""
    import_roots: list[str] = field(default_factory=list)
    """Folders ``file://`` imports may read (besides ``<data_dir>/imports``); env: paths joined by ``:``."""
    import_allowed_hosts: list[str] = field(default_factory=list)
    """Hosts (names, addresses or networks like ``10.0.0.0/24``) that http(s) imports and FTP/SFTP exports may
    reach although they are loopback, private or link-local; everything else non-public is refused.  Env: comma
    separated."""
    import_timeout_seconds: float = 60.0
    """Connect/read timeout of http(s) imports (DOWNLOAD operations)."""
    import_downloads_per_provider: int = 4
    """Imports from one data provider (or one host, without a provider) that may download at once; more wait."""
    import_resume_attempts: int = 5
    """Times an http(s) import continues (HTTP ranges) after a dropped connection before it fails."""
    map_server: str = "local"
    """Where bands are published: ``local`` (this server's WMS at ``/wms``, docs/maps.md)."""
    layer_max_pixels: int = 2048
    """Longest side of a layer drawn by the local map server."""
    map_cache_bytes: int = 256 * 1024**2
    """Disk space of the local map server's cache of drawn map images (``<data_dir>/layers/.tiles``)."""
    map_draw_workers: int = 2
    """Boxed readers that draw maps and read products (each sees one workspace's folder; the others wait in a
    queue for one)."""
    map_draw_seconds: float = 30.0
    """A map (or product read) not done this long after a reader took it is refused and its reader stopped."""
    map_wait_seconds: float = 10.0
    """How long a map request (or product read) may wait in the queue for a reader before a 503 with
    Retry-After."""
    map_queue: int = 64
    """Map requests and product reads that may wait for a reader at once (beyond: a 503 at once)."""
    map_spare_readers: int = Field(default=1, ge=0)
    """Readers kept started ahead, beyond ``map_draw_workers``, each seeing an empty folder of its own: a new file
    (an import's) is read by one at once, not after a reader of its workspace starts; used once, then replaced
    (about 75 MiB of memory each)."""
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
    snap_gpt: str = ""
    """SNAP's ``gpt`` executable that runs workflows (GRAPH operations); empty: ``gpt`` on the PATH."""
    graph_timeout_seconds: float = 6 * 3600.0
    """Longest a workflow run (one ``gpt`` call) may take before it is stopped (STOPPED, with a log line)."""
    apps_python: str = ""
    """Interpreter the apps' environments are built on; empty: the server's own Python."""
    apps_library: str = "wasdi==0.8.7.8"
    """The official library installed in every Python app's environment (a requirement spec)."""
    apps_find_links: list[str] = field(default_factory=list)
    """Local folders of wheels the app environments install from (before, or with ``apps_offline`` instead
    of, the package index); env: paths joined by ``,``."""
    apps_offline: bool = False
    """Build app environments from ``apps_find_links`` and the installer's cache only, never the index."""
    package_index_url: str = "https://pypi.org/simple/"
    """The package index (its simple API: PEP 691 JSON or PEP 503 HTML) that /packageManager/listPackages asks for
    the latest version of each package of an app; its host is reached through the outbound guard, allowed since
    it is named here.  Empty: never asked (every latest version unknown)."""
    package_index_timeout_seconds: float = 5.0
    """Longest one package listing waits for the index, all its packages together; then the latest versions are
    unknown and the answer says so (a ``Warning`` header)."""
    package_index_cache_seconds: float = 3600.0
    """How long a package's latest version is kept before the index is asked again."""
    apps_max_zip_bytes: int = 512 * 1024**2
    """Largest app zip ``/processors/uploadprocessor`` and ``updatefiles`` accept (unpacked size too)."""
    web_client_dir: str = ""
    """Folder of a built WASDI web client (wasdiClient2) to serve at ``/`` from the same origin; empty: none."""
    broker_url: str = ""
    """RabbitMQ to publish the workspaces' messages to (``amqp://user:password@host:5672/vhost``); empty: the
    built-in broker, which ``serve`` runs beside the API."""
    broker_exchange: str = "amq.topic"
    """Topic exchange the messages are published to, with the workspace id as routing key (WASDI's web client
    subscribes to ``/exchange/amq.topic/<workspaceId>``)."""
    broker_port: int = 0
    """Port the built-in broker listens on (STOMP over WebSocket, any path), on the API's address; 0: the API's
    port + 1."""
    webstomp_url: str = ""
    """The WebSocket address clients listen at (the web client's ``webstompUrl``, the SDK, the CLI). Empty: the
    built-in broker's port on the host the client reached the API at; with ``broker_url``, RabbitMQ Web-STOMP's
    ``ws://<broker host>:15674/ws``."""
    webstomp_login: str = ""
    """With ``broker_url``: the RabbitMQ user clients log in to Web-STOMP with (read access to the exchange
    only: docs/server.md); it is given to every browser. The built-in broker takes the session instead."""
    webstomp_passcode: str = ""
    """With ``broker_url``: that user's password (given to every browser, like the login)."""
    broker_queue_messages: int = 10000
    """Messages kept for RabbitMQ while it cannot be reached (the oldest are dropped past this, and logged)."""
    broker_retry_seconds: float = 30.0
    """Longest pause between two attempts to reach RabbitMQ (the pauses double from 0.5 s up to this)."""
    subscriber_buffer_bytes: int = 8 * 1024**2
    """Bytes the built-in broker holds for one subscriber that does not read; past this it is disconnected."""
    sftp_enabled: bool = True
    """Serve the built-in SFTP service beside the API (``wasdi-server serve``): upload accounts log in there."""
    sftp_port: int = 2222
    """Port of the SFTP service (on ``host``); 0: a free port chosen at start (the log says which)."""
    sftp_quota_bytes: int = 100 * 1024**3
    """Most bytes one upload account's folder may hold (SFTP uploads and ``copytosfpt``); 0: no limit."""
    ftp_timeout_seconds: float = 60.0
    """Connect/read timeout of FTP, FTPS and SFTP exports (FTPUPLOAD operations)."""
    app_isolation: Literal["required", "off"] = "required"
    """How the code of apps, builds and workflows is confined (docs/server.md, "What an app can reach"):
    ``required`` boxes every run and refuses to run where the kernel cannot box it; ``off`` runs it with
    everything the server's OS user may do (a single-user machine only)."""
    app_memory_mb: int = Field(default=8192, ge=0)
    """Memory one run, build or workflow may use (the whole run where a memory cgroup can be made, else each
    of its processes); 0: no limit."""
    app_max_processes: int = Field(default=512, ge=0)
    """Processes and threads one run may have at once; 0: no limit."""
    app_max_open_files: int = Field(default=4096, ge=0)
    """Files one process of a run may hold open; 0: no limit."""
    app_max_file_mb: int = Field(default=32768, ge=0)
    """Largest file a run may write; 0: no limit."""
    app_cpu_seconds: int = Field(default=86400, ge=0)
    """CPU time one process of a run may use (besides an app's wall-clock ``minuteTimeout``); 0: no limit."""
    app_outbound_ports: list[int] = field(default_factory=lambda: [80, 443])
    """TCP ports Landlock lets runs, builds and workflows connect to (besides their doors); in a run's world only
    its doors answer; env: comma separated."""
    notebook_idle_minutes: float = Field(default=60.0, gt=0)
    """A lab nobody has used (no request, no running cell) for this long is stopped."""
    notebook_start_seconds: float = Field(default=120.0, gt=0)
    """Longest wait for a lab to answer after its start; past it the lab is stopped and the failure logged."""
    app_account_scope_apps: list[str] = field(default_factory=list)
    """Apps whose runs get a session reaching their caller's whole account (other workspaces, sharing ...)
    instead of the run's own workspace; env: comma separated."""
    proxy_allowed_hosts: list[str] = field(default_factory=list)
    """Hosts (names, addresses or networks like ``10.0.0.0/24``) boxed runs and builds may reach through the box's
    proxy although they are loopback, private, link-local or reserved; everything else non-public is refused.  Env:
    comma separated."""
    proxy_denied_hosts: list[str] = field(default_factory=list)
    """Hosts (names, which cover their subdomains, addresses or networks) boxed runs and builds may never reach
    through the box's proxy, public or not; the package index stays reachable.  Env: comma separated."""
    proxy_max_connections: int = Field(default=16, ge=1)
    """Connections one run may have open through the box's proxy at once; as many more wait for a slot (up to
    ``proxy_idle_seconds``), any further one is answered 429."""
    proxy_idle_seconds: float = Field(default=60.0, gt=0)
    """A connection through the box's proxy with nothing moving either way this long (or a request whose head has
    not arrived) is closed; also the longest wait for a host to accept."""
    app_disk_mb: int = Field(default=0, ge=0)
    """How much an app run may grow its workspace folder (checked while it runs; past it the run ends ERROR);
    0: what the owner's subscription storage has left where subscription checks apply, else no limit."""
    app_max_minutes: int = Field(default=1440, ge=1)
    """Wall-clock ceiling of an app run: an app's own ``minuteTimeout`` (0, none, included) cannot exceed it."""

    @property
    def files_root(self) -> Path:
        """Root of the workspace files: ``<files_root>/<owner>/<workspaceId>/<file>``."""
        return self.data_dir / "files"

    @property
    def uploads_root(self) -> Path:
        """Root of the file-transfer (upload account) folders: ``<uploads_root>/<userId>/``."""
        return self.data_dir / "uploads"

    @property
    def sftp_host_key_path(self) -> Path:
        """The SFTP service's host key (made at its first start, kept so clients recognise the server)."""
        return self.data_dir / "sftp" / "ssh_host_ed25519_key"

    @property
    def mail_dir(self) -> Path:
        return self.data_dir / "mail"

    @property
    def images_root(self) -> Path:
        """Root of the image collections: ``<images_root>/<collection>/[<folder>/]<name>``."""
        return self.data_dir / "images"

    @property
    def apps_root(self) -> Path:
        """The apps' files: ``<apps_root>/<name>/`` (the uploaded zip unpacked)."""
        return self.data_dir / "processors"

    @property
    def app_environments_root(self) -> Path:
        """The apps' environments and build logs: ``<app_environments_root>/<name>/``."""
        return self.data_dir / "app-environments"

    @property
    def styles_root(self) -> Path:
        """Where the SLD files of the styles live: ``<styles_root>/<name>.sld``."""
        return self.data_dir / "styles"

    @property
    def workflows_root(self) -> Path:
        """Where the graph XML files of the workflows live: ``<workflows_root>/<workflowId>.xml``."""
        return self.data_dir / "workflows"


NESTED = ("smtp", "payments")
"""Fields that are tables of their own, set from the environment field by field."""


def _env_value(kind: Any, value: str) -> Any:
    """An environment string as the field expects it: JSON for lists and tables (lists may be comma
    separated); everything else is validated from the text (``"false"`` is false, ``"587"`` an int)."""
    text = value.strip()
    kind_name = str(kind)
    if _is_collection(kind):
        if text.startswith(("[", "{")):
            try:
                return json.loads(text)
            except ValueError as e:
                raise SettingsError(f"not valid JSON: {e}") from e
        if "list[" in kind_name:
            return [item.strip() for item in text.split(",") if item.strip()]
        raise SettingsError(f"expected JSON, got {value[:40]!r}")
    return value


def _is_collection(kind: Any) -> bool:
    text = str(kind)
    return text.startswith(("list[", "dict[")) or ("list[" in text and "None" in text)


def _from_environment(cls: Any, env: Mapping[str, str], prefix: str) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for item in dataclasses.fields(cls):
        if prefix == ENV_PREFIX and item.name in NESTED:
            continue
        name = prefix + item.name.upper()
        raw = env.get(name)
        if raw is None:
            continue
        try:
            values[item.name] = _env_value(item.type, raw)
        except SettingsError as e:
            raise SettingsError(f"{name}: {e}") from None
    return values


def _where(error: Mapping[str, Any]) -> str:
    return ".".join(str(part) for part in error.get("loc", ()))


def describe(error: ValidationError, source: str) -> str:
    """One sentence per wrong key: ``<source>: <key>: <what is wrong>``."""
    problems = []
    for item in error.errors():
        key = _where(item) or "settings"
        text = "unknown setting" if item.get("type") in ("unexpected_keyword_argument", "extra_forbidden") \
            else str(item.get("msg", "invalid"))
        problems.append(f"{key}: {text}")
    return f"{source}: " + "; ".join(problems)


def load_settings(config_file: str | Path | None = None, environ: Mapping[str, str] | None = None,
                  **overrides: Any) -> Settings:
    """Defaults < TOML file < environment (``WASDI_SERVER_PORT=9000``) < explicit ``overrides``."""
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    path = config_file or env.get(ENV_PREFIX + "CONFIG")
    source = f"settings file {path}" if path else "settings"
    if path:
        try:
            with open(path, "rb") as handle:
                values.update(tomllib.load(handle))
        except tomllib.TOMLDecodeError as e:
            raise SettingsError(f"{source}: not valid TOML: {e}") from None
    for table, cls in (("smtp", SmtpSettings), ("payments", PaymentSettings)):
        from_env = _from_environment(cls, env, f"{ENV_PREFIX}{table.upper()}_")
        if from_env:
            current = values.get(table)
            values[table] = {**(current if isinstance(current, Mapping) else {}), **from_env}
    if env.get(ENV_PREFIX + "STRIPE_API_KEY"):  # the older, shorter name
        payments = values.get("payments")
        values["payments"] = {**(payments if isinstance(payments, Mapping) else {}),
                              "stripe_api_key": env[ENV_PREFIX + "STRIPE_API_KEY"]}
    values.update(_from_environment(Settings, env, ENV_PREFIX))
    for name, value in overrides.items():
        if value is not None:
            values[name] = value
    kinds = {item.name: item.type for item in dataclasses.fields(Settings)}
    for name, value in list(values.items()):
        if isinstance(value, str) and name in kinds and _is_collection(kinds[name]):
            try:  # a list or a table given as text (JSON, or a comma separated list)
                values[name] = _env_value(kinds[name], value)
            except SettingsError as e:
                raise SettingsError(f"{source}: {name}: {e}") from None
    try:
        settings = Settings(**values)
    except ValidationError as e:
        raise SettingsError(describe(e, source)) from None
    except TypeError as e:  # an unknown keyword, on pydantic versions that raise it as such
        raise SettingsError(f"{source}: {e}") from None
    settings.data_dir = Path(settings.data_dir).expanduser().resolve()
    return settings


def documentation() -> str:
    """The settings table of docs/server.md: every setting, its type, default, variable and meaning."""
    rows = ["| Setting | Type | Default | Environment variable | Meaning |", "|---|---|---|---|---|"]

    def add(cls: Any, table: str) -> None:
        instance = cls()
        for item in dataclasses.fields(cls):
            if table == "" and item.name in NESTED:
                continue
            key = f"{table}.{item.name}" if table else item.name
            variable = ENV_PREFIX + (f"{table}_" if table else "") + item.name
            default = getattr(instance, item.name)
            shown = json.dumps(default) if not isinstance(default, Path) else json.dumps(str(default))
            if len(shown) > 40:
                shown = shown[:37] + "..."
            doc = " ".join(_doc_of(cls, item.name).replace("``", "`").split())
            kind = str(item.type).replace("|", "or")
            rows.append(f"| `{key}` | `{kind}` | `{shown}` | `{variable.upper()}` | {doc.replace('|', '/')} |")

    add(Settings, "")
    add(SmtpSettings, "smtp")
    add(PaymentSettings, "payments")
    return "\n".join(rows) + "\n"


def _doc_of(cls: Any, name: str) -> str:
    info = cls.__pydantic_fields__.get(name)
    return (info.description if info is not None else None) or ""


DOCS_START = "do not edit -->\n"
DOCS_END = "<!-- end of settings table -->"


def write_documentation(path: str | Path) -> None:
    """Rewrite the generated settings table of ``path`` (docs/server.md) from the fields above."""
    target = Path(path)
    text = target.read_text(encoding="utf-8")
    start = text.index(DOCS_START) + len(DOCS_START)
    target.write_text(text[:start] + documentation() + text[text.index(DOCS_END):], encoding="utf-8")


if __name__ == "__main__":  # python -m wasdi_server.settings docs/server.md
    import sys

    # The package's own copy of this module: runpy's __main__ copy cannot read the field docstrings.
    from wasdi_server.settings import write_documentation as write

    write(sys.argv[1] if len(sys.argv) > 1 else "docs/server.md")
