"""Server settings: defaults, then a TOML file, then ``WASDI_SERVER_*`` environment variables."""

from __future__ import annotations

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
    max_param_length: int = 8192
    metrics_max_age_seconds: int = 600

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
        if raw is not None and name not in ("smtp", "skins"):
            values[name] = _coerce(kind, raw)
    for name, value in overrides.items():
        if value is not None:
            values[name] = value
    unknown = set(values) - set(types)
    if unknown:
        raise ValueError(f"unknown settings: {', '.join(sorted(unknown))}")
    smtp = values.pop("smtp", None)
    settings = Settings(**{k: _coerce(types[k], v) for k, v in values.items()})
    if isinstance(smtp, Mapping):
        settings.smtp = SmtpSettings(**smtp)
    elif isinstance(smtp, SmtpSettings):
        settings.smtp = smtp
    settings.data_dir = Path(settings.data_dir).expanduser().resolve()
    return settings
