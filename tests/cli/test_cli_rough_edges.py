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
