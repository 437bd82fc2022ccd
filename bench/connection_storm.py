"""What 3,000 idle connections from one address cost everybody else, against no idle connection, in one run.

Starts ``python -m wasdi_server serve`` on 127.0.0.1 (free ports, a fresh temporary data directory), with the
API's per-address budget raised to hold all 3,000 (``http_connections_per_address = 4096``; the default, 256,
would shed all but 256 of them: holding them all is the worst case for the server's loop).  Then, from
127.0.0.1, measures ``GET /wasdi/hello``:

* requests per second with ``--threads`` client threads, each on its own keep-alive connection;
* p99 latency of one request at a time, each on a new connection (a new client must get in);

first with no idle connection, then while 127.0.0.2 holds ``--idle`` idle connections (the server's count
of open descriptors shows it holds them), then with none again; the baseline is the mean of the two
"none" phases around the held one.  The server's resident memory is read in each phase.

    python bench/connection_storm.py [--idle 3000] [--requests 3000] [--threads 4] [--rounds 5] [--check]

Figures, not a test: it exits 0 unless ``--check`` is given and a target is missed (req/s held / none >= 0.8,
p99 while held < 200 ms).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import resource
import shutil
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

from server_overhead import Server, free_port, is_greeting, load, pin_cpus, spawn

STRANGER = "127.0.0.2"
RATIO_TARGET = 0.8
P99_TARGET = 0.2


def start(data_dir: Path, threads: int) -> Server:
    port = free_port()
    config = data_dir.parent / f"{data_dir.name}.toml"
    config.write_text("http_connections_per_address = 4096\n")
    return spawn("ours", [sys.executable, "-m", "wasdi_server", "serve", "--config", str(config),
                          "--data-dir", str(data_dir), "--host", "127.0.0.1", "--port", str(port),
                          "--threads", str(threads), "--broker-port", str(free_port()), "--sftp-port", "0"], port)


def resident_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def new_connection_latencies(port: int, count: int) -> list[float]:
    import http.client

    seconds = []
    for _ in range(count):
        started = time.perf_counter()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            conn.request("GET", "/wasdi/hello")
            response = conn.getresponse()
            body = response.read()
            if response.status != 200 or not is_greeting(body):
                raise SystemExit(f"GET /wasdi/hello: {response.status} {body[:100]!r}")
        finally:
            conn.close()
        seconds.append(time.perf_counter() - started)
    return seconds


def hold(port: int, count: int) -> list[socket.socket]:
    held = []
    for _ in range(count):
        client = socket.socket()
        client.bind((STRANGER, 0))
        client.connect(("127.0.0.1", port))
        held.append(client)
    return held


def measure(server: Server, args: argparse.Namespace) -> tuple[list[float], list[float]]:
    rates, seconds = [], []
    for _ in range(args.rounds):
        rates.append(load(server.port, "/wasdi/hello", {}, args.requests, args.threads, 2 * args.threads,
                          is_greeting))
        seconds += new_connection_latencies(server.port, args.latency_requests)
    return rates, seconds


def p99(seconds: list[float]) -> float:
    return statistics.quantiles(seconds, n=100)[98]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--idle", type=int, default=3000, help="idle connections 127.0.0.2 holds (default 3000)")
    parser.add_argument("--requests", type=int, default=3000, help="GET /wasdi/hello per round (default 3000)")
    parser.add_argument("--latency-requests", type=int, default=100,
                        help="one-at-a-time requests on new connections per round (default 100)")
    parser.add_argument("--threads", type=int, default=4, help="client threads (default 4)")
    parser.add_argument("--server-threads", type=int, default=8, help="the server's threads (default 8)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per phase (default 5)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = args.idle + 256
    if soft != resource.RLIM_INFINITY and soft < need:
        if hard != resource.RLIM_INFINITY and hard < need:
            raise SystemExit(f"this bench holds {args.idle} connections: the open-files hard limit is {hard}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) >= 2:
        pin_cpus({cpus[0]})
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs"
          f"{f' (load generator on CPU {cpus[0]}, server on the others)' if len(cpus) >= 2 else ''}; "
          f"server threads {args.server_threads}, client threads {args.threads}; {args.rounds} rounds per phase "
          f"of {args.requests} requests + {args.latency_requests} on new connections", flush=True)
    base = Path(tempfile.mkdtemp(prefix="wasdi-bench-storm-"))
    data_dir = base / "data"
    started = time.monotonic()
    server = start(data_dir, args.server_threads)
    held: list[socket.socket] = []
    try:
        load(server.port, "/wasdi/hello", {}, 500, args.threads, 0, is_greeting)
        before_rates, before_seconds = measure(server, args)
        memory_none = resident_kib(server.proc.pid)
        descriptors_none = descriptors(server.proc.pid)
        held = hold(server.port, args.idle)
        time.sleep(1)
        descriptors_held = descriptors(server.proc.pid)
        held_rates, held_seconds = measure(server, args)
        memory_held = resident_kib(server.proc.pid)
        for client in held:
            client.close()
        held = []
        time.sleep(1)
        after_rates, after_seconds = measure(server, args)
    finally:
        for client in held:
            with contextlib.suppress(OSError):
                client.close()
        server.stop()
        shutil.rmtree(base, ignore_errors=True)

    none_rate = (statistics.median(before_rates) + statistics.median(after_rates)) / 2
    held_rate = statistics.median(held_rates)
    none_p99, held_p99 = p99(before_seconds + after_seconds), p99(held_seconds)
    ratio = held_rate / none_rate
    print()
    print(f"{'phase':<34}{'req/s':>8}{'p50':>10}{'p99':>10}{'server RSS':>13}{'descriptors':>13}")
    print("-" * 88)
    none_p50 = statistics.median(before_seconds + after_seconds)
    print(f"{'no idle connection':<34}{none_rate:>8.0f}{none_p50 * 1e3:>8.1f}ms{none_p99 * 1e3:>8.1f}ms"
          f"{memory_none / 1024:>10.1f}MiB{descriptors_none:>13}")
    print(f"{f'127.0.0.2 holds {args.idle} idle':<34}{held_rate:>8.0f}{statistics.median(held_seconds) * 1e3:>8.1f}ms"
          f"{held_p99 * 1e3:>8.1f}ms{memory_held / 1024:>10.1f}MiB{descriptors_held:>13}")
    print()
    ratio_ok, p99_ok = ratio >= RATIO_TARGET, held_p99 < P99_TARGET
    print(f"req/s held / none: {ratio:.2f} (target >= {RATIO_TARGET}: {'PASS' if ratio_ok else 'MISS'}); "
          f"p99 while held: {held_p99 * 1e3:.0f} ms (target < {P99_TARGET * 1e3:.0f} ms: "
          f"{'PASS' if p99_ok else 'MISS'}); memory for the idle connections: "
          f"{(memory_held - memory_none) / 1024:.1f} MiB, {(memory_held - memory_none) / max(1, args.idle):.1f} KiB "
          f"each")
    print(f"req/s: median over rounds ({args.threads} keep-alive connections); p50/p99: one request at a time, each "
          f"on a new connection; 'none' is the mean of the phases before and after the held one.\n"
          f"{time.monotonic() - started:.1f} s in all")
    return 1 if args.check and not (ratio_ok and p99_ok) else 0


if __name__ == "__main__":
    raise SystemExit(main())
