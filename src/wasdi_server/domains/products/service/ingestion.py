"""Ingestion: making a file of the workspace folder a product (reading its bands and footprint), from an
upload, an upload account's folder, or a file already there.

- Uploads are moved into place from a hidden temporary file of the workspace folder; an empty name gets a
  random one (``defaultName-<hex>``).
- Ingesting an existing product again (same file) rereads bands and footprint but keeps the friendly
  name, style and description; its published layers are dropped (the file may have changed).
"""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path
from typing import Any

from wasdi_sdk.atomic_files import replace_durably

from ....dates import now_ms
from ....errors import BadRequest, NotFound
from ....paths import inside
from ...accounts.identity import User
from .. import product_files, readers
from .records import ProductRecords, check_product_name, product_key


class ProductIngestion(ProductRecords):
    """INGEST: records from files, queued or at once; uploads placed into workspace folders."""

    def ingest_file(self, workspace: dict[str, Any], file_name: str, *, style: str | None = None,
                    platform: str | None = None, footprint: str | None = None,
                    info: readers.ProductInfo | None = None) -> dict[str, Any]:
        """Read the file (unless ``info`` is what ``read_product`` read of it) and create (or refresh) its record.
        The file must be in the workspace folder."""
        path = self.reader_path(workspace, file_name)
        if info is None:
            info = self.read_product(workspace, path)
        workspace_id = workspace["workspaceId"]
        bands = []
        for band in info.bands:
            source = ""
            if band.source.startswith("/vsizip/"):
                source = "zip:" + band.source[len(f"/vsizip/{path}/"):]
            elif band.source and Path(band.source) != path:
                source = "dim:" + Path(band.source).name
            bands.append({"name": band.name, "width": band.width, "height": band.height, "published": False,
                          "bandIndex": band.index, "source": source})
        bbox = info.bbox
        if bbox is None:
            bounds = readers.footprint_bounds(footprint)
            bbox = readers.format_bbox(bounds) if bounds else None
        key = product_key(workspace_id, file_name)
        old_layers: list[str] = []
        stamp = now_ms()

        def change(doc: dict[str, Any]) -> dict[str, Any]:
            old_layers.extend(b["layerId"] for b in doc.get("bands") or [] if b.get("layerId"))
            doc.update({"bands": bands, "bbox": bbox, "crs": info.crs, "readable": info.readable,
                        "format": info.driver, "fileSize": info.size, "lastUpdate": stamp,
                        "metadataFileCreated": False, "metadataFileReference": None, "metadataProcessId": None})
            if style:
                doc["style"] = style
            if platform:
                doc["platform"] = platform
            return doc

        with self.products.transaction():
            existing = self.products.get(key)
            if existing is not None:
                old_metadata = existing.get("metadataFileReference")
                record = self.products.modify(key, change) or existing
            else:
                old_metadata = None
                stem = product_files.stem_of(file_name)
                record = self.products.insert({
                    "productId": key, "workspaceId": workspace_id, "fileName": file_name, "name": stem,
                    "productFriendlyName": stem, "style": style or None, "description": None,
                    "platform": platform or product_files.infer_platform(file_name), "creationDate": stamp,
                    "bands": bands, "bbox": bbox, "crs": info.crs, "readable": info.readable,
                    "format": info.driver, "fileSize": info.size, "lastUpdate": stamp,
                    "metadataFileCreated": False, "metadataFileReference": None, "metadataProcessId": None,
                })
        for layer_id in old_layers:
            self._remove_layer(layer_id)
        if old_metadata:
            self._remove_metadata_file(old_metadata)
        self.workspaces.refresh_storage_size(workspace)
        return record

    def queue_ingest(self, user: User, workspace: dict[str, Any], file_name: str, *, style: str | None = None,
                     platform: str | None = None, parent: str | None = None) -> str:
        record = self.processes.create(user, workspace["workspaceId"], "INGEST", file_name, parent=parent,
                                       parameter={"fileName": file_name, "style": style or None,
                                                  "platform": platform or None})
        return str(record["processObjId"])

    def ingest_existing(self, user: User, workspace_id: str | None, file_name: str | None, *,
                        style: str | None = None, platform: str | None = None, parent: str | None = None) -> str:
        """``/catalog/upload/ingestinws``: queue an INGEST of a file already in the folder (404 if absent)."""
        name = check_product_name(file_name, "file name")
        workspace = self.writable(user, workspace_id)
        if not self.file_path(workspace, name).exists():
            raise NotFound(f"{name} is not in the workspace folder")
        return self.queue_ingest(user, workspace, name, style=style, platform=platform, parent=parent)

    def ingest_from_folder(self, user: User, source_folder: Path, workspace_id: str | None, file_name: str | None,
                           *, style: str | None = None, platform: str | None = None, parent: str | None = None) -> str:
        """``/catalog/upload/ingest``: move ``file_name`` from ``source_folder`` (the caller's upload account)
        into the workspace folder and queue its INGEST; 400 bad name, 403 no write access, 404 no such file."""
        name = check_product_name(file_name, "file name")
        workspace = self.writable(user, workspace_id)
        source = inside(source_folder, name)
        if not source.is_file() or source.is_symlink():  # a link is not a file the user sent
            raise NotFound(f"{name} is not among the files of your upload account")
        target = self.file_path(workspace, name)
        if target.is_dir():
            raise BadRequest(f"{name} is a folder in the workspace")
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            shutil.move(source, target)
        finally:
            self.workspaces.refresh_storage_size(workspace)
        return self.queue_ingest(user, workspace, name, style=style, platform=platform, parent=parent)

    def add_to_workspace(self, user: User, workspace_id: str | None, file_name: str | None) -> bool:
        """``/product/addtows``: make a file already in the folder a product (read synchronously)."""
        name = check_product_name(file_name)
        workspace = self.writable(user, workspace_id)
        if self.get(workspace["workspaceId"], name) is None:
            self.ingest_file(workspace, name)
        return True

    # -- uploads -------------------------------------------------------------------------------
    def upload_target(self, user: User, workspace_id: str | None, name: str | None) -> tuple[dict[str, Any], str]:
        """The workspace and file name of an upload (an empty name gets a random one); 400, 403."""
        wanted = (name or "").strip()
        file_name = check_product_name(name) if wanted else f"defaultName-{uuid.uuid4().hex}"
        workspace = self.writable(user, workspace_id)
        if self.file_path(workspace, file_name).is_dir():
            raise BadRequest(f"{file_name} is a folder in the workspace")
        return workspace, file_name

    def place_upload(self, workspace: dict[str, Any], file_name: str, received: Path) -> None:
        """Move a received file (a hidden temporary file of the workspace folder) into place."""
        try:
            replace_durably(received, self.file_path(workspace, file_name))
        finally:
            self.workspaces.refresh_storage_size(workspace)
