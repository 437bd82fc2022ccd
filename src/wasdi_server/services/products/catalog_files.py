"""The ``/catalog`` file calls: a workspace file's existence, place and properties (with its MD5)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import NotFound
from .. import readers
from ..identity import User
from .records import CHUNK, ProductRecords, check_product_name


class CatalogFiles(ProductRecords):
    """Files of readable workspaces, as the official library asks for them."""

    def existing_file(self, user: User, workspace_id: str | None, file_name: str | None) -> Path:
        """A file of a readable workspace (404 when it is not in the folder)."""
        name = check_product_name(file_name, "file name")
        workspace = self.readable(user, workspace_id)
        path = self.file_path(workspace, name)
        if not path.exists():
            raise NotFound(f"{name} is not in the workspace")
        return path

    def on_node(self, user: User, workspace_id: str | None, file_name: str | None) -> bool:
        name = check_product_name(file_name, "file name")
        workspace = self.readable(user, workspace_id)
        return self.file_path(workspace, name).exists()

    def properties(self, user: User, workspace_id: str | None, file_name: str | None,
                   checksum: bool) -> dict[str, Any]:
        path = self.existing_file(user, workspace_id, file_name)
        workspace = self.workspaces.load(workspace_id)
        record = self.get(workspace["workspaceId"], path.name) or {}
        stat = path.stat()
        out: dict[str, Any] = {
            "fileName": path.name, "friendlyName": record.get("productFriendlyName") or readers.stem_of(path.name),
            "size": readers.folder_or_file_size(path), "lastUpdateTimestampMs": int(stat.st_mtime * 1000),
            "style": record.get("style") or "",
        }
        if checksum and path.is_file():
            out["checksum"] = md5_of(path)
        return out


def md5_of(path: Path) -> str:
    import hashlib

    digest = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()
