"""How fast apps start and finish, boxed and unboxed: run -> RUNNING and run -> DONE of a no-op app, queued
runs drained, and a redeploy with an unchanged pip.txt, on three real server processes over loopback: one
with ``app_isolation = required`` (the box: each run in a world of its own, namespaces by bubblewrap), one
with the box as it was before worlds (Landlock, seccomp and limits on the host's shared view: the same
server with ``Box.in_worlds`` turned off, for this comparison only), and one with ``off``, measured
alternately in the same run.

Every figure is given as a ratio against a baseline measured in the same run on the same machine:
starting the app environment's interpreter and importing the official library (``python -c "import
wasdi"``), the floor any run of a Python app pays; and the boxed figures against the unboxed ones.  The
box's own start is also timed alone: ``/bin/true`` started directly, then through the box unconfined
(the trampoline and its supervisor) and boxed.

    PYTHONPATH=src python bench/launch.py [--runs 10] [--queued 50] [--workers 4] [--find-links DIR] [--phases]
                                          [--keep]

With ``--phases`` every run is traced (``Box.trace_runs``: the server, the supervisor, the world's stage and the
app executor note when each phase was reached, on the same monotonic clock as this script) and a table gives,
for the single no-op runs of each server, the median time of each phase from the run being asked to DONE.

Targets (issues 8, 17 and 27, on a 2-core machine): RUNNING < 1 s, DONE < 2 s, redeploy (cache) < 5 s; boxed
run -> DONE <= 1.1 x unboxed; boxed redeploy unchanged within noise; run -> DONE in worlds <= 1.15 x the box
before worlds.
"""

from __future__ import annotations

import argparse
import contextlib
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
SERVER = ("import sys\nfrom wasdi_server.launcher.box.box import Box\n{patches}"
          "from wasdi_server.cli import main\nsys.exit(main(sys.argv[1:]))\n")
WITHOUT_WORLDS = "Box.in_worlds = property(lambda self: False)  # the box before worlds, for the comparison\n"
TRACED = "Box.trace_runs = True  # each run's phases in the server's log\n"
PHASES = (
    ("box asked", "the API call, the launcher taking the run, its set-up (session, folders)"),
    ("supervisor spawned", "the supervisor's process spawned (it starts while the next two go on)"),
    ("doors open", "the run's doors opened (in a world)"),
    ("job written", "the job made and written to the supervisor"),
    ("supervisor ready", "the supervisor's interpreter up, its modules imported, the job read"),
    ("cgroups made", "the run's cgroups made"),
    ("world asked", "forked, limits set, bwrap started (in a world)"),
    ("stage up", "bwrap built the world, the stage started (in a world)"),
    ("doors listening", "the doors listening, their keeper started (in a world)"),
    ("confined", "capabilities, no new privileges, seccomp, Landlock"),
    ("program started", "the app's interpreter exec'd"),
    ("app interpreter up", "the app's interpreter started"),
    ("library imported", "import wasdi"),
    ("library ready", "the library's init (a session check over the API) and parameters"),
    ("app returned", "the app imported and run (a no-op)"),
    ("status written", "the status read and DONE written (two API calls)"),
    ("DONE seen", "the bench's poll saw DONE"),
)
"""The phases of a run, each named after the mark that ends it, in order (a mark a box does not make is skipped:
its time goes to the next phase)."""
AFTER_DONE = (("program ended", "the app's interpreter ended"), ("run swept", "the run swept (its world gone)"),
              ("cgroups removed", "its cgroups removed"), ("supervisor ended", "the server saw the supervisor end"))
"""What follows the app's own DONE, off the path a user waits on (timed from ``status written``)."""
MODES = {"required": "required", "landlock": "required", "off": "off"}
"""Each server's ``app_isolation``; ``landlock`` is the box before worlds."""


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
    def __init__(self, data_dir: Path, workers: int, find_links: Path | None, isolation: str,
                 worlds: bool = True, traced: bool = False) -> None:
        self.data_dir = data_dir
        env = {k: v for k, v in os.environ.items() if not k.startswith("WASDI_SERVER_")}
        self.env = env
        subprocess.run([sys.executable, "-m", "wasdi_server", "user", "add", USER, "--password-stdin",
                        "--data-dir", str(data_dir)], input=PASSWORD + "\n", text=True, env=env, check=True,
                       capture_output=True)
        config = data_dir.parent / "bench.toml"
        lines = [f"launcher_workers = {workers}", "launcher_poll_seconds = 0.5", f'app_isolation = "{isolation}"']
        if find_links is not None:
            lines += [f"apps_find_links = [{json.dumps(str(find_links))}]", "apps_offline = true"]
        config.write_text("\n".join(lines) + "\n")
        self.port = free_port()
        self.log = open(data_dir.parent / "server.log", "wb")  # noqa: SIM115 (closed in close())
        patches = ("" if worlds else WITHOUT_WORLDS) + (TRACED if traced else "")
        start = [sys.executable, "-c", SERVER.format(patches=patches)]
        self.proc = subprocess.Popen([*start, "serve", "--data-dir", str(data_dir),
                                      "--port", str(self.port), "--config", str(config), "--sftp-port", "0"], env=env,
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
        self.single_runs: dict[str, tuple[float, float]] = {}
        """The single no-op runs: when each was asked and when DONE was seen (``time.monotonic()``)."""

    def close(self) -> None:
        self.http.close()
        self.proc.terminate()
        self.proc.wait(20)
        self.log.close()

    def phase_marks(self) -> dict[str, dict[str, float]]:
        """The marks of every traced run so far, by run (the server's log lines ``box phases of <id>: ...``)."""
        self.log.flush()
        found: dict[str, dict[str, float]] = {}
        for line in (self.data_dir.parent / "server.log").read_text(errors="replace").splitlines():
            _head, _, marks = line.partition("box phases of ")
            if not marks:
                continue
            run, _, rest = marks.partition(": ")
            found[run] = {}
            for word in rest.split():
                name, _, when = word.rpartition("@")
                found[run].setdefault(name.replace("_", " "), float(when))
        return found

    def run_log(self, process_id: str) -> str:
        """The last lines of a run's log (what a failed run said)."""
        rows = self.http.get("/processors/logs/list", params={"processworkspace": process_id, "startrow": 0,
                                                             "endrow": 200}).json()
        return " | ".join(str(row.get("logRow", row)) for row in rows[-12:]) if isinstance(rows, list) else str(rows)

    def status(self, process_id: str) -> str:
        return self.http.get("/process/getstatusbyid", params={"procws": process_id}).text.strip('"')

    def wait(self, process_id: str, wanted: set[str], timeout: float = 300) -> float:
        """When (``time.monotonic()``, the clock of the box's marks) ``process_id`` was seen in ``wanted``."""
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            if self.status(process_id) in wanted:
                return time.monotonic()
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
        started = time.monotonic()
        r = self.http.post("/processors/run", params={"name": name, "workspace": self.workspace}, content="{}")
        return str(r.json()["processingIdentifier"]), started

    def app_id(self, name: str) -> str:
        """The app's id, asked of the API (``/processors/getprocessor?name=``)."""
        return str(self.http.get("/processors/getprocessor", params={"name": name}).json()["processorId"])

    def one_run(self) -> tuple[float, float]:
        """run -> RUNNING and run -> DONE of one no-op run."""
        process_id, started = self.start_run("noop")
        running = self.wait(process_id, {"RUNNING", "DONE", "ERROR"}) - started
        seen = self.wait(process_id, {"DONE", "ERROR", "STOPPED"})
        assert self.status(process_id) == "DONE", f"a run ended {self.status(process_id)}: {self.run_log(process_id)}"
        self.single_runs[process_id] = (started, seen)
        return running, seen - started

    def drain(self, count: int) -> tuple[float, int]:
        """Seconds to drain ``count`` runs posted at once, and how many did not end DONE."""
        start = time.perf_counter()
        queued = [self.start_run("noop")[0] for _ in range(count)]
        for process_id in queued:
            self.wait(process_id, {"DONE", "ERROR", "STOPPED"})
        return time.perf_counter() - start, sum(1 for p in queued if self.status(p) != "DONE")

    def redeploy(self) -> float:
        start = time.monotonic()
        self.http.get("/processors/redeploy", params={"processorId": self.app_id("noop"), "workspace": self.workspace})
        latest = self.http.get("/process/byws", params={"workspace": self.workspace}).json()[0]
        self.wait(latest["processObjId"], {"DONE", "ERROR"})
        return time.monotonic() - start


def phase_table(benches: dict[str, Bench], labels: dict[str, str]) -> list[str]:
    """The median time of each phase of the single no-op runs, one column per server (milliseconds)."""
    columns: dict[str, dict[str, list[float]]] = {}
    for mode, bench in benches.items():
        marks = bench.phase_marks()
        durations: dict[str, list[float]] = {}
        for run, (asked, seen) in bench.single_runs.items():
            found = {**marks.get(run, {}), "run asked": asked, "DONE seen": seen}
            previous = asked
            for name, _label in PHASES:
                if name in found:
                    durations.setdefault(name, []).append(found[name] - previous)
                    previous = found[name]
            written = found.get("status written")
            for name, _label in AFTER_DONE:
                if name in found and written is not None:
                    durations.setdefault(name, []).append(found[name] - written)
        columns[mode] = durations
    width = 74
    lines = [f"{'phase of a no-op run (medians, ms; each from the one before)':{width}}"
             + "".join(f"{labels[m]:>11}" for m in benches)]

    def row(name: str, label: str) -> str:
        cells = []
        for mode in benches:
            values = columns[mode].get(name)
            cells.append(f"{statistics.median(values) * 1000:11.1f}" if values else f"{'-':>11}")
        return f"{label[:width - 1]:{width}}" + "".join(cells)

    lines += [row(name, label) for name, label in PHASES]
    totals = []
    for bench in benches.values():
        spans = [seen - asked for asked, seen in bench.single_runs.values()]
        totals.append(f"{statistics.median(spans) * 1000:11.1f}" if spans else f"{'-':>11}")
    lines.append(f"{'run asked -> DONE seen (the median of the totals)':{width}}" + "".join(totals))
    lines.append("after DONE, off the waiting path (from the status written):")
    lines += [row(name, "  " + label) for name, label in AFTER_DONE]
    return lines


def box_start_costs(rounds: int) -> tuple[float, float, float, float]:
    """Median seconds to run /bin/true directly, through the box unconfined, boxed before worlds, and boxed."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from wasdi_server.launcher.box import Box, Job

    class BoxBeforeWorlds(Box):
        @property
        def in_worlds(self) -> bool:
            return False

    job = Job(["/bin/true"], {"PATH": "/usr/bin:/bin"}, Path("/"))
    boxes = {"off": Box(isolation="off"), "landlock": BoxBeforeWorlds(), "boxed": Box()}
    times: dict[str, list[float]] = {"direct": [], **{name: [] for name in boxes}}
    for _ in range(rounds):
        start = time.perf_counter()
        subprocess.run(["/bin/true"], check=True)
        times["direct"].append(time.perf_counter() - start)
        for name, box in boxes.items():
            start = time.perf_counter()
            assert box.run(job).exit_code == 0
            times[name].append(time.perf_counter() - start)
    return (statistics.median(times["direct"]), statistics.median(times["off"]), statistics.median(times["landlock"]),
            statistics.median(times["boxed"]))


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
    parser.add_argument("--runs", type=int, default=20, help="single runs measured one after the other, per server")
    parser.add_argument("--queued", type=int, default=50, help="runs queued at once for the drain figure")
    parser.add_argument("--workers", type=int, default=4, help="launcher workers (runs at once)")
    parser.add_argument("--find-links", type=Path, default=DEFAULT_WHEELS if DEFAULT_WHEELS.is_dir() else None,
                        help="local wheels for the environments (default: the test wheelhouse when present)")
    parser.add_argument("--phases", action="store_true",
                        help="trace every run and print the median time of each phase of a no-op run")
    parser.add_argument("--keep", action="store_true", help="keep the servers' data folders (their path is printed)")
    args = parser.parse_args()
    figures: dict[str, dict[str, list[float]]] = {mode: {"running": [], "done": [], "redeploy": [], "drain": []}
                                                  for mode in MODES}
    failed = dict.fromkeys(MODES, 0)
    place = (contextlib.nullcontext(tempfile.mkdtemp(prefix="wasdi-bench-launch-")) if args.keep
             else tempfile.TemporaryDirectory(prefix="wasdi-bench-launch-"))
    with place as scratch:
        if args.keep:
            print(f"the servers' data folders: {scratch}")
        benches = {mode: Bench(Path(scratch) / mode / "data", args.workers, args.find_links, isolation,
                               worlds=mode != "landlock", traced=args.phases)
                   for mode, isolation in MODES.items()}
        phases: list[str] = []
        try:
            for bench in benches.values():
                bench.upload("noop", {"myProcessor.py": NOOP, "pip.txt": "six\n" if args.find_links else ""})
            base = baseline(benches["off"].data_dir, "noop", 7)
            for _ in range(args.runs):  # alternating, so both see the machine in the same state
                for mode, bench in benches.items():
                    running, done = bench.one_run()
                    figures[mode]["running"].append(running)
                    figures[mode]["done"].append(done)
            for mode, bench in benches.items():
                drained, not_done = bench.drain(args.queued)
                figures[mode]["drain"].append(drained)
                failed[mode] += not_done
            for _ in range(5):
                for mode, bench in benches.items():
                    figures[mode]["redeploy"].append(bench.redeploy())
            if args.phases:
                phases = phase_table(benches, {"required": "in worlds", "landlock": "no world", "off": "unboxed"})
        finally:
            for bench in benches.values():
                bench.close()
    direct, unconfined, landlock, boxed = box_start_costs(20)
    median = {mode: {k: statistics.median(v) for k, v in f.items()} for mode, f in figures.items()}
    # Each boxed figure was measured right after its unboxed twin: the median of those pairs' ratios cancels
    # most of what other work on the machine does to both.
    paired = {key: statistics.median(b / u for b, u in zip(figures["required"][key], figures["off"][key],
                                                               strict=True))
              for key in ("running", "done", "redeploy")}
    worlds = statistics.median(w / t for w, t in zip(figures["required"]["done"], figures["landlock"]["done"],
                                                     strict=True))
    print(f"baseline: start the app's interpreter + import wasdi   {base * 1000:8.0f} ms")
    print(f"{'figure (medians)':40} {'boxed':>9} {'unboxed':>9} {'boxed/unboxed':>14} {'x baseline':>11}  target")
    rows = (("run -> RUNNING (no-op app)", "running", "< 1 s"), ("run -> DONE (no-op app)", "done", "< 2 s; <= 1.1x"),
            ("redeploy, unchanged pip.txt (cache)", "redeploy", "< 5 s; ~1x"))
    for label, key, target in rows:
        b, u = median["required"][key], median["off"][key]
        print(f"{label:40} {b * 1000:6.0f} ms {u * 1000:6.0f} ms {paired[key]:13.2f}x {b / base:10.1f}x  {target}")
    for mode, label in (("required", "boxed"), ("landlock", "no world"), ("off", "unboxed")):
        drain = median[mode]["drain"]
        print(f"{args.queued} queued no-op runs, {args.workers} workers, {label:8} drained in {drain:5.1f} s = "
              f"{args.queued / drain * 60:4.0f} runs/min{'' if not failed[mode] else f', {failed[mode]} not DONE'}")
    ratio = paired["done"]
    print(f"the box's own start (/bin/true): direct {direct * 1000:.1f} ms, through the trampoline unconfined "
          f"{unconfined * 1000:.1f} ms, boxed before worlds {landlock * 1000:.1f} ms, boxed in a world "
          f"{boxed * 1000:.1f} ms")
    print(f"run -> DONE (no-op app) in worlds {median['required']['done'] * 1000:.0f} ms / before worlds "
          f"{median['landlock']['done'] * 1000:.0f} ms = {worlds:.2f} ({'PASS' if worlds <= 1.15 else 'MISS'} "
          f"against <= 1.15; the median of {args.runs} back-to-back pairs)")
    print(f"run -> DONE boxed / unboxed = {ratio:.2f} ({'PASS' if ratio <= 1.1 else 'MISS'} against <= 1.1; "
          f"the median of {args.runs} back-to-back pairs)")
    for line in phases:
        print(line)


if __name__ == "__main__":
    main()
