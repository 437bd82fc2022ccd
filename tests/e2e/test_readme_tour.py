"""The README's tour, to the letter: its commands, in order, against a server started as ``make run`` starts it.

The server is started by what ``make run PORT=<a free port>`` runs (this venv's programs), in a fresh
folder, so the README, the Makefile and this test cannot drift apart.  Each ``console``
block of the tour is a transcript: ``$ command`` lines, each followed by the output it must print (``…``
stands for any text within a line; a line holding only ``…`` for any number of lines).  The only
substitutions: the free port for ``8080`` (and one for the SFTP service), and the admin password
``make run`` printed for its placeholder.  The Python blocks then run as written (the official library's
reads the ``config.json`` block).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import httpx
from tests.e2e.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
PASSWORD_PLACEHOLDER = "<the admin password make run printed>"
ELLIPSIS = "…"
COMMAND_TIMEOUT = 120.0


def tour_section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("## A five-minute tour")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def blocks(section: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", section, flags=re.S)


def transcript(block: str) -> list[tuple[str, list[str]]]:
    """``(command, expected output lines)`` of each ``$ `` line of a console block."""
    steps: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif line.strip():
            assert steps, f"output before any command in:\n{block}"
            steps[-1][1].append(line.rstrip())
    return steps


def matches(expected: list[str], actual: list[str]) -> bool:
    """Whether ``actual`` lines fit the ``expected`` pattern lines (see the module docstring)."""
    if not expected:
        return not actual
    head, rest = expected[0], expected[1:]
    if head.strip() == ELLIPSIS:
        return any(matches(rest, actual[i:]) for i in range(len(actual) + 1))
    if not actual:
        return False
    pattern = ".*".join(re.escape(part) for part in head.split(ELLIPSIS))
    return re.fullmatch(pattern, actual[0]) is not None and matches(rest, actual[1:])


def make_run_recipe(port: int) -> list[str]:
    """The commands ``make run PORT=<port>`` runs (make's own expansion of the ``run:`` recipe, with this venv),
    as the README says to serve on another port."""
    env = {k: v for k, v in os.environ.items() if k not in MAKE_INHERITED}
    done = subprocess.run(["make", "--silent", "--dry-run", "--old-file", ".venv/.stamp-run", "run", f"PORT={port}",
                           f"BIN={BIN}"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    recipe = [line.strip() for line in done.stdout.splitlines() if line.strip()]
    assert recipe and f"--port {port}" in recipe[-1], recipe
    return recipe


MAKE_INHERITED = frozenset({"HOST", "PORT", "DATA_DIR", "MAKEFLAGS", "MFLAGS", "MAKELEVEL"})
"""What would change the recipe (make reads variables from the environment), or make it a sub-make's."""


def tour_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WASDI")}
    env.update(PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}", HOME=str(home), WASDI_CONFIG_DIR=str(home / "config"),
               NO_COLOR="1", COLUMNS="200", PYTHONUNBUFFERED="1",
               # free ports, as for the API: other tests run servers too, and the API's port + 1 may be taken
               WASDI_SERVER_SFTP_PORT="0", WASDI_SERVER_BROKER_PORT=str(free_port()))
    env.pop("VIRTUAL_ENV", None)
    return env


def test_the_readme_tour_works_as_written(tmp_path: Path) -> None:
    port = free_port()
    folder = tmp_path / "clone"
    folder.mkdir()
    (folder / ".venv").symlink_to(BIN.parent)  # the tour runs `source .venv/bin/activate`
    env = tour_env(tmp_path)
    *setup, serve = make_run_recipe(port)
    for line in setup:
        done = subprocess.run(line, shell=True, cwd=folder, env=env, capture_output=True, text=True, timeout=120,
                              check=False)
        assert done.returncode == 0, f"{line}: {done.stderr}"
    log = (tmp_path / "server.log").open("wb")
    server = subprocess.Popen(shlex.split(serve), cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        password = wait_for_admin_password(tmp_path / "server.log", port, server)
        run_the_tour(folder, env, port, password)
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def wait_for_admin_password(log: Path, port: int, server: subprocess.Popen[bytes]) -> str:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert server.poll() is None, log.read_text(errors="replace")
        found = re.search(r"password: (\S+)", log.read_text(errors="replace"))
        if found:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/wasdi/hello", timeout=2).status_code == 200:
                    return found.group(1)
            except httpx.HTTPError:
                pass
        time.sleep(0.2)
    raise AssertionError(f"the server did not start:\n{log.read_text(errors='replace')}")


def run_the_tour(folder: Path, env: dict[str, str], port: int, password: str) -> None:
    section = tour_section()

    def filled(text: str) -> str:
        return text.replace("127.0.0.1:8080", f"127.0.0.1:{port}").replace(PASSWORD_PLACEHOLDER, password)

    consoles = blocks(section, "console")
    assert len(consoles) >= 3, "the tour has its command-line transcripts"
    state: list[str] = []  # `source` and `export` lines carry over to the next commands, as in one shell
    ran = 0
    for block in consoles:
        for command, expected in transcript(filled(block)):
            script = "\n".join([*state, command])
            done = subprocess.run(["bash", "-c", script], cwd=folder, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, timeout=COMMAND_TIMEOUT, check=False)
            output = [line.rstrip() for line in done.stdout.splitlines() if line.strip()]
            assert done.returncode == 0, f"$ {command}\nexit {done.returncode}:\n{done.stdout}"
            assert matches(expected, output), f"$ {command}\nexpected:\n" + "\n".join(expected) + \
                "\ngot:\n" + "\n".join(output)
            if command.startswith(("source ", "export ")):
                state.append(command)
            ran += 1
    assert ran >= 12

    (folder / "config.json").write_text(filled(blocks(section, "json")[0]), encoding="utf-8")
    sdk_snippet, official_snippet = (filled(code) for code in blocks(section, "python"))
    for code in (sdk_snippet, official_snippet):
        done = subprocess.run([sys.executable, "-c", code], cwd=folder, env=env, capture_output=True, text=True,
                              timeout=COMMAND_TIMEOUT, check=False)
        assert done.returncode == 0, f"{code}\n{done.stdout}\n{done.stderr}"
    assert "Floods 2024" in done.stdout and "Hello" in done.stdout, done.stdout


def test_the_transcript_matcher() -> None:
    assert matches(["a…", ELLIPSIS, "z"], ["abc", "x", "y", "z"])
    assert matches(["…(write)"], ["Shared (1) with c (write)"])
    assert not matches(["a"], ["a", "b"])
    assert not matches(["a…c"], ["abd"])
    assert matches([ELLIPSIS], [])
