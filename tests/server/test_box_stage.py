"""The world's two stages, compiled (``stage.c``, built by ``make``) and Python (``supervisor.inside``): each
confines a run the same way (no capabilities, no new privileges, the socket filter, Landlock) and keeps the
same doors, tried from inside as an attacker would, with a normal app reading its input and writing its output
in the same run.  The compiled stage refuses a job it was not built for, and one older than its source is not
used.  Under ``CI=true`` a machine without bubblewrap, namespaces or the built stage fails these tests."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from tests import environment
from tests.box_jobs import python_job

from wasdi_server.launcher.box import Box, kernel_support
from wasdi_server.launcher.box import box as box_module
from wasdi_server.launcher.box.doors import ApiRelay, DoorPlan, RunIdentity
from wasdi_server.launcher.box.stages import JOB_FD

MISSING = kernel_support().missing()
if MISSING and not environment.on_ci():
    pytest.skip(f"this machine cannot box runs in worlds of their own: {'; '.join(MISSING)}", allow_module_level=True)

ATTACKS = r'''
import json, os, socket, sys
args = json.loads(sys.argv[1])
with open(os.path.join(args["own"], "input.txt")) as handle:
    data = handle.read()
with open(os.path.join(args["own"], "output.txt"), "w") as handle:
    handle.write(data.upper())
results = {}
def attempt(name, action):
    try:
        results[name] = "allowed: " + str(action())
    except OSError as e:
        results[name] = f"refused: {type(e).__name__} {e.strerror}"
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line)
results["status"] = {key: status[key].strip() for key in ("CapEff", "CapPrm", "CapBnd", "CapAmb", "NoNewPrivs",
                                                          "Seccomp")}
attempt("read the box's own code", lambda: open(args["outside"]).read())
attempt("write outside its folders", lambda: open("/tmp/../" + args["outside_write"], "w").write("x"))
attempt("a UDP socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
attempt("a raw socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))
attempt("bind a TCP port", lambda: socket.create_server(("127.0.0.1", 0)))
def api():
    with socket.create_connection(("127.0.0.1", args["api_port"]), timeout=20) as door:
        door.sendall(b"x" * args["size"])
        door.shutdown(socket.SHUT_WR)
        got = b""
        while True:
            chunk = door.recv(65536)
            if not chunk:
                return got
            got += chunk
results["door"] = len(api())
print(json.dumps(results), flush=True)
'''
SIZE = 3 * 1024 * 1024
"""What the run sends through its API door and reads back: more than the forwarder buffers at once."""


@pytest.fixture(params=["compiled", "python"])
def stage(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    if request.param == "compiled":
        environment.require(box_module.built_stage(), "the box's compiled stage is not built here: run 'make stage'")
    else:
        monkeypatch.setattr(box_module, "built_stage", lambda: None)
    yield str(request.param)


class Echo:
    """A stand-in for the server's API listener: reads a connection to its end and sends it all back."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            with connection:
                data = b""
                while chunk := connection.recv(65536):
                    data += chunk
                connection.sendall(data)


def test_each_stage_confines_a_run_the_same_way_and_keeps_its_doors(stage: str, tmp_path: Path) -> None:
    own = tmp_path / "workspace"
    own.mkdir()
    (own / "input.txt").write_text("scene")
    echo = Echo()
    box = Box(doors=DoorPlan(echo.port, ApiRelay("127.0.0.1", echo.port)))
    spec = box.spec(python_job("pass"), "run-1")
    assert ("stage_job" in spec) == (stage == "compiled")
    assert (str(box_module.STAGE) in spec["world"]) == (stage == "compiled")
    args = {"own": str(own), "outside": str(box_module.TRAMPOLINE), "outside_write": str(tmp_path / "x"),
            "api_port": echo.port, "size": SIZE}
    job = python_job(ATTACKS, write=[own], cwd=own)
    lines: list[str] = []
    job = replace(job, argv=[*job.argv, json.dumps(args)], identity=RunIdentity("alice", "ws", "p", lines.append))
    try:
        outcome = box.run(job, on_output=lines.append, timeout=60)
    finally:
        echo.listener.close()
    assert outcome.exit_code == 0, lines
    assert (own / "output.txt").read_text() == "SCENE"
    results = json.loads(lines[-1])
    assert results.pop("status") == {"CapEff": "0000000000000000", "CapPrm": "0000000000000000",
                                     "CapBnd": "0000000000000000", "CapAmb": "0000000000000000",
                                     "NoNewPrivs": "1", "Seccomp": "2"}
    assert results.pop("door") == SIZE
    for name, met in results.items():
        assert met.startswith("refused"), (name, met)
    assert not (tmp_path / "x").exists()


def test_each_stage_writes_the_phase_marks_of_a_traced_run(stage: str) -> None:
    outcome = Box().run(replace(python_job("pass"), trace=True))
    names = [name for name, _when in outcome.marks]
    assert outcome.exit_code == 0
    for name in ("box asked", "supervisor up", "cgroups made", "world asked", "stage up", "confined",
                 "program started", "program ended", "run swept", "supervisor ended"):
        assert name in names, (name, names)
    assert names.index("world asked") < names.index("stage up") < names.index("confined") < names.index(
        "program started") < names.index("program ended")
    assert Box().run(python_job("pass")).marks == []


def test_the_compiled_stage_refuses_a_job_of_another_version_and_runs_nothing(tmp_path: Path) -> None:
    stage = box_module.built_stage()
    environment.require(stage, "the box's compiled stage is not built here: run 'make stage'")
    assert stage is not None
    marker = tmp_path / "ran"
    spec = Box().spec(python_job(f"open({str(marker)!r}, 'w')", write=[tmp_path]), "run-1")
    job = spec["stage_job"].replace(b"V" + box_module.STAGE_JOB_VERSION.encode() + b"\0", b"V0\0", 1)
    read, write = os.pipe()
    os.write(write, job)
    os.close(write)
    # as bwrap starts it: the job on descriptor JOB_FD
    done = subprocess.run([str(stage), str(JOB_FD)], close_fds=False, preexec_fn=lambda: os.dup2(read, JOB_FD),
                          capture_output=True, check=False, env={})
    os.close(read)
    assert done.returncode == 126
    assert b"not of this stage's version" in done.stderr and b"run make" in done.stderr
    assert not marker.exists()


def test_a_stage_older_than_its_source_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stage = tmp_path / "wasdi-box-stage"
    source = tmp_path / "stage.c"
    source.write_text("/* a changed stage */\n")
    stage.write_text("#!/bin/sh\n")
    stage.chmod(0o755)
    monkeypatch.setattr(box_module, "STAGE", stage)
    os.utime(stage, (1_000_000, 1_000_000))
    assert box_module.built_stage() is None
    os.utime(source, (900_000, 900_000))
    assert box_module.built_stage() == stage
    stage.chmod(0o644)
    assert box_module.built_stage() is None
    shutil.rmtree(tmp_path)
    assert box_module.built_stage() is None


def test_doctor_says_which_stage_starts_the_worlds(stage: str, tmp_path: Path) -> None:
    from wasdi_server.launcher.box.report import describe, lines

    found = next(line for line in lines(describe(Box(), tmp_path, 8080, live=False)) if line.startswith("world's"))
    if stage == "compiled":
        assert f"compiled ({box_module.STAGE})" in found
    else:
        assert "Python" in found and "make stage" in found


def test_a_job_that_cannot_be_made_ends_the_supervisor_waiting_for_it() -> None:
    """The supervisor is started before the job is made (its start overlaps the doors and the job): a job
    that cannot be made (a variable holding a NUL byte) leaves no supervisor behind."""
    environment.require(box_module.built_stage(), "the box's compiled stage is not built here: run 'make stage'")
    name = f"abandoned-{os.getpid()}-{threading.get_ident()}"
    with pytest.raises(ValueError, match="NUL"):
        Box().run(replace(python_job("pass", env={"BROKEN": "a\0b"}), name=name))
    left = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                words = handle.read().split(b"\0")
        except OSError:
            continue
        if str(box_module.TRAMPOLINE).encode() in words and name.encode() in words:
            left.append(pid)
    assert left == []
