"""Nothing else changed: the server before and after a change of structure, measured in one run.

``--before REF`` is a git ref of this repository. Its ``src`` is exported (``git archive``) into a temporary
folder, and both trees run on this interpreter and this environment, each with ``PYTHONPATH=<tree>/src``. For
each tree the script prints:

* the start time: a fresh ``python`` process imports ``wasdi_server.app``, runs ``create_app`` on a new data
  directory and gets the first answer (``GET /wasdi/hello``, in-process WSGI). The median is taken over
  ``--rounds`` runs, with the parts (import, create_app, first answer) beside it, and the CPU seconds the
  process had used by then (interpreter start included), which waiting for a busy machine's CPUs does not
  lengthen;
* ``/wasdi/hello`` requests per second: both servers (``python -m wasdi_server serve``, ``--threads``
  threads) are loaded from this process over keep-alive connections, in interleaved rounds. The median of
  the rounds is printed, and the after/before ratio is taken within each round. Beside it, the median
  latency of one request at a time on one connection (``--latency-requests`` a round), which a busy
  machine disturbs much less;
* the sha256 of the OpenAPI document each server serves (``/openapi.json``) and of the endpoint catalogue
  (every ``wasdi_sdk.catalog`` endpoint as canonical JSON), which must be byte-identical.

Figures, not a test: it exits 1 only when a document differs, or with ``--check`` when a ratio is outside
``--noise``.

    python bench/layers.py --before f65d82a [--rounds 7] [--requests 3000] [--threads 4] [--check]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from server_overhead import free_port, is_greeting, latencies, load, request  # the overhead bench's load

ROOT = Path(__file__).resolve().parents[1]
START_TIMEOUT = 60.0

START = r"""
import time
started = time.perf_counter()
import io, json, sys
from wsgiref.util import setup_testing_defaults
from wasdi_server.app import create_app
from wasdi_server.settings import load_settings
imported = time.perf_counter()
app = create_app(load_settings(data_dir=sys.argv[1], sftp_port=0))
created = time.perf_counter()
environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/wasdi/hello", "HTTP_HOST": "127.0.0.1:8080",
           "wsgi.input": io.BytesIO()}
setup_testing_defaults(environ)
statuses = []
body = b"".join(app(environ, lambda status, headers, exc_info=None: statuses.append(status)))
answered = time.perf_counter()
import resource
usage = resource.getrusage(resource.RUSAGE_SELF)
assert statuses == ["200 OK"] and b"Hello Wasdi" in body, (statuses, body[:200])
import wasdi_server
print(json.dumps({"import": imported - started, "create_app": created - imported, "first answer":
                  answered - created, "total": answered - started, "cpu": usage.ru_utime + usage.ru_stime,
                  "code": wasdi_server.__file__}))
app.services.close()
"""

CATALOGUE = r"""
import dataclasses, hashlib, json
from wasdi_sdk.catalog import ENDPOINTS
import wasdi_sdk
text = json.dumps([dataclasses.asdict(e) for e in ENDPOINTS], default=str, sort_keys=True)
print(json.dumps({"sha256": hashlib.sha256(text.encode()).hexdigest(), "endpoints": len(ENDPOINTS),
                  "code": wasdi_sdk.__file__}))
"""


@dataclass
class Tree:
    name: str
    src: Path
    starts: list[dict[str, float]] = field(default_factory=list)
    rates: list[float] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    openapi: str = ""
    catalogue: str = ""
    endpoints: int = 0
    server: subprocess.Popen[bytes] | None = None
    port: int = 0

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("WASDI_SERVER_")}
        env["PYTHONPATH"] = str(self.src)
        env["NO_COLOR"] = "1"
        return env

    def python(self, code: str, *args: str, cwd: Path) -> dict[str, object]:
        done = subprocess.run([sys.executable, "-c", code, *args], env=self.env(), cwd=cwd, capture_output=True,
                              text=True, timeout=300, check=False)
        if done.returncode != 0:
            raise SystemExit(f"{self.name}: {done.stderr[-3000:]}")
        answer: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
        code_file = str(answer.get("code", ""))
        if not code_file.startswith(str(self.src)):  # the other tree's code would measure nothing
            raise SystemExit(f"{self.name} ran {code_file}, not its own tree {self.src}")
        return answer

    def start_server(self, data_dir: Path, threads: int) -> None:
        self.port = free_port()
        command = [sys.executable, "-m", "wasdi_server", "serve", "--data-dir", str(data_dir), "--host",
                   "127.0.0.1", "--port", str(self.port), "--threads", str(threads), "--sftp-port", "0",
                   "--broker-port", str(free_port())]
        self.server = subprocess.Popen(command, env=self.env(), cwd=data_dir, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self.server.poll() is not None:
                raise SystemExit(f"{self.name} server exited with {self.server.returncode}")
            try:
                if request(self.port, "GET", "/wasdi/hello")[0] == 200:
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit(f"{self.name} server did not answer within {START_TIMEOUT:.0f} s")
            time.sleep(0.05)

    def stop_server(self) -> None:
        if self.server is not None and self.server.poll() is None:
            self.server.terminate()
            try:
                self.server.wait(15)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait(15)


def export(ref: str, into: Path) -> Path:
    """``src`` of ``ref`` (a commit of this repository), written under ``into``."""
    archive = subprocess.run(["git", "archive", "--format=tar", ref, "src"], cwd=ROOT, capture_output=True,
                             check=False, timeout=120)
    if archive.returncode != 0:
        raise SystemExit(f"git archive {ref}: {archive.stderr.decode(errors='replace')}")
    into.mkdir(parents=True)
    archive_path = into / "src.tar"
    archive_path.write_bytes(archive.stdout)
    with tarfile.open(archive_path) as tar:
        tar.extractall(into, filter="data")
    archive_path.unlink()
    return into / "src"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", required=True, help="the git ref measured as 'before'")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--requests", type=int, default=3000, help="/wasdi/hello requests per round and tree")
    parser.add_argument("--threads", type=int, default=4, help="server threads, and client connections")
    parser.add_argument("--latency-requests", type=int, default=500, help="one-at-a-time requests per round")
    parser.add_argument("--noise", type=float, default=0.10, help="--check: the largest ratio off 1.0 allowed")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)

    commit = subprocess.run(["git", "rev-parse", "--short", args.before], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.strip()
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "src"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.strip()
    work = Path(tempfile.mkdtemp(prefix="wasdi-layers-bench-"))
    before = Tree(f"before ({commit})", export(args.before, work / "before"))
    after = Tree(f"after ({head}{', with uncommitted changes' if dirty else ''})", ROOT / "src")
    trees = (before, after)
    try:
        for tree in trees:
            answer = tree.python(CATALOGUE, cwd=work)
            tree.catalogue, tree.endpoints = str(answer["sha256"]), int(str(answer["endpoints"]))
            tree.python(START, str(work / f"warm-{tree.src.parent.name}"), cwd=work)  # bytecode caches
        for round_number in range(args.rounds):
            for tree in trees if round_number % 2 == 0 else trees[::-1]:
                data_dir = work / f"start-{round_number}-{tree.src.parent.name}"
                tree.starts.append({k: float(str(v)) for k, v in tree.python(START, str(data_dir), cwd=work).items()
                                    if k != "code"})
                shutil.rmtree(data_dir, ignore_errors=True)
        for tree in trees:
            data_dir = work / f"serve-{tree.src.parent.name}"
            data_dir.mkdir()
            tree.start_server(data_dir, args.threads)
            status, body = request(tree.port, "GET", "/openapi.json")
            if status != 200:
                raise SystemExit(f"{tree.name}: /openapi.json answered {status}")
            tree.openapi = sha256(body)
        ratios = []
        for round_number in range(args.rounds):
            for tree in trees if round_number % 2 == 0 else trees[::-1]:
                tree.rates.append(load(tree.port, "/wasdi/hello", {}, args.requests, args.threads,
                                       warmup=args.threads * 50, check=is_greeting))
                tree.latencies.extend(latencies(tree.port, "/wasdi/hello", {}, args.latency_requests))
            ratios.append(after.rates[-1] / before.rates[-1])
    finally:
        for tree in trees:
            tree.stop_server()
        shutil.rmtree(work, ignore_errors=True)

    load_now = os.getloadavg()
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs, load average "
          f"{load_now[0]:.2f} {load_now[1]:.2f} {load_now[2]:.2f}; {args.rounds} rounds, interleaved")
    print()
    width = max(len(t.name) for t in trees)
    print(f"{'':<{width}}  {'start (median)':>14}  {'import':>8}  {'create_app':>10}  {'1st answer':>10}  "
          f"{'start CPU':>9}  "
          f"{'/wasdi/hello':>13}  {'one at a time':>13}")
    for tree in trees:
        parts = {k: statistics.median(s[k] for s in tree.starts) for k in tree.starts[0]}
        print(f"{tree.name:<{width}}  {parts['total'] * 1e3:11.0f} ms  {parts['import'] * 1e3:5.0f} ms  "
              f"{parts['create_app'] * 1e3:7.0f} ms  {parts['first answer'] * 1e3:7.1f} ms  "
              f"{parts['cpu'] * 1e3:6.0f} ms  "
              f"{statistics.median(tree.rates):9.0f} rq/s  {statistics.median(tree.latencies) * 1e3:10.2f} ms")
    start_ratio = statistics.median(s["total"] for s in after.starts) / statistics.median(
        s["total"] for s in before.starts)
    cpu_ratio = statistics.median(s["cpu"] for s in after.starts) / statistics.median(
        s["cpu"] for s in before.starts)
    rate_ratio = statistics.median(ratios)
    print()
    print(f"after / before, start time: {start_ratio:.3f}x (median of each tree's starts); its CPU time: "
          f"{cpu_ratio:.3f}x")
    print(f"after / before, /wasdi/hello req/s: {rate_ratio:.3f}x (median of the per-round ratios; "
          f"rounds {min(ratios):.3f}x to {max(ratios):.3f}x)")
    latency_ratio = statistics.median(after.latencies) / statistics.median(before.latencies)
    print(f"after / before, /wasdi/hello latency one at a time: {latency_ratio:.3f}x (medians of "
          f"{len(after.latencies)} requests each)")
    print()
    same = True
    for what, attr in (("OpenAPI document (/openapi.json)", "openapi"), ("endpoint catalogue", "catalogue")):
        values = [getattr(t, attr) for t in trees]
        same &= values[0] == values[1]
        print(f"{what}:")
        for tree, value in zip(trees, values, strict=True):
            print(f"  {tree.name:<{width}}  sha256 {value}")
        print(f"  {'identical' if values[0] == values[1] else 'DIFFERENT'}"
              + (f" ({before.endpoints} endpoints)" if attr == "catalogue" else ""))
    off = [r for r in (start_ratio, rate_ratio) if abs(r - 1.0) > args.noise]
    return 1 if not same or (args.check and off) else 0


if __name__ == "__main__":
    raise SystemExit(main())
