"""Profiles: named (server, user, session, default workspace) records in ``<config dir>/profiles.toml``.

A profile belongs to one server, its ``base_url``: its session is only sent there, and a login to another server
goes to another profile.

.. code-block:: toml

    default = "work"

    [profiles.work]
    base_url = "https://www.wasdi.net/wasdiwebserver/rest"
    user = "me@example.org"
    session_token = "..."
    workspace = "..."        # the default workspace of --ws ('wasdi ws use NAME'), an id of that server

The config dir is ``$WASDI_CONFIG_DIR``, else ``$XDG_CONFIG_HOME/wasdi``, else ``~/.config/wasdi``.
The file holds session tokens: it is written atomically (temporary file, fsync, ``os.replace``)
with mode 0600, in a directory created with mode 0700.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import CliError

FILE_NAME = "profiles.toml"
DEFAULT_PROFILE = "default"
DEFAULT_BASE_URL = "http://127.0.0.1:8080"
"""The base URL when neither a flag, the environment nor the profile gives one (a local ``wasdi server start``)."""

ENV_CONFIG_DIR = "WASDI_CONFIG_DIR"
ENV_PROFILE = "WASDI_PROFILE"
ENV_BASE_URL = "WASDI_BASE_URL"
ENV_SESSION_TOKEN = "WASDI_SESSION_TOKEN"

PROFILE_KEYS = ("base_url", "user", "session_token", "workspace")


def config_dir() -> Path:
    """``$WASDI_CONFIG_DIR``, else ``$XDG_CONFIG_HOME/wasdi``, else ``~/.config/wasdi``."""
    if os.environ.get(ENV_CONFIG_DIR):
        return Path(os.environ[ENV_CONFIG_DIR]).expanduser()
    if os.environ.get("XDG_CONFIG_HOME"):
        return Path(os.environ["XDG_CONFIG_HOME"]).expanduser() / "wasdi"
    return Path.home() / ".config" / "wasdi"


def profiles_path() -> Path:
    return config_dir() / FILE_NAME


@dataclass
class Profile:
    name: str
    base_url: str | None = None
    user: str | None = None
    session_token: str | None = None
    workspace: str | None = None
    """The id of the workspace ``--ws`` means when it is not given (``wasdi ws use``)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Keys this version does not know; kept as they are."""

    def to_table(self) -> dict[str, Any]:
        table: dict[str, Any] = {k: getattr(self, k) for k in PROFILE_KEYS if getattr(self, k)}
        table.update(self.extra)
        return table


@dataclass
class ProfileFile:
    """The whole file: the profiles and the name of the default one."""

    path: Path
    default: str | None = None
    profiles: dict[str, Profile] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path | None = None) -> ProfileFile:
        """The file at ``path`` (the config dir's by default); empty when it does not exist yet."""
        path = path or profiles_path()
        try:
            with open(path, "rb") as handle:
                data = tomllib.load(handle)
        except FileNotFoundError:
            return cls(path)
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise CliError(f"cannot read the profiles file {path}: {e}") from e
        loaded = cls(path)
        default = data.pop("default", None)
        loaded.default = default if isinstance(default, str) else None
        tables = data.pop("profiles", {})
        if not isinstance(tables, dict):
            raise CliError(f"cannot read the profiles file {path}: 'profiles' is not a table")
        for name, table in tables.items():
            if not isinstance(table, dict):
                continue
            values = {k: table.get(k) if isinstance(table.get(k), str) else None for k in PROFILE_KEYS}
            extra = {k: v for k, v in table.items() if k not in PROFILE_KEYS}
            loaded.profiles[name] = Profile(name, extra=extra, **values)
        loaded.extra = data
        return loaded

    def get(self, name: str) -> Profile:
        """The profile ``name`` (a new, empty one if it does not exist)."""
        return self.profiles.get(name) or Profile(name)

    def put(self, profile: Profile) -> None:
        self.profiles[profile.name] = profile

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.default:
            data["default"] = self.default
        data.update(self.extra)
        data["profiles"] = {name: p.to_table() for name, p in sorted(self.profiles.items())}
        return data

    def save(self) -> None:
        """Write the file atomically with mode 0600."""
        write_private(self.path, dumps_toml(self.to_dict()))


def active_profile_name(flag: str | None, profiles: ProfileFile) -> str:
    """Flag (or ``WASDI_PROFILE``, which the option reads) > the file's ``default`` > ``default``."""
    return flag or os.environ.get(ENV_PROFILE) or profiles.default or DEFAULT_PROFILE


def normalize_url(url: str) -> str:
    return url.strip().rstrip("/")


# -- writing -------------------------------------------------------------------------------------
def write_private(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` atomically; the file is readable by its owner only."""
    from wasdi_sdk.atomic_files import write_atomic  # here: importing wasdi_sdk loads httpx and pydantic

    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_atomic(path, text, mode=0o600)


def dumps_toml(data: Mapping[str, Any]) -> str:
    """TOML text of ``data`` (tomli-w: whatever ``tomllib`` reads, dates and arrays of tables included, writes
    back; ``None`` values, which TOML has not, are left out)."""
    import tomli_w

    return tomli_w.dumps(_without_none(data))


def _without_none(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_without_none(v) for v in value if v is not None]
    return value
