"""What every kill -9 crash test shares: the driver that calls a real server concurrently and kills it a
third of the way in, and the invariants a data directory must hold after any restart.

The invariants are read from what is durably stored (``stored_documents``: snapshots plus journals) and
from the folders on disk, never through the server, so a server that hid a broken record could not pass.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from tests.e2e import conftest as e2e
from tests.server.user_estate import stored_documents

from wasdi_server import load_settings
from wasdi_server.composition import COLLECTIONS

CALLERS = 8

Call = Callable[[httpx.Client, str], httpx.Response]
"""One change over HTTP, given a client with the caller's session and the id of what it changes."""

SHARED_TYPES = {
    # sharing resourceType: the collection its resources live in
    "workspace": "workspaces", "organization": "organizations", "subscription": "subscriptions",
    "processor": "processors", "style": "styles", "workflow": "workflows",
}

OWNED = ("workspaces", "organizations", "subscriptions", "processors", "styles", "workflows", "sessions",
         "upload_accounts", "credit_packages")
"""Collections whose records name their owner in ``userId``: none may name a missing user."""

APP_PARTS = ("processor_parameter_templates", "reviews", "app_payments")
"""Collections whose records name an app in ``processorId``: none may name a missing one."""


@dataclass
class Round:
    """What the callers of one round saw."""

    answered: list[str] = field(default_factory=list)
    """Ids whose change was answered 200 (durable by the contract: no restart may undo them)."""
    cut_off: int = 0
    """Calls under way when the server died (sent, never answered): the kill came during a change."""
    refused: list[str] = field(default_factory=list)
    """Answers other than 200 (each one a test failure: the calls are all valid)."""


def call_concurrently_then_kill(server: e2e.RunningServer, user_id: str, ids: list[str], call: Call, *,
                                callers: int = CALLERS, fraction: float = 1 / 3) -> Round:
    """``callers`` threads make ``call`` for every id as ``user_id``; once ``fraction`` of them are answered
    the server is killed with SIGKILL while the other calls are under way."""
    token = server.token(user_id)
    todo: queue.Queue[str] = queue.Queue()
    for resource_id in ids:
        todo.put(resource_id)
    seen = Round()
    lock = threading.Lock()
    enough = threading.Event()

    def caller() -> None:
        with httpx.Client(base_url=server.base_url, headers={"x-session-token": token}, timeout=60) as client:
            while True:
                try:
                    resource_id = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    r = call(client, resource_id)
                except httpx.ConnectError:  # the server was already gone: this call never started
                    return
                except httpx.TransportError:  # the server died while this call was under way
                    with lock:
                        seen.cut_off += 1
                    return
                with lock:
                    if r.status_code == 200:
                        seen.answered.append(resource_id)
                    else:
                        seen.refused.append(f"{resource_id}: {r.status_code} {r.text[:200]}")
                    if len(seen.answered) >= len(ids) * fraction:
                        enough.set()

    threads = [threading.Thread(target=caller) for _ in range(callers)]
    for thread in threads:
        thread.start()
    enough.wait(30)
    server.kill()
    for thread in threads:
        thread.join(30)
    return seen


def pending_intents(data_dir: Path) -> int:
    """Intents a killed server left recorded (changes it had begun and not finished)."""
    return len(stored_documents(data_dir).get("intents", {}))


def stored_keys(docs: dict[str, dict[str, dict[str, Any]]], collection: str) -> set[str]:
    """The keys of a collection's stored records (the engine's files key documents by their own ids)."""
    key = COLLECTIONS[collection]
    return {str(d[key]) for d in docs.get(collection, {}).values()}


def broken_invariants(data_dir: Path) -> list[str]:
    """Every way the stored data and the folders contradict each other; empty when all holds."""
    docs = stored_documents(data_dir)
    keys = {name: stored_keys(docs, name) for name in COLLECTIONS}
    users = keys["users"]
    broken: list[str] = []
    for s in docs.get("sharings", {}).values():
        if s["userId"] not in users:
            broken.append(f"sharing {s['sharingId']} names a missing user")
        collection = SHARED_TYPES.get(s["resourceType"])
        if collection and s["resourceId"] not in keys[collection]:
            broken.append(f"sharing {s['sharingId']} names a missing {s['resourceType']}")
    for name in OWNED:
        broken += [f"{name} record {d[COLLECTIONS[name]]} names a missing user" for d in docs.get(name, {}).values()
                   if d.get("userId") not in users]
    broken += [f"process {p['processObjId']} names a missing workspace"
               for p in docs.get("process_workspaces", {}).values() if p.get("workspaceId") not in keys["workspaces"]]
    broken += [f"subscription {s['subscriptionId']} names a missing organization"
               for s in docs.get("subscriptions", {}).values()
               if s.get("organizationId") and s["organizationId"] not in keys["organizations"]]
    broken += [f"project {p['projectId']} names a missing subscription" for p in docs.get("projects", {}).values()
               if p.get("subscriptionId") not in keys["subscriptions"]]
    for u in docs.get("users", {}).values():
        if u.get("activeSubscriptionId") and u["activeSubscriptionId"] not in keys["subscriptions"]:
            broken.append(f"user {u['userId']} has a missing active subscription")
        if u.get("activeProjectId") and u["activeProjectId"] not in keys["projects"]:
            broken.append(f"user {u['userId']} has a missing active project")
    for name in APP_PARTS:
        broken += [f"{name} record names a missing app" for d in docs.get(name, {}).values()
                   if d.get("processorId") and d["processorId"] not in keys["processors"]]
    broken += [f"comment {c['commentId']} names a missing review" for c in docs.get("review_comments", {}).values()
               if c.get("reviewId") not in keys["reviews"]]
    broken += folder_mismatches(data_dir, docs)
    broken += [f"intent {i['intentId']} left pending" for i in docs.get("intents", {}).values()]
    return broken


def folder_mismatches(data_dir: Path, docs: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    """Every workspace and app folder, style and graph file has its record and every record its folder or
    file."""
    settings = load_settings(data_dir=data_dir, environ={})
    files = settings.files_root
    owners = [p for p in files.iterdir() if p.is_dir()] if files.is_dir() else []
    folders = {(owner.name, ws.name) for owner in owners for ws in owner.iterdir()}
    records = {(w["userId"], w["workspaceId"]) for w in docs.get("workspaces", {}).values()}
    broken = [f"folder {owner}/{ws} has no workspace" for owner, ws in sorted(folders - records)]
    broken += [f"workspace {ws} of {owner} has no folder" for owner, ws in sorted(records - folders)]
    apps = settings.apps_root
    app_folders = {p.name for p in apps.iterdir() if p.is_dir()} if apps.is_dir() else set()
    app_records = {str(a["name"]) for a in docs.get("processors", {}).values()}
    broken += [f"app folder {name} has no record" for name in sorted(app_folders - app_records)]
    broken += [f"app {name} has no folder" for name in sorted(app_records - app_folders)]
    style_records = {str(s["name"]) for s in docs.get("styles", {}).values()}
    style_files = {p.stem for p in settings.styles_root.glob("*.sld")} if settings.styles_root.is_dir() else set()
    broken += [f"style file {name}.sld has no record" for name in sorted(style_files - style_records)]
    broken += [f"style {name} has no SLD file" for name in sorted(style_records - style_files)]
    graphs = {p.stem for p in settings.workflows_root.glob("*.xml")} if settings.workflows_root.is_dir() else set()
    workflows = {str(w["workflowId"]) for w in docs.get("workflows", {}).values()}
    broken += [f"graph file {name}.xml has no workflow" for name in sorted(graphs - workflows)]
    broken += [f"workflow {name} has no graph file" for name in sorted(workflows - graphs)]
    return broken


def stripped_of_sharings(stored: dict[str, dict[str, dict[str, Any]]], resource_type: str,
                         ids: list[str]) -> list[str]:
    """Which of ``ids`` (each shared when the round began) are still there but have lost their sharings: the
    silent loss of access a half-done deletion causes."""
    remaining = set(ids) & stored_keys(stored, SHARED_TYPES[resource_type])
    shared = {s["resourceId"] for s in stored.get("sharings", {}).values() if s["resourceType"] == resource_type}
    return sorted(remaining - shared)


def restart_and_check(servers: e2e.ServerFactory, data_dir: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """Start a server on ``data_dir`` (it finishes what the crash interrupted before serving), stop it
    cleanly, and fail on any broken invariant; what is stored afterwards."""
    restarted = servers.start(data_dir)
    assert restarted.stop() == 0, restarted.output()
    broken = broken_invariants(data_dir)
    assert broken == [], "\n".join(broken)
    return stored_documents(data_dir)
