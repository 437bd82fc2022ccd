"""How fast apps start and finish: run -> RUNNING and run -> DONE of a no-op app, 50 queued runs drained,
and a redeploy with an unchanged pip.txt, on a real server process over loopback.

Every figure is also given as a ratio against a baseline measured in the same run on the same machine:
starting the app environment's interpreter and importing the official library (``python -c "import
wasdi"``), the floor any run of a Python app pays.

    PYTHONPATH=src python bench/launch.py [--runs 10] [--queued 50] [--workers 4] [--find-links DIR]

Targets (issue 8, on a 2-core machine): RUNNING < 1 s, DONE < 2 s, redeploy (cache) < 5 s.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import httpx

PASSWORD = "bench-password-1"
USER = "bench@example.org"
NOOP = "def run():\n    pass\n"
DEFAULT_WHEELS = Path.home() / ".cache" / "wasdi-toolkit-tests" / "wheels"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def app_zip(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        for name, text in files.items():
            bundle.writestr(name, text)
    return buffer.getvalue()


class Bench:
    def __init__(self, data_dir: Path, workers: int, find_links: Path | None) -> None:
        self.data_dir = data_dir
        env = {k: v for k, v in os.environ.items() if not k.startswith("WASDI_SERVER_")}
        self.env = env
        subprocess.run([sys.executable, "-m", "wasdi_server", "user", "add", USER, "--password-stdin",
                        "--data-dir", str(data_dir)], input=PASSWORD + "\n", text=True, env=env, check=True,
                       capture_output=True)
        config = data_dir.parent / "bench.toml"
        lines = [f"launcher_workers = {workers}", "launcher_poll_seconds = 0.5"]
        if find_links is not None:
            lines += [f"apps_find_links = [{json.dumps(str(find_links))}]", "apps_offline = true"]
        config.write_text("\n".join(lines) + "\n")
        self.port = free_port()
        self.log = open(data_dir.parent / "server.log", "wb")  # noqa: SIM115 (closed in close())
        self.proc = subprocess.Popen([sys.executable, "-m", "wasdi_server", "serve", "--data-dir", str(data_dir),
                                      "--port", str(self.port), "--config", str(config)], env=env,
                                     stdout=self.log, stderr=subprocess.STDOUT)
        self.base = f"http://127.0.0.1:{self.port}"
        for _ in range(200):
            try:
                httpx.get(self.base + "/wasdi/hello", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        token = httpx.post(self.base + "/auth/login", json={"userId": USER, "userPassword": PASSWORD}).json()
        self.http = httpx.Client(base_url=self.base, headers={"x-session-token": token["sessionId"]}, timeout=60)
        self.workspace = self.http.get("/ws/create", params={"name": "bench"}).json()["stringValue"]

    def close(self) -> None:
        self.http.close()
        self.proc.terminate()
        self.proc.wait(20)
        self.log.close()

    def status(self, process_id: str) -> str:
        return self.http.get("/process/getstatusbyid", params={"procws": process_id}).text.strip('"')

    def wait(self, process_id: str, wanted: set[str], timeout: float = 300) -> float:
        start = time.perf_counter()
        while time.perf_counter() - start < timeout:
            if self.status(process_id) in wanted:
                return time.perf_counter()
            time.sleep(0.01)
        raise RuntimeError(f"{process_id} not {wanted} after {timeout} s")

    def upload(self, name: str, files: dict[str, str]) -> str:
        r = self.http.post("/processors/uploadprocessor", params={"name": name, "workspace": self.workspace},
                           files={"file": (f"{name}.zip", app_zip(files))})
        process_id = str(r.json()["stringValue"])
        self.wait(process_id, {"DONE", "ERROR"})
        assert self.status(process_id) == "DONE", f"the deploy of {name} failed; see {self.data_dir}"
        return process_id

    def start_run(self, name: str) -> tuple[str, float]:
        started = time.perf_counter()
        r = self.http.post("/processors/run", params={"name": name, "workspace": self.workspace}, content="{}")
        return str(r.json()["processingIdentifier"]), started


def app_id(data_dir: Path, name: str) -> str:
    """The app's id, read from the store's file (the id-by-name endpoints belong to the app store)."""
    tables = json.loads((data_dir / "db" / "processors.json").read_text())
    for table in tables.values():
        for doc in table.values():
            if doc.get("name") == name:
                return str(doc["processorId"])
    raise RuntimeError(f"no app {name}")


def baseline(data_dir: Path, app: str, rounds: int) -> float:
    python = data_dir / "app-environments" / app / "venv" / "bin" / "python"
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        subprocess.run([str(python), "-c", "import wasdi"], check=True, capture_output=True, env={"PATH": "/usr/bin"})
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10, help="single runs measured one after the other")
    parser.add_argument("--queued", type=int, default=50, help="runs queued at once for the drain figure")
    parser.add_argument("--workers", type=int, default=4, help="launcher workers (runs at once)")
    parser.add_argument("--find-links", type=Path, default=DEFAULT_WHEELS if DEFAULT_WHEELS.is_dir() else None,
                        help="local wheels for the environments (default: the test wheelhouse when present)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="wasdi-bench-launch-") as scratch:
        bench = Bench(Path(scratch) / "data", args.workers, args.find_links)
        try:
            bench.upload("noop", {"myProcessor.py": NOOP, "pip.txt": "six\n" if args.find_links else ""})
            base = baseline(bench.data_dir, "noop", 7)
            to_running, to_done = [], []
            for _ in range(args.runs):
                process_id, started = bench.start_run("noop")
                to_running.append(bench.wait(process_id, {"RUNNING", "DONE", "ERROR"}) - started)
                to_done.append(bench.wait(process_id, {"DONE", "ERROR", "STOPPED"}) - started)
                assert bench.status(process_id) == "DONE"
            drain_start = time.perf_counter()
            queued = [bench.start_run("noop")[0] for _ in range(args.queued)]
            for process_id in queued:
                bench.wait(process_id, {"DONE", "ERROR", "STOPPED"})
            drain = time.perf_counter() - drain_start
            failed = sum(1 for p in queued if bench.status(p) != "DONE")
            processor_id = app_id(bench.data_dir, "noop")
            redeploys = []
            for _ in range(3):
                start = time.perf_counter()
                bench.http.get("/processors/redeploy", params={"processorId": processor_id,
                                                               "workspace": bench.workspace})
                latest = bench.http.get("/process/byws", params={"workspace": bench.workspace}).json()[0]
                bench.wait(latest["processObjId"], {"DONE", "ERROR"})
                redeploys.append(time.perf_counter() - start)
        finally:
            bench.close()
    running, done, redeploy = (statistics.median(to_running), statistics.median(to_done),
                               statistics.median(redeploys) if redeploys else float("nan"))
    print(f"baseline: start the app's interpreter + import wasdi   {base * 1000:8.0f} ms")
    print(f"{'figure':44} {'median':>10} {'x baseline':>11} {'target':>9}  result")
    for label, value, target in (("run -> RUNNING (no-op app)", running, 1.0), ("run -> DONE (no-op app)", done, 2.0),
                                 ("redeploy, unchanged pip.txt (cache)", redeploy, 5.0)):
        print(f"{label:44} {value * 1000:8.0f} ms {value / base:10.1f}x {target:7.1f} s  "
              f"{'PASS' if value < target else 'MISS'}")
    rate = args.queued / drain * 60
    print(f"{args.queued} queued no-op runs, {args.workers} workers: drained in {drain:.1f} s = {rate:.0f} runs/min "
          f"({drain / args.queued / base:.1f}x baseline per run){'' if not failed else f', {failed} not DONE'}")


if __name__ == "__main__":
    main()
