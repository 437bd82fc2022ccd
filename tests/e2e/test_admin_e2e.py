"""The admin console on real server processes: an admin finding, re-sharing and deleting a user with
nothing of theirs left; a deletion killed with SIGKILL and finished by the next start; cleanOldProcesses
closing a stale record and sparing a live one."""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from tests.e2e import conftest as e2e
from tests.server.user_estate import build_estate, leftovers, owned_keys, stored_documents

from wasdi_server import load_settings
from wasdi_server.composition import build_services

pytestmark = pytest.mark.e2e

ALICE, BOB, ADMIN = e2e.ALICE, e2e.BOB, e2e.ADMIN


def populate(data_dir: Path, workspaces: int) -> dict[str, str]:
    """Alice's estate (and one of bob's) written by the services while no server runs."""
    services = build_services(load_settings(data_dir=data_dir, environ={}))
    try:
        for user_id in (ALICE, BOB):
            if not services.subscriptions.list_for(services.users.active_user(user_id)):
                services.subscriptions.create_trial(user_id)
        kept = build_estate(services, ALICE, BOB, "a", workspaces=workspaces)
        build_estate(services, BOB, ADMIN, "b", workspaces=2)
        return kept
    finally:
        services.close()


def test_admin_finds_reshares_and_deletes_a_user(servers, data_dir: Path) -> None:
    populate(data_dir, workspaces=2)
    server = servers.start(data_dir)
    with server.sdk(ADMIN) as admin, server.sdk(BOB) as bob:
        assert [u.user_id for u in admin.admin.find_users("alice")] == [ALICE]
        found = admin.admin.find_workspaces("a-ws-")
        assert {w.owner_user_id for w in found} == {ALICE} and len(found) == 2
        target = found[0].workspace_id
        admin.admin.remove_resource_permission(resource_type="WORKSPACE", resource_id=target, user_id=BOB)
        assert target not in {w.workspace_id for w in bob.workspaces.list()}
        admin.admin.add_resource_permission(resource_type="WORKSPACE", resource_id=target, user_id=BOB,
                                            rights="read")
        assert target in {w.workspace_id for w in bob.workspaces.list()}
        bob_before = {w.workspace_id for w in bob.workspaces.list() if w.owner_user_id != ALICE}

        admin.admin.delete_user(ALICE)

        assert admin.admin.find_users("alice") == []
        assert {w.workspace_id for w in bob.workspaces.list()} == bob_before
    assert server.stop() == 0
    assert leftovers(data_dir, ALICE) == []
    assert leftovers(data_dir, BOB)  # bob keeps everything of his


def test_a_deletion_killed_midway_is_finished_by_the_next_start(servers, data_dir: Path) -> None:
    kept = populate(data_dir, workspaces=40)
    bob_before = owned_keys(data_dir, BOB)
    between = bob_before & owned_keys(data_dir, ALICE)  # sharings from one of them to the other
    server = servers.start(data_dir)
    token = server.token(ADMIN)

    def delete() -> None:
        with contextlib.suppress(httpx.TransportError):  # the server is killed under it
            httpx.delete(server.url("/admin/users"), params={"userId": ALICE},
                         headers={"x-session-token": token}, timeout=60)

    caller = threading.Thread(target=delete)
    caller.start()

    def intent_recorded() -> bool:
        return ALICE in json.dumps(stored_documents(data_dir).get("intents", {}))

    deadline = time.monotonic() + 20
    while not intent_recorded() and time.monotonic() < deadline:
        time.sleep(0.002)
    time.sleep(0.02)  # into the deletion (40 workspaces take far longer to remove)
    server.kill()
    caller.join(30)
    half_done = leftovers(data_dir, ALICE)
    assert half_done, "the kill came after the deletion finished: nothing was left to test the restart with"
    assert intent_recorded(), "the intent must still be recorded after the kill"

    restarted = servers.start(data_dir)  # finishes the intent before serving
    with httpx.Client(base_url=restarted.base_url, timeout=30) as client:
        login = client.post("/auth/login", json={"userId": ALICE, "userPassword": e2e.PASSWORD}).json()
        assert not login.get("sessionId")
    assert restarted.stop() == 0
    assert leftovers(data_dir, ALICE) == []
    # bob lost only the sharings between him and alice, and gained nothing
    assert owned_keys(data_dir, BOB) == bob_before - between
    assert ("workspaces", kept["workspace"]) in bob_before
    assert not intent_recorded()


class Trickle(http.server.BaseHTTPRequestHandler):
    """Sends a few bytes, then holds the response open until the test releases it."""

    release = threading.Event()

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "8")
        self.end_headers()
        self.wfile.write(b"slow")
        self.wfile.flush()
        self.release.wait(60)
        self.wfile.write(b"done")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def slow_source() -> Iterator[str]:
    Trickle.release = threading.Event()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Trickle)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/slow.bin"
    finally:
        Trickle.release.set()
        httpd.shutdown()
        httpd.server_close()


def test_clean_old_processes_closes_a_stale_record_and_spares_a_live_one(servers, data_dir: Path,
                                                                         monkeypatch: pytest.MonkeyPatch,
                                                                         slow_source: str) -> None:
    # The factory reads server_env from the conftest module pytest loaded (its own globals).
    factory_globals = type(servers).start.__globals__
    base_env = factory_globals["server_env"]
    monkeypatch.setitem(factory_globals, "server_env",
                        lambda: {**base_env(), "WASDI_SERVER_STALE_PROCESS_GRACE_SECONDS": "1"})
    (data_dir / "imports").mkdir(exist_ok=True)
    (data_dir / "imports" / "small.txt").write_text("small")
    server = servers.start(data_dir)
    with server.http(ALICE) as alice, server.http(ADMIN) as admin:
        ws = alice.get("/ws/create", params={"name": "clean"}).json()["stringValue"]

        def queue(url: str, name: str) -> str:
            answer = alice.post("/filebuffer/download", json={"fileUrl": url, "name": name, "workspace": ws}).json()
            assert answer["boolValue"], answer
            return str(answer["stringValue"])

        def status(pid: str) -> str:
            return str(alice.get("/process/getstatusbyid", params={"procws": pid}).text)

        def wait_for(pid: str, wanted: str) -> None:
            deadline = time.monotonic() + 20
            while status(pid) != wanted and time.monotonic() < deadline:
                time.sleep(0.05)
            assert status(pid) == wanted

        finished = queue(f"file://{data_dir / 'imports' / 'small.txt'}", "small.txt")
        wait_for(finished, "DONE")
        # A client sets the finished record back to RUNNING: no worker runs it any more, it is stale.
        assert alice.get("/process/updatebyid", params={"procws": finished, "status": "RUNNING",
                                                        "perc": 50}).status_code == 200
        live = queue(slow_source, "slow.bin")
        wait_for(live, "RUNNING")
        time.sleep(1.5)  # both now older than the grace period

        assert admin.delete("/admin/cleanOldProcesses").status_code == 200
        assert status(finished) == "ERROR"
        assert status(live) == "RUNNING"
        assert alice.delete("/admin/cleanOldProcesses").status_code == 403

        Trickle.release.set()
        wait_for(live, "DONE")
