"""Deleting products: one (``/product/delete``), several in the background (``/product/deletelist``, a
DELETE process), and all of a workspace's when it is deleted.

- ``/product/delete`` answers ``intValue`` 400 (bad name or workspace), 401, 403 (no write access) and 404
  (no such product); every failure of ``/product/deletelist`` that is not 401/403 is ``intValue`` 500, as
  the contract lists (an invalid session is 401 everywhere: the dispatcher answers it before the handler).
  An empty ``deletelist`` succeeds without starting anything.
- ``/product/deletelist`` runs as a DELETE process of the workspace: it ends DONE with a DELETE broker
  message, or ERROR (the payload names the products that were not there; the others are deleted).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...accounts.identity import User
from ...processes.ports import OK
from .. import product_files
from .records import ProductRecords, check_product_name


class ProductDeletion(ProductRecords):
    """Removing product records with their files, sidecars, metadata files and layers."""

    def delete(self, user: User, workspace_id: str | None, file_name: str | None, delete_file: bool,
               delete_layer: bool) -> None:
        workspace, record = self.load(user, workspace_id, file_name, write=True)
        self.remove(workspace, record, delete_file, delete_layer)
        self.workspaces.refresh_storage_size(workspace)
        self.messages.send("DELETE", None, workspace["workspaceId"], result=OK)

    def remove(self, workspace: dict[str, Any], record: dict[str, Any], delete_file: bool,
               delete_layer: bool) -> None:
        """Remove a product record, with its file and sidecars and its layers as flagged."""
        if delete_layer:
            for band in record.get("bands") or []:
                if band.get("layerId"):
                    self._remove_layer(band["layerId"])
        self.products.delete(record["productId"])
        self._remove_metadata_file(record.get("metadataFileReference"))
        if delete_file:
            folder = self.workspaces.folder(workspace)
            path = self.file_path(workspace, record["fileName"])
            for extra in product_files.sidecars(folder, record["fileName"]):
                product_files.safe_unlink(extra)
            product_files.safe_unlink(path)

    def queue_delete_many(self, user: User, workspace_id: str | None, names: list[Any], delete_file: bool,
                          delete_layer: bool) -> str:
        """``/product/deletelist``: check everything, then delete in the background; the DELETE process id
        ("" for an empty list)."""
        workspace = self.writable(user, workspace_id)
        checked = [check_product_name(n if isinstance(n, str) else None) for n in names]
        if not checked:  # nothing to delete: done (as the original answers an empty list)
            return ""
        record = self.processes.create(user, workspace["workspaceId"], "DELETE", ",".join(checked)[:200],
                                       parameter={"names": checked, "deleteFile": delete_file,
                                                  "deleteLayer": delete_layer})
        return str(record["processObjId"])

    def delete_many(self, workspace_id: str, names: Iterable[str], delete_file: bool,
                    delete_layer: bool) -> list[str]:
        """The DELETE operation: remove every named product that is there; the names that were not."""
        workspace = self.workspaces.load(workspace_id)
        missing = []
        for name in names:
            record = self.get(workspace_id, name)
            if record is None:
                missing.append(name)
                continue
            self.remove(workspace, record, delete_file, delete_layer)
        self.workspaces.refresh_storage_size(workspace)
        return missing

    def on_workspace_delete(self, workspace: dict[str, Any], delete_files: bool, delete_layers: bool) -> None:
        """Workspace delete hook: the records, their metadata files, and the layers when asked."""
        for record in self.products.find(workspaceId=workspace["workspaceId"]):
            self._remove_metadata_file(record.get("metadataFileReference"))
            if delete_layers:
                for band in record.get("bands") or []:
                    if band.get("layerId"):
                        self._remove_layer(band["layerId"])
        self.products.delete_where(workspaceId=workspace["workspaceId"])
        if delete_layers:
            for layer in self.layers.find(workspaceId=workspace["workspaceId"]):
                self._remove_layer(layer["layerId"])
