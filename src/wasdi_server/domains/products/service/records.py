"""Product records: the ``products`` and ``layers`` collections, their keys, lookups and views, and the
changes a caller makes to a record (friendly name, style, description).

Records live in the ``products`` collection, one per (workspace, file) with the key
``<workspaceId>|<fileName>``; files live in the workspace folder (``WorkspaceService.folder``).  Layers
published from a band are in the ``layers`` collection (key ``layerId``) so the map server's files
can be checked against the workspace they belong to.

- Access: reading (byname, metadata, lists, publishing a band, downloading a file) needs read
  access to the workspace (owner, a sharing, admin, or a public workspace); anything that changes
  files or records needs write access.
- Names: every product name is a plain file name of the workspace folder (the path guard), and a
  name starting with ``.`` is refused (this server's partial uploads and imports are hidden files).
- ``name`` of a product is its file name without the last extension; ``productFriendlyName`` starts
  equal to it.  ``bandsGroups.nodeName`` is ``Bands``.
- Workspace storage size is measured again after every change to the folder.
- ``/product/update`` answers 500 for a product it does not know (the contract lists 200, 401, 403 and
  500 only).
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ....dates import now_ms
from ....errors import BadRequest, NotFound, ServerFailure
from ....paths import file_or_folder_for_reader, inside, safe_name
from ....providers.mapserver import MapServer
from ....providers.raster_reads import RasterReads, ReadJob, ReadRefused
from ....store import Collection
from ...accounts.identity import User
from ...processes.ports import MessagePublisher
from ...processes.processes import ProcessService
from ...workspaces.workspaces import WorkspaceService
from .. import metadata_trees, readers
from ..missions import MissionService

if TYPE_CHECKING:
    from ....settings import Settings
    from ...commerce.subscriptions import SubscriptionService

log = logging.getLogger("wasdi_server.products")

CHUNK = 1024 * 1024
"""The unit of file copies and digests."""
_FIELDS_OF_BAND = ("name", "published", "width", "height", "layerId", "geoserverBoundingBox", "geoserverUrl")


def product_key(workspace_id: str, file_name: str) -> str:
    return f"{workspace_id}|{file_name}"


def check_product_name(name: str | None, what: str = "product name") -> str:
    """A product file name: the path guard, and no leading dot (hidden files are this server's own)."""
    checked = safe_name(name, what)
    if checked.startswith("."):
        raise BadRequest(f"invalid {what}: {checked[:60]!r}")
    return checked


class ProductRecords:
    """The records of products and layers, and the files a record owns (its metadata file, its layers)."""

    def __init__(self, products: Collection, layers: Collection, workspaces: WorkspaceService,
                 processes: ProcessService, messages: MessagePublisher, subscriptions: SubscriptionService,
                 missions: MissionService, map_server: MapServer, settings: Settings, reads: RasterReads) -> None:
        self.products = products
        self.reads = reads
        """Where products' rasters are read (boxed readers that see the product's workspace folder only)."""
        self.layers = layers
        self.workspaces = workspaces
        self.processes = processes
        self.messages = messages
        self.subscriptions = subscriptions
        self.missions = missions
        self.map_server = map_server
        self.settings = settings
        self.metadata_root = settings.data_dir / "metadata"
        self.imports_root = settings.data_dir / "imports"

    # -- lookups -------------------------------------------------------------------------------
    def readable(self, user: User, workspace_id: str | None) -> dict[str, Any]:
        return self.workspaces.readable(user, workspace_id)

    def writable(self, user: User, workspace_id: str | None) -> dict[str, Any]:
        return self.workspaces.writable(user, workspace_id)

    def file_path(self, workspace: dict[str, Any], file_name: str) -> Path:
        """The path of ``file_name`` in the workspace folder (through the path guard)."""
        return inside(self.workspaces.folder(workspace), check_product_name(file_name))

    def read_product(self, workspace: dict[str, Any], path: Path) -> readers.ProductInfo:
        """Bands, CRS and footprint of ``path``, a file of ``workspace``'s folder, read by a boxed reader."""
        if not readers.rasterio_available():  # no reader has GDAL either: file-level facts, nothing opened
            return readers.read_product(path)
        try:
            if readers.stands_alone(path):  # a reader started ahead may read it: none of this folder need start
                answer = self.reads.read_one_file("product", path)
            else:
                answer = self.reads.read(ReadJob("product", (str(path),)),
                                         read_only=(self.workspaces.folder(workspace),))
            return readers.product_info_from(answer.value)
        except ReadRefused as e:
            raise ServerFailure(f"{path.name} could not be read: {e.message}") from e
        except (ValueError, KeyError, TypeError) as e:
            raise ServerFailure(f"{path.name} could not be read") from e

    def warm_reader(self, workspace: dict[str, Any], file_name: str) -> None:
        """Start a reader of ``workspace``'s folder now, in the background, for a read of ``file_name`` that will
        follow (an import's ingestion): it starts while other work goes on, not when the read is asked.  Not
        when a spare reader is ready for a file of that format: it will read it, and a reader starting meanwhile
        would only take the processor from the transfer."""
        if not readers.rasterio_available():
            return
        if Path(file_name).suffix.lower() in readers.SELF_CONTAINED_SUFFIXES and self.reads.spares_ready:
            return
        self.reads.warm((self.workspaces.folder(workspace),))

    def read_metadata(self, workspace: dict[str, Any], path: Path) -> dict[str, Any]:
        """The metadata tree of ``path``, a file of ``workspace``'s folder, read by a boxed reader."""
        if not readers.rasterio_available():
            return metadata_trees.metadata_tree(path)
        try:
            answer = self.reads.read(ReadJob("metadata", (str(path),)), read_only=(self.workspaces.folder(workspace),))
        except ReadRefused as e:
            raise ServerFailure(f"{path.name} could not be read: {e.message}") from e
        if not isinstance(answer.value, dict):
            raise ServerFailure(f"{path.name} could not be read")
        return answer.value

    def reader_path(self, workspace: dict[str, Any], file_name: str) -> Path:
        """``file_name`` of the workspace for a reader that needs a path (GDAL): checked through
        ``files_beneath`` first (a regular file or a folder, no link on the way; never a FIFO, which would block
        the reader), ``NotFound`` when it is not there (see ``paths.file_or_folder_for_reader``)."""
        self.file_path(workspace, file_name)  # the path guard
        return file_or_folder_for_reader(self.workspaces.folder(workspace), file_name,
                                         NotFound(f"{file_name} is not in the workspace folder"))

    def band_reader_source(self, workspace: dict[str, Any], file_name: str, band: dict[str, Any]) -> str:
        """The GDAL path of a band (``band_source``), its files checked as ``reader_path`` checks them."""
        path = self.reader_path(workspace, file_name)
        source = str(band.get("source") or "")
        if source.startswith("dim:"):
            file_or_folder_for_reader(self.workspaces.folder(workspace),
                                      f"{path.with_suffix('.data').name}/{safe_name(source[4:], 'band file')}",
                                      NotFound(f"the band file of {file_name} is not in the workspace folder"))
        return self.band_source(path, band)

    def get(self, workspace_id: str, file_name: str) -> dict[str, Any] | None:
        return self.products.get(product_key(workspace_id, file_name))

    def of_workspace(self, workspace_id: str) -> list[dict[str, Any]]:
        return sorted(self.products.find(workspaceId=workspace_id), key=lambda r: r.get("fileName") or "")

    def load(self, user: User, workspace_id: str | None, file_name: str | None, *,
             write: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
        """The workspace and the product record; 400 bad name, 403 no access, 404 unknown product."""
        name = check_product_name(file_name)
        workspace = self.writable(user, workspace_id) if write else self.readable(user, workspace_id)
        record = self.get(workspace["workspaceId"], name)
        if record is None:
            raise NotFound("the product is not in the workspace")
        return workspace, record

    # -- views ---------------------------------------------------------------------------------
    @staticmethod
    def band_view(band: dict[str, Any]) -> dict[str, Any]:
        view = {k: band.get(k) for k in _FIELDS_OF_BAND if band.get(k) is not None}
        view["published"] = bool(band.get("published"))
        view["width"] = int(band.get("width") or 0)
        view["height"] = int(band.get("height") or 0)
        return view

    def view(self, record: dict[str, Any]) -> dict[str, Any]:
        """GeorefProductViewModel fields of a record (no metadata: it is asked for separately)."""
        return {
            "name": record.get("name"), "fileName": record.get("fileName"),
            "productFriendlyName": record.get("productFriendlyName"),
            "bandsGroups": {"nodeName": readers.NODE_NAME,
                            "bands": [self.band_view(b) for b in record.get("bands") or []]},
            "metadataFileReference": record.get("metadataFileReference"),
            "metadataFileCreated": bool(record.get("metadataFileCreated")),
            "style": record.get("style"), "description": record.get("description"),
            "bbox": record.get("bbox"),
        }

    @staticmethod
    def light_view(record: dict[str, Any]) -> dict[str, Any]:
        """bywslight: names and bbox only."""
        return {"name": record.get("name"), "fileName": record.get("fileName"),
                "productFriendlyName": record.get("productFriendlyName") or record.get("name"),
                "bbox": record.get("bbox")}

    def list_views(self, user: User, workspace_id: str | None, *, light: bool = False) -> list[dict[str, Any]]:
        workspace = self.readable(user, workspace_id)
        records = self.of_workspace(workspace["workspaceId"])
        return [self.light_view(r) if light else self.view(r) for r in records]

    def names(self, user: User, workspace_id: str | None) -> list[str]:
        workspace = self.readable(user, workspace_id)
        return [str(r["fileName"]) for r in self.of_workspace(workspace["workspaceId"])]

    # -- update ----------------------------------------------------------------------------------
    def update(self, user: User, workspace_id: str | None, file_name: str | None, changes: dict[str, Any]) -> None:
        """Friendly name, style and description only (the keys present in ``changes``; ``None`` clears);
        a new style is applied to the published layers."""
        if not file_name:
            # The contract lists no 400 here, but a caller's mistake is never a 500 (gaps.md, first section).
            raise BadRequest("the product's fileName is required")
        workspace = self.writable(user, workspace_id)
        name = check_product_name(str(file_name))
        record = self.get(workspace["workspaceId"], name)
        if record is None:  # the original answered 500; a caller's mistake is a 400 here
            raise BadRequest("the product is not in the workspace")
        new: dict[str, Any] = {k: changes[k] for k in ("productFriendlyName", "style", "description") if k in changes}
        for key, value in new.items():
            if value is not None and (not isinstance(value, str) or len(value) > 10_000):
                raise ServerFailure(f"invalid {key}")
        if all((record.get(k) or "") == (new[k] or "") for k in new):
            return
        self.products.update(record["productId"], {**new, "lastUpdate": now_ms()})
        if "style" in new and (record.get("style") or "") != (new["style"] or ""):
            for band in record.get("bands") or []:
                if band.get("layerId"):
                    try:
                        self.map_server.restyle(self.band_reader_source(workspace, name, band),
                                                int(band.get("bandIndex") or 1), band["layerId"],
                                                new["style"] or None, self.workspaces.folder(workspace))
                        self.layers.update(band["layerId"], {"style": new["style"] or None})
                    except Exception:
                        log.exception("restyling layer %s failed", band["layerId"])

    # -- what a record owns ----------------------------------------------------------------------
    @staticmethod
    def band_source(path: Path, band: dict[str, Any]) -> str:
        """The GDAL path of a band: the file, a zip member, or a SNAP band image."""
        source = str(band.get("source") or "")
        if source.startswith("zip:"):
            return f"/vsizip/{path}/{source[4:]}"
        if source.startswith("dim:"):
            return str(path.with_suffix(".data") / safe_name(source[4:], "band file"))
        return str(path)

    def _remove_layer(self, layer_id: str) -> None:
        try:
            self.map_server.remove(layer_id)
        except Exception:
            log.exception("removing layer %s failed", layer_id)
        self.layers.delete(layer_id)

    def _metadata_path(self, reference: str) -> Path:
        return inside(self.metadata_root, safe_name(reference, "metadata reference"))

    def _remove_metadata_file(self, reference: str | None) -> None:
        if not reference:
            return
        with contextlib.suppress(FileNotFoundError, BadRequest):
            self._metadata_path(reference).unlink()
