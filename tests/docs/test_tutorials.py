"""The tutorials of the documentation site, to the letter: every command and script, in order, against a server
started as ``make run`` starts it (the README tour's machinery: its ``run:`` recipe, a fresh folder, a free port).

What each kind of block means here:

- ``console``: a transcript (``$ command`` lines, each followed by the output it must print; ``…`` stands for
  any text within a line, a line of only ``…`` for any number of lines). A page's commands run in one shell,
  so ``export``, ``cd`` and variables carry on as they would for a reader.
- ``python``: a script, run with the project's Python in the same folder; it must exit 0.
- ``toml`` with a ``title``: a file the page asks you to write; it is written, and a ``wasdi.toml`` must be
  settings the server accepts.
- ``sh``: only the quickstart's ``make run`` / ``make test`` (the same two commands as the README): the server
  here is started by ``make run``'s recipe, and ``make test`` is the suite running this test.

The only substitutions: the free port for ``8080`` and the admin password ``make run`` printed for its
placeholder. ``operating.md`` runs last, after the server is stopped (its backup needs a stopped server).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.app_support import wheelhouse
from tests.e2e.conftest import free_port
from tests.e2e.test_readme_tour import (
    PASSWORD_PLACEHOLDER,
    make_run_recipe,
    matches,
    tour_env,
    transcript,
    wait_for_admin_password,
)

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
RUNNING = ["quickstart.md", "first-app.md", "maps-qgis.md", "async.md"]
"""Tutorials run against the running server, in this order (each builds on the quickstart's server)."""
STOPPED = ["operating.md"]
"""Tutorials run after the server has stopped."""
PAGE_TIMEOUT = 300.0
FENCE = re.compile(r"^(?P<indent>[ ]*)```(?P<lang>[\w-]*)(?P<attrs>[^\n]*)\n(?P<body>.*?)^(?P=indent)```[ ]*$",
                   re.M | re.S)


@dataclass
class Block:
    language: str
    title: str | None
    text: str


def page_blocks(page: str) -> list[Block]:
    found = []
    for match in FENCE.finditer((DOCS / page).read_text(encoding="utf-8")):
        title = re.search(r'title="([^"]+)"', match["attrs"])
        body = textwrap.dedent("\n".join(line for line in match["body"].splitlines()))
        found.append(Block(match["lang"], title.group(1) if title else None, body))
    return found


def run_page(page: str, folder: Path, env: dict[str, str], fill: dict[str, str]) -> int:
    """Run every block of ``page``; the number of commands and scripts run."""
    ran = 0
    commands: list[tuple[str, list[str]]] = []

    def filled(text: str) -> str:
        for old, new in fill.items():
            text = text.replace(old, new)
        return text

    def flush() -> None:
        nonlocal ran
        if commands:
            run_transcript(page, commands, folder, env)
            ran += len(commands)
            commands.clear()

    for block in page_blocks(page):
        text = filled(block.text) if block.language != "sh" else block.text
        if block.language == "console":
            commands.extend(transcript(text))
            continue
        flush()  # a script sees what the commands before it did
        if block.language == "python":
            done = subprocess.run([sys.executable, "-c", text], cwd=folder, env=env, capture_output=True, text=True,
                                  timeout=PAGE_TIMEOUT, check=False)
            assert done.returncode == 0, f"{page}: the script\n{text}\nfailed:\n{done.stdout}\n{done.stderr}"
            ran += 1
        elif block.language == "toml" and block.title:
            (folder / block.title).write_text(text, encoding="utf-8")
            if block.title == "wasdi.toml":
                from wasdi_server import load_settings

                load_settings(folder / block.title, environ={})
        elif block.language == "sh" and page == "quickstart.md":
            readme = (ROOT / "README.md").read_text(encoding="utf-8")
            assert text.strip() in readme, "the quickstart's two commands are the README's"
        else:
            pytest.fail(f"{page}: a ```{block.language} block this test cannot run")
    flush()
    return ran


def run_transcript(page: str, commands: list[tuple[str, list[str]]], folder: Path, env: dict[str, str]) -> None:
    """Run ``commands`` in one bash, as a reader types them, and check each one's output and exit status."""
    marker = "@@@ command ended with status"
    script = ["exec 2>&1", *[f"{command}\necho '{marker}' $?" for command, _ in commands]]
    done = subprocess.run(["bash", "-c", "\n".join(script)], cwd=folder, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=PAGE_TIMEOUT, check=False)
    outputs = done.stdout.split(marker)
    assert len(outputs) == len(commands) + 1, f"{page}: the shell stopped early:\n{done.stdout}"
    status = "0"
    for index, (command, expected) in enumerate(commands):
        chunk = outputs[index]
        if index:
            status, _, chunk = chunk.partition("\n")
            assert status.strip() == "0", f"{page}: $ {commands[index - 1][0]}\nexit {status}"
        lines = [line.rstrip() for line in chunk.splitlines() if line.strip()]
        assert matches(expected, lines), f"{page}: $ {command}\nexpected:\n" + "\n".join(expected) + \
            "\ngot:\n" + "\n".join(lines)
    last = outputs[-1].strip()
    assert last == "0", f"{page}: $ {commands[-1][0]}\nexit {last}"


def test_the_tutorials_work_as_written(tmp_path: Path) -> None:
    port = free_port()
    folder = tmp_path / "clone"
    folder.mkdir()
    (folder / ".venv").symlink_to(Path(sys.executable).parent.parent)
    env = tour_env(tmp_path)
    # App environments are built from the test wheelhouse, offline (a setting, not a change to the pages).
    env.update(WASDI_SERVER_APPS_FIND_LINKS=str(wheelhouse()), WASDI_SERVER_APPS_OFFLINE="true")
    *setup, serve = make_run_recipe(port)
    for line in setup:
        done = subprocess.run(line, shell=True, cwd=folder, env=env, capture_output=True, text=True, timeout=120,
                              check=False)
        assert done.returncode == 0, f"{line}: {done.stderr}"
    log_path = tmp_path / "server.log"
    with open(log_path, "wb") as log:
        server = subprocess.Popen(shlex.split(serve), cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            password = wait_for_admin_password(log_path, port, server)
            fill = {"127.0.0.1:8080": f"127.0.0.1:{port}", PASSWORD_PLACEHOLDER: password}
            ran = {page: run_page(page, folder, env, fill) for page in RUNNING}
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
    ran |= {page: run_page(page, folder, env, fill) for page in STOPPED}
    assert all(count >= 1 for count in ran.values()) and sum(ran.values()) >= 30, ran


def test_every_tutorial_is_run() -> None:
    """A new page with commands must be added to RUNNING or STOPPED (the reference pages hold no tutorial)."""
    from tests.docs.test_site import nav_pages

    runnable = {page for page in nav_pages() if any(b.language in ("console", "python") for b in page_blocks(page))}
    assert runnable <= set(RUNNING + STOPPED) | {"server.md", "search.md", "maps.md"}, runnable
