"""Starting ``wasdi-server serve`` as a newcomer does: on another port (``make run PORT=...``, or the settings when
make is given none), with a port already taken (one sentence naming the port and how to pick another, and the
first admin's one-time password kept for the start that works), and stopping it with SIGINT or SIGTERM however
it was started (a script's background job inherits SIGINT ignored)."""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from tests.e2e.conftest import EXIT_TIMEOUT, free_port, run_cli, server_env
from tests.e2e.test_readme_tour import MAKE_INHERITED

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
LOG_LINE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ [A-Z]+ ")


@contextmanager
def taken_port(port: int = 0) -> Iterator[int]:
    """A port some other program listens on, for the duration."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", port))
        holder.listen()
        yield int(holder.getsockname()[1])


def serve(data_dir: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``wasdi-server serve --init-admin`` as ``make run`` runs it, expected to refuse to start."""
    command = [sys.executable, "-m", "wasdi_server", "serve", "--data-dir", str(data_dir), "--host", "127.0.0.1",
               "--init-admin", *args]
    try:
        return subprocess.run(command, env=env or server_env(), capture_output=True, text=True, timeout=EXIT_TIMEOUT,
                              stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"the server did not exit (it was expected to refuse to start): {e.stdout!r} {e.stderr!r}")


def the_one_sentence(done: subprocess.CompletedProcess[str]) -> str:
    """The refusal: exit 1, one line on stderr, no traceback, no password printed."""
    # The start-up log (timestamped lines: how apps will be boxed) comes first; the refusal is what is left.
    lines = [line for line in done.stderr.splitlines() if line.strip() and not LOG_LINE.match(line)]
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    assert len(lines) == 1 and lines[0].startswith("wasdi-server: "), done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert "password" not in done.stdout + done.stderr
    return lines[0]


def users(data_dir: Path) -> str:
    listed = run_cli("user", "list", "--data-dir", str(data_dir))
    assert listed.returncode == 0, listed.stderr
    return listed.stdout


def start(command: list[str], env: dict[str, str], log: Path, **popen: object) -> subprocess.Popen[bytes]:
    with open(log, "wb") as out:
        return subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                **popen)  # type: ignore[call-overload]


def wait_until_serving(proc: subprocess.Popen[bytes], port: int, log: Path, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text(errors="replace")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/wasdi/hello", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"no answer on port {port}:\n{log.read_text(errors='replace')}")


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait(10)


def test_a_busy_api_port_is_one_sentence_and_the_first_admin_waits_for_a_start_that_works(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    with taken_port() as port:
        refusal = the_one_sentence(serve(data_dir, "--port", str(port), "--broker-port", str(free_port())))
    assert f"port {port} on 127.0.0.1" in refusal and "already in use" in refusal
    for way in ("make run PORT=", "--port", "WASDI_SERVER_PORT"):
        assert way in refusal, refusal
    assert "admin@wasdi.local" not in users(data_dir)  # the failed start created no account
    port = free_port()
    log = tmp_path / "server.log"
    server = start([sys.executable, "-m", "wasdi_server", "serve", "--data-dir", str(data_dir), "--port", str(port),
                    "--broker-port", str(free_port()), "--init-admin"], server_env(), log)
    try:
        wait_until_serving(server, port, log)
        password = re.search(r"password: (\S+)", log.read_text()).group(1)  # type: ignore[union-attr]
        r = httpx.post(f"http://127.0.0.1:{port}/auth/login", json={"userId": "admin@wasdi.local",
                                                                     "userPassword": password})
        assert r.status_code == 200 and r.json().get("sessionId"), r.text
    finally:
        stop(server)


def test_a_busy_broker_port_is_one_sentence_naming_the_port_and_how_to_pick_another(tmp_path: Path) -> None:
    api = free_port()
    with taken_port() as broker:
        refusal = the_one_sentence(serve(tmp_path / "data", "--port", str(api), "--broker-port", str(broker)))
    assert f"port {broker} on 127.0.0.1" in refusal and "message broker" in refusal
    assert "--broker-port" in refusal and "WASDI_SERVER_BROKER_PORT" in refusal
    assert "admin@wasdi.local" not in users(tmp_path / "data")


def test_the_broker_on_the_api_port_plus_one_says_so_when_that_port_is_busy(tmp_path: Path) -> None:
    for _ in range(20):  # a free port whose next one can be taken
        api = free_port()
        try:
            with taken_port(api + 1) as broker:
                refusal = the_one_sentence(serve(tmp_path / "data", "--port", str(api)))
            break
        except OSError:
            continue
    else:
        pytest.fail("no two consecutive free ports")
    assert f"port {broker} on 127.0.0.1" in refusal and "the API's port + 1" in refusal


def test_a_busy_sftp_port_is_one_sentence_naming_the_port_and_how_to_pick_another(tmp_path: Path) -> None:
    with taken_port() as sftp:
        refusal = the_one_sentence(serve(tmp_path / "data", "--port", str(free_port()), "--broker-port",
                                         str(free_port()), "--sftp-port", str(sftp)))
    assert f"port {sftp} on 127.0.0.1" in refusal and "SFTP" in refusal
    assert "--sftp-port" in refusal and "WASDI_SERVER_SFTP_PORT" in refusal
    assert "admin@wasdi.local" not in users(tmp_path / "data")


def make_run(*variables: str) -> list[str]:
    """The commands of ``make run VARIABLES...`` (make's own expansion, with this venv)."""
    env = {k: v for k, v in os.environ.items() if k not in MAKE_INHERITED}
    done = subprocess.run(["make", "--silent", "--dry-run", "--old-file", ".venv/.stamp-run", "run", f"BIN={BIN}",
                           *variables], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return [line.strip() for line in done.stdout.splitlines() if line.strip()]


def test_make_run_passes_a_port_only_when_given_one_so_the_settings_choose_otherwise(tmp_path: Path) -> None:
    assert "--port 18081" in make_run("PORT=18081")[-1]
    assert "--host 0.0.0.0" in make_run("HOST=0.0.0.0")[-1]
    serve_line = make_run()[-1]
    assert "--port" not in serve_line and "--host" not in serve_line
    # WASDI_SERVER_PORT (docs/server.md) now decides where `make run` serves.
    port = free_port()
    env = {**server_env(), "WASDI_SERVER_PORT": str(port), "WASDI_SERVER_BROKER_PORT": str(free_port())}
    command = [*shlex.split(serve_line)]
    command[command.index("--data-dir") + 1] = str(tmp_path / "data")
    log = tmp_path / "server.log"
    server = start(command, env, log)
    try:
        wait_until_serving(server, port, log)
        assert f"WASDI server on http://127.0.0.1:{port}" in log.read_text()
    finally:
        stop(server)


def ignoring_sigint() -> None:
    """As a script's background job starts (``make run &``): SIGINT ignored, inherited across exec."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_server_started_as_a_background_job_stops_cleanly_on_a_stop_signal(tmp_path: Path,
                                                                            signal_number: int) -> None:
    data_dir = tmp_path / "data"
    port = free_port()
    log = tmp_path / "server.log"
    server = start([sys.executable, "-m", "wasdi_server", "serve", "--data-dir", str(data_dir), "--port", str(port),
                    "--broker-port", str(free_port()), "--init-admin"], server_env(), log, preexec_fn=ignoring_sigint)
    try:
        wait_until_serving(server, port, log)
        password = re.search(r"password: (\S+)", log.read_text()).group(1)  # type: ignore[union-attr]
        server.send_signal(signal_number)
        try:
            code = server.wait(10)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the server ignored {signal.Signals(signal_number).name}:\n{log.read_text()}")
        assert code == 0, log.read_text()
        assert "Traceback" not in log.read_text()
    finally:
        stop(server)
    # The data is intact: the store opens, and the admin the first start made logs in on the next one.
    check = run_cli("store", "check", "--data-dir", str(data_dir))
    assert check.returncode == 0, check.stdout + check.stderr
    again = start([sys.executable, "-m", "wasdi_server", "serve", "--data-dir", str(data_dir), "--port", str(port),
                   "--broker-port", str(free_port())], server_env(), tmp_path / "again.log")
    try:
        wait_until_serving(again, port, tmp_path / "again.log")
        r = httpx.post(f"http://127.0.0.1:{port}/auth/login", json={"userId": "admin@wasdi.local",
                                                                     "userPassword": password})
        assert r.status_code == 200 and r.json().get("sessionId"), r.text
    finally:
        stop(again)
