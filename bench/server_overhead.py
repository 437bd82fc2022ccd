"""How much the WASDI server costs per request, against a bare Falcon app measured in the same run.

Starts two servers on 127.0.0.1 (free ports), each a subprocess served by waitress with the same
number of threads:

* bare: a Falcon app with one resource answering ``{"stringValue":"Hello Wasdi!!"}``;
* ours: ``python -m wasdi_server serve`` on a fresh temporary data directory, with one user who
  owns ``--workspaces`` workspaces (created over HTTP beforehand).

This process then loads them over loopback with ``--threads`` client threads, each on its own
persistent connection (``http.client``), after a warm-up, and prints requests per second for
GET /wasdi/hello and GET /ws/byuser (ours authenticated, the bare app answering the same bytes
pre-serialised), as ratios against the bare app on the same path.  Rounds are interleaved (bare, ours,
ours, bare, ...), so each of our figures is measured right next to its baseline; the ratio is taken
within each round and the median of those ratios is reported, which cancels the machine's slow ups
and downs.  A second, informative figure is the median
latency of one request at a time on one connection, which a busy machine disturbs much less.

    python bench/server_overhead.py [--requests 2000] [--threads 4] [--rounds 15] [--check]
    python bench/server_overhead.py --profile     # in-process timings and a cProfile of /ws/byuser

Figures, not a test: it exits 0 unless ``--check`` is given and a target is missed.  See README.md.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parents[1] / "src"
USER = "bench@example.org"
PASSWORD = "bench-password-1"
GREETING = {"stringValue": "Hello Wasdi!!"}
START_TIMEOUT = 20.0


# -- the baseline ------------------------------------------------------------------------------
def bare_app(byuser_body: bytes = b"[]") -> Any:
    """The baseline: a Falcon app with one resource (and ``/ws/byuser`` answering fixed bytes), nothing else."""
    import falcon

    class Listing:
        def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
            resp.content_type = falcon.MEDIA_JSON
            resp.data = byuser_body

    class Hello:
        def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
            resp.media = {"stringValue": "Hello Wasdi!!"}

    app = falcon.App()
    app.add_route("/wasdi/hello", Hello())
    app.add_route("/ws/byuser", Listing())
    return app


def serve_bare(port: int, threads: int, byuser_file: str | None = None) -> None:
    """The bare app on the server loop ours runs on (``wasdi_server.serving``: waitress's channel on epoll, with
    the connection budgets), so the ratio is what our app costs, not a difference of loops."""
    from wasdi_server import serving

    body = Path(byuser_file).read_bytes() if byuser_file else b"[]"
    serving.run(serving.make_server(bare_app(body), host="127.0.0.1", port=port, threads=threads, ident="bare"))


# -- servers -----------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WASDI_SERVER_")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH", "")) if p)
    return env


@dataclass
class Server:
    name: str
    proc: subprocess.Popen[bytes]
    port: int

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


SERVER_CPUS: set[int] | None = None
"""CPUs the servers run on (``--pin``), apart from the load generator's."""


def pin_cpus(client: set[int]) -> None:
    """Give the load generator ``client`` CPUs and the servers the rest, so neither preempts the other."""
    global SERVER_CPUS
    available = os.sched_getaffinity(0)
    SERVER_CPUS = available - client
    os.sched_setaffinity(0, client)


def _pin_server() -> None:
    if SERVER_CPUS:
        os.sched_setaffinity(0, SERVER_CPUS)


def spawn(name: str, cmd: list[str], port: int) -> Server:
    proc = subprocess.Popen(cmd, env=child_env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, preexec_fn=_pin_server if SERVER_CPUS else None)
    server = Server(name, proc, port)
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        if proc.poll() is not None:
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
            raise SystemExit(f"{name} server exited with {proc.returncode}:\n{err}")
        try:
            status, _ = request(port, "GET", "/wasdi/hello")
            if status == 200:
                break
        except OSError:
            pass
        if time.monotonic() > deadline:
            server.stop()
            raise SystemExit(f"{name} server did not answer within {START_TIMEOUT:.0f} s")
        time.sleep(0.05)
    # Waitress may log warnings under load; nobody reads stderr from here on, so do not let the pipe fill.
    threading.Thread(target=_drain, args=(proc,), daemon=True).start()
    return server


def _drain(proc: subprocess.Popen[bytes]) -> None:
    if proc.stderr:
        for _ in proc.stderr:
            pass


def request(port: int, method: str, path: str, body: bytes | None = None,
            headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def start_bare(threads: int, byuser_file: Path) -> Server:
    port = free_port()
    return spawn("bare", [sys.executable, str(Path(__file__).resolve()), "--serve-bare", str(port),
                          "--server-threads", str(threads), "--bare-byuser-file", str(byuser_file)], port)


def start_ours(data_dir: Path, threads: int, workspaces: int) -> tuple[Server, str]:
    """Our server on a fresh data dir with USER owning ``workspaces`` workspaces; and USER's session token."""
    added = subprocess.run([sys.executable, "-m", "wasdi_server", "user", "add", USER, "--password-stdin",
                            "--data-dir", str(data_dir)], input=PASSWORD + "\n", env=child_env(),
                           capture_output=True, text=True, timeout=60, check=False)
    if added.returncode != 0:
        raise SystemExit(f"user add failed: {added.stderr}")
    port = free_port()
    server = spawn("ours", [sys.executable, "-m", "wasdi_server", "serve", "--data-dir", str(data_dir),
                            "--host", "127.0.0.1", "--port", str(port), "--threads", str(threads),
                            "--sftp-port", "0"], port)
    status, body = request(port, "POST", "/auth/login",
                           json.dumps({"userId": USER, "userPassword": PASSWORD}).encode(),
                           {"Content-Type": "application/json"})
    token = json.loads(body).get("sessionId") if status == 200 else None
    if not token:
        server.stop()
        raise SystemExit(f"login failed: {status} {body[:200]!r}")
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        for i in range(workspaces):
            conn.request("GET", f"/ws/create?name=bench-{i:03d}", headers={"x-session-token": token})
            response = conn.getresponse()
            created = json.loads(response.read())
            if response.status != 200 or not (created or {}).get("stringValue"):
                raise SystemExit(f"creating workspace {i} failed: {response.status} {created!r}")
    finally:
        conn.close()
    return server, token


# -- load --------------------------------------------------------------------------------------
Check = Callable[[bytes], bool]


def load(port: int, path: str, headers: dict[str, str], requests: int, threads: int, warmup: int,
         check: Check) -> float:
    """Requests per second for ``requests`` GETs of ``path`` spread over ``threads`` keep-alive connections."""
    shares = [requests // threads + (1 if t < requests % threads else 0) for t in range(threads)]
    warm = warmup // threads
    ready = threading.Barrier(threads + 1)
    done = threading.Barrier(threads + 1)
    errors: list[str] = []

    def worker(count: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            def one(verify: bool) -> None:
                conn.request("GET", path, headers=headers)
                response = conn.getresponse()
                body = response.read()
                if response.status != 200 or (verify and not check(body)):
                    raise RuntimeError(f"GET {path}: {response.status} {body[:120]!r}")

            for i in range(warm):
                one(i == 0)
            ready.wait()
            for i in range(count):
                one(i % 64 == 0)  # the body is checked now and then: parsing it costs the client CPU
        except Exception as e:  # report it, and never leave the barriers hanging
            errors.append(str(e))
            ready.abort()
            done.abort()
            return
        finally:
            conn.close()
        done.wait()

    pool = [threading.Thread(target=worker, args=(n,), daemon=True) for n in shares]
    for t in pool:
        t.start()
    try:
        ready.wait()
        start = time.perf_counter()
        done.wait()
        elapsed = time.perf_counter() - start
    except threading.BrokenBarrierError:
        raise SystemExit(f"load on {path} failed: {errors[:3]}") from None
    finally:
        for t in pool:
            t.join(30)
    return requests / elapsed


def latencies(port: int, path: str, headers: dict[str, str], requests: int) -> list[float]:
    """Seconds per request, one request at a time on one keep-alive connection."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    out = []
    try:
        for _ in range(requests):
            start = time.perf_counter()
            conn.request("GET", path, headers=headers)
            response = conn.getresponse()
            response.read()
            out.append(time.perf_counter() - start)
            if response.status != 200:
                raise SystemExit(f"GET {path}: {response.status}")
    finally:
        conn.close()
    return out


def is_greeting(body: bytes) -> bool:
    return bool(json.loads(body) == GREETING)


def lists(count: int) -> Check:
    return lambda body: len(json.loads(body)) == count


# -- in-process profile ------------------------------------------------------------------------
def profile(workspaces: int, requests: int) -> None:
    """Where a request's time goes inside the app: WSGI calls with no socket, then cProfile of /ws/byuser."""
    import cProfile
    import pstats

    if str(SRC) not in sys.path:
        sys.path.insert(0, str(SRC))
    from falcon import testing

    from wasdi_server import create_app, load_settings

    data_dir = Path(tempfile.mkdtemp(prefix="wasdi-bench-profile-"))
    app = create_app(load_settings(data_dir=data_dir, environ={}))
    services = app.services
    try:
        services.users.add(USER, PASSWORD)
        user = services.users.active_user(USER)
        for i in range(workspaces):
            services.workspaces.create(user, f"bench-{i:03d}")
        token = services.sessions.open(USER)

        def caller(path: str, headers: dict[str, str]) -> Callable[[], bytes]:
            environ = testing.create_environ(path=path, headers=headers)
            return lambda: b"".join(app(dict(environ), lambda status, headers, exc_info=None: None))

        bare = bare_app()
        hello_environ = testing.create_environ(path="/wasdi/hello")
        calls = {"bare GET /wasdi/hello": lambda: b"".join(bare(dict(hello_environ), lambda *a: None)),
                 "ours GET /wasdi/hello": caller("/wasdi/hello", {}),
                 f"ours GET /ws/byuser ({workspaces} ws)": caller("/ws/byuser", {"x-session-token": token})}
        best = dict.fromkeys(calls, float("inf"))
        batch = max(1, requests // 10)
        for _ in range(10):  # best of 10 batches: the machine's noise only ever adds time
            for name, call in calls.items():
                start = time.perf_counter()
                for _ in range(batch):
                    call()
                best[name] = min(best[name], (time.perf_counter() - start) / batch)
        print("in-process WSGI time per request (no socket, no waitress; best of 10 batches):")
        for name, seconds in best.items():
            print(f"  {name:<28}{seconds * 1e6:>8.0f} us")

        byuser = calls[f"ours GET /ws/byuser ({workspaces} ws)"]
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(batch):
            byuser()
        profiler.disable()
        print(f"\ncProfile of {batch} x GET /ws/byuser, top functions by cumulative time:")
        pstats.Stats(profiler).strip_dirs().sort_stats("cumulative").print_stats(25)
    finally:
        services.close()
        shutil.rmtree(data_dir, ignore_errors=True)


# -- report ------------------------------------------------------------------------------------
@dataclass
class Row:
    label: str
    port: int
    path: str
    headers: dict[str, str]
    check: Check
    requests: int
    """Measured requests per round."""
    target: float | None
    pid: int = 0
    rates: list[float] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    """The server process's CPU seconds per measured request, per round (steadier than req/s on a busy machine)."""

    @property
    def latency(self) -> float:
        return statistics.median(self.latencies)

    @property
    def rate(self) -> float:
        return statistics.median(self.rates)

    def quartiles(self) -> tuple[float, float]:
        return quartiles(self.rates)


def quartiles(values: list[float]) -> tuple[float, float]:
    if len(values) < 2:
        return values[0], values[0]
    q = statistics.quantiles(values, n=4)
    return q[0], q[2]


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) process ``pid`` has used, from /proc (0 where there is none)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def report(rows: list[Row], baseline: Row) -> list[str]:
    """Print the table; the labels of the rows that miss their target."""
    print(f"{'endpoint':<28}{'req/s':>7}{'(p25-p75)':>14}{'ratio vs bare':>15}{'(p25-p75)':>13}{'target':>10}  "
          f"result{'1-conn p50':>13}{'ratio':>7}{'CPU/req':>10}{'ratio':>7}")
    print("-" * 132)
    misses = []
    for row in rows:
        # Each round measured this row right next to the baseline: the ratio within a round cancels the
        # machine's slow ups and downs, which the ratio of two medians would not.
        ratios = [ours / bare for ours, bare in zip(row.rates, baseline.rates, strict=True)]
        ratio = statistics.median(ratios)
        low, high = row.quartiles()
        ratio_low, ratio_high = quartiles(ratios)
        cpu = statistics.median(row.cpu) or 1e-9
        if row.target is None:
            target, result = "-", "baseline"
        else:
            target = f">= {row.target:.2f}"
            result = "PASS" if ratio >= row.target else "MISS"
            if result == "MISS":
                misses.append(row.label)
        print(f"{row.label:<28}{row.rate:>7.0f}{f'({low:.0f}-{high:.0f})':>14}{ratio:>15.2f}"
              f"{f'({ratio_low:.2f}-{ratio_high:.2f})':>13}{target:>10}  "
              f"{result:<8}{row.latency * 1e6:>8.0f} us{baseline.latency / row.latency:>7.2f}"
              f"{cpu * 1e6:>7.1f} us{statistics.median(baseline.cpu) / cpu:>7.2f}")
    return misses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000,
                        help="measured GET /wasdi/hello requests per server and round (default 2000)")
    parser.add_argument("--byuser-requests", type=int, default=None,
                        help="measured GET /ws/byuser requests per round (default: --requests / 5; it is slower)")
    parser.add_argument("--threads", type=int, default=4,
                        help="client threads, one keep-alive connection each (default 4)")
    parser.add_argument("--server-threads", type=int, default=8, help="waitress threads of both servers (default 8)")
    parser.add_argument("--rounds", type=int, default=15,
                        help="interleaved rounds; the median rate over rounds is reported (default 15)")
    parser.add_argument("--warmup", type=int, default=200, help="unmeasured requests per endpoint first (default 200)")
    parser.add_argument("--workspaces", type=int, default=1000, help="workspaces the user of /ws/byuser owns")
    parser.add_argument("--no-pin", dest="pin", action="store_false",
                        help="do not split the CPUs between the load generator (the first) and the servers (the "
                             "others); pinning makes the figures far steadier on a small machine")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--profile", action="store_true",
                        help="instead: time the app in-process (no sockets) and cProfile GET /ws/byuser")
    parser.add_argument("--serve-bare", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--bare-byuser-file", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_bare:  # the bare server's own process
        serve_bare(args.serve_bare, args.server_threads, args.bare_byuser_file)
        return 0
    if args.profile:
        profile(args.workspaces, max(args.requests, 100))
        return 0
    byuser_requests = args.byuser_requests or max(args.threads, args.requests // 5)
    if args.threads < 1 or args.rounds < 1 or min(args.requests, byuser_requests) < args.threads:
        parser.error("need --threads >= 1, --rounds >= 1 and at least --threads requests per round")

    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    pinned = args.pin and len(cpus) >= 2
    if pinned:
        pin_cpus({cpus[0]})
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs"
          f"{f' (load generator on CPU {cpus[0]}, servers on the others)' if pinned else ''}; "
          f"server threads {args.server_threads}, client threads {args.threads}; {args.rounds} rounds of "
          f"{args.requests} hello + {byuser_requests} byuser requests (+{args.warmup} warm-up each); "
          f"{args.workspaces} workspaces", flush=True)
    data_dir = Path(tempfile.mkdtemp(prefix="wasdi-bench-"))
    servers: list[Server] = []
    started = time.monotonic()
    try:
        ours, token = start_ours(data_dir, args.server_threads, args.workspaces)
        servers.append(ours)
        _status, listing = request(ours.port, "GET", "/ws/byuser", headers={"x-session-token": token})
        byuser_file = data_dir / "byuser.json"  # the bare app answers these very bytes, pre-serialised
        byuser_file.write_bytes(listing)
        bare = start_bare(args.server_threads, byuser_file)
        servers.append(bare)
        rows = [
            Row("bare GET /wasdi/hello", bare.port, "/wasdi/hello", {}, is_greeting, args.requests, None,
                bare.proc.pid),
            Row("ours GET /wasdi/hello", ours.port, "/wasdi/hello", {}, is_greeting, args.requests, 0.95,
                ours.proc.pid),
            Row("bare GET /ws/byuser (bytes)", bare.port, "/ws/byuser", {}, lists(args.workspaces),
                byuser_requests, None, bare.proc.pid),
            Row(f"ours GET /ws/byuser ({args.workspaces} ws)", ours.port, "/ws/byuser",
                {"x-session-token": token}, lists(args.workspaces), byuser_requests, 1.18, ours.proc.pid),
        ]
        for row in rows:
            load(row.port, row.path, row.headers, max(args.warmup, args.threads), args.threads, 0, row.check)
        for round_no in range(args.rounds):
            # Interleaved, alternating the order, so the machine's ups and downs hit every row alike.
            for row in rows if round_no % 2 == 0 else rows[::-1]:
                before = cpu_seconds(row.pid)
                row.rates.append(load(row.port, row.path, row.headers, row.requests, args.threads,
                                      2 * args.threads, row.check))
                row.cpu.append((cpu_seconds(row.pid) - before) / (row.requests + 2 * args.threads))
        for round_no in range(3):  # and one request at a time: slower, but far less sensitive to a busy machine
            for row in rows if round_no % 2 == 0 else rows[::-1]:
                row.latencies += latencies(row.port, row.path, row.headers, row.requests)
    finally:
        for server in servers:
            server.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
    print()
    misses = report(rows[:2], rows[0]) + report(rows[2:], rows[2])
    print(f"\nreq/s: median over {args.rounds} rounds of {args.threads} client threads (quartiles in brackets); "
          "ratio vs bare: the median over rounds of this row's rate / the bare app's rate for the same path in the "
          "same round (quartiles in brackets); "
          "PASS/MISS: that ratio against the target.\n"
          "1-conn p50: median latency, one request at a time on one connection (3 rounds); "
          "ratio: the bare app's p50 for the same path / this p50 (informative).\n"
          "CPU/req: the server process's CPU time per request (median over rounds; /proc, in clock ticks, so "
          "coarse with few requests); ratio: the bare app's / ours (informative; far steadier than req/s on a "
          "busy machine).\n"
          f"{time.monotonic() - started:.1f} s in all")
    return 1 if args.check and misses else 0


if __name__ == "__main__":
    raise SystemExit(main())
