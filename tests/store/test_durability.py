"""Cross-process behaviour of the store: the data directory lock and surviving SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import wasdi_server.store.tinydb_store as tinydb_store
from wasdi_server.store import ENGINES, open_store

SRC = Path(tinydb_store.__file__).resolve().parents[2]

WRITER = """
import sys, threading
from wasdi_server.store import open_store

items = open_store(sys.argv[1], sys.argv[2]).declare("items", "id")
out = threading.Lock()

def write(t):
    i = 0
    while True:
        items.insert({"id": f"{t}-{i}", "payload": [t, i]})
        with out:
            print(f"{t}-{i}", flush=True)  # acknowledged only once insert() returned
        i += 1

for t in range(4):
    threading.Thread(target=write, args=(t,), daemon=True).start()
threading.Event().wait()
"""

TRY_OPEN = """
import sys
from wasdi_server.store import StoreLockedError, open_store
try:
    open_store(sys.argv[1])
except StoreLockedError as exc:
    print(exc)
    sys.exit(3)
"""


def python(code: str, *args: str, **kwargs) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.Popen([sys.executable, "-c", code, *args], env=env, text=True, **kwargs)


def test_second_process_gets_locked_error(tmp_path: Path) -> None:
    with open_store(tmp_path):
        child = python(TRY_OPEN, str(tmp_path), stdout=subprocess.PIPE)
        out, _ = child.communicate(timeout=60)
    assert child.returncode == 3
    assert out.strip() == (f"data directory {tmp_path} is in use by another wasdi server "
                           f"(pid {os.getpid()}); stop it or use another --data-dir")
    child = python(TRY_OPEN, str(tmp_path))  # released by close()
    assert child.wait(timeout=60) == 0


@pytest.mark.parametrize("engine", list(ENGINES))
def test_sigkill_loses_no_acknowledged_write(tmp_path: Path, engine: str) -> None:
    child = python(WRITER, str(tmp_path), engine, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    watchdog = threading.Timer(60, child.kill)
    watchdog.start()
    acknowledged: list[str] = []
    try:
        assert child.stdout is not None
        while len(acknowledged) < 300:
            line = child.stdout.readline()
            assert line.endswith("\n"), f"writer died: {child.stderr.read() if child.stderr else ''}"
            acknowledged.append(line.strip())
        child.send_signal(signal.SIGKILL)  # the writers are still busy: this lands mid-write
        assert child.wait(timeout=30) == -signal.SIGKILL
    finally:
        watchdog.cancel()
        child.kill()
        child.communicate()

    path = tmp_path / "db" / "items.json"
    if engine == "tinydb":
        assert isinstance(json.loads(path.read_bytes()), dict)  # never torn
    with open_store(tmp_path, engine) as store:  # the dead process's lock does not block
        items = store.declare("items", "id")
        stored = {d["id"]: d for d in items.all()}
        assert set(acknowledged) <= stored.keys()
        t, i = acknowledged[-1].split("-")
        assert stored[acknowledged[-1]]["payload"] == [int(t), int(i)]
        assert not list(path.parent.glob(".*.tmp"))  # crash leftovers cleaned at open
