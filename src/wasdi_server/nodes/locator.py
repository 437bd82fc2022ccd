"""Which node holds a process: the shared ``process_nodes`` index (process id -> workspace id, node code).

A process lives in the node-local store of the node that runs it (gaps §8), so no other node can read its
record.  Every node of a deployment writes one small row to the shared store when it creates a process,
before the process record itself (a crash between the two leaves a row that names a process nobody has,
which the node it names answers as unknown), and removes the rows with the processes (a workspace's
deletion, a user's deletion).  The forwarder asks here for the calls about one process
(``catalog.placement.PROCESS_NODE``) that reach a node which does not hold it.
"""

from __future__ import annotations

from typing import Any

from ..store import Collection

PROCESS_NODES = "process_nodes"
"""The shared collection of the index (key ``processObjId``, indexed by ``workspaceId``)."""
MAX_ID_LENGTH = 200


class ProcessLocator:
    """The shared index of where each process of the deployment lives."""

    def __init__(self, rows: Collection, node_code: str) -> None:
        self.rows = rows
        self.node_code = node_code

    def record(self, process_id: str, workspace_id: str) -> None:
        """A process this node is about to create (called before its record is written)."""
        self.rows.upsert({"processObjId": process_id, "workspaceId": workspace_id, "nodeCode": self.node_code})

    def node_of(self, process_id: str | None) -> str | None:
        """The code of the node that holds ``process_id``, or ``None`` when no node recorded it."""
        if not process_id or len(process_id) > MAX_ID_LENGTH:
            return None
        row = self.rows.get(process_id)
        return str(row["nodeCode"]) if row and row.get("nodeCode") else None

    def forget(self, process_id: str) -> None:
        self.rows.delete(process_id)

    def forget_workspace(self, workspace: dict[str, Any], delete_files: bool = True,
                         delete_layers: bool = True) -> None:
        """Workspace delete hook: the rows of its processes go with them."""
        self.rows.delete_where(workspaceId=workspace["workspaceId"])
