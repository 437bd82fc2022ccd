"""How long a notebook takes to start: ``POST /console/create`` -> ``/console/ready`` true, against JupyterLab
started by hand (unboxed, no server) on the same machine in the same run.

Starts ``python -m wasdi_server serve`` on 127.0.0.1 (a free port, a fresh temporary data directory, one user
added with the management command, ``notebook_idle_minutes`` short so each lab stops by itself between
rounds), then, for ``--rounds`` rounds, alternately:

1. ours: a new workspace, ``/console/create``, then ``/console/ready`` every 50 ms until it answers true
   (the lab in the box, answering with its token);
2. baseline: ``python -m jupyterlab`` with the lab's own options and PATH, on a free port with a token and its
   own scratch folders, unboxed, polled on ``/api/status`` every 50 ms until it answers, then stopped.

Prints the p50 (and min / max) of each and ours as a ratio of the baseline.

    PYTHONPATH=src python bench/notebook.py [--rounds 5] [--timeout 600]

Needs the ``[notebook]`` extra.  Figures, not a test.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

SRC = Path(__file__).resolve().parents[1] / "src"
USER = "bench@example.org"
PASSWORD = "bench-password-1"
POLL = 0.05


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WASDI_SERVER_")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH", "")) if p)
    env.update(extra)
    return env


def start_server(data: Path, log_path: Path, idle_minutes: str = "0.02") -> tuple[subprocess.Popen[bytes], str]:
    add = subprocess.run([sys.executable, "-m", "wasdi_server", "user", "add", USER, "--password-stdin",
                          "--data-dir", str(data)], input=PASSWORD + "\n", text=True, env=child_env(),
                         capture_output=True, timeout=60, check=False)
    if add.returncode != 0:
        raise SystemExit(f"user add failed: {add.stderr}")
    port = free_port()
    env = child_env(WASDI_SERVER_NOTEBOOK_IDLE_MINUTES=idle_minutes)
    with open(log_path, "wb") as log:
        server = subprocess.Popen([sys.executable, "-m", "wasdi_server", "serve", "--data-dir", str(data), "--host",
                                   "127.0.0.1", "--port", str(port), "--sftp-port", "0", "--broker-port",
                                   str(free_port())], env=env,
                                  stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit("the server exited:\n" + log_path.read_text())
        try:
            if httpx.get(base_url + "/wasdi/hello", timeout=2).status_code == 200:
                return server, base_url
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    server.kill()
    raise SystemExit("the server did not start")


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def ours(http: httpx.Client, round_no: int, timeout: float) -> float:
    """Seconds from ``/console/create`` on a new workspace to ``/console/ready`` true."""
    ws = http.get("/ws/create", params={"name": f"nb-{round_no}"}).json()["stringValue"]
    started = time.monotonic()
    answer = http.post("/console/create", params={"workspaceId": ws}).json()
    if not answer.get("boolValue"):
        raise SystemExit(f"/console/create refused: {answer}")
    while time.monotonic() - started < timeout:
        if http.get("/console/ready", params={"workspaceId": ws}).json().get("boolValue"):
            elapsed = time.monotonic() - started
            # The lab stops by itself (idle); wait for that, so rounds do not pile labs up.
            while http.get("/console/ready", params={"workspaceId": ws}).json().get("boolValue"):
                time.sleep(0.2)
            return elapsed
        time.sleep(POLL)
    raise SystemExit(f"the notebook of round {round_no} was not ready within {timeout} s")


def baseline(timeout: float) -> float:
    """Seconds from starting ``python -m jupyterlab`` by hand to its first answer."""
    scratch = Path(tempfile.mkdtemp(prefix="bench-lab-"))
    token, port = secrets.token_urlsafe(32), free_port()
    # The lab's own command line and PATH (less the box, the ipc transport and the official library's set-up).
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin", "HOME": str(scratch),
           "JUPYTER_TOKEN": token,
           "JUPYTER_RUNTIME_DIR": str(scratch / "runtime"), "JUPYTER_DATA_DIR": str(scratch / "data"),
           "JUPYTER_CONFIG_DIR": str(scratch / "config"), "LANG": "C.UTF-8"}
    argv = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--ServerApp.root_dir={scratch}",
            "--ServerApp.terminals_enabled=False", "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", "--LabApp.extension_manager=readonly"]
    if os.geteuid() == 0:
        argv.append("--allow-root")
    started = time.monotonic()
    lab = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    try:
        while time.monotonic() - started < timeout:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/api/status", headers={"Authorization": f"token {token}"},
                             timeout=2).status_code == 200:
                    return time.monotonic() - started
            except httpx.TransportError:
                pass
            if lab.poll() is not None:
                raise SystemExit("jupyterlab started by hand exited")
            time.sleep(POLL)
        raise SystemExit(f"jupyterlab started by hand did not answer within {timeout} s")
    finally:
        stop(lab)
        shutil.rmtree(scratch, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=600.0, help="the whole run's limit, in seconds")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-notebook-"))
    server, base_url = start_server(work / "data", work / "server.log")
    def give_up() -> None:
        server.kill()
        os._exit(3)

    watchdog = threading.Timer(args.timeout, give_up)
    watchdog.daemon = True
    watchdog.start()
    try:
        login = httpx.post(base_url + "/auth/login", json={"userId": USER, "userPassword": PASSWORD}, timeout=30)
        token = login.json()["sessionId"]
        mine: list[float] = []
        bare: list[float] = []
        with httpx.Client(base_url=base_url, headers={"x-session-token": token}, timeout=30) as http:
            for i in range(args.rounds):
                # Alternated, so both are measured under the same load of the machine.
                mine.append(ours(http, i, 120))
                bare.append(baseline(120))
        p50, base50 = statistics.median(mine), statistics.median(bare)
        print(f"notebook create -> ready ({args.rounds} rounds, p50 / min / max):")
        print(f"  wasdi-server /console/create -> /console/ready true  {p50:6.2f} s  "
              f"{min(mine):6.2f} / {max(mine):6.2f}")
        print(f"  jupyterlab started by hand -> answering             {base50:6.2f} s  "
              f"{min(bare):6.2f} / {max(bare):6.2f}")
        print(f"  ratio (ours / by hand)                               {p50 / base50:6.2f}x")
        return 0
    finally:
        watchdog.cancel()
        stop(server)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
