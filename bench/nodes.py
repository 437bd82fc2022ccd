"""Figures of a deployment of several nodes (issue 20), each a ratio measured in one run on this machine:

1. ``GET /ws/byuser`` with 1,000 workspaces, requests per second of a main node on the PostgreSQL engine
   (``store_url``) divided by a lone server on the TinyDB engine (target >= 0.5);
2. a run started through the main node on a compute node's workspace -> RUNNING, against the same run
   started on the node directly: the median difference (target <= 50 ms);
3. throughput of 200 one-second sleeping app runs with two compute nodes divided by one compute node
   (target >= 1.8): the runs are spread over workspaces of the nodes used, submitted through the main node;
   each compute node is pinned to a CPU of its own, standing for a machine of its own (``--no-pin``: they
   share every CPU of this one).

Every server is a real ``wasdi-server serve`` process on 127.0.0.1 (tests/e2e/deployment.py starts them);
apps are built offline from the tests' wheelhouse.  Needs a PostgreSQL server (its admin URL, default this
machine's); a database of its own is made for each deployment and dropped after.

    PYTHONPATH=src python bench/nodes.py [--postgres URL] [--runs 200] [--workers 3] [--only byuser,start,throughput]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.app_support import app_zip, wheelhouse  # noqa: E402
from tests.e2e.deployment import ALICE, Deployment, start_deployment  # noqa: E402

SLEEP_ONE_SECOND = "import time\n\n\ndef run():\n    time.sleep(1)\n"
SLEEP_LONG = "import time\n\n\ndef run():\n    time.sleep(30)\n"


def scratch() -> tempfile.TemporaryDirectory[str]:
    # a killed node's app may still be writing there when the folder goes
    return tempfile.TemporaryDirectory(prefix="wasdi-nodes-bench-", ignore_cleanup_errors=True)


@contextmanager
def database(admin_url: str) -> Iterator[str]:
    import psycopg

    name = f"wasdi_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    parts = urlsplit(admin_url)
    try:
        yield urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, ""))
    finally:
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def deployment(admin_url: str, compute: tuple[str, ...], settings: dict[str, object]) -> Iterator[Deployment]:
    with database(admin_url) as url, scratch() as tmp:
        d = start_deployment(Path(tmp), url, compute, settings)
        try:
            yield d
        finally:
            d.close()


@contextmanager
def lone_server(settings: dict[str, object]) -> Iterator[Deployment]:
    """A lone TinyDB server (no store_url), through the same helper."""
    with scratch() as tmp:
        d = Deployment(Path(tmp), "", dict(settings))
        original_env = d.env

        def env(node: object = None) -> dict[str, str]:
            values = original_env(node)  # type: ignore[arg-type]
            for name in ("WASDI_SERVER_STORE_URL", "WASDI_SERVER_NODE_SECRET"):
                values.pop(name, None)
            return values

        d.env = env  # type: ignore[method-assign]
        d.add_node("wasdi")
        d.add_users({"root@example.org": True, ALICE: False})
        d.start("wasdi")
        try:
            yield d
        finally:
            d.close()


def requests_per_second(client: httpx.Client, path: str, seconds: float, threads: int = 4) -> float:
    done = [0]
    lock = threading.Lock()
    end = time.monotonic() + seconds

    def work() -> None:
        with httpx.Client(base_url=str(client.base_url), headers=client.headers, timeout=30) as mine:
            while time.monotonic() < end:
                mine.get(path).raise_for_status()
                with lock:
                    done[0] += 1

    workers = [threading.Thread(target=work) for _ in range(threads)]
    started = time.monotonic()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return done[0] / (time.monotonic() - started)


def byuser(d: Deployment, count: int, seconds: float) -> float:
    with d.http(ALICE) as client:
        for i in range(count):
            client.get("/ws/create", params={"name": f"ws {i}"}).raise_for_status()
        assert len(client.get("/ws/byuser").json()) == count
        requests_per_second(client, "/ws/byuser", 2.0)  # warm up
        return requests_per_second(client, "/ws/byuser", seconds)


def upload(client: httpx.Client, name: str, source: str) -> None:
    r = client.post("/processors/uploadprocessor", params={"name": name},
                    files={"file": (f"{name}.zip", app_zip({"myProcessor.py": source}))})
    r.raise_for_status()
    wait(client, r.json()["stringValue"], {"DONE", "ERROR"}, 300)


def status(client: httpx.Client, process_id: str) -> str:
    return client.get("/process/getstatusbyid", params={"procws": process_id}).text.strip('"')


def wait(client: httpx.Client, process_id: str, wanted: set[str], timeout: float) -> float:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if status(client, process_id) in wanted:
            return time.monotonic()
        time.sleep(0.002)
    raise SystemExit(f"{process_id} did not reach {wanted} in {timeout} s")


def start_to_running(d: Deployment, rounds: int) -> tuple[list[float], list[float]]:
    """(through the main node, on the node directly): seconds from POST /processors/run to RUNNING."""
    with d.http(ALICE) as main, d.http(ALICE, "node1") as node:
        upload(main, "sleeper", SLEEP_LONG)
        workspace = main.get("/ws/create", params={"name": "bench", "node": "node1"}).json()["stringValue"]
        through, direct = [], []
        for i in range(rounds * 2 + 2):
            via = main if i % 2 == 0 else node
            started = time.monotonic()
            run = via.post("/processors/run", params={"name": "sleeper", "workspace": workspace}, content=b"{}")
            process_id = run.json()["processingIdentifier"]
            elapsed = wait(node, process_id, {"RUNNING", "DONE", "ERROR"}, 120) - started
            node.get("/process/delete", params={"procws": process_id})
            wait(node, process_id, {"STOPPED", "DONE", "ERROR"}, 60)
            if i >= 2:  # the first two install the app on the node and warm both paths
                (through if via is main else direct).append(elapsed)
        return through, direct


def throughput(d: Deployment, nodes: tuple[str, ...], runs: int) -> float:
    """Runs per second of ``runs`` one-second runs spread over workspaces of ``nodes``, through the main node."""
    with d.http(ALICE) as main:
        workspaces = [main.get("/ws/create", params={"name": f"tp {n}", "node": n}).json()["stringValue"]
                      for n in nodes]
        for n, workspace in zip(nodes, workspaces, strict=True):  # installed on each node before timing
            run = main.post("/processors/run", params={"name": "onesecond", "workspace": workspace}, content=b"{}")
            with d.http(ALICE, n) as there:
                wait(there, run.json()["processingIdentifier"], {"DONE", "ERROR"}, 300)
        started = time.monotonic()
        submitted: list[tuple[str, str]] = []
        for i in range(runs):
            k = i % len(nodes)
            run = main.post("/processors/run", params={"name": "onesecond", "workspace": workspaces[k]},
                            content=b"{}").json()
            submitted.append((nodes[k], run["processingIdentifier"]))
        print(f"  {len(nodes)} compute node(s): {runs} runs submitted through the main node in "
              f"{time.monotonic() - started:.1f} s", flush=True)
        clients = {n: d.http(ALICE, n) for n in nodes}
        try:
            finished = wait_all(clients, submitted, 900)
        finally:
            for c in clients.values():
                c.close()
        return runs / (finished - started)


def pin_compute_nodes(d: Deployment, nodes: tuple[str, ...]) -> str:
    """Each compute node (every thread of its server, so every run it starts) on a CPU of its own, as if each
    were a machine of one CPU; the main node, the database and this script share all of them.  Unpinned on
    this 2-core machine, the two-node half's runs compete for the same CPUs as the one-node half's (a run
    costs its node about 0.2 CPU-s), which measures the machine rather than the nodes."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < len(nodes):
        return "unpinned (fewer CPUs than compute nodes)"
    for cpu, code in zip(cpus, nodes, strict=False):
        proc = d.nodes[code].proc
        assert proc is not None
        for tid in os.listdir(f"/proc/{proc.pid}/task"):
            os.sched_setaffinity(int(tid), {cpu})
    return ", ".join(f"{code} on CPU {cpu}" for cpu, code in zip(cpus, nodes, strict=False))


def wait_all(clients: dict[str, httpx.Client], submitted: list[tuple[str, str]], timeout: float,
             every: float = 0.05) -> float:
    """When the last of ``submitted`` (node, process id) ended: each node asked for all its unfinished runs at
    once (``/process/statusbyid``) every ``every`` seconds.  Asking for one run after another every 2 ms, as
    this did before, was hundreds of requests a second taken from the CPU the runs themselves need."""
    pending: dict[str, list[str]] = {}
    for node, process_id in submitted:
        pending.setdefault(node, []).append(process_id)
    end = time.monotonic() + timeout
    while any(pending.values()):
        if time.monotonic() > end:
            raise SystemExit(f"{sum(map(len, pending.values()))} runs did not end in {timeout} s")
        for node, ids in pending.items():
            if ids:
                statuses = clients[node].post("/process/statusbyid", json=ids).json()
                pending[node] = [i for i, s in zip(ids, statuses, strict=True)
                                 if s not in ("DONE", "ERROR", "STOPPED")]
        if any(pending.values()):
            time.sleep(every)
    return time.monotonic()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/postgres", metavar="URL")
    parser.add_argument("--workspaces", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--workers", type=int, default=3, help="launcher workers of each compute node")
    parser.add_argument("--only", default="byuser,start,throughput")
    parser.add_argument("--no-pin", action="store_true",
                        help="throughput: leave the compute nodes on every CPU (they then share this machine's)")
    args = parser.parse_args()
    wanted = set(args.only.split(","))
    apps = {"apps_find_links": [str(wheelhouse())], "apps_offline": "true", "launcher_workers": str(args.workers),
            "launcher_poll_seconds": "0.1"}
    results = []
    if "byuser" in wanted:
        with lone_server({}) as lone:
            tinydb = byuser(lone, args.workspaces, args.seconds)
        with deployment(args.postgres, (), {}) as one:
            postgres = byuser(one, args.workspaces, args.seconds)
        print(f"/ws/byuser, {args.workspaces} workspaces: TinyDB {tinydb:.0f} req/s, PostgreSQL {postgres:.0f} req/s")
        results.append(("byuser PostgreSQL / TinyDB", postgres / tinydb, ">=", 0.5))
    if "start" in wanted:
        with deployment(args.postgres, ("node1",), apps) as d:
            through, direct = start_to_running(d, args.rounds)
        extra_ms = (statistics.median(through) - statistics.median(direct)) * 1000
        print(f"run -> RUNNING: through the main node p50 {statistics.median(through) * 1000:.0f} ms, on the node "
              f"p50 {statistics.median(direct) * 1000:.0f} ms ({args.rounds} each)")
        results.append(("run through main - on node, ms (p50)", extra_ms, "<=", 50.0))
    if "throughput" in wanted:
        with deployment(args.postgres, ("node1", "node2"), apps) as d:
            with d.http(ALICE) as main:
                upload(main, "onesecond", SLEEP_ONE_SECOND)
            if not args.no_pin:
                print(f"  compute nodes pinned: {pin_compute_nodes(d, ('node1', 'node2'))}", flush=True)
            one = throughput(d, ("node1",), args.runs)
            two = throughput(d, ("node1", "node2"), args.runs)
        print(f"{args.runs} one-second runs, {args.workers} workers a node: one compute node {one:.2f} runs/s, two "
              f"{two:.2f} runs/s")
        results.append(("two compute nodes / one (runs/s)", two / one, ">=", 1.8))
    for label, value, op, target in results:
        ok = value >= target if op == ">=" else value <= target
        print(f"  {label:<40} {value:8.2f}  target {op} {target}  {'ok' if ok else 'MISSED'}")
    print(json.dumps({label: round(value, 3) for label, value, _, _ in results}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
