"""Product metadata: computed by a READMETADATA operation the first time it is asked for and kept as a JSON
file under ``<data_dir>/metadata/`` (``metadataFileReference`` is its name there).

While it is being generated the answer is the placeholder ``{"name": "Generating Metadata, try later"}``;
only one READMETADATA is queued at a time per product.  If reading failed, ``metadataFileCreated`` is true
with no reference, and the answer is null.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from wasdi_sdk.atomic_files import write_atomic

from ....errors import NotFound, ServerFailure
from ...accounts.identity import User
from ...processes.processes import ACTIVE
from .. import metadata_trees
from .imports import ITEM_PROPERTIES
from .records import ProductRecords, product_key

METADATA_PLACEHOLDER = "Generating Metadata, try later"


class ProductMetadata(ProductRecords):
    """The metadata tree of a product, generated once in the background."""

    def metadata(self, user: User, workspace_id: str | None, file_name: str | None) -> dict[str, Any] | None:
        """The metadata tree; the placeholder while it is generated; ``None`` when reading it failed."""
        workspace, record = self.load(user, workspace_id, file_name)
        reference = record.get("metadataFileReference")
        if reference:
            path = self._metadata_path(reference)
            try:
                with open(path, encoding="utf-8") as handle:
                    data: dict[str, Any] = json.load(handle)
                return data
            except (OSError, ValueError) as e:
                raise ServerFailure("the metadata file cannot be read") from e
        if record.get("metadataFileCreated"):
            return None
        running = record.get("metadataProcessId")
        current = self.processes.get(running) if running else None
        if current is None or current.get("status") not in ACTIVE:
            process = self.processes.create(user, workspace["workspaceId"], "READMETADATA", record["fileName"],
                                            parameter={"fileName": record["fileName"]})
            self.products.update(record["productId"], {"metadataProcessId": process["processObjId"]})
        return {"name": METADATA_PLACEHOLDER}

    def write_metadata(self, workspace: dict[str, Any], file_name: str) -> dict[str, Any]:
        """READMETADATA: compute the tree into a JSON file and record the reference."""
        key = product_key(workspace["workspaceId"], file_name)
        if self.products.get(key) is None:
            raise NotFound(f"{file_name} is not a product of the workspace")
        try:
            tree = self.read_metadata(workspace, self.reader_path(workspace, file_name))
        except BaseException:
            # As the original: a failed read is not retried on every request (the answer is now null).
            self.products.update(key, {"metadataFileCreated": True})
            raise
        item = (self.products.get(key) or {}).get(ITEM_PROPERTIES)
        if isinstance(item, dict) and item:  # what the catalogue said of the item the product was imported from
            tree.setdefault("elements", []).append(metadata_trees.element(
                "Catalogue item", [metadata_trees.attribute(str(k), str(v)) for k, v in sorted(item.items())]))
        self.metadata_root.mkdir(parents=True, exist_ok=True)
        reference = f"{uuid.uuid4()}.json"
        path = self._metadata_path(reference)
        write_atomic(path, json.dumps(tree, ensure_ascii=False))
        record = self.products.get(key)
        if record is None:  # deleted meanwhile
            path.unlink(missing_ok=True)
            raise NotFound(f"{file_name} was removed")
        old = record.get("metadataFileReference")
        self.products.update(key, {"metadataFileReference": reference, "metadataFileCreated": True})
        if old and old != reference:
            self._remove_metadata_file(old)
        return tree
