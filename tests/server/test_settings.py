"""Settings: typed and validated, one clear error naming a wrong key, every field documented and settable
from the environment, and docs/server.md's table generated from them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from wasdi_server import cli
from wasdi_server.settings import (
    PaymentSettings,
    Settings,
    SettingsError,
    SmtpSettings,
    documentation,
    load_settings,
)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "server.md"


def toml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "server.toml"
    path.write_text(text)
    return path


def test_docs_table_is_generated_from_the_settings() -> None:
    text = DOCS.read_text(encoding="utf-8")
    start = text.index("do not edit -->\n") + len("do not edit -->\n")
    end = text.index("<!-- end of settings table -->")
    assert text[start:end] == documentation(), "run: python -m wasdi_server.settings docs/server.md"


@pytest.mark.parametrize("cls", [Settings, SmtpSettings, PaymentSettings])
def test_every_setting_has_a_type_a_default_and_a_doc_line(cls: type) -> None:
    for item in dataclasses.fields(cls):
        info = cls.__pydantic_fields__[item.name]  # type: ignore[attr-defined]
        assert info.description, f"{cls.__name__}.{item.name} has no docstring"
        assert item.type, item.name
        assert item.default is not dataclasses.MISSING or item.default_factory is not dataclasses.MISSING


def test_unknown_keys_are_named(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match=r"smtp\.hots: unknown setting"):
        load_settings(toml(tmp_path, '[smtp]\nhots = "mail.example.org"\n'), environ={})
    with pytest.raises(SettingsError, match=r"payments\.currencyy: unknown setting"):
        load_settings(toml(tmp_path, '[payments]\ncurrencyy = "EUR"\n'), environ={})
    with pytest.raises(SettingsError, match=r"prot: unknown setting"):
        load_settings(toml(tmp_path, "prot = 9000\n"), environ={})


def test_bad_values_are_named(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match=r"settings file .*server\.toml: smtp\.port: .*integer"):
        load_settings(toml(tmp_path, '[smtp]\nport = "many"\n'), environ={})
    with pytest.raises(SettingsError, match=r"WASDI_SERVER_SEARCH_PROVIDERS: not valid JSON"):
        load_settings(environ={"WASDI_SERVER_SEARCH_PROVIDERS": "[oops"})
    with pytest.raises(SettingsError, match=r"threads: .*integer"):
        load_settings(environ={"WASDI_SERVER_THREADS": "eight"})
    with pytest.raises(SettingsError, match="not valid TOML"):
        load_settings(toml(tmp_path, "port = \n"), environ={})


def test_text_booleans_mean_what_they_say(tmp_path: Path) -> None:
    assert load_settings(toml(tmp_path, '[smtp]\nstarttls = "false"\n'), environ={}).smtp.starttls is False
    assert load_settings(toml(tmp_path, "[smtp]\nstarttls = false\n"), environ={}).smtp.starttls is False
    assert load_settings(environ={"WASDI_SERVER_DISABLE_AUTHENTICATION": "no"}).disable_authentication is False
    assert load_settings(environ={"WASDI_SERVER_DISABLE_AUTHENTICATION": "1"}).disable_authentication is True


def test_tables_from_the_environment_field_by_field(tmp_path: Path) -> None:
    settings = load_settings(toml(tmp_path, '[smtp]\nhost = "file.example.org"\nusername = "u"\n'), environ={
        "WASDI_SERVER_SMTP_HOST": "env.example.org", "WASDI_SERVER_SMTP_PORT": "2525",
        "WASDI_SERVER_SMTP_STARTTLS": "false", "WASDI_SERVER_PAYMENTS_CURRENCY": "USD"})
    assert settings.smtp == SmtpSettings(host="env.example.org", port=2525, username="u", starttls=False)
    assert settings.payments.currency == "USD"


def test_precedence_defaults_file_environment_flags(tmp_path: Path) -> None:
    config = toml(tmp_path, "port = 9001\nthreads = 3\nnode_code = \"file\"\n")
    settings = load_settings(config, environ={"WASDI_SERVER_PORT": "9002", "WASDI_SERVER_THREADS": "4"}, threads=5)
    assert (settings.port, settings.threads, settings.node_code, settings.host) == (9002, 5, "file", "127.0.0.1")
    assert load_settings(environ={"WASDI_SERVER_CONFIG": str(config)}).port == 9001


def test_a_bad_settings_file_stops_the_server_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = toml(tmp_path, "[smtp]\nstarttls = \"perhaps\"\n")
    assert cli.main(["serve", "--config", str(config), "--data-dir", str(tmp_path / "d")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("wasdi-server: settings file") and "smtp.starttls" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
