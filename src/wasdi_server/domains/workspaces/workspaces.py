"""Workspaces: creation, listing, editing, deletion and sharing, with their files on disk."""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from wasdi_sdk.units import human_size

from ...dates import now_ms
from ...errors import MSG_INVALID_WORKSPACE, BadRequest, DomainError, Forbidden, ServerFailure
from ...naming import unique_name
from ...paths import folder_size, inside, remove_tree, safe_id
from ...store import Collection
from ...store.intents import IntentLog
from ..accounts.identity import User
from ..accounts.sharing import READ, Resource, ShareOutcome, SharingService
from ..platform.nodes import NodeService

log = logging.getLogger("wasdi_server.workspaces")

WORKSPACE = "workspace"
DEFAULT_NAME = "Untitled Workspace"
MAX_NAME_LENGTH = 200
_BAD_NAME = re.compile(r"[/\\\x00-\x1f\x7f]")

DELETE_WORKSPACE = "delete_workspace"
"""The intent kind of a workspace deletion (subject: the workspace id)."""

DeleteHook = Callable[[dict[str, Any], bool, bool], None]
"""Called with (workspace record, delete files, delete layers) before the record goes."""


def check_workspace_name(name: str) -> str:
    """A display name: trimmed, bounded, no path separators, ``..`` or control characters."""
    cleaned = name.strip()
    if not cleaned or len(cleaned) > MAX_NAME_LENGTH or _BAD_NAME.search(cleaned) or ".." in cleaned:
        raise BadRequest(f"invalid workspace name {name[:60]!r}")
    return cleaned


class WorkspaceService:
    """The ``workspaces`` collection: ``{workspaceId, name, userId, creationDate, lastEditDate,
    nodeCode, isPublic, storageSize}``; files under ``<files_root>/<owner>/<workspaceId>/``."""

    def __init__(self, workspaces: Collection, processes: Collection, sharing: SharingService,
                 nodes: NodeService, files_root: Path, cloud_provider: str = "local", sla_link: str = "") -> None:
        self.workspaces = workspaces
        self.processes = processes
        self.sharing = sharing
        self.nodes = nodes
        self.files_root = files_root
        self.cloud_provider = cloud_provider
        self.sla_link = sla_link
        self.delete_hooks: list[DeleteHook] = []
        self.intents: IntentLog | None = None

    def use_intents(self, intents: IntentLog) -> None:
        """Delete workspaces as durable intents, so that a crash mid-way is finished at the next start."""
        self.intents = intents
        intents.register(DELETE_WORKSPACE, self._carry_out_delete)

    # -- lookups -------------------------------------------------------------------------------
    @staticmethod
    def resource(doc: dict[str, Any]) -> Resource:
        return Resource(WORKSPACE, doc["workspaceId"], doc["userId"], doc.get("name") or "")

    def load(self, workspace_id: str | None) -> dict[str, Any]:
        """The record of ``workspace_id``; ``BadRequest`` when it is malformed or unknown."""
        doc = self.workspaces.get(safe_id(workspace_id, "workspace")) if workspace_id else None
        if doc is None:
            raise BadRequest(MSG_INVALID_WORKSPACE)
        return doc

    def readable(self, user: User, workspace_id: str | None) -> dict[str, Any]:
        doc = self.load(workspace_id)
        if not (doc.get("isPublic") or self.sharing.can_read(user, self.resource(doc))):
            raise Forbidden("MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT_WORKSPACE")
        return doc

    def may_read(self, user: User, workspace_id: str | None) -> bool:
        """Whether ``user`` may read the workspace (an unknown one: no)."""
        try:
            self.readable(user, workspace_id)
        except DomainError:
            return False
        return True

    def writable(self, user: User, workspace_id: str | None) -> dict[str, Any]:
        doc = self.load(workspace_id)
        self.sharing.require_write(user, self.resource(doc))
        return doc

    def folder(self, doc: dict[str, Any]) -> Path:
        path = inside(self.files_root, safe_id(doc["userId"], "owner"), safe_id(doc["workspaceId"], "workspace"))
        if doc.get("nodeCode") not in (None, self.nodes.local_code) or path.is_dir():
            return path
        # A workspace placed on this node by another node (in a deployment): its folder is made here, on first use.
        if doc.get("nodeCode") == self.nodes.local_code and self.workspaces.get(doc["workspaceId"]) is not None:
            path.mkdir(parents=True, exist_ok=True)
        return path

    def names_of(self, owner_id: str, exclude_id: str | None = None) -> list[str]:
        return [d["name"] for d in self.workspaces.find(userId=owner_id) if d["workspaceId"] != exclude_id]

    # -- creation and listing ------------------------------------------------------------------
    def create(self, user: User, name: str | None = None, node: str | None = None) -> dict[str, Any]:
        wanted = check_workspace_name(name) if name and name.strip() else DEFAULT_NAME
        shared_nodes = set(self.sharing.shared_with(user.user_id, "node"))
        node_code = self.nodes.choose(user, node, shared_nodes)
        if node_code is None:
            raise BadRequest(f"unknown or inactive node {node!r}")
        stamp = now_ms()
        workspace_id = str(uuid.uuid4())
        # The folder first, the record last: a crash in between leaves an empty folder with no record, which
        # the next start removes (remove_unrecorded_folders), never a record without its folder.
        folder = self.folder({"userId": user.user_id, "workspaceId": workspace_id})
        here = node_code == self.nodes.local_code  # else the folder is made on the workspace's node
        if here:
            folder.mkdir(parents=True, exist_ok=True)
        try:
            with self.workspaces.transaction():
                return self.workspaces.insert({
                    "workspaceId": workspace_id, "name": unique_name(wanted, self.names_of(user.user_id)),
                    "userId": user.user_id, "creationDate": stamp, "lastEditDate": stamp, "nodeCode": node_code,
                    "isPublic": False, "storageSize": 0,
                })
        except BaseException:
            if here:
                remove_tree(folder)
            raise

    def remove_unrecorded_folders(self) -> int:
        """At start, before serving: finish what a crash during a creation left.  An empty workspace folder
        with no record (the crash came between the folder and the record) goes; a folder with files stays
        (``/ws/delete`` with ``deletefile=false`` keeps them on purpose).  The number removed."""
        removed = 0
        owners = [p for p in self.files_root.iterdir() if p.is_dir()] if self.files_root.is_dir() else []
        for owner in owners:
            recorded = {d["workspaceId"] for d in self.workspaces.find(userId=owner.name)}
            for folder in owner.iterdir():
                if folder.name in recorded or not folder.is_dir() or folder.is_symlink() or any(folder.iterdir()):
                    continue
                folder.rmdir()
                removed += 1
                log.info("removed the folder of a workspace whose creation a crash interrupted: %s", folder)
        return removed

    def list_for(self, user: User) -> list[dict[str, Any]]:
        """WorkspaceListInfoViewModel fields of the workspaces the user owns or that are shared with them."""
        owned = self.workspaces.find(userId=user.user_id)
        shared = self.sharing.shared_with(user.user_id, WORKSPACE)
        shared_docs = [d for d in (self.workspaces.get(wid) for wid in shared) if d is not None]
        return self.list_views(owned + shared_docs, lambda d: d["userId"] != user.user_id
                               and shared[d["workspaceId"]]["permissions"] == READ)

    def list_views(self, docs: list[dict[str, Any]],
                   read_only: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
        """WorkspaceListInfoViewModel fields of ``docs``."""
        shared_users = self.sharing.sharings_by_resource(WORKSPACE, {d["workspaceId"] for d in docs})
        # One look-up per node, not per workspace: with a shared database each is a query.
        usable = {code: self.nodes.is_usable(code) for code in {d.get("nodeCode") for d in docs}}
        return [{
            "workspaceId": d["workspaceId"], "workspaceName": d["name"], "ownerUserId": d["userId"],
            "sharedUsers": shared_users.get(d["workspaceId"], []),
            "activeNode": usable[d.get("nodeCode")], "nodeCode": d.get("nodeCode"),
            "creationDate": int(d.get("creationDate") or 0), "storageSize": human_size(int(d.get("storageSize") or 0)),
            "isPublic": bool(d.get("isPublic")), "readOnly": read_only(d),
        } for d in docs]

    def refresh_storage_size(self, doc: dict[str, Any]) -> int:
        """Measure the workspace folder and record the size; the size in bytes."""
        size = folder_size(self.folder(doc))
        if size != doc.get("storageSize"):
            self.workspaces.update(doc["workspaceId"], {"storageSize": size})
        return size

    def editor(self, user: User, workspace_id: str | None, own_url: str) -> dict[str, Any]:
        """WorkspaceEditorViewModel fields; ``apiUrl`` is where the workspace's data calls go."""
        doc = self.readable(user, workspace_id)
        resource = self.resource(doc)
        node_code = doc.get("nodeCode") or self.nodes.local_code
        node = self.nodes.get(node_code)
        return {
            "workspaceId": doc["workspaceId"], "name": doc["name"], "userId": doc["userId"],
            "apiUrl": self.nodes.api_url(node_code, own_url),
            "creationDate": int(doc.get("creationDate") or 0), "lastEditDate": int(doc.get("lastEditDate") or 0),
            "sharedUsers": [s["userId"] for s in self.sharing.sharings_of(resource)],
            "nodeCode": node_code, "activeNode": self.nodes.is_usable(node_code),
            "processesCount": self.processes.count(workspaceId=doc["workspaceId"]),
            "cloudProvider": (node or {}).get("cloudProvider") or self.cloud_provider,
            "slaLink": self.sla_link, "storageSize": human_size(self.refresh_storage_size(doc)),
            "isPublic": bool(doc.get("isPublic")), "readOnly": not self.sharing.can_write(user, resource),
        }

    # -- changes -------------------------------------------------------------------------------
    def update(self, user: User, workspace_id: str | None, name: str | None, is_public: bool | None) -> str:
        """Rename (a taken name of the owner gets a suffix) and/or change visibility; the id."""
        doc = self.writable(user, workspace_id)
        changes: dict[str, Any] = {"lastEditDate": now_ms()}
        with self.workspaces.transaction():
            if name is not None and name.strip() != doc["name"]:
                changes["name"] = unique_name(check_workspace_name(name),
                                              self.names_of(doc["userId"], exclude_id=doc["workspaceId"]))
            if is_public is not None:
                changes["isPublic"] = bool(is_public)
            self.workspaces.update(doc["workspaceId"], changes)
        return str(doc["workspaceId"])

    def delete(self, user: User, workspace_id: str | None, delete_files: bool, delete_layers: bool) -> None:
        """Owner or admin: everything goes.  A user it is shared with: only their sharing goes."""
        doc = self.load(workspace_id)
        resource = self.resource(doc)
        if user.user_id != doc["userId"] and self.sharing.sharing(resource, user.user_id) is not None:
            self.sharing.sharings.delete(self.sharing.key(WORKSPACE, doc["workspaceId"], user.user_id))
            return
        if user.user_id != doc["userId"] and not user.is_admin:
            raise Forbidden("MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT_WORKSPACE")
        try:
            if self.intents is None:
                self._remove(doc, delete_files, delete_layers)
            else:
                # The intent keeps the owner: once the record is gone it is the only way to the folder.
                self.intents.run(DELETE_WORKSPACE, doc["workspaceId"], {
                    "userId": doc["userId"], "deleteFiles": bool(delete_files), "deleteLayers": bool(delete_layers)})
        except Exception as e:
            log.exception("deleting workspace %s failed", doc["workspaceId"])
            raise ServerFailure("the workspace could not be deleted") from e

    def _carry_out_delete(self, workspace_id: str, details: Mapping[str, Any]) -> None:
        # Every step finds what is left, so a deletion a crash interrupted is finished from any point.
        doc = self.workspaces.get(workspace_id) or {"workspaceId": workspace_id, "userId": details["userId"]}
        self._remove(doc, bool(details.get("deleteFiles")), bool(details.get("deleteLayers")))

    def _remove(self, doc: dict[str, Any], delete_files: bool, delete_layers: bool) -> None:
        for hook in self.delete_hooks:
            hook(doc, delete_files, delete_layers)
        self.processes.delete_where(workspaceId=doc["workspaceId"])
        self.sharing.remove_all(self.resource(doc))
        # The record goes after everything that names it (a crash before leaves a workspace the intent
        # finishes), and the files after the record (never a record whose files are half gone).
        self.workspaces.delete(doc["workspaceId"])
        if delete_files:
            remove_tree(self.folder(doc))

    def delete_all_of_user(self, user_id: str) -> None:
        """Every workspace the user owns, with its products, processes, logs, sharings and files, and
        the user's whole files folder (idempotent: what is already gone is skipped)."""
        for doc in self.workspaces.find(userId=user_id):
            self._remove(doc, True, True)
        remove_tree(inside(self.files_root, safe_id(user_id, "owner")))

    def share(self, caller: User, workspace_id: str | None, user_id: str | None, rights: str | None) -> ShareOutcome:
        return self.sharing.share(caller, self.resource(self.load(workspace_id)), user_id, rights)

    def unshare(self, caller: User, workspace_id: str | None, user_id: str | None) -> None:
        self.sharing.unshare(caller, self.resource(self.load(workspace_id)), user_id)

    def sharings(self, caller: User, workspace_id: str | None) -> list[dict[str, Any]]:
        doc = self.readable(caller, workspace_id)
        return [{"workspaceId": doc["workspaceId"], "userId": s["userId"], "ownerId": doc["userId"],
                 "permissions": s["permissions"]} for s in self.sharing.sharings_of(self.resource(doc))]
