"""Help, import cost, exit codes, error reporting and ``wasdi server start``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import wasdi_cli
from tests.cli.conftest import ALICE, Cli
from wasdi_cli import connection
from wasdi_cli import main as cli_main
from wasdi_cli.main import app as cli_app
from wasdi_sdk import PermissionDeniedError, ServerError

SRC = Path(wasdi_cli.__file__).resolve().parents[1]
HEAVY = ("httpx", "pydantic", "wasdi_sdk", "wasdi_server", "falcon", "waitress", "tinydb", "click")
"""Modules ``wasdi``'s start-up must not import (``click``: Typer vendors its own, the package is not a dependency)."""


def run_python(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WASDI_")}
    env.update(PYTHONPATH=str(SRC), WASDI_CONFIG_DIR=str(tmp_path / "config"), NO_COLOR="1")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60,
                          check=False)


def test_help_lists_the_commands() -> None:
    result = CliRunner().invoke(cli_app, ["--help"])
    assert result.exit_code == 0, result.output
    for name in ("login", "logout", "whoami", "ws", "server"):
        assert name in result.stdout
    ws = CliRunner().invoke(cli_app, ["ws", "--help"])
    assert ws.exit_code == 0
    for name in ("list", "create", "show", "rename", "delete", "share"):
        assert name in ws.stdout
    share = CliRunner().invoke(cli_app, ["ws", "share", "--help"])
    assert all(name in share.stdout for name in ("add", "list", "remove"))


def test_version() -> None:
    result = CliRunner().invoke(cli_app, ["--version"])
    assert result.exit_code == 0 and result.stdout.strip() == f"wasdi {wasdi_cli.__version__}"


def test_server_start_help() -> None:
    result = CliRunner().invoke(cli_app, ["server", "start", "--help"])
    assert result.exit_code == 0, result.output
    for option in ("--data-dir", "--host", "--port", "--threads", "--init-admin"):
        assert option in result.stdout


def test_server_start_serves_with_the_given_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import wasdi_server.cli

    seen: dict[str, Any] = {}

    def fake_serve(settings: Any, *, init_admin: bool = False) -> None:
        seen.update(settings=settings, init_admin=init_admin)

    monkeypatch.setattr(wasdi_server.cli, "serve", fake_serve)
    for name in list(os.environ):
        if name.startswith("WASDI_SERVER_"):
            monkeypatch.delenv(name)
    result = CliRunner().invoke(cli_app, ["server", "start", "--data-dir", str(tmp_path / "d"), "--host", "0.0.0.0",
                                          "--port", "9123", "--threads", "3", "--init-admin"])
    assert result.exit_code == 0, result.output
    settings = seen["settings"]
    assert settings.data_dir == (tmp_path / "d").resolve()
    assert (settings.host, settings.port, settings.threads) == ("0.0.0.0", 9123, 3)
    assert seen["init_admin"] is True
    defaults = CliRunner().invoke(cli_app, ["server", "start"])
    assert defaults.exit_code == 0 and seen["init_admin"] is False and seen["settings"].port == 8080
    assert CliRunner().invoke(cli_app, ["server", "start", "--port", "0"]).exit_code == 2


def test_importing_the_cli_is_light(tmp_path: Path) -> None:
    code = ("import sys, json\nimport wasdi_cli.main\n"
            f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    result = run_python(code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


def test_help_stays_light(tmp_path: Path) -> None:
    # Typer >= 0.29 itself converts parameter values with pydantic once a command's options are parsed, so only
    # the toolkit's own heavy modules are checked here; `import wasdi_cli.main` above is checked for all of them.
    toolkit = tuple(m for m in HEAVY if m != "pydantic")
    code = ("import sys, json\nfrom wasdi_cli.main import main\n"
            "codes = [main(['--help']), main(['ws', '--help']), main(['ws', 'share', 'add', '--help']),"
            " main(['server', 'start', '--help'])]\n"
            f"print(json.dumps([codes, [m for m in {toolkit!r} if m in sys.modules]]))")
    result = run_python(code, tmp_path)
    assert result.returncode == 0, result.stderr
    codes, loaded = json.loads(result.stdout.splitlines()[-1])
    assert codes == [0, 0, 0, 0] and loaded == []


def test_a_lazy_command_missing_from_its_module_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.main import get_command

    from wasdi_cli.lazy import LazyGroup

    monkeypatch.setitem(LazyGroup.lazy, "nothing-here", "workspaces.no_such_command")
    root = get_command(cli_app)
    with pytest.raises(LookupError, match=r"wasdi_cli\.commands\.workspaces has no command 'no_such_command'"), \
            root.make_context("wasdi", ["nothing-here"]) as ctx:
        root.get_command(ctx, "nothing-here")


def test_the_console_script_entry_point_maps_exit_codes(tmp_path: Path) -> None:
    code = ("import sys\nfrom wasdi_cli.main import main\n"
            "print(main(['whoami']), main(['--no-such-option']), main(['ws', 'show']), main([]))")
    result = run_python(code, tmp_path)
    assert result.stdout.split()[-4:] == ["4", "2", "2", "2"], result.stdout + result.stderr
    assert "Error: not logged in" in result.stderr


def test_main_returns_the_exit_code(cli: Cli) -> None:
    assert cli_main.main(["--version"]) == 0
    assert cli_main.main(["ws", "list"]) == 4
    assert cli_main.main(["ws", "list", "--bogus"]) == 2


def _raiser(error: BaseException) -> Any:
    def make_client(base_url: str, token: str | None) -> Any:
        raise error

    return make_client


@pytest.mark.parametrize(("error", "code"), [
    (PermissionDeniedError("no access", status=403), 4),
    (ServerError("boom", status=500), 1),
    (KeyboardInterrupt(), 130),
    (RuntimeError("a bug"), 1),
])
def test_exceptions_map_to_exit_codes(cli: Cli, monkeypatch: pytest.MonkeyPatch, error: BaseException,
                                      code: int) -> None:
    cli.login()
    monkeypatch.setattr(connection, "make_client", _raiser(error))
    result = cli("ws", "list")
    assert result.exit_code == code, result.output
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("Error: ")
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_tracebacks_only_with_wasdi_debug(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    cli.login()
    monkeypatch.setattr(connection, "make_client", _raiser(ServerError("boom", status=500)))
    quiet = cli("ws", "list")
    assert quiet.exit_code == 1 and "Traceback" not in quiet.stderr
    assert quiet.stderr.strip() == "Error: boom"
    loud = cli("ws", "list", "--json", env={"WASDI_DEBUG": "1"})
    assert loud.exit_code == 1
    assert "Traceback" in loud.stderr and loud.stderr.rstrip().endswith("Error: boom (status 500)")


def test_messages_go_to_stderr_and_data_to_stdout(cli: Cli) -> None:
    login = cli.login()
    assert login.stdout == "" and ALICE in login.stderr
    created = cli("ws", "create", "floods")
    assert "Created" not in created.stdout and "Created" in created.stderr


def test_progress_bars_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from wasdi_cli import output

    monkeypatch.setattr(output, "stderr_is_tty", lambda: False)
    with output.progress("copying", total=10) as advance:
        advance(5)
    assert capsys.readouterr() == ("", "")
    monkeypatch.setattr(output, "stderr_is_tty", lambda: True)
    with output.progress("copying", total=10) as advance:
        advance(10)
    assert capsys.readouterr().out == ""  # a bar never goes to stdout


def test_every_code_of_the_message_catalogue_is_a_sentence() -> None:
    """One table, the SDK's: every code the server answers has a sentence, which the CLI prints as it is."""
    import re

    import wasdi_server.errors as server_errors
    from wasdi_cli.messages import NEXT_COMMAND, sentence
    from wasdi_sdk import BadRequestError
    from wasdi_sdk.messages import SENTENCES

    server_codes = set(re.findall(r'"(MSG_[A-Z_0-9]+)"', "".join(
        p.read_text() for p in Path(server_errors.__file__).parent.rglob("*.py"))))
    assert server_codes <= set(SENTENCES), sorted(server_codes - set(SENTENCES))
    assert set(NEXT_COMMAND) <= set(SENTENCES)
    for code, text in SENTENCES.items():
        error = BadRequestError(code, status=400)
        assert error.message == text and error.code == code and "MSG_" not in text
        assert sentence(error).startswith(text) and "MSG_" not in sentence(error)
    assert sentence(BadRequestError("Bad Request", status=400)).startswith("the server refused the request")
    cli_sources = "".join(p.read_text() for p in (Path(server_errors.__file__).parents[1] / "wasdi_cli").rglob("*.py"))
    assert not any(f'"{text}"' in cli_sources for text in SENTENCES.values()), "the CLI has no copy of the table"


def test_cannot_reach_the_server_says_how_to_start_one(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    from wasdi_sdk import APIConnectionError

    cli.login()
    monkeypatch.setattr(connection, "make_client", _raiser(APIConnectionError("cannot reach http://127.0.0.1:9")))
    result = cli("ws", "list")
    assert result.exit_code == 3 and "'wasdi server start'" in result.stderr


def test_one_date_format_in_every_table() -> None:
    """Every way the service writes a time reads the same in a table, through one helper."""
    import re
    from datetime import UTC, datetime

    from wasdi_cli.output import when

    expected = "2024-01-18 10:33:51 UTC"
    for value in (1705574031000, 1705574031000.0, "1705574031000", "2024-01-18T10:33:51.000Z",
                  "2024-01-18 10:33:51", "Thu Jan 18 10:33:51 UTC 2024", datetime(2024, 1, 18, 10, 33, 51, tzinfo=UTC)):
        assert when(value) == expected, value
    assert when(None) == "" and when("soon") == "soon"
    commands = Path(__file__).resolve().parents[2] / "src" / "wasdi_cli" / "commands"
    for source in commands.glob("*.py"):
        text = source.read_text()
        raw_dates = re.findall(r'lambda (\w): \1\.\w*(?:_date|_timestamp|_login)\)', text)
        assert not raw_dates and "strftime(\"%Y" not in text.replace("%Y-%m-%dT%H:%M:%S.000Z", ""), source.name
