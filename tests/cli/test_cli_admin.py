"""``wasdi admin ...`` against the in-process server."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.cli.conftest import ALICE, BOB, Cli, lines

ROOT = "root@example.org"
ROOT_PASSWORD = "password-root"


@pytest.fixture
def root(cli: Cli) -> Cli:
    cli.app.services.users.add(ROOT, ROOT_PASSWORD, admin=True, name="Root", surname="Admin")
    cli.login(ROOT, ROOT_PASSWORD)
    return cli


def alice_workspace(cli: Cli, name: str) -> str:
    services = cli.app.services
    return str(services.workspaces.create(services.users.active_user(ALICE), name)["workspaceId"])


def test_users_list_find_show_summary(root: Cli) -> None:
    listed = root("admin", "users", "list", "-q")
    assert listed.exit_code == 0, listed.output
    assert lines(listed.stdout) == [ALICE, BOB, ROOT]
    desc = root("admin", "users", "list", "--sort", "name", "--desc", "--limit", "2", "--json")
    assert [u["userId"] for u in json.loads(desc.stdout)] == [ROOT, BOB]
    found = root("admin", "users", "find", "lidd")
    assert found.exit_code == 0 and ALICE in found.stdout and "User" in found.stdout
    shown = root("admin", "users", "show", ALICE, "--json")
    assert json.loads(shown.stdout)["surname"] == "Liddell"
    summary = root("admin", "users", "summary", "--json")
    assert json.loads(summary.stdout)["totalUsers"] == 3
    bad_sort = root("admin", "users", "list", "--sort", "age")
    assert bad_sort.exit_code == 2 and "name, surname or userId" in bad_sort.output


def test_users_by_nickname_update_and_unknown(root: Cli) -> None:
    updated = root("admin", "users", "update", ALICE, "--nickname", "wonder", "--role", "developer")
    assert updated.exit_code == 0, updated.output
    shown = root("admin", "users", "show", "wonder", "--json")
    assert json.loads(shown.stdout)["role"] == "DEVELOPER"
    unknown = root("admin", "users", "show", "ghost@example.org")
    assert unknown.exit_code == 1 and "no user 'ghost@example.org'" in unknown.output
    nothing = root("admin", "users", "update", ALICE)
    assert nothing.exit_code == 2 and "nothing to change" in nothing.output
    bad_role = root("admin", "users", "update", ALICE, "--role", "king")
    assert bad_role.exit_code == 1 and "role" in bad_role.output


def test_users_delete_needs_confirmation_then_removes_everything(root: Cli) -> None:
    alice_workspace(root, "doomed")
    refused = root("admin", "users", "delete", ALICE)
    assert refused.exit_code == 2 and "--yes" in refused.output
    deleted = root("admin", "users", "delete", ALICE, "--yes")
    assert deleted.exit_code == 0, deleted.output
    assert root.app.services.users.get(ALICE) is None
    assert root.app.services.workspaces.workspaces.find(userId=ALICE) == []


def test_lookups(root: Cli) -> None:
    ws = alice_workspace(root, "glacier melt")
    found = root("admin", "workspaces", "glacier", "-q")
    assert lines(found.stdout) == [ws]
    resources = root("admin", "resources", "workspace", "melt", "--json")
    assert json.loads(resources.stdout)[0]["resourceId"] == ws
    assert "No app matches" in root("admin", "apps", "glacier").output
    short = root("admin", "workspaces", "gl")
    assert short.exit_code == 1 and "at least 3 characters" in short.output
    bad_type = root("admin", "resources", "node", "melt")
    assert bad_type.exit_code == 2 and "WORKSPACE" in bad_type.output


def test_permissions_add_list_remove_by_name(root: Cli) -> None:
    ws = alice_workspace(root, "shared basin")
    added = root("admin", "permissions", "add", "workspace", "shared basin", BOB, "--write")
    assert added.exit_code == 0, added.output
    listed = root("admin", "permissions", "list", "--user", BOB, "--json")
    assert [(p["resourceId"], p["permissions"]) for p in json.loads(listed.stdout)] == [(ws, "write")]
    removed = root("admin", "permissions", "remove", "WORKSPACE", ws, BOB)
    assert removed.exit_code == 0, removed.output
    assert "No permissions match" in root("admin", "permissions", "list", "--resource", ws).output
    assert "give at least one" in root("admin", "permissions", "list").output
    types = root("admin", "permissions", "types")
    assert "MISSION" in lines(types.stdout)
    unknown = root("admin", "permissions", "add", "workspace", "no such basin", BOB)
    assert unknown.exit_code == 1


def test_metrics_push_and_show(root: Cli, tmp_path: Path) -> None:
    entry = tmp_path / "entry.json"
    entry.write_text(json.dumps({"node": "edge-2", "disks": [], "licenses": [{"name": "idl", "status": True}]}))
    pushed = root("admin", "metrics", "push", str(entry))
    assert pushed.exit_code == 0, pushed.output
    shown = root("admin", "metrics", "show", "--node", "edge-2")
    assert shown.exit_code == 0 and "idl" in shown.stdout


def test_metrics_show_reads_in_human_units(root: Cli, tmp_path: Path) -> None:
    def sizes(available: int, used_percent: float) -> dict[str, object]:
        return {"absolute": {"available": {"unit": "bytes", "value": available}},
                "percentage": {"used": {"value": used_percent}}}

    entry = tmp_path / "entry.json"
    entry.write_text(json.dumps({
        "node": "edge-3", "timestamp": {"millis": 1706000000000},
        "cpu": {"count": {"logical": 2}, "load": {"absolute": {"load1": 0.38037109375}}},
        "memory": sizes(3 * 1024 ** 3 + 500 * 1024 ** 2, 61.23456), "disks": [sizes(52 * 1024 ** 3, 40.0)]}))
    assert root("admin", "metrics", "push", str(entry)).exit_code == 0
    shown = root("admin", "metrics", "show", "--node", "edge-3")
    fields = {line[:18].strip(): line[18:].strip() for line in shown.stdout.splitlines() if line.strip()}
    assert fields["load (1 min)"] == "0.38" and fields["memory available"] == "3.5 GB", fields
    assert fields["disk available"] == "52 GB" and fields["memory used"] == "61.2 %"
    assert fields["time"] == "2024-01-23 08:53:20 UTC"
    assert fields["licences"] == "none"  # a row with nothing to show says so rather than trailing off
    missing = root("admin", "metrics", "show", "--node", "nowhere")
    assert missing.exit_code == 1 and "no metrics from nowhere" in missing.output
    broken = tmp_path / "broken.json"
    broken.write_text("{nope")
    assert root("admin", "metrics", "push", str(broken)).exit_code == 2


def test_clean_queue_says_how_many_it_closed(root: Cli) -> None:
    services = root.app.services
    launcher = getattr(services, "launcher", None)
    if launcher is not None:
        launcher.stop()  # the records below are placed by hand: no worker may pick them up meanwhile
    ws = alice_workspace(root, "queue")
    for number in range(2):
        services.processes.processes.insert({
            "processObjId": f"queued-{number}", "workspaceId": ws, "userId": ALICE, "productName": "x",
            "operationType": "STANDIN", "status": "CREATED", "progressPerc": 0,
            "nodeCode": services.settings.node_code, "operationTimestamp": time.time() * 1000,
            "lastStateChangeTimestamp": time.time() * 1000, "runningSince": None})
    emptied = root("admin", "clean-queue", "--yes")
    assert emptied.exit_code == 0 and "Closed 2 queued processes" in emptied.stderr, emptied.output
    again = root("admin", "clean-queue", "--yes")
    assert "Closed 0 queued processes" in again.stderr
    stale = root("admin", "clean-queue", "--stale", "--yes")
    assert stale.exit_code == 0 and "Closed 0 stale processes" in stale.stderr


def test_non_admins_are_told_no(cli: Cli) -> None:
    cli.login()
    result = cli("admin", "users", "list")
    assert result.exit_code == 4
    assert "only an admin may do this" in result.output
