"""The tutorials of the documentation site, to the letter: every command and script, in order, against a server
started as ``make run`` starts it (the README tour's machinery: its ``run:`` recipe, a fresh folder, a free port).

What each kind of block means here:

- ``console``: a transcript (``$ command`` lines, each followed by the output it must print; ``…`` stands for
  any text within a line, a line of only ``…`` for any number of lines). A page's commands run in one shell,
  so ``export``, ``cd`` and variables carry on as they would for a reader.
- ``console`` with a ``title`` (such as "second terminal"): one command a reader leaves running in another
  terminal, such as ``wasdi ws watch``. It starts once the commands before it have run, and must print its first
  line before the page goes on; once the commands after it have run, its output must fit the block (it is given
  up to a minute to get there), and it is then stopped as Ctrl-C stops it.
- ``python``: a script, run with the project's Python in the same folder; it must exit 0.
- ``toml`` with a ``title``: a file the page asks you to write; it is written, and a ``wasdi.toml`` must be
  settings the server accepts.
- ``sh``: only the quickstart's ``make run`` / ``make test`` / ``make test-quick`` (the README's block): the
  server here is started by ``make run``'s recipe, and ``make test`` is the suite running this test.

The only substitutions: the free port for ``8080`` and the admin password ``make run`` printed for its
placeholder. ``operating.md`` runs last, after the server is stopped (its backup needs a stopped server).
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.app_support import wheelhouse
from tests.e2e.conftest import free_port
from tests.e2e.test_readme_tour import (
    ELLIPSIS,
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
TERMINAL_TIMEOUT = 60.0
"""How long a command in another terminal may take to print what the page shows."""
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


@dataclass
class Terminal:
    """A command left running in another terminal, and what it must print."""

    page: str
    command: str
    expected: list[str]
    output: Path
    process: subprocess.Popen[bytes]

    def lines(self) -> list[str]:
        text = self.output.read_text(encoding="utf-8", errors="replace") if self.output.exists() else ""
        return [line.rstrip() for line in text.splitlines() if line.strip()]

    def wait_for(self, expected: list[str], what: str) -> None:
        deadline = time.monotonic() + TERMINAL_TIMEOUT
        while not matches(expected, self.lines()):
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.stop()
                pytest.fail(f"{self.page}: $ {self.command} (in another terminal) did not print {what}:\n"
                            + "\n".join(expected) + "\ngot:\n" + "\n".join(self.lines()))
            time.sleep(0.1)

    def stop(self) -> None:
        """Ctrl-C, as the reader stops it (SIGINT to its process group)."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def start_terminal(page: str, text: str, folder: Path, env: dict[str, str]) -> Terminal:
    steps = transcript(text)
    assert len(steps) == 1 and steps[0][1], f"{page}: a block for another terminal is one command and its output"
    command, expected = steps[0]
    output = folder.parent / f"terminal-{page}-{len(list(folder.parent.glob('terminal-*')))}.log"
    with open(output, "wb") as sink:
        process = subprocess.Popen(["bash", "-c", command], cwd=folder, env=env, stdout=sink,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    terminal = Terminal(page, command, expected, output, process)
    terminal.wait_for([expected[0], ELLIPSIS], "its first line")
    return terminal


def run_page(page: str, folder: Path, env: dict[str, str], fill: dict[str, str]) -> int:
    """Run every block of ``page``; the number of commands and scripts run."""
    ran = 0
    commands: list[tuple[str, list[str]]] = []
    terminals: list[Terminal] = []
    """Commands left running in other terminals, checked once the commands after them have run."""

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
            for terminal in terminals:
                terminal.wait_for(terminal.expected, "what the page shows")
                terminal.stop()
            terminals.clear()

    try:
        for block in page_blocks(page):
            text = filled(block.text) if block.language != "sh" else block.text
            if block.language == "console" and block.title:
                flush()  # it watches what the commands after it do
                terminals.append(start_terminal(page, text, folder, env))
                ran += 1
                continue
            if block.language == "console":
                commands.extend(transcript(text))
                continue
            scripts = run_block(page, block, text, folder, env, flush)  # flush() adds to ran: call it first
            ran += scripts
        flush()
    finally:
        for terminal in terminals:
            terminal.stop()
    assert not terminals, f"{page}: a command in another terminal with no command after it to watch"
    return ran


def run_block(page: str, block: Block, text: str, folder: Path, env: dict[str, str],
              flush: Callable[[], None]) -> int:
    """Run a block that is not a transcript (after the commands before it); how many scripts it ran."""
    flush()  # a script sees what the commands before it did
    if block.language == "python":
        done = subprocess.run([sys.executable, "-c", text], cwd=folder, env=env, capture_output=True, text=True,
                              timeout=PAGE_TIMEOUT, check=False)
        assert done.returncode == 0, f"{page}: the script\n{text}\nfailed:\n{done.stdout}\n{done.stderr}"
        return 1
    elif block.language == "toml" and block.title:
        (folder / block.title).write_text(text, encoding="utf-8")
        if block.title == "wasdi.toml":
            from wasdi_server import load_settings

            load_settings(folder / block.title, environ={})
    elif block.language == "sh" and page == "quickstart.md":
        readme = (ROOT / "README.md").read_text(encoding="utf-8")
        assert text.strip() in readme, "the quickstart's commands are the README's"
    else:
        pytest.fail(f"{page}: a ```{block.language} block this test cannot run")
    return 0


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
    # notebooks.md's one Python block is the first cell of a lab, which tests/server/test_notebooks.py runs on a
    # real kernel; its `wasdi notebook open` is tests/cli/test_cli_notebook.py's.
    assert runnable <= set(RUNNING + STOPPED) | {"server.md", "search.md", "maps.md", "notebooks.md"}, runnable
