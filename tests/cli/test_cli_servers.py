"""Profiles that know their server (issue 31, item 1): a login to another server goes to its own profile, a command
says when this shell last logged in elsewhere, ``auth status`` and ``whoami`` name the server, and ``ws use`` sets
a default workspace per profile."""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import ALICE, BOB, BOB_PASSWORD, DEFAULT_URL, Cli, lines
from wasdi_cli import shells

OTHER_URL = "http://other.example:18481/rest"


def test_a_login_to_another_server_does_not_repoint_the_profile_in_use(cli: Cli) -> None:
    cli.login()
    first_token = cli.token("default")
    result = cli.login(BOB, BOB_PASSWORD, "--base-url", OTHER_URL)
    data = cli.profiles()
    assert data["default"] == "default"
    assert data["profiles"]["default"]["base_url"] == DEFAULT_URL
    assert data["profiles"]["default"]["session_token"] == first_token
    assert data["profiles"]["other.example-18481"]["base_url"] == OTHER_URL
    assert data["profiles"]["other.example-18481"]["user"] == BOB
    assert "profile 'other.example-18481'" in result.stderr
    assert "--profile other.example-18481" in result.stderr  # how to speak to it
    # A second login to the same server finds its profile again.
    cli.login(BOB, BOB_PASSWORD, "--base-url", OTHER_URL + "/")
    assert sorted(cli.profiles()["profiles"]) == ["default", "other.example-18481"]


def test_a_named_profile_of_another_server_is_not_repointed(cli: Cli) -> None:
    cli.login(ALICE, "password-a", "--profile", "work")
    result = cli("login", "--user", BOB, "--password-stdin", "--profile", "work", "--base-url", OTHER_URL,
                 input=BOB_PASSWORD + "\n")
    assert result.exit_code == 2
    assert "profile 'work' belongs to http://127.0.0.1:8080" in result.stderr
    assert cli.profiles()["profiles"]["work"]["base_url"] == DEFAULT_URL


def test_a_command_says_when_this_shell_last_logged_in_elsewhere(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    cli.login()
    cli.login(BOB, BOB_PASSWORD, "--base-url", OTHER_URL)
    result = cli("ws", "list")
    assert result.exit_code == 0, result.output
    notes = [line for line in lines(result.stderr) if line.startswith("Note:")]
    assert notes == [f"Note: profile 'default' speaks to {DEFAULT_URL}; your last login in this shell was to "
                     f"{OTHER_URL} (add --profile other.example-18481 to speak to it)"]
    # The profile of the last login: no note.
    assert "Note:" not in cli("ws", "list", "--profile", "other.example-18481").stderr
    # An explicit --base-url: the person said where.
    assert "Note:" not in cli("whoami", "--base-url", DEFAULT_URL).stderr
    # Another shell (another terminal session) did not log in anywhere: no note there.
    monkeypatch.setattr(shells, "shell_id", lambda: 1)
    assert "Note:" not in cli("ws", "list").stderr


def test_the_shell_record_drops_shells_that_ended(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as patch:
        patch.setattr(shells, "shell_id", lambda: 2 ** 22 + 12345)  # beyond pid_max: no such session
        cli.login()
    cli.login()
    text = (cli.config_dir / "shells.toml").read_text()
    assert str(2 ** 22 + 12345) not in text and str(shells.shell_id()) in text


def test_auth_status_names_server_profile_user_and_session(cli: Cli) -> None:
    missing = cli("auth", "status")
    assert missing.exit_code == 4
    rows = [line.split(None, 1) for line in lines(missing.stdout)]
    assert ["server", DEFAULT_URL] in rows and ["profile", "default"] in rows
    assert "none: run 'wasdi login'" in missing.stdout

    cli.login()
    result = cli("auth", "status", "--json")
    assert result.exit_code == 0, result.output
    status = json.loads(result.stdout)
    assert status["server"] == DEFAULT_URL and status["profile"] == "default" and status["user"] == ALICE
    assert status["session"] == "valid (from the profile)"
    assert status["last_login_in_this_shell"] == f"{DEFAULT_URL} (profile 'default')"

    assert cli.sdk(cli.token()).auth.logout().bool_value
    ended = cli("auth", "status")
    assert ended.exit_code == 4
    assert "not valid any more (expired or logged out): run 'wasdi login'" in ended.stdout


def test_whoami_names_the_server_and_profile(cli: Cli) -> None:
    cli.login(ALICE, "password-a", "--profile", "work", "--base-url", OTHER_URL)
    table = cli("whoami", "--profile", "work")
    assert table.exit_code == 0, table.output
    rows = {line.split(None, 1)[0]: line.split(None, 1)[1].strip() for line in lines(table.stdout)
            if line.split()[0] in ("server", "profile")}
    assert rows == {"server": OTHER_URL, "profile": "work"}


def test_ws_use_sets_the_default_workspace_of_the_profile(cli: Cli) -> None:
    cli.login()
    workspace_id = cli.sdk(cli.token()).workspaces.create(name="floods").string_value
    without = cli("products", "list")
    assert without.exit_code == 2
    assert "add --ws ID_OR_NAME, or set the default of profile 'default' with 'wasdi ws use NAME'" in without.stderr

    used = cli("ws", "use", "floods")
    assert used.exit_code == 0, used.output
    assert f"'floods' ({workspace_id})" in used.stderr and DEFAULT_URL in used.stderr
    assert cli.profiles()["profiles"]["default"]["workspace"] == workspace_id
    assert cli("ws", "use").stdout == f"{workspace_id}\n"

    listed = cli("products", "list")
    assert listed.exit_code == 0, listed.output
    assert "No products" in listed.stderr or listed.stdout == ""
    # Another server: the profile's workspace is not one of it.
    elsewhere = cli("products", "list", "--base-url", OTHER_URL, env={"WASDI_SESSION_TOKEN": cli.token()})
    assert elsewhere.exit_code == 2 and "no workspace given" in elsewhere.stderr

    assert cli("ws", "use", "--clear").exit_code == 0
    assert "workspace" not in cli.profiles()["profiles"]["default"]
    assert cli("products", "list").exit_code == 2


def test_ws_use_refuses_a_workspace_that_is_not_there(cli: Cli) -> None:
    cli.login()
    result = cli("ws", "use", "no-such-workspace")
    assert result.exit_code == 1 and "no workspace has the id or name 'no-such-workspace'" in result.stderr
    assert "workspace" not in cli.profiles()["profiles"]["default"]
