"""How the store scales with its size: issue 10's table for 1k / 10k / 100k process records, per engine.

For each engine and size, a data directory is filled with realistic process-workspace records
(as ``ProcessService.create`` writes them) and closed; then a fresh subprocess opens it and measures:

* open: ``open_store`` + ``declare`` of the collection with the indexes the server declares (wall and
  CPU time: on a shared machine the CPU time is what an idle one would take);
* RSS: the subprocess's resident memory after opening, against the size of ``<data_dir>/db``;
* update p50: ``update`` of a random record's progress (durable before it returns);
* find p50: ``find(workspaceId=...)`` (1 in 100 records share a workspace);
* writes/s of 8 threads updating different records, against 1 thread (group commit), and the durable
  flushes (one write and fsync, or one SQLite transaction) per write: group commit shares a flush between
  writers, so 8 threads need far fewer than one each.  The writes/s ratio depends on how much of a write
  is the fsync: on a disk whose fsync takes 0.2 ms, a write's CPU part bounds it near 2.

It prints the figures next to issue 10's targets (ratios within the same run).  Figures, not a
test: exits 0 unless ``--check`` is given and a target is missed.

``--postgres URL`` (a server's admin URL, e.g. ``postgresql://postgres@127.0.0.1:5432/postgres``) adds the
``postgresql`` engine, the database the nodes of a deployment share: each size gets a database of its own,
dropped after.  It keeps nothing in memory, so its open time and RSS are those of a connection, its "data"
is the table's size in the database, and it has no group commit of its own to count (PostgreSQL's commits).

    python bench/store_scale.py [--sizes 1000,10000,100000] [--engines tinydb,sqlite] [--postgres URL]
                                [--flush-latency-ms 2] [--check]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

MEASURE = r"""
import gc, json, random, statistics, sys, threading, time, uuid
from pathlib import Path
from wasdi_server.composition import COLLECTION_INDEXES
from wasdi_server.store import open_shared_store, open_store

data_dir, engine, n, flush_latency = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
started, cpu = time.perf_counter(), time.process_time()
store = open_shared_store(data_dir) if engine == "postgresql" else open_store(data_dir, engine)
processes = store.declare("process_workspaces", "processObjId", COLLECTION_INDEXES["process_workspaces"])
opened, opened_cpu = time.perf_counter() - started, time.process_time() - cpu
rss = int(open("/proc/self/statm").read().split()[1]) * 4096
docs = processes.all()
keys = [d["processObjId"] for d in docs]
workspaces = list({d["workspaceId"] for d in docs})
del docs  # 100,000 copies: freed before anything is timed, so they weigh on no figure
gc.collect()
rng = random.Random(7)

def timed(call, rounds):
    times = []
    for _ in range(rounds):
        t = time.perf_counter(); call(); times.append(time.perf_counter() - t)
    return statistics.median(times)

update_p50 = timed(lambda: processes.update(rng.choice(keys), {"progressPerc": rng.randint(0, 100)}), 200)
find_p50 = timed(lambda: processes.find(workspaceId=rng.choice(workspaces)), 200)

def writes_per_second(threads, per_thread):
    chunks = [keys[t::threads][:per_thread] for t in range(threads)]
    go = threading.Barrier(threads + 1)
    def work(mine):
        go.wait()
        for key in mine:
            processes.update(key, {"progressPerc": 50})
    workers = [threading.Thread(target=work, args=(c,)) for c in chunks]
    for w in workers: w.start()
    go.wait(); t = time.perf_counter()
    for w in workers: w.join()
    return threads * per_thread / (time.perf_counter() - t)

# Group commit shows directly, whatever the disk's speed, as fewer durable flushes (one write and one
# fsync or one SQLite transaction each) than writes: count them.
flushes = [0]
persist = getattr(store, "persist", None)  # the PostgreSQL engine commits through the database: none to count
def counted_persist(batch):
    flushes[0] += 1
    persist(batch)
    if flush_latency:  # --flush-latency-ms: a slower disk's fsync, for the writers only (GIL released)
        time.sleep(flush_latency)
if persist is not None:
    store.persist = counted_persist
one = writes_per_second(1, 300)
flushes_1, flushes[0] = flushes[0] / 300, 0
eight = writes_per_second(8, 150)
flushes_8 = flushes[0] / 1200
if persist is not None:
    store.persist = persist
else:
    flushes_1 = flushes_8 = float("nan")
store.close()
print(json.dumps({"open": opened, "open_cpu": opened_cpu, "rss": rss, "update_p50": update_p50, "find_p50": find_p50,
                  "writes_1": one, "writes_8": eight, "flushes_1": flushes_1, "flushes_8": flushes_8}))
"""

FILL = r"""
import sys, uuid
from wasdi_server.composition import COLLECTION_INDEXES
from wasdi_server.store import open_shared_store, open_store

data_dir, engine, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with (open_shared_store(data_dir) if engine == "postgresql" else open_store(data_dir, engine)) as store:
    processes = store.declare("process_workspaces", "processObjId", COLLECTION_INDEXES["process_workspaces"])
    workspaces = [str(uuid.uuid4()) for _ in range(max(1, n // 100))]
    stamp = 1_700_000_000_000.0
    with store.atomic():
        for i in range(n):
            processes.insert({
                "processObjId": str(uuid.uuid4()), "workspaceId": workspaces[i % len(workspaces)],
                "userId": f"user{i % 50}@example.org", "productName": f"S2A_MSIL1C_20230101T101031_N0509_{i}.zip",
                "operationType": "RUNPROCESSOR", "operationSubType": "", "status": "DONE", "progressPerc": 100,
                "payload": None, "pid": 0, "subPid": 0, "parentId": None, "nodeCode": "wasdi",
                "projectId": None, "subscriptionId": None, "fileSize": "", "operationTimestamp": stamp + i,
                "operationStartTimestamp": stamp + i, "operationEndTimestamp": stamp + i + 1000,
                "lastStateChangeTimestamp": stamp + i + 1000, "runningSince": None, "runningTime": 1000,
                "parameter": {"input": f"img_{i}.tif", "threshold": 0.5},
            })
"""


def run(code: str, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True,
                          check=False)
    if done.returncode:
        raise SystemExit(f"benchmark step failed:\n{done.stderr}")
    return done.stdout


def measure(engine: str, n: int, root: Path, flush_latency_ms: float = 0.0, postgres: str = "") -> dict[str, float]:
    if engine == "postgresql":
        return measure_postgres(n, postgres)
    data_dir = root / f"{engine}-{n}"
    run(FILL, str(data_dir), engine, str(n))
    size = sum(p.stat().st_size for p in (data_dir / "db").iterdir() if p.is_file())
    figures: dict[str, float] = json.loads(run(MEASURE, str(data_dir), engine, str(n),
                                                        str(flush_latency_ms / 1000)))
    figures["data"] = size
    shutil.rmtree(data_dir)
    return figures


def measure_postgres(n: int, admin_url: str) -> dict[str, float]:
    """The same figures for the PostgreSQL engine, in a database of its own (dropped after)."""
    import uuid
    from urllib.parse import urlsplit, urlunsplit

    import psycopg

    name = f"wasdi_bench_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    parts = urlsplit(admin_url)
    url = urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, ""))
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        run(FILL, url, "postgresql", str(n))
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute('VACUUM ANALYZE "c_process_workspaces"')
            size = conn.execute("""SELECT pg_total_relation_size('"c_process_workspaces"')""").fetchone()[0]
        figures: dict[str, float] = json.loads(run(MEASURE, url, "postgresql", str(n), "0"))
        figures["data"] = float(size)
        return figures
    finally:
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--engines", default="tinydb,sqlite")
    parser.add_argument("--postgres", default="", metavar="URL",
                        help="also measure the PostgreSQL engine, on this server (its admin URL)")
    parser.add_argument("--flush-latency-ms", type=float, default=0.0,
                        help="add this much to every durable flush during the writes/s figures, as a slower disk's "
                             "fsync would (this machine's fsync is typically 0.2 ms; a cloud volume's 1-10 ms)")
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    missed: list[str] = []
    with tempfile.TemporaryDirectory(prefix="wasdi-store-bench-") as tmp:
        engines = args.engines.split(",") + (["postgresql"] if args.postgres else [])
        for engine in engines:
            rows = {n: measure(engine, n, Path(tmp), args.flush_latency_ms, args.postgres) for n in sizes}
            print(f"\nengine {engine}")
            print(f"{'records':>8} {'data MB':>8} {'open s':>7} {'(cpu)':>6} {'RSS MB':>7} {'RSS/data':>8} "
                  f"{'update p50 ms':>13} {'find p50 ms':>11} {'1-thr w/s':>9} {'8-thr w/s':>9} {'8/1':>5} "
                  f"{'flushes/write 1-thr':>19} {'8-thr':>6}")
            for n, f in rows.items():
                print(f"{n:>8} {f['data'] / 1e6:>8.1f} {f['open']:>7.2f} {f['open_cpu']:>6.2f} {f['rss'] / 1e6:>7.0f} "
                      f"{f['rss'] / f['data']:>8.2f} {f['update_p50'] * 1e3:>13.2f} {f['find_p50'] * 1e3:>11.3f} "
                      f"{f['writes_1']:>9.0f} {f['writes_8']:>9.0f} {f['writes_8'] / f['writes_1']:>5.2f} "
                      f"{f['flushes_1']:>19.2f} {f['flushes_8']:>6.2f}")
            small, large = rows[min(sizes)], rows[max(sizes)]
            checks = [
                (f"update p50 {max(sizes)} / {min(sizes)}", large["update_p50"] / small["update_p50"], "<=", 1.5),
                (f"find p50 {max(sizes)} / {min(sizes)}", large["find_p50"] / small["find_p50"], "<=", 2.0),
            ]
            if engine == "postgresql":  # the other figures are about an engine's memory image and group commit
                checks.append((f"RSS MB at {max(sizes)} (no collection in memory)", large["rss"] / 1e6, "<", 100.0))
            else:
                checks += [
                (f"open s at {max(sizes)} (wall)", large["open"], "<", 2.0),
                (f"open s at {max(sizes)} (cpu: wall on an idle machine)", large["open_cpu"], "<", 2.0),
                (f"RSS / data at {max(sizes)}", large["rss"] / large["data"], "<", 4.0),
                ("8-thread / 1-thread writes/s (median)",
                 statistics.median(f["writes_8"] / f["writes_1"] for f in rows.values()), ">=", 3.0),
                ("durable flushes per write, 8 threads (median)",
                 statistics.median(f["flushes_8"] for f in rows.values()), "<=", 0.5),
                ]
            for label, value, op, target in checks:
                ok = value <= target if op == "<=" else value < target if op == "<" else value >= target
                print(f"  {label:<40} {value:7.2f}  target {op} {target}  {'ok' if ok else 'MISSED'}")
                if not ok:
                    missed.append(f"{engine}: {label}")
    if missed:
        print("\nmissed: " + "; ".join(missed))
    return 1 if missed and args.check else 0


if __name__ == "__main__":
    raise SystemExit(main())
