"""``wasdi login``, ``logout`` and ``whoami`` against the in-process server."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from tests.cli.conftest import ALICE, ALICE_PASSWORD, DEFAULT_URL, REAL_MAKE_CLIENT, Cli, lines
from wasdi_cli import connection, output
from wasdi_sdk import WasdiClient


def test_login_with_password_stdin_writes_a_private_profile(cli: Cli) -> None:
    result = cli("login", "--user", ALICE, "--password-stdin", input=ALICE_PASSWORD + "\n")
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert "Logged in as alice@example.org" in result.stderr
    assert stat.S_IMODE(cli.profiles_file.stat().st_mode) == 0o600
    data = cli.profiles()
    assert data["default"] == "default"
    profile = data["profiles"]["default"]
    assert profile["base_url"] == DEFAULT_URL and profile["user"] == ALICE
    token = profile["session_token"]
    assert token and cli.calls == [(DEFAULT_URL, None)]
    # The stored token is a live session of the server.
    assert cli.sdk(token).auth.check_session().user_id == ALICE
    # No temporary file left: the profiles, and this shell's last login.
    assert sorted(p.name for p in cli.config_dir.iterdir()) == ["profiles.toml", "shells.toml"]
    assert stat.S_IMODE((cli.config_dir / "shells.toml").stat().st_mode) == 0o600


def test_login_prompts_for_user_and_password(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(output, "stdin_is_tty", lambda: True)
    result = cli("login", input=f"{ALICE}\n{ALICE_PASSWORD}\n")
    assert result.exit_code == 0, result.output
    assert ALICE_PASSWORD not in result.output  # the password prompt does not echo
    # Prompts go to stderr (the runner itself echoes the typed input to stdout, as a terminal would show it).
    assert "User" in result.stderr and "Password" in result.stderr
    assert "User" not in result.stdout and "Password" not in result.stdout
    assert cli.token()


def test_login_into_a_named_profile_and_base_url(cli: Cli) -> None:
    cli.login(ALICE, ALICE_PASSWORD, "--profile", "work", "--base-url", "http://wasdi.example/rest/")
    data = cli.profiles()
    assert data["default"] == "work"  # the first profile becomes the default
    assert data["profiles"]["work"]["base_url"] == "http://wasdi.example/rest"
    assert cli.calls == [("http://wasdi.example/rest", None)]
    cli.login("bob@example.org", "password-b", "--profile", "other")
    assert cli.profiles()["default"] == "work"  # a later login does not steal the default
    assert cli.profiles()["profiles"]["other"]["user"] == "bob@example.org"


def test_wrong_password_exits_4_and_stores_nothing(cli: Cli) -> None:
    result = cli("login", "--user", ALICE, "--password-stdin", input="not-the-password\n")
    assert result.exit_code == 4
    assert result.stdout == ""
    assert lines(result.stderr) == [lines(result.stderr)[0]] and result.stderr.startswith("Error: ")
    assert "wrong user or password" in result.stderr and "Traceback" not in result.stderr
    assert not cli.profiles_file.exists()


def test_password_stdin_needs_a_user(cli: Cli) -> None:
    result = cli("login", "--password-stdin", input=ALICE_PASSWORD + "\n")
    assert result.exit_code == 2 and "--user" in result.stderr


def test_whoami_table_json_and_quiet(cli: Cli) -> None:
    cli.login()
    table = cli("whoami")
    assert table.exit_code == 0, table.output
    for label, value in [("user id", ALICE), ("name", "Alice"), ("surname", "Liddell")]:
        assert any(label in line and value in line for line in table.stdout.splitlines()), table.stdout
    assert "\x1b[" not in table.stdout  # NO_COLOR, not a terminal

    as_json = cli("whoami", "--json")
    assert as_json.exit_code == 0, as_json.output
    wire = json.loads(as_json.stdout)
    assert wire == cli.sdk(cli.token()).auth.check_session().to_wire()
    assert wire["userId"] == ALICE and wire["name"] == "Alice" and wire["surname"] == "Liddell" and "type" in wire
    assert "user_id" not in wire

    quiet = cli("whoami", "-q")
    assert quiet.stdout == ALICE + "\n"


def test_json_and_quiet_together_is_a_usage_error(cli: Cli) -> None:
    cli.login()
    result = cli("whoami", "--json", "-q")
    assert result.exit_code == 2 and result.stdout == ""


def test_whoami_without_login_exits_4(cli: Cli) -> None:
    result = cli("whoami")
    assert result.exit_code == 4
    assert result.stderr.startswith("Error: not logged in") and "wasdi login" in result.stderr
    assert cli.calls == []  # nothing was sent


def test_whoami_with_an_expired_session_exits_4(cli: Cli) -> None:
    cli.login()
    assert cli.sdk(cli.token()).auth.logout().bool_value
    result = cli("whoami")
    assert result.exit_code == 4
    assert "Error: the session with http://127.0.0.1:8080 is not valid any more" in result.stderr


def test_logout_ends_the_session_and_clears_the_token(cli: Cli) -> None:
    cli.login()
    token = cli.token()
    result = cli("logout")
    assert result.exit_code == 0, result.output
    assert "Logged out" in result.stderr
    profile = cli.profiles()["profiles"]["default"]
    assert "session_token" not in profile and profile["user"] == ALICE and profile["base_url"] == DEFAULT_URL
    assert stat.S_IMODE(cli.profiles_file.stat().st_mode) == 0o600
    whoami = cli("whoami", env={"WASDI_SESSION_TOKEN": token})
    assert whoami.exit_code == 4  # the server no longer knows the session
    again = cli("logout")
    assert again.exit_code == 0 and "Not logged in" in again.stderr


def test_logout_when_the_server_already_forgot_the_session(cli: Cli) -> None:
    cli.login()
    cli.sdk(cli.token()).auth.logout()
    result = cli("logout")
    assert result.exit_code == 0, result.output
    assert "session_token" not in cli.profiles()["profiles"]["default"]


def test_logout_when_the_server_is_unreachable_forgets_locally(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    cli.login()
    monkeypatch.setattr(connection, "make_client", _unreachable_client)
    result = cli("logout")
    assert result.exit_code == 0, result.output
    assert "Warning: could not reach" in result.stderr
    assert "session_token" not in cli.profiles()["profiles"]["default"]


def _unreachable_client(base_url: str, token: str | None) -> WasdiClient:
    return WasdiClient(base_url="http://127.0.0.1:9", session_token=token, max_retries=0, timeout=5)


def test_unreachable_server_exits_3(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection, "make_client", REAL_MAKE_CLIENT)  # a real httpx client, a closed port
    result = cli("login", "--user", ALICE, "--password-stdin", "--base-url", "http://127.0.0.1:9",
                 input=ALICE_PASSWORD + "\n")
    assert result.exit_code == 3, result.output
    assert result.stderr.startswith("Error: cannot reach http://127.0.0.1:9")
    assert len(lines(result.stderr)) == 1 and "Traceback" not in result.stderr
    assert not cli.profiles_file.exists()
    whoami = cli("whoami", "--base-url", "http://127.0.0.1:9", env={"WASDI_SESSION_TOKEN": "some-token"})
    assert whoami.exit_code == 3, whoami.output


def test_login_reads_wasdi_password_and_the_official_config(cli: Cli, tmp_path: Path) -> None:
    from_env = cli("login", "--user", ALICE, env={"WASDI_PASSWORD": ALICE_PASSWORD})
    assert from_env.exit_code == 0 and "Logged in as alice@example.org" in from_env.stderr, from_env.output
    assert "Password" not in from_env.output  # no prompt
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"USER": ALICE, "PASSWORD": ALICE_PASSWORD, "BASEURL": "http://127.0.0.1:8080"}))
    from_config = cli("login", "--from-config", str(config))
    assert from_config.exit_code == 0 and "Logged in as alice@example.org" in from_config.stderr, from_config.output
    missing = cli("login", "--from-config", str(tmp_path / "nope.json"))
    assert missing.exit_code == 2 and "config.json" in missing.stderr


def test_ws_create_names_what_the_server_gave(cli: Cli) -> None:
    cli.login()
    assert "Created workspace 'Floods 2024'\n" in cli("ws", "create", "Floods 2024").stderr
    again = cli("ws", "create", "Floods 2024")
    assert again.exit_code == 0 and "Created workspace 'Floods 2024(1)'" in again.stderr
