"""Semantics of the store, for each engine: every Collection method, copies, locking, failed writes, corrupt files."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from wasdi_server.store import (
    Collection,
    DuplicateKeyError,
    EngineStore,
    Store,
    StoreCorruptError,
    open_shared_store,
    open_store,
)

EMBEDDED = ["tinydb", "sqlite"]
ENGINE_NAMES = [*EMBEDDED, "postgresql"]
"""The shared suite runs on every engine; the tests of files on disk on the embedded ones only."""


@pytest.fixture(params=ENGINE_NAMES)
def engine(request: pytest.FixtureRequest) -> str:
    return str(request.param)


Opener = Callable[[], Any]


@pytest.fixture
def opener(tmp_path: Path, engine: str, request: pytest.FixtureRequest) -> Opener:
    """Opens the engine's store (again): the data directory's, or the test's PostgreSQL database."""
    if engine == "postgresql":
        url = request.getfixturevalue("pg_url")
        return lambda: open_shared_store(url)
    return lambda: open_store(tmp_path, engine)


@pytest.fixture
def store(opener: Opener) -> Iterator[Store]:
    s = opener()
    yield s
    s.close()


@pytest.fixture
def users(store: Store) -> Collection:
    c = store.declare("users", "user_id")
    for i, role in enumerate(["admin", "user", "user"]):
        c.insert({"user_id": f"u{i}", "role": role, "n": i, "tags": ["x"]})
    return c


def keys(docs: list[dict]) -> list[str]:
    return [d["user_id"] for d in docs]


def test_store_satisfies_protocols(store: Store) -> None:
    s: Store = store
    c: Collection = s.declare("users", "user_id")
    assert s.collection("users") is c
    assert list(s.collections()) == [c]
    assert s.declare("users", "user_id") is c
    with pytest.raises(ValueError):
        s.declare("users", "email")
    with pytest.raises(KeyError):
        s.collection("nope")
    with pytest.raises(ValueError):
        s.declare("../evil", "id")


def test_insert_get_duplicate(users: Collection) -> None:
    assert users.get("u1") == {"user_id": "u1", "role": "user", "n": 1, "tags": ["x"]}
    assert users.get("missing") is None
    with pytest.raises(DuplicateKeyError):
        users.insert({"user_id": "u1"})
    with pytest.raises(ValueError):
        users.insert({"role": "no key"})
    assert users.count() == 3


def test_find_find_one_count_all(users: Collection) -> None:
    assert keys(users.all()) == ["u0", "u1", "u2"]
    assert keys(users.find(role="user")) == ["u1", "u2"]
    assert keys(users.find(lambda d: d["n"] >= 1, role="user")) == ["u1", "u2"]
    assert keys(users.find(lambda d: d["n"] == 2)) == ["u2"]
    assert users.find(role="nobody") == []
    assert users.find_one(role="user")["user_id"] == "u1"  # type: ignore[index]
    assert users.find_one(role="nobody") is None
    assert users.count(role="user") == 2
    assert users.count(lambda d: d["n"] > 0, role="admin") == 0


def test_upsert_inserts_then_replaces_in_place(users: Collection) -> None:
    assert users.upsert({"user_id": "u9", "role": "new"}) == {"user_id": "u9", "role": "new"}
    assert users.upsert({"user_id": "u0", "role": "gone"}) == {"user_id": "u0", "role": "gone"}
    assert users.get("u0") == {"user_id": "u0", "role": "gone"}  # replaced, not merged
    assert keys(users.all()) == ["u0", "u1", "u2", "u9"]


def test_update_merges(users: Collection) -> None:
    assert users.update("u1", {"role": "admin", "extra": [1]}) == {
        "user_id": "u1", "role": "admin", "n": 1, "tags": ["x"], "extra": [1]}
    assert users.get("u1")["role"] == "admin"  # type: ignore[index]
    assert users.update("missing", {"role": "x"}) is None
    with pytest.raises(ValueError):
        users.update("u1", {"user_id": "other"})
    assert users.get("u1") is not None and users.get("other") is None


def test_modify(users: Collection) -> None:
    assert users.modify("u0", lambda d: {**d, "n": d["n"] + 10})["n"] == 10  # type: ignore[index]

    def mutate_and_keep(d: dict) -> None:
        d["tags"].append("leak")  # a copy: must not reach the store

    assert users.modify("u0", mutate_and_keep)["tags"] == ["x"]  # type: ignore[index]
    assert users.get("u0")["tags"] == ["x"]  # type: ignore[index]
    assert users.modify("missing", lambda d: d) is None


def test_delete_and_delete_where(users: Collection) -> None:
    assert users.delete("u0") is True
    assert users.delete("u0") is False
    assert users.get("u0") is None
    assert users.delete_where(role="nobody") == 0
    assert users.delete_where(role="user") == 2
    assert users.all() == []
    users.insert({"user_id": "u1"})  # the key is free again
    assert users.count() == 1


def count_commits(store: EngineStore, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record, per durable write of ``store``, how many commits it held."""
    writes: list[int] = []
    real = store.persist

    def counting(batch: list) -> None:
        writes.append(len(batch))
        real(batch)

    monkeypatch.setattr(store, "persist", counting)
    return writes


@pytest.mark.parametrize("engine", EMBEDDED)
def test_where_methods_write_once(store: EngineStore, users: Collection, monkeypatch: pytest.MonkeyPatch) -> None:
    writes = count_commits(store, monkeypatch)
    assert users.update_where({"role": "staff", "tags": []}, role="user") == 2
    assert writes == [1]
    assert [d["role"] for d in users.all()] == ["admin", "staff", "staff"]
    users.get("u1")["tags"].append("y")  # type: ignore[index]
    assert users.get("u2")["tags"] == []  # type: ignore[index]
    assert users.delete_where(lambda d: d["n"] > 0) == 2
    assert writes == [1, 1]
    assert users.update_where({"role": "x"}, role="nobody") == 0
    assert writes == [1, 1]
    with pytest.raises(ValueError):
        users.update_where({"user_id": "same"})


def test_returned_and_inserted_documents_are_independent(users: Collection) -> None:
    doc: dict[str, Any] = {"user_id": "n", "nested": {"list": [1, 2]}}
    returned = users.insert(doc)
    doc["nested"]["list"].append(3)
    returned["nested"]["list"].append(4)
    users.get("n")["nested"]["list"].append(5)  # type: ignore[index]
    users.find(user_id="n")[0]["nested"]["list"].append(6)
    users.all()[-1]["nested"]["list"].append(7)
    users.find_one(user_id="n")["nested"]["list"].append(8)  # type: ignore[index]
    users.update("n", {"other": 1})["nested"]["list"].append(9)  # type: ignore[index]
    users.upsert(users.get("n"))["nested"]["list"].append(10)  # type: ignore[arg-type,index]
    assert users.get("n")["nested"] == {"list": [1, 2]}  # type: ignore[index]


def test_transaction_is_reentrant_and_excludes_other_threads(users: Collection) -> None:
    done = threading.Event()
    with users.transaction():
        with users.transaction():
            users.update("u0", {"n": 100})

        def insert() -> None:
            users.insert({"user_id": "t"})
            done.set()

        writer = threading.Thread(target=insert)
        writer.start()
        assert not done.wait(0.2)  # blocked by our lock
        assert users.get("t") is None
    writer.join(5)
    assert done.is_set() and users.get("t") is not None and users.get("u0")["n"] == 100  # type: ignore[index]


def test_data_survives_reopening(tmp_path: Path, engine: str, opener: Opener) -> None:
    with opener() as s:
        c = s.declare("jobs", "id")
        c.insert({"id": "a", "v": [1]})
        c.insert({"id": "b"})
        c.update("a", {"v": [2]})
        c.delete("b")
        c.insert({"id": "c"})
    if engine == "tinydb":
        assert (tmp_path / "db" / "jobs.json").is_file()
    with opener() as s:
        c = s.declare("jobs", "id")
        assert c.all() == [{"id": "a", "v": [2]}, {"id": "c"}]
        c.insert({"id": "d"})  # doc ids continue correctly after reopening
        assert [d["id"] for d in c.all()] == ["a", "c", "d"]


def test_threads_lose_nothing(opener: Opener) -> None:
    threads_n, per_thread = 8, 100
    with opener() as s:
        items = s.declare("items", "id")
        counters = s.declare("counters", "name")
        counters.insert({"name": "hits", "value": 0})
        start = threading.Barrier(threads_n)
        errors: list[BaseException] = []

        def increment(doc: dict) -> dict:
            time.sleep(0)  # let other threads run between the read and the write
            return {**doc, "value": doc["value"] + 1}

        def work(t: int) -> None:
            try:
                start.wait()
                for i in range(per_thread):
                    items.insert({"id": f"{t}-{i}"})
                    counters.modify("hits", increment)
            except BaseException as exc:
                errors.append(exc)

        workers = [threading.Thread(target=work, args=(t,)) for t in range(threads_n)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        assert errors == []
        expected = {f"{t}-{i}" for t in range(threads_n) for i in range(per_thread)}
        assert {d["id"] for d in items.all()} == expected
        assert counters.get("hits")["value"] == threads_n * per_thread  # type: ignore[index]
    with opener() as s:
        assert {d["id"] for d in s.declare("items", "id").all()} == expected
        assert s.declare("counters", "name").get("hits")["value"] == threads_n * per_thread  # type: ignore[index]


@pytest.mark.parametrize("engine", EMBEDDED)
def test_failed_write_shows_in_neither_memory_nor_disk(
    tmp_path: Path, engine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = open_store(tmp_path, engine)
    users = s.declare("users", "user_id")
    users.insert({"user_id": "a", "tags": ["x"]})

    def broken(batch: list) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(s, "persist", broken)
    with pytest.raises(OSError, match="disk full"):
        users.insert({"user_id": "b"})
    with pytest.raises(OSError):
        users.update("a", {"tags": ["y"]})
    with pytest.raises(OSError):
        users.modify("a", lambda d: {**d, "tags": [*d["tags"], "z"]})
    with pytest.raises(OSError):
        users.update_where({"tags": []})
    with pytest.raises(OSError):
        users.delete("a")
    with pytest.raises(OSError):
        users.delete_where()
    with pytest.raises(TypeError):  # not JSON: rejected before anything changes
        users.update("a", {"tags": object()})
    assert users.all() == [{"user_id": "a", "tags": ["x"]}]

    monkeypatch.undo()
    users.insert({"user_id": "b"})  # the store still works, and the key "b" is free
    s.close()
    with open_store(tmp_path, engine) as s:
        assert s.declare("users", "user_id").all() == [{"user_id": "a", "tags": ["x"]}, {"user_id": "b"}]


@pytest.mark.parametrize("content", [b'{"users": {"1": {"user_id": "a"}', b"[1, 2]", b'{"users": [1]}',
                                     b'{"users": {"1": {"no_key": 1}}}'])
def test_corrupt_file_refuses_to_open_and_is_left_untouched(tmp_path: Path, content: bytes) -> None:
    engine = "tinydb"
    path = tmp_path / "db" / "users.json"
    path.parent.mkdir()
    path.write_bytes(content)
    with open_store(tmp_path, engine) as s, pytest.raises(StoreCorruptError) as info:
        s.declare("users", "user_id")
    assert str(path) in str(info.value) and "left untouched" in str(info.value)
    assert path.read_bytes() == content


def test_leftover_temp_files_are_cleaned_and_an_empty_file_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "db"
    db.mkdir()
    (db / "users.json").write_bytes(b"")
    (db / ".users.json.abc123.tmp").write_text("{partial")
    with open_store(tmp_path, "tinydb") as s:
        assert not (db / ".users.json.abc123.tmp").exists()
        # Snapshots are only ever written whole: an emptied users.json would start a server with no users.
        with pytest.raises(StoreCorruptError, match="zero bytes"):
            s.declare("users", "user_id")
    assert (db / "users.json").read_bytes() == b""


def _lose(tmp_path: Path, engine: str, how: str) -> Path:
    """A data directory with one user, then its users' file emptied or removed."""
    with open_store(tmp_path, engine) as s:
        s.declare("users", "user_id").insert({"user_id": "a"})
    target = tmp_path / "db" / ("users.json" if engine == "tinydb" else "store.sqlite3")
    if how == "emptied":
        target.write_bytes(b"")
    else:
        target.unlink()
    return target


@pytest.mark.parametrize("engine", EMBEDDED)
@pytest.mark.parametrize("how", ["emptied", "removed"])
def test_a_lost_collection_file_is_refused_not_served_empty(tmp_path: Path, engine: str, how: str) -> None:
    target = _lose(tmp_path, engine, how)
    with pytest.raises(StoreCorruptError, match="zero bytes" if how == "emptied" else "missing"):
        s = open_store(tmp_path, engine)
        try:
            s.declare("users", "user_id")
        finally:
            s.close()
    assert target.exists() == (how == "emptied")  # nothing was recreated in its place


def test_new_data_directories_and_new_collections_need_no_file(opener: Opener) -> None:
    with opener() as s:
        s.declare("users", "user_id").insert({"user_id": "a"})
    with opener() as s:  # a collection a newer version adds
        assert s.declare("brand_new", "key").all() == []
        assert [d["user_id"] for d in s.declare("users", "user_id").all()] == ["a"]
