"""Without the cli extra (no typer, no rich), ``wasdi`` and ``python -m wasdi_cli`` both say which extra to install,
in one sentence, never a traceback.  The libraries are hidden from a fresh interpreter as a lean install lacks
them (``tests/packaging/test_extras.py`` checks the same on a real install, slowly)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
HIDE = "import sys; sys.modules.update(typer=None, rich=None); sys.path.insert(0, {src!r}); "
ENTRIES = {
    # what the `wasdi` console script runs (pyproject.toml's [project.scripts])
    "wasdi": "from wasdi_cli.entry import main; sys.exit(main())",
    "python -m wasdi_cli": "import runpy; sys.argv[0] = 'wasdi_cli'; runpy.run_module('wasdi_cli', "
                           "run_name='__main__', alter_sys=True)",
}


@pytest.mark.parametrize("entry", list(ENTRIES))
def test_a_lean_install_is_told_to_install_the_cli_extra(entry: str) -> None:
    done = subprocess.run([sys.executable, "-c", HIDE.format(src=str(SRC)) + ENTRIES[entry], "--version"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert done.stderr.strip() == ("wasdi needs the cli extra (typer, rich missing): "
                                   "pip install 'wasdi-toolkit[cli]'"), done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
