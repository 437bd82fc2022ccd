"""What the main node tells the compute nodes after a change they must repeat (gaps §8), as the calls the
original makes: each goes through the durable outbox, so a node that is down gets it when it is back.

Only the main node of a deployment propagates; a compute node answering a propagated call never does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wasdi_sdk.catalog import endpoint

from .identity import NodeIdentity
from .outbox import Outbox
from .user_cleanup import USER_DELETED


class Propagation:
    """The main node's side: one method per change the compute nodes repeat."""

    def __init__(self, identity: NodeIdentity, outbox: Outbox | None) -> None:
        self.identity = identity
        self.outbox = outbox

    @property
    def active(self) -> bool:
        return self.outbox is not None and self.identity.is_main and self.identity.in_deployment

    def _send(self, user_id: str, name: str, query: dict[str, Any], file: Path | None = None,
              file_name: str = "") -> None:
        if self.outbox is None or not self.active:
            return
        ep = endpoint(name)
        self.outbox.propagate(user_id, ep.method, ep.path, query, file=file,
                              file_field=ep.body.field or "file", file_name=file_name)

    # -- apps ---------------------------------------------------------------------------------------------
    def app_redeployed(self, user_id: str, processor_id: str) -> None:
        self._send(user_id, "processors.redeploy", {"processorId": processor_id})

    def app_library_updated(self, user_id: str, processor_id: str) -> None:
        self._send(user_id, "processors.update_libraries", {"processorId": processor_id})

    def app_files_updated(self, user_id: str, processor_id: str, file: Path, file_name: str) -> None:
        self._send(user_id, "processors.update_files", {"processorId": processor_id}, file, file_name)

    def app_environment_updated(self, user_id: str, processor_id: str, workspace_id: str, command: str) -> None:
        if command.strip():  # an empty command only refreshes the main node's package list (contract)
            self._send(user_id, "package_manager.update_environment",
                       {"processorId": processor_id, "workspace": workspace_id, "updateCommand": command})

    def app_deleted(self, user_id: str, doc: dict[str, Any]) -> None:
        self._send(user_id, "processors.node_delete", {
            "processorId": doc["processorId"], "workspace": "", "processorName": doc.get("name"),
            "processorType": doc.get("type"), "version": doc.get("version")})

    # -- styles -------------------------------------------------------------------------------------------
    def style_file_updated(self, user_id: str, style_id: str, file: Path, file_name: str) -> None:
        self._send(user_id, "styles.update_file", {"styleId": style_id}, file, file_name)

    def style_deleted(self, user_id: str, doc: dict[str, Any]) -> None:
        self._send(user_id, "styles.node_delete", {"styleId": doc["styleId"], "styleName": doc["name"]})

    # -- users --------------------------------------------------------------------------------------------
    def user_deleted(self, user_id: str) -> None:
        """The user's shared records are gone: each compute node removes what it keeps of them (a node-only
        call, as the user has no session left to make it in)."""
        if self.outbox is not None and self.active:
            self.outbox.propagate("", "POST", USER_DELETED, {"userId": user_id})
