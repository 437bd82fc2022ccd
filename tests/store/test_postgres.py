"""What only a shared database must prove, on a real PostgreSQL, with real processes: several processes see
each other's writes at once, ``atomic()`` is one transaction, ``modify()`` and ``transaction()`` exclude
writers in other processes, a ``kill -9`` mid-write loses nothing acknowledged, ``find(**equals)`` runs in
the database on the declared indexes, and a big collection is not loaded into the node's memory."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from wasdi_server.store import PostgresStore, StoreUnavailableError, open_shared_store

SRC = Path(__file__).resolve().parents[2] / "src"


def child(code: str, *args: str, **kwargs: object) -> subprocess.Popen[str]:
    """Another Python process (another node, as far as the database can tell)."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.Popen([sys.executable, "-c", code, *args], env=env, text=True, **kwargs)  # type: ignore[call-overload]


def test_a_write_in_one_process_is_what_the_next_read_in_another_returns(pg_url: str) -> None:
    reader = child("""
import sys
from wasdi_server.store import open_shared_store
items = open_shared_store(sys.argv[1]).declare("items", "id", ["kind"])
for line in sys.stdin:
    wanted = line.strip()
    doc = items.get(wanted)
    found = [d["id"] for d in items.find(kind="k")]
    print(f"{doc and doc['v']}|{','.join(found)}|{items.version}", flush=True)
""", pg_url, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert reader.stdin is not None and reader.stdout is not None
    with open_shared_store(pg_url) as store:
        items = store.declare("items", "id", ["kind"])
        versions = []
        for i in range(5):
            items.upsert({"id": f"i{i}", "kind": "k", "v": i})
            items.update("i0", {"v": 100 + i})
            reader.stdin.write(f"i{i}\n")
            reader.stdin.flush()
            value, found, version = reader.stdout.readline().strip().split("|")
            # no stale copy: the other process reads exactly what was just acknowledged here
            assert value == str(i if i else 100)
            assert found.split(",") == [f"i{n}" for n in range(i + 1)]
            assert int(version) == items.version  # the answer cache's version, raised by writes anywhere
            versions.append(int(version))
        assert versions == sorted(set(versions))  # every write raised it
    reader.stdin.close()
    assert reader.wait(30) == 0


def test_atomic_is_one_transaction_seen_whole_or_not_at_all(pg_url: str) -> None:
    with open_shared_store(pg_url) as store, open_shared_store(pg_url) as other:
        workspaces, sharings = store.declare("workspaces", "id"), store.declare("sharings", "id", ["ws"])
        seen_ws, seen_sh = other.declare("workspaces", "id"), other.declare("sharings", "id", ["ws"])
        workspaces.insert({"id": "w1"})
        sharings.insert({"id": "s1", "ws": "w1"})
        with store.atomic():
            workspaces.delete("w1")
            sharings.delete_where(ws="w1")
            workspaces.insert({"id": "w2"})
            assert workspaces.get("w1") is None  # the block sees its own writes ...
            assert seen_ws.get("w1") == {"id": "w1"} and seen_ws.get("w2") is None  # ... others only the commit
            assert seen_sh.count(ws="w1") == 1
        assert [d["id"] for d in seen_ws.all()] == ["w2"] and seen_sh.all() == []

        # The commit itself fails (the connection is cut under the block): nothing of it stays.
        with pytest.raises(StoreUnavailableError), store.atomic():
            workspaces.insert({"id": "w3"})
            sharings.insert({"id": "s3", "ws": "w3"})
            with other._pool.connection() as conn:
                pid = store._pins.pin.conn.info.backend_pid
                conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
        assert seen_ws.get("w3") is None and seen_sh.get("s3") is None
        workspaces.insert({"id": "w4"})  # the pool gave the broken connection up and goes on
        assert [d["id"] for d in seen_ws.all()] == ["w2", "w4"]


HOLDER = """
import sys, time
from wasdi_server.store import open_shared_store
items = open_shared_store(sys.argv[1]).declare("items", "id")
with items.transaction():
    items.update("a", {"n": 1})
    print("holding", flush=True)
    time.sleep(float(sys.argv[2]))
    items.update("a", {"n": 2})
print("released", flush=True)
"""


def test_transaction_excludes_writers_in_other_processes(pg_url: str) -> None:
    with open_shared_store(pg_url) as store:
        items = store.declare("items", "id")
        items.insert({"id": "a", "n": 0})
        items.insert({"id": "b", "n": 0})
        holder = child(HOLDER, pg_url, "1.0", stdout=subprocess.PIPE)
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        started = time.monotonic()
        items.update("b", {"n": 5})  # another document, but the other process holds the whole collection
        waited = time.monotonic() - started
        assert waited > 0.5, f"the write went through the other process's transaction after {waited:.2f} s"
        assert items.get("a") == {"id": "a", "n": 2}  # the holder finished its block before us
        assert items.get("b") == {"id": "b", "n": 5}
        assert holder.wait(30) == 0


COUNTER = """
import sys, threading
from wasdi_server.store import open_shared_store
counters = open_shared_store(sys.argv[1]).declare("counters", "id")
def work(t):
    for i in range(int(sys.argv[2])):
        counters.modify(f"c{(t + i) % 2}", lambda d: {**d, "value": d["value"] + 1})
threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
for t in threads: t.start()
for t in threads: t.join()
"""


def test_modify_in_several_processes_loses_no_update(pg_url: str) -> None:
    with open_shared_store(pg_url) as store:
        counters = store.declare("counters", "id")
        counters.insert({"id": "c0", "value": 0})
        counters.insert({"id": "c1", "value": 0})
        per_thread = 100
        workers = [child(COUNTER, pg_url, str(per_thread)) for _ in range(3)]
        assert [w.wait(120) for w in workers] == [0, 0, 0]
        assert sum(d["value"] for d in counters.all()) == 3 * 4 * per_thread


WRITER = """
import sys, threading
from wasdi_server.store import open_shared_store
store = open_shared_store(sys.argv[1])
items, pairs = store.declare("items", "id"), store.declare("pairs", "id")
out = threading.Lock()
def write(t):
    i = 0
    while True:
        items.insert({"id": f"{t}-{i}", "payload": [t, i]})
        with store.atomic():
            pairs.insert({"id": f"{t}-{i}-a"})
            pairs.insert({"id": f"{t}-{i}-b"})
        with out:
            print(f"{t}-{i}", flush=True)  # acknowledged only once both calls returned
        i += 1
for t in range(4):
    threading.Thread(target=write, args=(t,), daemon=True).start()
threading.Event().wait()
"""


def test_sigkill_mid_write_loses_nothing_acknowledged(pg_url: str) -> None:
    writer = child(WRITER, pg_url, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert writer.stdout is not None
    acknowledged: list[str] = []
    deadline = time.monotonic() + 60
    while len(acknowledged) < 300 and time.monotonic() < deadline:
        line = writer.stdout.readline()
        if not line:
            break
        acknowledged.append(line.strip())
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait(30)
    acknowledged += [line.strip() for line in writer.stdout.read().splitlines() if line.strip()]
    assert len(acknowledged) >= 300, writer.stderr.read() if writer.stderr else ""
    with open_shared_store(pg_url) as store:
        items = {d["id"] for d in store.declare("items", "id").all()}
        pairs = {d["id"] for d in store.declare("pairs", "id").all()}
    assert set(acknowledged) <= items
    assert {f"{a}-a" for a in acknowledged} | {f"{a}-b" for a in acknowledged} <= pairs
    halves = {p[:-2] for p in pairs}
    assert all(f"{h}-a" in pairs and f"{h}-b" in pairs for h in halves)  # an atomic pair is never half there


def bulk_fill(store: PostgresStore, name: str, count: int) -> None:
    """``count`` process-like documents written straight into the collection's table (fast)."""
    with store.connection() as conn, conn.transaction():
        conn.execute(f'INSERT INTO "c_{name}" (key, doc) SELECT \'p\' || n, jsonb_build_object('
                     "'processObjId', 'p' || n, 'workspaceId', 'w' || (n %% 1000), 'status', 'DONE', "
                     "'payload', repeat('x', 200)) FROM generate_series(1, %s) AS n", (count,))
        conn.execute(f'ANALYZE "c_{name}"')


def test_find_by_declared_fields_runs_in_the_database_on_their_indexes(pg_url: str) -> None:
    with open_shared_store(pg_url) as store:
        processes = store.declare("processes", "processObjId", ["workspaceId"])
        bulk_fill(store, "processes", 20_000)
        sql, values = processes._select("doc", {"workspaceId": "w7"}, " ORDER BY id")
        with store.connection() as conn:
            plan = "\n".join(row[0] for row in conn.execute("EXPLAIN " + sql, values).fetchall())
        assert "i_processes_workspaceId" in plan and "Seq Scan" not in plan, plan
        found = processes.find(workspaceId="w7")
        assert len(found) == 20 and {d["workspaceId"] for d in found} == {"w7"}
        assert processes.count(workspaceId="w7") == 20
        assert processes.find_one(workspaceId="w7", status="DONE") == found[0]
        assert processes.find(lambda d: d["processObjId"].endswith("7"), workspaceId="w7") == [
            d for d in found if d["processObjId"].endswith("7")]
        assert processes.update_where({"status": "ERROR"}, workspaceId="w7") == 20
        assert processes.count(workspaceId="w7", status="ERROR") == 20 == processes.count(status="ERROR")


def test_a_big_collection_is_not_loaded_into_memory(pg_url: str) -> None:
    with open_shared_store(pg_url) as store:
        store.declare("processes", "processObjId", ["workspaceId"])
        bulk_fill(store, "processes", 100_000)  # about 30 MB of documents
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    with open_shared_store(pg_url) as store:
        processes = store.declare("processes", "processObjId", ["workspaceId", "status"])
        opened = time.monotonic() - started
        assert processes.count() == 100_000
        assert processes.get("p99999")["workspaceId"] == "w999"  # type: ignore[index]
        assert len(processes.find(workspaceId="w5")) == 100
        assert processes.count(lambda d: d["processObjId"].endswith("00000")) == 1  # streamed, not kept
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert opened < 5, f"opening took {opened:.1f} s: the collection was read"
    assert grown_mb < 15, f"the process grew by {grown_mb:.0f} MB reading a 30 MB collection"


def test_an_unreachable_database_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreUnavailableError, match=r"postgresql://nobody@127\.0\.0\.1:1/none cannot be reached"):
        open_shared_store("postgresql://nobody:secret@127.0.0.1:1/none", timeout_seconds=1)


def test_threads_of_one_process_share_the_pool(pg_url: str) -> None:
    with open_shared_store(pg_url) as store:
        items = store.declare("items", "id")
        errors: list[BaseException] = []

        def work(t: int) -> None:
            try:
                for i in range(50):
                    items.insert({"id": f"{t}-{i}"})
                    with items.transaction():
                        items.update(f"{t}-{i}", {"seen": True})
            except BaseException as e:
                errors.append(e)

        threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == [] and items.count(seen=True) == 400
