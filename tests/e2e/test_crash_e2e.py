"""Workspace deletion on a real server killed with SIGKILL under many concurrent /ws/delete calls: after
every restart, every sharing names an existing workspace and user, every workspace folder has its record
and every record its folder (no workspace half deleted, no orphan folder)."""

from __future__ import annotations

import queue
import threading
from pathlib import Path

import httpx
import pytest
from tests.e2e import conftest as e2e
from tests.server.user_estate import stored_documents

from wasdi_server import load_settings
from wasdi_server.services import build_services

pytestmark = pytest.mark.e2e

ALICE, BOB = e2e.ALICE, e2e.BOB
ROUNDS = 3
WORKSPACES_PER_ROUND = 32
CALLERS = 8


def populate(data_dir: Path, tag: str) -> list[str]:
    """Alice's workspaces, each shared with bob, with a process record and a file (no server running)."""
    services = build_services(load_settings(data_dir=data_dir, environ={}))
    try:
        alice = services.users.active_user(ALICE)
        ids = []
        for i in range(WORKSPACES_PER_ROUND):
            ws = services.workspaces.create(alice, f"{tag}-{i}")
            (services.workspaces.folder(ws) / "result.tif").write_bytes(b"pixels")
            services.processes.create(alice, ws["workspaceId"], "INGEST", "result.tif")
            services.sharing.share(alice, services.workspaces.resource(ws), BOB, "read", notify=False)
            ids.append(ws["workspaceId"])
        return ids
    finally:
        services.close()


def broken_invariants(data_dir: Path) -> list[str]:
    docs = stored_documents(data_dir)
    # The engine's files key documents by their own ids: the store's keys are the documents' fields.
    users = {u["userId"] for u in docs.get("users", {}).values()}
    workspaces = {w["workspaceId"]: w for w in docs.get("workspaces", {}).values()}
    sharings = list(docs.get("sharings", {}).values())
    broken = [f"sharing {s['sharingId']} names a missing user" for s in sharings if s["userId"] not in users]
    broken += [f"sharing {s['sharingId']} names a missing workspace" for s in sharings
               if s["resourceType"] == "workspace" and s["resourceId"] not in workspaces]
    broken += [f"process {p['processObjId']} names a missing workspace" for p in docs.get("processes", {}).values()
               if p.get("workspaceId") not in workspaces]
    files = data_dir / "files"
    owners = list(files.iterdir()) if files.is_dir() else []
    folders = {(owner.name, ws.name) for owner in owners for ws in owner.iterdir()}
    records = {(w["userId"], w["workspaceId"]) for w in workspaces.values()}
    broken += [f"folder {owner}/{ws} has no record" for owner, ws in sorted(folders - records)]
    broken += [f"workspace {ws} of {owner} has no folder" for owner, ws in sorted(records - folders)]
    broken += [f"intent {i['intentId']} left pending" for i in docs.get("intents", {}).values()]
    return broken


def delete_concurrently_then_kill(server: e2e.RunningServer, ids: list[str]) -> list[str]:
    """``CALLERS`` callers delete ``ids`` over HTTP; the server is killed a third of the way in, while
    the other callers' deletions are under way.  The ids whose deletion was answered 200."""
    token = server.token(ALICE)
    todo: queue.Queue[str] = queue.Queue()
    for workspace_id in ids:
        todo.put(workspace_id)
    deleted: list[str] = []
    enough = threading.Event()

    def call() -> None:
        with httpx.Client(base_url=server.base_url, headers={"x-session-token": token}, timeout=60) as client:
            while True:
                try:
                    workspace_id = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    r = client.delete("/ws/delete", params={"workspace": workspace_id})
                except httpx.TransportError:  # the server is killed under it
                    return
                assert r.status_code == 200, r.text
                deleted.append(workspace_id)
                if len(deleted) >= len(ids) // 3:
                    enough.set()

    callers = [threading.Thread(target=call) for _ in range(CALLERS)]
    for caller in callers:
        caller.start()
    enough.wait(30)
    server.kill()
    for caller in callers:
        caller.join(30)
    return deleted


def test_workspace_deletes_killed_midway_leave_no_half_deleted_workspace(servers, data_dir: Path) -> None:
    interrupted = 0
    for round_number in range(ROUNDS):
        ids = populate(data_dir, f"r{round_number}")
        deleted = delete_concurrently_then_kill(servers.start(data_dir, threads=CALLERS), ids)
        if stored_documents(data_dir).get("intents"):
            interrupted += 1

        restarted = servers.start(data_dir)  # finishes the interrupted deletions before serving
        assert restarted.stop() == 0
        assert broken_invariants(data_dir) == []
        remaining = {w["workspaceId"] for w in stored_documents(data_dir).get("workspaces", {}).values()}
        assert not remaining & set(deleted), "a deletion answered 200 was undone"
    assert interrupted, "no kill came during a deletion: the restart had nothing to finish"
