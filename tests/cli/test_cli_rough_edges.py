"""The rough edges of the command line a newcomer met (issue 31, item 6), one test each."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import ALICE, Cli, lines
from tests.server.geodata import make_geotiff

SCENE = "S2A_MSIL2A_20240101T101431_N0510_R022_T32TQM_20240101T122323"


@pytest.fixture
def alice(cli: Cli) -> Cli:
    cli.login()
    return cli


@pytest.fixture
def ws(alice: Cli) -> str:
    result = alice("ws", "create", "floods")
    assert result.exit_code == 0, result.output
    return result.stdout.strip()


def test_login_without_a_terminal_names_the_ways_to_give_a_password(cli: Cli) -> None:
    result = cli("login", "--user", ALICE)  # CliRunner's stdin is not a terminal
    assert result.exit_code == 2
    assert "GetPassWarning" not in result.output and "Aborted" not in result.output
    assert lines(result.stderr) == [lines(result.stderr)[0]]
    assert "WASDI_PASSWORD" in result.stderr and "--password-stdin" in result.stderr
    no_user = cli("login")
    assert no_user.exit_code == 2 and "give --user" in no_user.stderr and "WASDI_PASSWORD" in no_user.stderr
    # The variable is enough without a terminal.
    assert cli("login", "--user", ALICE, env={"WASDI_PASSWORD": "password-a"}).exit_code == 0


def test_import_takes_several_links_and_names_the_ones_that_failed(alice: Cli, ws: str, tmp_path: Path) -> None:
    imports = alice.app.services.settings.data_dir / "imports"
    imports.mkdir()
    make_geotiff(imports / "scene.tif")
    good = (imports / "scene.tif").as_uri()
    unreachable = "http://127.0.0.1:9/x.tif"
    result = alice("import", good, unreachable, SCENE, "--ws", "floods", "--wait")
    assert result.exit_code == 1
    assert result.stdout == "scene.tif\n"
    assert f"Failed: {SCENE}: '{SCENE}' is not a link" in result.stderr
    assert f"Failed: {unreachable}: the import failed" in result.stderr
    assert lines(result.stderr)[-1] == f"Error: 2 of 3 imports failed: {SCENE}, {unreachable}"
    assert alice.sdk(alice.token()).products.list_names(ws) == ["scene.tif"]


def test_a_scene_name_instead_of_a_link_says_how_to_find_the_link(alice: Cli, ws: str) -> None:
    result = alice("import", SCENE, "--ws", "floods")
    assert result.exit_code == 2
    assert lines(result.stderr) == [
        f"Error: '{SCENE}' is not a link (http(s):// or file://) but looks like a scene name: find its link with "
        f"'wasdi search --platform S2 --name {SCENE} --links' and import that"]


def test_import_name_needs_a_single_link(alice: Cli, ws: str) -> None:
    result = alice("import", "http://a.example/1.tif", "http://a.example/2.tif", "--ws", "floods", "--name", "x.tif")
    assert result.exit_code == 2 and "--name names one file" in result.stderr


def _rendered(unit: str, completed: int, total: int) -> str:
    import io

    from rich.console import Console
    from rich.progress import Progress

    from wasdi_cli import output

    console = Console(file=io.StringIO(), width=120, color_system=None)
    bar = Progress(*output.progress_columns(unit), console=console)
    bar.add_task("Running hello", total=total, completed=completed)
    console.print(bar.get_renderable())
    text = console.file.getvalue()
    assert isinstance(text, str)
    return text


def test_progress_bars_count_in_their_unit(monkeypatch: pytest.MonkeyPatch) -> None:
    from wasdi_cli import output, waiting

    percent = _rendered("percent", 13, 100)
    assert " 13%" in percent and "bytes" not in percent and "13/100" not in percent
    assert "13/100 bytes" in _rendered("bytes", 13, 100)  # uploads and downloads count bytes
    units: list[str | None] = []
    real = output.progress

    def recording(description: str, total: float | None = None, *, unit: str = "bytes") -> object:
        units.append(unit)
        return real(description, total, unit=unit)

    monkeypatch.setattr(waiting, "progress", recording)
    with waiting.wait_bar("Running hello"):
        pass
    assert units == ["percent"]  # every wait on a process (runs, imports, builds) counts percent


def _usage_lines(command: object, ctx: object) -> list[str]:
    found = [command.get_usage(ctx)]  # type: ignore[attr-defined]
    list_commands = getattr(command, "list_commands", None)
    for name in list_commands(ctx) if list_commands else []:
        sub = command.get_command(ctx, name)  # type: ignore[attr-defined]
        found += _usage_lines(sub, sub.make_context(name, [], parent=ctx, resilient_parsing=True))
    return found


@pytest.mark.parametrize("which", ["wasdi", "wasdi-server"])
def test_usage_lines_name_arguments_as_people_type_them(which: str) -> None:
    import typer.main

    if which == "wasdi":
        from wasdi_cli.main import app
    else:
        from wasdi_server.cli import app
    root = typer.main.get_command(app)
    usages = _usage_lines(root, root.make_context(which, [], resilient_parsing=True))
    assert len(usages) > 10
    odd = [usage for usage in usages if "{" in usage or "[[" in usage or "...}" in usage]
    assert odd == []
    if which == "wasdi":
        assert "Usage: wasdi import [OPTIONS] URL..." in usages
        assert "Usage: wasdi maps url [OPTIONS] [LAYER]" in usages
        assert "Usage: wasdi ws show [OPTIONS] ID_OR_NAME" in usages


def _run(script: str, *args: str) -> tuple[int, str]:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith(("WASDI", "COLUMNS"))} | {"NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-c", f"from {script}.entry import main; raise SystemExit(main())",
                           *args], capture_output=True, text=True, timeout=60, env=env)
    return done.returncode, done.stdout


def test_wasdi_server_help_is_plain_when_piped_and_both_commands_have_a_version() -> None:
    code, text = _run("wasdi_server", "--help")
    assert code == 0 and "Usage: wasdi-server [OPTIONS] COMMAND [ARGS]..." in text
    assert not any(box in text for box in "╭╮╰╯│─"), text
    assert "--version" in text
    from importlib.metadata import version

    assert _run("wasdi_server", "--version") == (0, f"wasdi-server {version('wasdi-toolkit')}\n")
    assert _run("wasdi_cli", "--version") == (0, f"wasdi {version('wasdi-toolkit')}\n")


def test_market_list_on_an_empty_store_says_how_to_publish(alice: Cli) -> None:
    result = alice("market", "list")
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert "The store has no apps you can see yet. To publish one of yours: 'wasdi apps deploy DIR', then " \
           "'wasdi market publish APP --show'" in result.stderr
    filtered = alice("market", "list", "--name", "ndvi")
    assert filtered.exit_code == 0 and lines(filtered.stderr) == ["No apps match."]


def test_uploads_ingest_moves_sftp_uploads_into_a_workspace(alice: Cli, ws: str) -> None:
    folder = alice.app.services.uploads.folder(ALICE)  # where the SFTP service writes the account's files
    folder.mkdir(parents=True)
    make_geotiff(folder / "a.tif")
    make_geotiff(folder / "b.tif")
    result = alice("uploads", "ingest", "a.tif", "missing.tif", "--ws", "floods")
    assert result.exit_code == 1
    assert result.stdout == "a.tif\n"
    assert "Failed: missing.tif: no such file in your upload folder ('wasdi uploads files' lists them)" \
        in result.stderr
    assert lines(result.stderr)[-1] == "Error: 1 of 2 files were not ingested: missing.tif"
    rest = alice("uploads", "ingest", "--all", "--ws", "floods")
    assert rest.exit_code == 0, rest.output
    assert rest.stdout == "b.tif\n"
    assert sorted(alice.sdk(alice.token()).products.list_names(ws)) == ["a.tif", "b.tif"]
    assert not (folder / "a.tif").exists()
    assert alice("uploads", "ingest", "--ws", "floods").exit_code == 2
