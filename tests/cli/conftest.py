"""The ``wasdi`` command against a real server in-process: an isolated config dir, NO_COLOR, and
``wasdi_cli.connection.make_client`` replaced by an SDK client over ``httpx.WSGITransport``."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner, Result

from wasdi_cli import connection
from wasdi_cli.main import app as cli_app
from wasdi_sdk import WasdiClient
from wasdi_server import create_app, load_settings
from wasdi_server.app import WasdiApp

ALICE = "alice@example.org"
ALICE_PASSWORD = "password-a"
BOB = "bob@example.org"
BOB_PASSWORD = "password-b"
DEFAULT_URL = "http://127.0.0.1:8080"
REAL_MAKE_CLIENT = connection.make_client
"""The factory the installed command uses (a real httpx client), before any test replaces it."""


@pytest.fixture
def wasdi_app(tmp_path: Path) -> Iterator[WasdiApp]:
    app = create_app(load_settings(data_dir=tmp_path / "data", environ={}))
    app.services.users.add(ALICE, ALICE_PASSWORD, name="Alice", surname="Liddell")
    app.services.users.add(BOB, BOB_PASSWORD, name="Bob", surname="Builder")
    yield app
    app.services.close()


class Cli:
    """Runs ``wasdi ...``; records every ``make_client(base_url, token)`` the commands ask for."""

    def __init__(self, app: WasdiApp, config_dir: Path) -> None:
        self.app = app
        self.config_dir = config_dir
        self.calls: list[tuple[str, str | None]] = []
        self._clients: list[httpx.Client] = []
        self.runner = CliRunner(env={"WASDI_CONFIG_DIR": str(config_dir), "NO_COLOR": "1"})

    def sdk(self, token: str | None = None) -> WasdiClient:
        """An SDK client of the same in-process server."""
        http = httpx.Client(transport=httpx.WSGITransport(app=self.app), base_url="http://testserver")
        self._clients.append(http)
        return WasdiClient(base_url="http://testserver", session_token=token, http_client=http, max_retries=0)

    def make_client(self, base_url: str, token: str | None) -> WasdiClient:
        self.calls.append((base_url, token))
        return self.sdk(token)

    def __call__(self, *args: str, input: str | None = None, env: Mapping[str, str | None] | None = None) -> Result:
        return self.runner.invoke(cli_app, list(args), input=input, env=env)

    def login(self, user: str = ALICE, password: str = ALICE_PASSWORD, *extra: str) -> Result:
        result = self("login", "--user", user, "--password-stdin", *extra, input=password + "\n")
        assert result.exit_code == 0, result.output
        return result

    @property
    def profiles_file(self) -> Path:
        return self.config_dir / "profiles.toml"

    def profiles(self) -> dict[str, Any]:
        with open(self.profiles_file, "rb") as handle:
            return tomllib.load(handle)

    def token(self, profile: str = "default") -> str | None:
        value = self.profiles()["profiles"][profile].get("session_token")
        return value if isinstance(value, str) else None

    def close(self) -> None:
        for http in self._clients:
            http.close()


@pytest.fixture
def cli(wasdi_app: WasdiApp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Cli]:
    for name in list(os.environ):
        if name.startswith("WASDI_") or name in ("XDG_CONFIG_HOME", "COLUMNS"):
            monkeypatch.delenv(name)
    runner = Cli(wasdi_app, tmp_path / "config")
    # What the test itself reads (resolve(), profiles) comes from the same folder, never the user's own profiles.
    monkeypatch.setenv("WASDI_CONFIG_DIR", str(runner.config_dir))
    monkeypatch.setattr(connection, "make_client", runner.make_client)
    yield runner
    runner.close()


def lines(text: str) -> Sequence[str]:
    return [line for line in text.splitlines() if line.strip()]
