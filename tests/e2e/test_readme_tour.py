"""The README's tour, to the letter: its commands, in order, against a server started as ``make run`` starts it;
then the command blocks of "Beyond the tour", in order, in one shell, on the same server's sample data.

The server is started by what ``make run PORT=<a free port>`` runs (this venv's programs), in a fresh
folder, so the README, the Makefile and this test cannot drift apart.  Each ``console``
block of the tour is a transcript: ``$ command`` lines, each followed by the output it must print (``…``
stands for any text within a line; a line holding only ``…`` for any number of lines).  The only
substitutions: the free port for ``8080`` (and one for the SFTP service), and the admin password
``make run`` printed for its placeholder.  The Python blocks then run as written (the official library's
reads the ``config.json`` block).

"Beyond the tour" is made of ``sh`` blocks of commands, each of which must exit 0.  What a clone holds is there
(``examples/``, whose ``ndvi.xml`` the workflows block uploads); what the reader installs is brought as settings,
not changes to the page: a stand-in for SNAP's ``gpt`` and the test wheelhouse for app environments.  Commands
that run "until Ctrl-C" get a Ctrl-C after a few seconds and must end with 130.  ``NOT_RUN`` names the few lines
this test cannot run, and why.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
from tests.app_support import wheelhouse
from tests.e2e.conftest import free_port
from tests.server.snap import STAND_IN_GPT

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
PASSWORD_PLACEHOLDER = "<the admin password make run printed>"
ELLIPSIS = "…"
COMMAND_TIMEOUT = 120.0


def readme_section(title: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(f"## {title}")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def tour_section() -> str:
    return readme_section("A five-minute tour")


NOT_RUN = {
    "sftp -P": "an interactive SFTP session: it asks for the password at the keyboard (the service is tested "
               "with a scripted client in tests/server/test_sftp_service.py)",
    "WASDI_SERVER_STORE_URL=postgresql": "starts a compute node of a PostgreSQL deployment (tests/e2e/"
                                         "test_nodes_e2e.py runs one)",
}
"""Lines of "Beyond the tour" this test does not run (a prefix of the command line), and why."""
CTRL_C_AFTER = 4.0
"""Seconds after which a command that runs until Ctrl-C gets it."""


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
    # as in a clone, the data directory lies below the project's own file, which the box hides from builds
    (folder / "pyproject.toml").write_bytes((ROOT / "pyproject.toml").read_bytes())
    env = tour_env(tmp_path)
    # What a reader of "Beyond the tour" has: SNAP's gpt (here a stand-in) and a package index (here the wheelhouse).
    env.update(WASDI_SERVER_SNAP_GPT=str(stand_in_gpt(tmp_path / "snap")),
               WASDI_SERVER_APPS_FIND_LINKS=str(wheelhouse()), WASDI_SERVER_APPS_OFFLINE="true")
    shutil.copytree(ROOT / "examples", folder / "examples")  # what a clone has
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
        run_beyond_the_tour(folder, env)
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


def stand_in_gpt(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    gpt = folder / "gpt"
    gpt.write_text(STAND_IN_GPT.format(python=sys.executable))
    gpt.chmod(0o755)
    return gpt


DOC_PAGES = ("search.md", "maps.md")
"""Reference pages whose command blocks run after "Beyond the tour", in the same shell (the tutorials are run by
tests/docs/test_tutorials.py)."""


def beyond_commands() -> list[str]:
    """The command lines of the ``sh`` blocks of "Beyond the tour", then of ``DOC_PAGES``, continuation lines
    joined."""
    commands = []
    texts = [readme_section("Beyond the tour"), *((ROOT / "docs" / page).read_text(encoding="utf-8")
                                                   for page in DOC_PAGES)]
    for block in (block for text in texts for block in blocks(text, "sh")):
        for line in block.replace("\\\n", " ").splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                commands.append(line.strip())
    return commands


def run_beyond_the_tour(folder: Path, env: dict[str, str]) -> None:
    marker = "@@@ exit status"
    script, ran = ["exec 2>&1"], []
    for command in beyond_commands():
        if any(command.startswith(prefix) for prefix in NOT_RUN):
            continue
        if "until Ctrl-C" in command:
            command = f"timeout --preserve-status -s INT {CTRL_C_AFTER} {command}"
        script.append(f"echo '{marker} start'\n{command}\necho '{marker}' $?")
        ran.append(command)
    done = subprocess.run(["bash", "-c", "\n".join(script)], cwd=folder, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=600, check=False)
    chunks = done.stdout.split(f"{marker} start")[1:]
    assert len(chunks) == len(ran), f"the shell stopped early:\n{done.stdout}"
    for command, chunk in zip(ran, chunks, strict=True):
        output, _, status = chunk.rpartition(marker)
        expected = "130" if command.startswith("timeout --preserve-status") else "0"
        assert status.strip() == expected, f"$ {command}\nexit {status.strip()}:\n{output}"
    assert len(ran) >= 26, ran
    (folder.parent / "beyond.log").write_text(done.stdout, encoding="utf-8")  # for a person reading a failure
    assert (folder / "scene.png").read_bytes().startswith(b"\x89PNG")
    said = done.stdout
    for sentence in ("Installed six==1.16.0 in app 'hello'", "Closed 0 stale processes", "load (1 min)"):
        assert sentence in said, sentence
    # The transfer account's mail is where the README says it lands.
    assert ".wasdi-data/mail/outbox/new/" in readme_section("Beyond the tour")
    mails = list((folder / ".wasdi-data" / "mail" / "outbox" / "new").iterdir())
    assert any("admin@wasdi.local" in mail.read_text(errors="replace") for mail in mails), mails
    assert re.search(r"^layer +product +band +style", said, flags=re.M), said


def test_beyond_the_tour_runs_every_line_but_those_named() -> None:
    commands = beyond_commands()
    skipped = [c for c in commands if any(c.startswith(prefix) for prefix in NOT_RUN)]
    assert len(skipped) == len(NOT_RUN), "each line not run is named once, and is still in the README"
    assert "wasdi reviews add hello --vote 4 --title \"useful\"" in commands


def test_the_transcript_matcher() -> None:
    assert matches(["a…", ELLIPSIS, "z"], ["abc", "x", "y", "z"])
    assert matches(["…(write)"], ["Shared (1) with c (write)"])
    assert not matches(["a"], ["a", "b"])
    assert not matches(["a…c"], ["abd"])
    assert matches([ELLIPSIS], [])
