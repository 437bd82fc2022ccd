"""Durability of a real server process: SIGKILL under write load, concurrent writers, the data-dir lock,
and corrupt data files.

An acknowledged write is a GET /ws/create that came back as HTTP 200 with a ``stringValue`` (the new
workspace id); whatever was acknowledged must survive a SIGKILL of the server.
"""

from __future__ import annotations

import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from tests.child_signals import started_as_a_background_job

pytestmark = pytest.mark.e2e

WRITERS = 8
LOAD_SECONDS = 1.5


@dataclass
class Writer:
    """One thread creating workspaces over its own keep-alive connection."""

    base_url: str
    token: str
    number: int
    count: int
    stop: threading.Event
    acked: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    transport_error: bool = False
    finished: bool = False

    def run(self) -> None:
        with httpx.Client(base_url=self.base_url, headers={"x-session-token": self.token}, timeout=30) as client:
            for i in range(self.count):
                if self.stop.is_set():
                    return
                try:
                    r = client.get("/ws/create", params={"name": f"writer {self.number} ws {i}"})
                    body = r.json() if r.status_code == 200 else None
                except httpx.TransportError:  # the server is gone: this request is not acknowledged
                    self.transport_error = True
                    return
                if isinstance(body, dict) and body.get("stringValue"):
                    self.acked.append(body["stringValue"])
                else:
                    self.failures.append(f"{r.status_code} {r.text[:200]}")
        self.finished = True


def start_writers(server, token: str, count: int) -> tuple[list[Writer], list[threading.Thread], threading.Event]:
    stop = threading.Event()
    writers = [Writer(server.base_url, token, n, count, stop) for n in range(WRITERS)]
    threads = [threading.Thread(target=w.run, name=f"writer-{w.number}", daemon=True) for w in writers]
    for t in threads:
        t.start()
    return writers, threads, stop


def join(threads: list[threading.Thread], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    assert not any(t.is_alive() for t in threads), "writer threads hung"


def test_acknowledged_writes_survive_sigkill(servers, data_dir: Path, accounts) -> None:
    server = servers.start(data_dir)
    token = server.login(accounts.alice)
    writers, threads, stop = start_writers(server, token, count=100_000)
    time.sleep(LOAD_SECONDS)
    still_writing = [w.number for w in writers if not w.finished and not w.failures]
    acked_before_kill = sum(len(w.acked) for w in writers)
    server.kill()  # os.kill(pid, SIGKILL) while the writers are mid-request
    stop.set()
    join(threads)

    assert len(still_writing) == WRITERS, "every writer must still be writing when the server is killed"
    assert acked_before_kill > 0
    assert [f for w in writers for f in w.failures] == []
    acked = [ws for w in writers for ws in w.acked]
    assert len(acked) == len(set(acked))

    restarted = servers.start(data_dir)  # the dead process's lock must not block
    found = restarted.workspace_ids(accounts.alice)  # with a new login
    print(f"acknowledged {len(acked)} ({acked_before_kill} before the kill), found {len(found)} after restart")
    missing = set(acked) - found
    assert not missing, f"{len(missing)} of {len(acked)} acknowledged workspaces lost after SIGKILL"
    # At most one request per writer was in flight (committed, maybe, but never acknowledged).
    assert len(found) - len(acked) <= WRITERS
    for ws_id in acked:
        assert (data_dir / "files" / accounts.alice / ws_id).is_dir()
    assert list((data_dir / "db").glob(".*.tmp")) == [], "temp files of the killed writer were left behind"

    with restarted.sdk(accounts.alice) as sdk:  # and the store still takes writes
        new_id = sdk.workspaces.create(name="after the crash").string_value
    assert restarted.workspace_ids(accounts.alice) == found | {new_id}


def test_concurrent_writers_lose_nothing(servers, data_dir: Path, accounts) -> None:
    per_writer = 15
    server = servers.start(data_dir)
    writers, threads, _ = start_writers(server, server.login(accounts.alice), count=per_writer)
    join(threads, timeout=60)
    assert [f for w in writers for f in w.failures] == []
    assert all(w.finished and not w.transport_error for w in writers)
    acked = {ws for w in writers for ws in w.acked}
    assert len(acked) == WRITERS * per_writer
    assert server.workspace_ids(accounts.alice) == acked
    with server.http(accounts.alice) as c:
        names = {w["workspaceName"] for w in c.get("/ws/byuser").json()}
    assert names == {f"writer {n} ws {i}" for n in range(WRITERS) for i in range(per_writer)}

    server.stop()
    again = servers.start(data_dir)
    assert again.workspace_ids(accounts.alice) == acked


def test_concurrent_creates_of_one_name_get_distinct_names(server, accounts) -> None:
    """The taken-name suffix is computed under the collection's lock: no two workspaces share a name."""
    token = server.token(accounts.alice)
    failures: list[str] = []

    def create(count: int) -> None:
        with httpx.Client(base_url=server.base_url, headers={"x-session-token": token}, timeout=30) as c:
            for _ in range(count):
                r = c.get("/ws/create", params={"name": "same"})
                if r.status_code != 200 or not (r.json() or {}).get("stringValue"):
                    failures.append(r.text)

    threads = [threading.Thread(target=create, args=(5,)) for _ in range(WRITERS)]
    for t in threads:
        t.start()
    join(threads)
    assert failures == []
    with server.http(accounts.alice) as c:
        names = [w["workspaceName"] for w in c.get("/ws/byuser").json()]
    assert len(names) == WRITERS * 5
    assert len(set(names)) == len(names), sorted(names)
    assert "same" in names


def test_a_running_server_holds_its_data_dir(servers, data_dir: Path, accounts) -> None:
    """A second server on the data dir of a running server is refused; a management command goes through it."""
    first = servers.start(data_dir)
    second = servers.run_to_exit(data_dir)
    assert second.returncode != 0
    message = second.stdout + second.stderr
    assert str(data_dir) in message and "in use" in message, message
    assert "Traceback" not in message

    add = servers.cli("user", "add", "dave@example.org", "--password-stdin", "--data-dir", str(data_dir),
                      stdin="dave-password-1\n")
    assert add.returncode == 0, add.stderr
    assert add.stdout == "added user dave@example.org\n"
    assert first.login("dave@example.org", "dave-password-1")

    # The first one is unharmed.
    assert first.running()
    with first.sdk(accounts.alice) as sdk:
        assert sdk.utility.hello().string_value == "Hello Wasdi!!"
        sdk.workspaces.create(name="still fine")


@pytest.mark.parametrize("signal_number", [
    signal.SIGINT,
    signal.SIGTERM,
], ids=["SIGINT", "SIGTERM"])
def test_a_stop_signal_shuts_down_cleanly(servers, data_dir: Path, accounts, signal_number: int) -> None:
    with started_as_a_background_job():  # the server still hears SIGINT when the suite runs as `make test &`
        server = servers.start(data_dir)
    with server.sdk(accounts.alice) as sdk:
        ws_id = sdk.workspaces.create(name="kept").string_value
    server.proc.send_signal(signal_number)
    assert server.proc.wait(15) == 0, server.output()
    assert servers.start(data_dir).workspace_ids(accounts.alice) == {ws_id}


@pytest.mark.parametrize("garbage", [
    b"\x00\xff not json at all {",
    b'{"workspaces": {"1": {"workspaceId": "cut-off',
    b"[1, 2, 3]",
    b'{"workspaces": {"1": {"workspaceId": "a"}, "2": {"workspaceId": "a"}}}',
], ids=["binary", "truncated", "wrong-shape", "duplicate-key"])
def test_corrupt_data_file_stops_the_server_and_is_left_alone(servers, data_dir_with_workspace: Path,
                                                             garbage: bytes) -> None:
    # data_dir_with_workspace: a real server created a workspace in it, then stopped.
    target = data_dir_with_workspace / "db" / "workspaces.json"
    assert b"precious" in target.read_bytes()
    target.write_bytes(garbage)

    refused = servers.run_to_exit(data_dir_with_workspace)
    assert refused.returncode != 0
    message = refused.stdout + refused.stderr
    assert str(target) in message and "corrupt" in message.lower(), message
    assert "Traceback" not in message
    assert target.read_bytes() == garbage
    assert [p.name for p in target.parent.iterdir() if p.name.startswith(".workspaces.json")] == []
