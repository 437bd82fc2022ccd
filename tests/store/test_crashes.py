"""Crashes at any instant: torn journal lines, SIGKILL during compaction and atomic blocks, 100,000 records."""

from __future__ import annotations

import shutil
import signal
import subprocess
import threading
from pathlib import Path

import pytest

from wasdi_server.store import ENGINES, StoreCorruptError, open_store

from .test_durability import python

PAIRS_WRITER = """
import sys, threading
from wasdi_server.store import TinyDBStore

store = TinyDBStore(sys.argv[1], compact_bytes=4096)  # compacts every few dozen writes
workspaces, sharings = store.declare("workspaces", "id"), store.declare("sharings", "id")
out = threading.Lock()

def write(t):
    i = 0
    while True:
        key = f"{t}-{i}"
        if i % 3 == 2:
            workspaces.update(f"{t}-{i - 1}", {"n": i})
        else:
            with store.atomic():
                workspaces.insert({"id": key, "n": 0})
                sharings.insert({"id": key, "resource": key})
        with out:
            print(key, flush=True)  # acknowledged only once the write returned
        i += 1

for t in range(4):
    threading.Thread(target=write, args=(t,), daemon=True).start()
threading.Event().wait()
"""

BIG_WRITER = """
import sys, threading
from wasdi_server.store import open_store

store = open_store(sys.argv[1], sys.argv[2])
processes = store.declare("processes", "id", ["ws"])
with store.atomic():
    for r in range(100_000):
        processes.insert({"id": f"p{r}", "ws": f"w{r % 1000}", "status": "DONE", "v": "",
                          "productName": f"S2A_MSIL1C_20230101T101031_N0509_R022_T32TQM_{r}.zip"})
print("loaded", flush=True)
out = threading.Lock()

def write(t):
    i = 0
    while True:
        processes.update(f"p{t * 25_000 + i % 25_000}", {"v": f"{t}-{i}", "status": "RUNNING"})
        with out:
            print(f"{t}-{i}", flush=True)
        i += 1

for t in range(4):
    threading.Thread(target=write, args=(t,), daemon=True).start()
threading.Event().wait()
"""


def run_and_kill(code: str, *args: str, acknowledgements: int, timeout: float = 120) -> list[str]:
    """Run ``code``, read the lines it acknowledges, SIGKILL it while it writes; those lines."""
    child = python(code, *args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    watchdog = threading.Timer(timeout, child.kill)
    watchdog.start()
    acknowledged: list[str] = []
    try:
        assert child.stdout is not None
        while len(acknowledged) < acknowledgements:
            line = child.stdout.readline()
            assert line.endswith("\n"), f"writer died: {child.stderr.read() if child.stderr else ''}"
            acknowledged.append(line.strip())
        child.send_signal(signal.SIGKILL)
        assert child.wait(timeout=30) == -signal.SIGKILL
    finally:
        watchdog.cancel()
        child.kill()
        child.communicate()
    return acknowledged


def test_sigkill_during_compaction_and_atomic_blocks_loses_nothing(tmp_path: Path) -> None:
    acknowledged = run_and_kill(PAIRS_WRITER, str(tmp_path), acknowledgements=600)
    db = tmp_path / "db"
    assert b'"n"' in (db / "workspaces.json").read_bytes()  # compactions did run before the kill
    with open_store(tmp_path) as store:
        workspaces = {d["id"]: d for d in store.declare("workspaces", "id").all()}
        sharings = {d["id"] for d in store.declare("sharings", "id").all()}
        assert set(workspaces) == sharings  # each atomic pair is there whole or not at all
        for key in acknowledged:
            t, i = map(int, key.split("-"))
            if i % 3 == 2:
                assert workspaces[f"{t}-{i - 1}"]["n"] == i
            else:
                assert key in workspaces
        assert not list(db.glob(".*.tmp"))


def test_torn_last_journal_line_is_dropped(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        items = store.declare("items", "id")
        items.insert({"id": "a"})
        items.update("a", {"v": 1})
        shutil.copytree(tmp_path / "db", tmp_path / "crashed" / "db")  # as a crash now leaves it
    crashed = tmp_path / "crashed"
    journal = next((crashed / "db").glob("journal-*.jsonl"))
    intact = journal.read_bytes()
    journal.write_bytes(intact + b'{"w":[["items",2,{"id":"b","v":')  # a crash mid-append
    with open_store(crashed) as store:
        items = store.declare("items", "id")
        assert items.all() == [{"id": "a", "v": 1}]
        items.insert({"id": "b"})
    with open_store(crashed) as store:
        assert store.declare("items", "id").all() == [{"id": "a", "v": 1}, {"id": "b"}]


def test_a_bad_line_before_the_last_refuses_to_open_and_is_left_untouched(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        store.declare("items", "id").insert({"id": "a"})
    journal = tmp_path / "db" / "journal-00000009.jsonl"
    content = b'{"w":[["items",2,{"id":"b"}]]}\nnot json\n{"w":[["items",3,{"id":"c"}]]}\n'
    journal.write_bytes(content)
    with pytest.raises(StoreCorruptError) as info:
        open_store(tmp_path)
    assert str(journal) in str(info.value) and "line 2" in str(info.value)
    assert journal.read_bytes() == content
    with pytest.raises(StoreCorruptError):  # again the same refusal: the first released the directory
        open_store(tmp_path)


@pytest.mark.parametrize("engine", list(ENGINES))
def test_sigkill_with_100000_records_loses_no_acknowledged_write(tmp_path: Path, engine: str) -> None:
    acknowledged = run_and_kill(BIG_WRITER, str(tmp_path), engine, acknowledgements=401, timeout=300)
    assert acknowledged[0] == "loaded"
    last: dict[str, str] = {}
    for ack in acknowledged[1:]:
        t, i = map(int, ack.split("-"))
        last[f"p{t * 25_000 + i % 25_000}"] = ack
    with open_store(tmp_path, engine) as store:
        processes = store.declare("processes", "id", ["ws"])
        assert processes.count() == 100_000
        for key, value in last.items():
            assert processes.get(key)["v"] == value  # type: ignore[index]
        assert processes.count(ws="w7") == 100


def test_compaction_folds_the_journal_into_files_tinydb_reads(tmp_path: Path) -> None:
    from tinydb import TinyDB

    from wasdi_server.store import TinyDBStore

    store = TinyDBStore(tmp_path)
    items = store.declare("items", "id")
    items.insert({"id": "a", "v": 1})
    items.insert({"id": "b"})
    items.update("a", {"v": 2})
    items.delete("b")
    assert list((tmp_path / "db").glob("journal-*.jsonl"))
    assert store.compact()
    assert not list((tmp_path / "db").glob("journal-*.jsonl"))
    items.insert({"id": "c"})  # a new journal after the compaction
    store.close()
    assert not list((tmp_path / "db").glob("journal-*.jsonl"))  # a clean shutdown compacts too
    with TinyDB(tmp_path / "db" / "items.json") as db:
        assert db.table("items").all() == [{"id": "a", "v": 2}, {"id": "c"}]
