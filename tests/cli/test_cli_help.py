"""Every ``--help`` of ``wasdi`` and ``wasdi-server`` in one style, and output into a closed pipe."""

from __future__ import annotations

import re
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from tests.cli.conftest import Cli
from wasdi_cli import connection
from wasdi_cli.main import app as cli_app
from wasdi_server.cli import app as server_app

RAW_TYPES = re.compile(r"<(bool|str|int|float|path|uuid|datetime)>")


def command_paths(command: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command path, lazily loaded groups included (asked by name, as a shell completion would)."""
    paths = [prefix]
    if hasattr(command, "list_commands"):
        for name in command.list_commands(None):
            paths.extend(command_paths(command.get_command(None, name), (*prefix, name)))
    return paths


@pytest.mark.parametrize("app", [cli_app, server_app], ids=["wasdi", "wasdi-server"])
def test_help_shows_uniform_metavars_and_no_raw_types(app: Any) -> None:
    runner = CliRunner()
    paths = command_paths(typer.main.get_command(app))
    assert len(paths) > 10
    for path in paths:
        result = runner.invoke(app, [*path, "--help"], env={"NO_COLOR": "1", "COLUMNS": "200"})
        assert result.exit_code == 0, (path, result.output)
        assert not RAW_TYPES.search(result.output), (path, RAW_TYPES.findall(result.output))
        assert "Users a organization" not in result.output
        assert "`" not in result.output, (path, "hints are quoted with '...', not backticks")


def test_share_help_reads_right() -> None:
    result = CliRunner().invoke(cli_app, ["orgs", "share", "--help"], env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert "Share an organization" in result.output


def test_completion_is_offered() -> None:
    result = CliRunner().invoke(cli_app, ["--help"], env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert "--install-completion" in result.output


def test_a_closed_pipe_ends_quietly(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    cli.login()

    def closed(base_url: str, token: str | None) -> Any:
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(connection, "make_client", closed)
    result = cli("ws", "list")
    assert result.exit_code == 0 and result.stderr == ""


def test_help_into_a_pipe_is_plain_and_whole(monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    import typer.core

    from wasdi_cli.main import main

    monkeypatch.setattr(typer.core, "HAS_RICH", True)  # restored after: plain_help switches it off
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["ws", "--help"]) == 0
    out = capsys.readouterr().out
    assert "╭" not in out and "Commands:" in out
    # Click would cut a command's summary at 45 characters; the rich help shows it whole, so must this
    assert "Print the name of the workspace with this id (also one shared with\n          you, or public)." in out
    assert "-h, --help" in out


def test_help_on_a_terminal_stays_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    import typer.core

    from wasdi_command_line.help_style import plain_help

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(typer.core, "HAS_RICH", True)
    plain_help(["ws", "--help"], Terminal())
    assert typer.core.HAS_RICH
    plain_help(["ws", "list"], io.StringIO())  # not a help run: errors keep their rich boxes
    assert typer.core.HAS_RICH
