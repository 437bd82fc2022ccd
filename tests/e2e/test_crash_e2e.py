"""Workspace deletion and creation on a real server killed with SIGKILL under many concurrent /ws/delete or
/ws/create calls: after every restart the invariants of tests/e2e/crash_rounds.py hold (every sharing names an
existing workspace and user, every workspace folder has its record and every record its folder: no workspace
half deleted or half created), no workspace still there lost its sharings, and nothing answered 200 is undone."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from tests.e2e import conftest as e2e
from tests.e2e import crash_rounds as crash

from wasdi_server import load_settings
from wasdi_server.composition import build_services

pytestmark = pytest.mark.e2e

ALICE, BOB = e2e.ALICE, e2e.BOB
ROUNDS = 3
WORKSPACES_PER_ROUND = 32


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


def delete_workspace(client: httpx.Client, workspace_id: str) -> httpx.Response:
    return client.delete("/ws/delete", params={"workspace": workspace_id})


def test_workspace_deletes_killed_midway_leave_no_half_deleted_workspace(servers, data_dir: Path) -> None:
    interrupted = 0
    for round_number in range(ROUNDS):
        ids = populate(data_dir, f"r{round_number}")
        seen = crash.call_concurrently_then_kill(servers.start(data_dir, threads=crash.CALLERS), ALICE, ids,
                                                 delete_workspace)
        assert seen.refused == []
        interrupted += crash.pending_intents(data_dir)

        stored = crash.restart_and_check(servers, data_dir)  # finishes the interrupted deletions before serving
        remaining = {w["workspaceId"] for w in stored.get("workspaces", {}).values()}
        assert not remaining & set(seen.answered), "a deletion answered 200 was undone"
        assert crash.stripped_of_sharings(stored, "workspace", ids) == [], "a deletion left a workspace unshared"
    assert interrupted, "no kill came during a deletion: the restart had nothing to finish"


CREATIONS_PER_ROUND = 60


def create_workspace(client: httpx.Client, name: str) -> httpx.Response:
    return client.get("/ws/create", params={"name": name})


def test_workspace_creations_killed_midway_leave_no_record_without_folder(servers, data_dir: Path) -> None:
    cut_off = 0
    for round_number in range(ROUNDS):
        names = [f"new-{round_number}-{i}" for i in range(CREATIONS_PER_ROUND)]
        seen = crash.call_concurrently_then_kill(servers.start(data_dir, threads=crash.CALLERS), ALICE, names,
                                                 create_workspace)
        assert seen.refused == []
        cut_off += seen.cut_off

        stored = crash.restart_and_check(servers, data_dir)  # no folder without record, no record without folder
        created = {w["name"] for w in stored.get("workspaces", {}).values()}
        assert set(seen.answered) <= created, "a creation answered 200 was lost"
    assert cut_off, "no kill came during a creation"
