"""Soak: many clients mixing reads and writes against one server for minutes; does memory level off?

Starts ``python -m wasdi_server serve`` on a fresh temporary data directory (127.0.0.1, a free port),
with one user owning ``--workspaces`` workspaces, then runs ``--clients`` client threads for
``--seconds``, each on its own persistent connection, each request drawn at random: ``GET /ws/byuser``
(the listing the answer cache holds), ``GET /wasdi/hello``, or (``--write-share``, default 20%)
``GET /ws/create``, which changes the listing every time.

Prints requests per second, p50/p99 latency, errors, and the server's resident memory (from /proc) at
the start, the middle and the end of the run; the figure to read is ``end / middle``: close to 1.0
means memory levelled off (the cache holds at most ``answer_cache_bytes`` and drops superseded
answers at once).  Figures, not a test.

    python bench/soak.py [--clients 64] [--seconds 240] [--write-share 0.2] [--workspaces 100]
"""

from __future__ import annotations

import argparse
import http.client
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from server_overhead import start_ours  # the same server start as the overhead bench


def rss_mib(pid: int) -> float:
    """Resident memory of ``pid`` in MiB (Linux /proc), or NaN where there is no /proc."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


class Totals:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latencies: list[float] = []
        self.errors = 0
        self.by_kind: dict[str, int] = {}

    def add(self, kind: str, seconds: float, ok: bool) -> None:
        with self.lock:
            self.latencies.append(seconds)
            self.by_kind[kind] = self.by_kind.get(kind, 0) + 1
            if not ok:
                self.errors += 1


def client(port: int, token: str, until: float, write_share: float, totals: Totals, seed: int) -> None:
    rng = random.Random(seed)
    headers = {"x-session-token": token}
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    counter = 0
    try:
        while time.monotonic() < until:
            draw = rng.random()
            if draw < write_share:
                counter += 1
                kind, path = "create", f"/ws/create?name=soak-{seed}-{counter}"
            elif draw < write_share + (1 - write_share) / 2:
                kind, path = "byuser", "/ws/byuser"
            else:
                kind, path = "hello", "/wasdi/hello"
            start = time.perf_counter()
            try:
                conn.request("GET", path, headers=headers)
                response = conn.getresponse()
                response.read()
                ok = response.status == 200
            except (OSError, http.client.HTTPException):
                ok = False
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            totals.add(kind, time.perf_counter() - start, ok)
    finally:
        conn.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=240.0)
    parser.add_argument("--write-share", type=float, default=0.2)
    parser.add_argument("--workspaces", type=int, default=100)
    parser.add_argument("--server-threads", type=int, default=8)
    args = parser.parse_args(argv)

    data_dir = Path(tempfile.mkdtemp(prefix="wasdi-soak-"))
    server, token = start_ours(data_dir, args.server_threads, args.workspaces)
    try:
        pid = server.proc.pid
        totals = Totals()
        samples: list[tuple[float, float]] = [(0.0, rss_mib(pid))]
        started = time.monotonic()
        until = started + args.seconds
        threads = [threading.Thread(target=client, args=(server.port, token, until, args.write_share, totals, n),
                                    daemon=True) for n in range(args.clients)]
        for thread in threads:
            thread.start()
        while any(t.is_alive() for t in threads):
            time.sleep(min(5.0, max(0.1, until - time.monotonic())))
            samples.append((time.monotonic() - started, rss_mib(pid)))
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - started
    finally:
        server.stop()
        shutil.rmtree(data_dir, ignore_errors=True)

    lat = sorted(totals.latencies)
    count = len(lat)
    p50 = statistics.median(lat) * 1000 if lat else float("nan")
    p99 = lat[min(count - 1, int(count * 0.99))] * 1000 if lat else float("nan")
    start_mem = samples[0][1]
    middle_mem = min(samples, key=lambda s: abs(s[0] - elapsed / 2))[1]
    end_mem = samples[-1][1]
    print(f"soak: {args.clients} clients, {elapsed:.0f} s, {args.write_share:.0%} workspace creations, "
          f"{args.server_threads} server threads")
    print(f"requests   {count}  ({', '.join(f'{k} {v}' for k, v in sorted(totals.by_kind.items()))})")
    print(f"req/s      {count / elapsed:.1f}")
    print(f"latency    p50 {p50:.1f} ms   p99 {p99:.1f} ms")
    print(f"errors     {totals.errors}")
    print(f"memory MiB start {start_mem:.0f}   middle {middle_mem:.0f}   end {end_mem:.0f}   "
          f"max {max(m for _, m in samples):.0f}")
    print(f"end / middle memory: {end_mem / middle_mem:.2f}  (1.00 = levelled off)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
