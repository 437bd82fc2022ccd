"""Other people's code against a real server with two accounts, written as an attacker would: an app written
against the official library, an app build whose pip.txt names a package (an sdist from the tests' own
package folder) with hostile build code, and a public app run by another user.  Every reach is refused
while the same app still reads its input and writes its output through the library; the fork bomb and the
memory bomb end in ERROR with a log line naming the limit and leave no process behind.

These run on this machine's kernel; where it cannot box a run, the tests fail under CI=true (the server
refuses every run) and skip elsewhere."""

from __future__ import annotations

import io
import json
import socket
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests import environment
from tests.app_support import wheelhouse
from tests.e2e.conftest import ALICE, BOB, RunningServer, ServerFactory
from tests.e2e.test_apps_e2e import Api

from wasdi_server.launcher.box import kernel_support
from wasdi_server.management import channel

PACKAGES = Path(__file__).resolve().parents[1] / "packages"
MISSING = kernel_support().missing()
if MISSING and not environment.on_ci():
    pytest.skip(f"this kernel cannot box runs: {'; '.join(MISSING)}", allow_module_level=True)
MEMORY_MB = 256
PROCESSES = 100

INTRUDER = '''
import os
import time

import requests
import wasdi

import reaches


def run():
    mode = wasdi.getParameter("mode", "reach")
    targets = wasdi.getParameter("targets", {})
    if mode == "forkbomb":
        count = 0
        try:
            while count < 5000:
                if os.fork() == 0:
                    time.sleep(120)
                    os._exit(0)
                count += 1
        finally:
            wasdi.wasdiLog(f"forked {count}")
    if mode == "membomb":
        chunks = []
        while True:
            chunks.append(b"x" * (16 * 1024 * 1024))
    if mode == "share":
        base, headers = wasdi.getBaseUrl(), {"x-session-token": wasdi.getSessionId()}
        listed = requests.get(base + "/ws/byuser", headers=headers).json()
        shared = [requests.put(base + "/ws/share/add", headers=headers,
                               params={"workspace": w, "userId": targets["author"], "rights": "write"}).json()
                  for w in targets["victim_workspaces"]]
        created = requests.get(base + "/ws/create", params={"name": "by-the-app"}, headers=headers).json()
        wasdi.setPayload({"listed": [w["workspaceId"] for w in listed], "shared": shared, "created": created,
                          "session": wasdi.getSessionId()})
        return
    results = reaches.attempt_all(targets)
    with open(wasdi.getPath("input.txt")) as handle:
        text = handle.read()
    with open(wasdi.getPath("output.txt"), "w") as handle:
        handle.write(text.upper())
    wasdi.addFileToWASDI("output.txt")
    wasdi.setPayload({"results": results, "input": text})
'''

USES_THE_PACKAGE = '''
import hostile_build
import wasdi


def run():
    with open(wasdi.getPath("input.txt")) as handle:
        text = handle.read()
    with open(wasdi.getPath("built.txt"), "w") as handle:
        handle.write(f"{hostile_build.VERSION} {text}")
    wasdi.addFileToWASDI("built.txt")
'''


def sdist(folder: Path, targets: dict[str, Any]) -> Path:
    """``hostile-build-1.0.tar.gz`` in ``folder``: the package of tests/packages/hostile_build, with ``reaches``
    and the targets it is to try."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "hostile_build-1.0.tar.gz"
    files = {"pyproject.toml": (PACKAGES / "hostile_build" / "pyproject.toml").read_bytes(),
             "backend.py": (PACKAGES / "hostile_build" / "backend.py").read_bytes(),
             "reaches.py": (PACKAGES / "reaches.py").read_bytes(),
             "targets.json": json.dumps(targets).encode(),
             "PKG-INFO": b"Metadata-Version: 2.1\nName: hostile-build\nVersion: 1.0\n"}
    with tarfile.open(target, "w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(f"hostile_build-1.0/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return target


class Scene:
    """Alice (who uploads the apps), Bob (another user, with files of his own), and what the code aims at."""

    def __init__(self, server: RunningServer, packages: Path, listener: socket.socket) -> None:
        self.server = server
        self.alice = Api(server)
        self.data = server.data_dir
        with server.http(BOB) as bob:
            self.bobs = str(bob.get("/ws/create", params={"name": "bobs"}).json()["stringValue"])
            self.bobs_other = str(bob.get("/ws/create", params={"name": "bobs-other"}).json()["stringValue"])
        self.bob = Api.__new__(Api)
        self.bob.http, self.bob.workspace = server.http(BOB), self.bobs
        bob_folder = self.data / "files" / BOB / self.bobs
        bob_folder.mkdir(parents=True, exist_ok=True)
        (bob_folder / "secret.tif").write_text("bob's secret")
        (bob_folder / "input.txt").write_text("bob's input")
        self.alice_folder = self.data / "files" / ALICE / self.alice.workspace
        self.alice_folder.mkdir(parents=True, exist_ok=True)
        (self.alice_folder / "input.txt").write_text("alice's input")
        store = sorted((self.data / "db").glob("*.json"))
        self.targets = {
            "store_file": str(next(p for p in store if p.name == "users.json")),
            "other_file": str(bob_folder / "secret.tif"), "other_folder": str(bob_folder),
            "owner_folder": str(self.data / "files" / ALICE), "above": str(self.data.parent),
            "admin_socket": str(self.data / channel.SOCKET_NAME), "admin_key": str(self.data / channel.KEY_NAME),
            "other_port": listener.getsockname()[1], "author": ALICE,
            "victim_workspaces": [self.bobs, self.bobs_other], "server_pid": server.pid,
        }
        sdist(packages, self.targets)

    def planted(self) -> list[Path]:
        return [p for p in self.data.parent.rglob("planted-by-intruder.txt")]


@pytest.fixture
def scene(servers: ServerFactory, data_dir_with_workspace: Path, tmp_path: Path) -> Iterator[Scene]:
    packages = tmp_path / "packages"
    packages.mkdir()
    config = tmp_path / "box.toml"
    config.write_text(f"apps_find_links = {json.dumps([str(wheelhouse()), str(packages)])}\napps_offline = true\n"
                      f"launcher_workers = 2\napp_memory_mb = {MEMORY_MB}\napp_max_processes = {PROCESSES}\n")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    try:
        server = servers.start(data_dir_with_workspace, extra_args=("--config", str(config)))
        yield Scene(server, packages, listener)
    finally:
        listener.close()


def intruder(scene: Scene) -> None:
    scene.alice.upload("intruder", {"myProcessor.py": INTRUDER, "reaches.py": (PACKAGES / "reaches.py").read_text()},
                       public=1)


def assert_all_refused(results: dict[str, str]) -> None:
    assert results, "nothing was tried"
    for attempt, outcome in results.items():
        assert outcome.startswith("refused"), (attempt, outcome)


def test_an_app_reaches_its_workspace_and_the_api_and_nothing_else(scene: Scene) -> None:
    intruder(scene)
    run = scene.alice.run("intruder", {"targets": scene.targets})
    assert scene.alice.wait(run, timeout=120) == "DONE", scene.alice.log(run)
    payload = scene.alice.payload(run)
    assert payload["input"] == "alice's input"
    assert (scene.alice_folder / "output.txt").read_text() == "ALICE'S INPUT"
    assert "output.txt" in scene.alice.products()
    assert_all_refused(payload["results"])
    assert scene.planted() == []
    listing = ServerFactory.cli("user", "list", "--json", "--data-dir", str(scene.data))
    assert "intruder@example.org" not in listing.stdout and listing.returncode == 0, listing.stderr


def test_a_build_whose_package_runs_hostile_build_code_reaches_nothing(scene: Scene) -> None:
    scene.alice.upload("builds", {"myProcessor.py": USES_THE_PACKAGE, "pip.txt": "hostile-build==1.0\n"})
    found = list((scene.data / "app-environments" / "builds" / "venv").rglob("hostile_build/results.json"))
    assert len(found) == 1, "the package was not built"
    assert_all_refused(json.loads(found[0].read_text()))
    assert scene.planted() == []
    run = scene.alice.run("builds")
    assert scene.alice.wait(run, timeout=120) == "DONE", scene.alice.log(run)
    assert (scene.alice_folder / "built.txt").read_text() == "1.0 alice's input"


def test_a_public_app_run_by_another_user_cannot_widen_its_session(scene: Scene) -> None:
    intruder(scene)
    run = scene.bob.run("intruder", {"mode": "share", "targets": scene.targets})
    assert scene.bob.wait(run, timeout=120) == "DONE", scene.bob.log(run)
    payload = scene.bob.payload(run)
    assert payload["listed"] == [scene.bobs]
    # /ws/share/add fails in its own style: HTTP 200 with boolValue false and the status in intValue.
    assert [(a.get("boolValue"), a.get("intValue")) for a in payload["shared"]] == [(False, 403), (False, 403)]
    assert payload["created"] is None  # /ws/create fails with an empty answer (style C)
    assert "by-the-app" not in {w["workspaceName"] for w in scene.bob.http.get("/ws/byuser").json()}
    with scene.server.http(ALICE) as alice:
        assert not {scene.bobs, scene.bobs_other} & {w["workspaceId"] for w in alice.get("/ws/byuser").json()}
    # The run says DONE itself (data/app_executor.py, through the official library, as WASDI's executor does) a
    # moment before its process ends and the server closes the run's session: milliseconds, more under load.
    deadline = time.monotonic() + 15
    with scene.server.http(None) as anonymous:
        while True:
            answer = anonymous.get("/auth/checksession", headers={"x-session-token": payload["session"]})
            if answer.status_code == 401 or not answer.json().get("userId") or time.monotonic() > deadline:
                break
            time.sleep(0.05)
    assert answer.status_code == 401 or not answer.json().get("userId"), "the run's session outlived the run"


def _run_processes(process_id: str) -> list[int]:
    """Processes of this machine started for the run ``process_id`` (what its environment says)."""
    marker = f"WASDI_PROCESS_WORKSPACE_ID={process_id}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_a_fork_bomb_and_a_memory_bomb_end_in_error_naming_their_limit(scene: Scene) -> None:
    intruder(scene)
    forks = scene.alice.run("intruder", {"mode": "forkbomb"})
    memory = scene.alice.run("intruder", {"mode": "membomb"})
    assert scene.alice.wait(forks, timeout=120) == "ERROR"
    assert scene.alice.wait(memory, timeout=120) == "ERROR"
    # The app itself reports ERROR before its supervisor has swept the run and read the cgroup's counters.
    named = f"limit on processes and threads (app_max_processes = {PROCESSES})"
    deadline = time.monotonic() + 30
    while not any(named in line for line in scene.alice.log(forks)) and time.monotonic() < deadline:
        time.sleep(0.2)
    fork_log = "\n".join(scene.alice.log(forks))
    assert named in fork_log, fork_log
    forked = int(next(line for line in scene.alice.log(forks) if line.startswith("forked ")).split()[1])
    assert forked < PROCESSES
    memory_log = "\n".join(scene.alice.log(memory))
    assert f"memory limit (app_memory_mb = {MEMORY_MB} MB)" in memory_log, memory_log
    deadline = time.monotonic() + 10
    while (_run_processes(forks) or _run_processes(memory)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _run_processes(forks) == [] and _run_processes(memory) == []
