"""Profiles: the TOML file, its writing, and the precedence flag > environment > profile."""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path

import pytest

from tests.cli.conftest import ALICE, ALICE_PASSWORD, DEFAULT_URL, Cli
from wasdi_cli import profiles
from wasdi_cli.connection import resolve
from wasdi_cli.profiles import Profile, ProfileFile, dumps_toml


def alice_token(cli: Cli) -> str:
    user = cli.sdk().auth.login(ALICE, ALICE_PASSWORD)
    assert user.session_id
    return user.session_id


def write_profile(cli: Cli, name: str, base_url: str, token: str, *, default: str | None = None) -> None:
    file = ProfileFile.load(cli.profiles_file)
    file.put(Profile(name, base_url=base_url, user=ALICE, session_token=token))
    file.default = default or file.default or name
    file.save()


def test_base_url_precedence_flag_over_env_over_profile(cli: Cli) -> None:
    token = alice_token(cli)
    write_profile(cli, "default", "http://profile.example", token)

    assert cli("ws", "list").exit_code == 0
    assert cli.calls[-1] == ("http://profile.example", token)

    env = {"WASDI_BASE_URL": "http://env.example", "WASDI_SESSION_TOKEN": token}
    assert cli("ws", "list", env=env).exit_code == 0
    assert cli.calls[-1] == ("http://env.example", token)

    assert cli("ws", "list", "--base-url", "http://flag.example/", env=env).exit_code == 0
    assert cli.calls[-1] == ("http://flag.example", token)


def test_default_base_url(cli: Cli) -> None:
    cli.login()
    assert cli.calls[-1] == (DEFAULT_URL, None)
    assert cli.profiles()["profiles"]["default"]["base_url"] == "http://127.0.0.1:8080"


def test_session_token_env_over_profile(cli: Cli) -> None:
    write_profile(cli, "default", DEFAULT_URL, "stale-profile-token")
    token = alice_token(cli)
    result = cli("whoami", "-q", env={"WASDI_SESSION_TOKEN": token})
    assert result.exit_code == 0 and result.stdout == ALICE + "\n"
    assert cli.calls[-1] == (DEFAULT_URL, token)
    assert cli("whoami").exit_code == 4  # the profile's own token is not valid


def test_a_profile_token_is_never_sent_to_another_server(cli: Cli) -> None:
    write_profile(cli, "default", "http://profile.example", alice_token(cli))
    for args, env in ((["ws", "list", "--base-url", "http://elsewhere.example"], None),
                      (["ws", "list"], {"WASDI_BASE_URL": "http://elsewhere.example"})):
        result = cli(*args, env=env)
        assert result.exit_code == 4
        assert "http://profile.example" in result.stderr and "http://elsewhere.example" in result.stderr
    assert cli.calls == []


def test_profile_selection_flag_over_env_over_file_default(cli: Cli) -> None:
    token = alice_token(cli)
    for name in ("one", "two", "three"):
        write_profile(cli, name, f"http://{name}.example", token, default="one")
    assert cli("ws", "list").exit_code == 0
    assert cli.calls[-1][0] == "http://one.example"
    assert cli("ws", "list", env={"WASDI_PROFILE": "two"}).exit_code == 0
    assert cli.calls[-1][0] == "http://two.example"
    assert cli("ws", "list", "--profile", "three", env={"WASDI_PROFILE": "two"}).exit_code == 0
    assert cli.calls[-1][0] == "http://three.example"
    assert cli("ws", "list", "-p", "missing").exit_code == 4


def test_config_dir_lookup(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("WASDI_CONFIG_DIR", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert profiles.profiles_path() == tmp_path / "xdg" / "wasdi" / "profiles.toml"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert profiles.profiles_path() == tmp_path / "home" / ".config" / "wasdi" / "profiles.toml"
    monkeypatch.setenv("WASDI_CONFIG_DIR", str(tmp_path / "explicit"))
    assert profiles.profiles_path() == tmp_path / "explicit" / "profiles.toml"


def test_toml_writer_round_trips_awkward_strings() -> None:
    data = {
        "default": 'we"ird',
        "profiles": {
            'we"ird': {"base_url": "http://h/x?a=1&b=[2]", "user": "é\\ü\n\t\x01\x7f",
                       "session_token": "#not-a-comment"},
            "with space.and.dots": {"user": "'single'", "count": 3, "flag": True, "ratio": 0.5, "tags": ["a", "b"]},
            "plain": {},
        },
    }
    assert tomllib.loads(dumps_toml(data)) == data


def test_profile_file_keeps_unknown_keys_and_is_private(tmp_path: Path) -> None:
    path = tmp_path / "cfg" / "profiles.toml"
    path.parent.mkdir()
    path.write_text('default = "a"\ncolor = "auto"\n[profiles.a]\nbase_url = "http://a"\neditor = "vi"\n')
    os.chmod(path, 0o644)
    file = ProfileFile.load(path)
    assert file.get("a").base_url == "http://a"
    file.get("a").session_token = "t"
    file.put(file.get("a"))
    file.save()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert tomllib.loads(path.read_text()) == {
        "default": "a", "color": "auto",
        "profiles": {"a": {"base_url": "http://a", "session_token": "t", "editor": "vi"}}}
    assert sorted(p.name for p in path.parent.iterdir()) == ["profiles.toml"]


def test_a_new_config_dir_is_private(tmp_path: Path) -> None:
    path = tmp_path / "new" / "profiles.toml"
    ProfileFile(path, default="x", profiles={"x": Profile("x", user="u")}).save()
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_failed_write_leaves_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "profiles.toml"
    ProfileFile(path, default="x", profiles={"x": Profile("x", user="old")}).save()

    def broken_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        ProfileFile(path, default="x", profiles={"x": Profile("x", user="new")}).save()
    monkeypatch.undo()
    assert ProfileFile.load(path).get("x").user == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["profiles.toml"]


def test_an_unreadable_profile_file_is_a_clear_error(cli: Cli) -> None:
    cli.profiles_file.parent.mkdir(parents=True)
    cli.profiles_file.write_text("this is = = not toml")
    result = cli("whoami")
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: cannot read the profiles file") and "Traceback" not in result.stderr
    assert cli.profiles_file.read_text() == "this is = = not toml"  # never reset


def test_resolve_without_anything(cli: Cli) -> None:
    target = resolve()
    assert (target.base_url, target.token, target.profile_name) == (DEFAULT_URL, None, "default")


def test_a_profile_file_with_dates_and_arrays_of_tables_survives_a_save(tmp_path: Path) -> None:
    path = tmp_path / "profiles.toml"
    text = ('default = "work"\nupdated = 2024-01-15T10:00:00Z\n\n[[notes]]\ntext = "first"\n\n[[notes]]\n'
            'text = "second"\n\n[profiles.work]\nbase_url = "http://127.0.0.1:8080"\nsince = 2024-01-01\n')
    path.write_text(text)
    before = tomllib.loads(text)
    loaded = ProfileFile.load(path)
    loaded.put(Profile("ci", base_url="http://example.org", user="bot@example.org", session_token="t"))
    loaded.save()
    after = tomllib.loads(path.read_text())
    assert after["updated"] == before["updated"] and after["notes"] == before["notes"]
    assert after["profiles"]["work"] == before["profiles"]["work"]
    assert after["profiles"]["ci"] == {"base_url": "http://example.org", "user": "bot@example.org",
                                       "session_token": "t"}
