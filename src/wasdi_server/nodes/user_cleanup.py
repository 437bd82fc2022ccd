"""A user deleted on the main node, forgotten on a compute node (propagated through the outbox).

The main node deletes the user's shared records (workspaces, apps, styles ...) and its own files; what a
compute node keeps of them is its own: the workspaces' folders on its disk, the process records and logs
in its node-local store, its copies of style files, the apps installed on it.  The main node queues
``USER_DELETED`` for every compute node once the user's shared records are gone, so each node removes
what the shared store no longer names, and the user's files folder.  Every step finds what is left: a
second delivery (the main node restarted mid-deletion, say) does nothing more.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any, Protocol

from ..paths import inside, remove_tree, safe_id
from .app_install import MARKER, AppInstaller
from .identity import NodeIdentity

if TYPE_CHECKING:
    from ..domains.apps.apps import AppService
    from ..domains.processes.process_logs import ProcessLogService
    from ..domains.processes.processes import ProcessService
    from ..domains.products.styles import StyleService
    from ..domains.workspaces.workspaces import WorkspaceService
    from ..launcher.engines import Engine
    from ..settings import Settings

log = logging.getLogger("wasdi_server.nodes")

USER_DELETED = "/nodes/userdeleted"


class CleanupParts(Protocol):
    """What forgetting a user on a compute node reads and removes."""

    @property
    def settings(self) -> Settings:
        """Where the users' files and the installed apps are."""

    @property
    def identity(self) -> NodeIdentity:
        """This node (named in the log line)."""

    @property
    def processes(self) -> ProcessService:
        """The runs this node keeps."""

    @property
    def process_logs(self) -> ProcessLogService:
        """Their logs."""

    @property
    def workspaces(self) -> WorkspaceService:
        """The workspaces the shared store still names."""

    @property
    def styles(self) -> StyleService:
        """The style files this node copied."""

    @property
    def apps(self) -> AppService[Engine]:
        """The apps' records."""

    @property
    def app_installer(self) -> AppInstaller | None:
        """What installed the apps on this compute node (``None`` on the main node)."""


def forget_user_here(services: CleanupParts, user_id: str) -> dict[str, int]:
    """Remove from this node what it keeps of the deleted user ``user_id``; how much of each kind went."""
    processes = services.processes
    workspaces = services.workspaces.workspaces
    gone: set[str] = set()
    # The runs the user started anywhere, and every run in a workspace that no longer exists (the user's).
    doomed = {str(r["processObjId"]): r for r in processes.by_user(user_id)}
    for workspace_id in {str(r.get("workspaceId") or "") for r in processes.processes.all()}:
        if workspace_id and workspaces.get(workspace_id) is None:
            gone.add(workspace_id)
            doomed.update({str(r["processObjId"]): r for r in processes.by_workspace(workspace_id)})
    for process_id in doomed:
        services.process_logs.logs.remove(process_id)
        processes.processes.delete(process_id)
        if processes.locator is not None:
            processes.locator.forget(process_id)
    remove_tree(inside(services.settings.files_root, safe_id(user_id, "owner")))
    styles = services.styles.remove_unrecorded_files()
    apps = _forget_unrecorded_apps(services)
    log.info("user %s deleted on the main node: removed %d runs, %d style files and %d apps on node %s",
             user_id, len(doomed), styles, apps, services.identity.code)
    return {"processes": len(doomed), "workspaces": len(gone), "styles": styles, "apps": apps}


def _forget_unrecorded_apps(services: CleanupParts) -> int:
    """Apps installed on this node whose record is gone (deleted with their owner)."""
    installer = services.app_installer
    root = services.settings.app_environments_root
    if installer is None or not root.is_dir():
        return 0
    removed = 0
    for marker in sorted(root.glob(f"*/{MARKER}")):
        try:
            installed: dict[str, Any] = json.loads(marker.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        processor_id = str(installed.get("processorId") or "")
        if not processor_id or services.apps.records.get(processor_id) is not None:
            continue
        installer.forget({"name": marker.parent.name, "type": installed.get("type") or "",
                          "processorId": processor_id})
        removed += 1
    return removed
