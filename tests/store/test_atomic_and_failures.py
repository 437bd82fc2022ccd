"""For each engine: atomic blocks across collections, a full disk, indexes, and many writers of shared records."""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import wasdi_server.store.tinydb_store as tinydb_store
from wasdi_server.store import ENGINES, SQLiteStore, Store, open_shared_store, open_store


@pytest.fixture(params=[*ENGINES, "postgresql"])
def engine(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def store(tmp_path: Path, engine: str, request: pytest.FixtureRequest) -> Iterator[Store]:
    s = open_shared_store(request.getfixturevalue("pg_url")) if engine == "postgresql" else open_store(tmp_path, engine)
    yield s
    s.close()


def contents(tmp_path: Path, engine: str) -> dict[str, list[dict]]:
    with open_store(tmp_path, engine) as s:
        return {name: s.declare(name, "id").all() for name in ("workspaces", "sharings")}


@pytest.mark.parametrize("engine", list(ENGINES))
def test_atomic_commits_every_write_or_none(tmp_path: Path, engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    s = open_store(tmp_path, engine)
    workspaces, sharings = s.declare("workspaces", "id"), s.declare("sharings", "id", ["ws"])
    workspaces.insert({"id": "w1"})
    sharings.insert({"id": "s1", "ws": "w1"})
    sharings.insert({"id": "s2", "ws": "w1"})

    with pytest.raises(RuntimeError), s.atomic():  # the block fails half-way: nothing stays
        assert workspaces.delete("w1")
        assert workspaces.get("w1") is None  # the block sees its own writes
        assert sharings.delete_where(ws="w1") == 2
        raise RuntimeError("cascade failed")
    assert workspaces.get("w1") == {"id": "w1"} and sharings.count(ws="w1") == 2

    def disk_full(batch: list) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(s, "persist", disk_full)
    with pytest.raises(OSError), s.atomic():  # the commit fails: nothing stays
        workspaces.insert({"id": "w2"})
        sharings.update("s1", {"ws": "w2"})
    assert workspaces.get("w2") is None and sharings.get("s1") == {"id": "s1", "ws": "w1"}
    assert [d["id"] for d in sharings.find(ws="w1")] == ["s1", "s2"]  # the index was undone too
    monkeypatch.undo()

    with s.atomic():
        workspaces.delete("w1")
        with s.atomic():  # nested: part of the outer block
            sharings.delete_where(ws="w1")
        workspaces.insert({"id": "w3"})
    s.close()
    assert contents(tmp_path, engine) == {"workspaces": [{"id": "w3"}], "sharings": []}


def test_atomic_block_excludes_other_writers_of_its_collections(store: Store) -> None:
    items = store.declare("items", "id")
    items.insert({"id": "a", "n": 0})
    wrote = threading.Event()

    def other_writer() -> None:
        items.update("a", {"n": 2})
        wrote.set()

    with store.atomic():
        items.update("a", {"n": 1})
        writer = threading.Thread(target=other_writer)
        writer.start()
        assert not wrote.wait(0.2)  # held until the block commits
    writer.join(10)
    assert wrote.is_set() and items.get("a") == {"id": "a", "n": 2}


def test_full_disk_mid_journal_write_keeps_the_store_consistent(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    s = open_store(tmp_path, "tinydb")
    items = s.declare("items", "id")
    items.insert({"id": "a", "v": 1})
    real_write = os.write

    def half_then_enospc(fd: int, data: bytes) -> int:
        real_write(fd, bytes(data)[: len(data) // 2])  # a torn line lands on disk ...
        raise OSError(errno.ENOSPC, "No space left on device")  # ... then the disk is full

    monkeypatch.setattr(tinydb_store.os, "write", half_then_enospc)
    with pytest.raises(OSError) as info:
        items.insert({"id": "b", "v": 2})
    assert info.value.errno == errno.ENOSPC
    with pytest.raises(OSError):
        items.update("a", {"v": 3})
    assert items.all() == [{"id": "a", "v": 1}]
    monkeypatch.undo()
    items.insert({"id": "c", "v": 4})  # appended after the taken-back torn line, not behind it
    crashed = tmp_path / "crashed"
    shutil.copytree(tmp_path / "db", crashed / "db")  # the files as a crash now would leave them
    s.close()
    for data_dir in (crashed, tmp_path):
        with open_store(data_dir, "tinydb") as again:
            assert again.declare("items", "id").all() == [{"id": "a", "v": 1}, {"id": "c", "v": 4}]


def test_full_sqlite_database_keeps_the_store_consistent(tmp_path: Path) -> None:
    s = open_store(tmp_path, "sqlite")
    assert isinstance(s, SQLiteStore)
    items = s.declare("items", "id", ["kind"])
    items.insert({"id": "a", "kind": "x"})
    pages = s._db.execute("PRAGMA page_count").fetchone()[0]
    s._db.execute(f"PRAGMA max_page_count = {pages}")  # a real SQLITE_FULL on the next growth
    with pytest.raises(OSError) as info, s.atomic():
        for i in range(200):
            items.insert({"id": f"big{i}", "kind": "y", "blob": "z" * 4000})
    assert info.value.errno == errno.ENOSPC
    assert items.all() == [{"id": "a", "kind": "x"}] and items.count(kind="y") == 0
    s._db.execute("PRAGMA max_page_count = 1073741823")
    items.insert({"id": "b", "kind": "y"})
    s.close()
    with open_store(tmp_path, "sqlite") as again:
        assert again.declare("items", "id").all() == [{"id": "a", "kind": "x"}, {"id": "b", "kind": "y"}]
    with sqlite3.connect(tmp_path / "db" / "store.sqlite3") as db:  # readable by any SQLite client
        assert db.execute('SELECT key, "f_kind" FROM "c_items" ORDER BY id').fetchall() == [("a", "x"), ("b", "y")]


def test_indexed_finds_agree_with_a_scan(store: Store) -> None:
    records = store.declare("records", "id", ["ws", "tags"])
    for i in range(60):
        records.insert({"id": f"r{i}", "ws": f"w{i % 4}", "tags": ["a"] if i % 2 else None, "n": i})
    records.update("r0", {"ws": "w3"})
    records.upsert({"id": "r1", "ws": "w9"})
    records.delete("r2")
    records.update_where({"ws": "w8"}, ws="w1")
    for ws in ("w0", "w1", "w3", "w8", "w9", "nope"):
        scan = [d for d in records.all() if d.get("ws") == ws]
        assert records.find(ws=ws) == scan
        assert records.count(ws=ws) == len(scan)
        assert records.find_one(ws=ws) == (scan[0] if scan else None)
    assert records.find(tags=["a"]) == [d for d in records.all() if d.get("tags") == ["a"]]
    assert records.find(lambda d: d["n"] > 50, ws="w3") == [d for d in records.all()
                                                            if d.get("ws") == "w3" and d["n"] > 50]
    in_w8 = len([d for d in records.all() if d.get("ws") == "w8"])
    assert in_w8 and records.delete_where(ws="w8") == in_w8
    assert records.find(ws="w8") == []
    assert store.declare("records", "id", ["n"]).find(n=4) == [records.get("r4")] != [None]  # indexed later


def test_8_threads_x_500_updates_of_shared_records_lose_none(store: Store) -> None:
    counters = store.declare("counters", "id")
    for c in range(4):
        counters.insert({"id": f"c{c}", "value": 0})
    start = threading.Barrier(8)
    errors: list[BaseException] = []

    def work(t: int) -> None:
        try:
            start.wait()
            for i in range(500):
                counters.modify(f"c{(t + i) % 4}", lambda d: {**d, "value": d["value"] + 1})
        except BaseException as exc:
            errors.append(exc)

    workers = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert errors == []
    assert [d["value"] for d in counters.all()] == [1000, 1000, 1000, 1000]
