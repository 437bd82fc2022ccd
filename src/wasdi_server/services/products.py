"""Products: the files of a workspace that the service knows, their bands, footprint, metadata and layers.

Records live in the ``products`` collection, one per (workspace, file) with the key
``<workspaceId>|<fileName>``; files live in the workspace folder (``WorkspaceService.folder``).  Layers
published from a band are in the ``layers`` collection (key ``layerId``) so the map server's files
can be checked against the workspace they belong to.

Rules (contract, /product and /filebuffer; where it is silent, the choices are written here):
- Access: reading (byname, metadata, lists, publishing a band, downloading a file) needs read
  access to the workspace (owner, a sharing, admin, or a public workspace); anything that changes
  files or records needs write access.
- Names: every product name is a plain file name of the workspace folder (the path guard), and a
  name starting with ``.`` is refused (this server's partial uploads and imports are hidden files).
- ``name`` of a product is its file name without the last extension; ``productFriendlyName`` starts
  equal to it.  ``bandsGroups.nodeName`` is ``Bands``.
- Ingesting an existing product again (same file) rereads bands and footprint but keeps the friendly
  name, style and description; its published layers are dropped (the file may have changed).
- Metadata is computed by a READMETADATA operation the first time it is asked for and kept as a JSON
  file under ``<data_dir>/metadata/`` (``metadataFileReference`` is its name there).  While it is being
  generated the answer is the placeholder ``{"name": "Generating Metadata, try later"}``; only one
  READMETADATA is queued at a time per product.  If reading failed, ``metadataFileCreated`` is true
  with no reference, and the answer is null.
- Workspace storage size is measured again after every change to the folder.
- Failure codes the contract leaves open: ``/product/delete`` answers ``intValue`` 400 (bad name or
  workspace), 401, 403 (no write access) and 404 (no such product); ``/product/update`` answers 500 for a
  product it does not know (the contract lists 200, 401, 403 and 500 only); every failure of
  ``/product/deletelist`` and of ``/filebuffer/download`` that is not 401/403 is ``intValue`` 500, as the
  contract lists (an invalid session is 401 everywhere: the dispatcher answers it before the handler).
  An empty ``deletelist`` succeeds without starting anything.
- ``/product/deletelist`` runs as a DELETE process of the workspace: it ends DONE with a DELETE broker
  message, or ERROR (the payload names the products that were not there; the others are deleted).
- ``/filebuffer/share``: ``PRODUCT_ALREADY_PRESENT`` is HTTP 200 with ``boolValue`` true, as the contract
  says (the original's ``boolValue`` false is history, gaps.md).  Read access is needed on the origin,
  write access on the destination.
- ``/filebuffer/publishband``: read access is enough (it draws a map); a band already published answers
  PUBLISHBAND at once; asking again while its PUBLISHBAND process is queued or running answers that
  process's id (no second process); an unknown band answers null like an unknown product.
- Imports (``/filebuffer/download``): write access (403), then the storage quota of gaps §17 (401; off
  when ``activate_subscription_checks`` is false), then mission access (401).  The platform is the
  given one, else inferred from the file name.  A platform no mission lists is denied; a file whose
  platform is neither given nor recognisable is a plain file and needs no mission.
- The imported file is named after ``name`` (with the URL's extension when ``name`` has none), else
  after the last segment of the URL path, else ``download-<uuid>``.  A product of that name already in
  the workspace answers ``DONE`` at once, with a DOWNLOAD broker message.
- ``file://`` imports read only below ``<data_dir>/imports``, the folder of the built-in ``LOCAL`` search
  catalogue (``search_catalogue_dir``, default ``<data_dir>/catalogue``: its results link there) and the
  folders of ``import_roots``; a symbolic link is followed and must still land inside one of them.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wasdi_sdk.atomic_files import atomic_writer, replace_durably, write_atomic

from ..errors import BadRequest, Forbidden, NotFound, ServerFailure, Unauthorized
from ..messages import OK, Messages
from ..providers.mapserver import MapServer, MapServerError, PublishedLayer, new_layer_id
from ..store import Collection
from . import readers
from .identity import User, now_ms
from .missions import MissionService
from .paths import human_size, inside, safe_name
from .processes import ACTIVE, ProcessService
from .workspaces import WorkspaceService

if TYPE_CHECKING:
    from ..settings import Settings
    from .subscriptions import SubscriptionService

log = logging.getLogger("wasdi_server.products")

METADATA_PLACEHOLDER = "Generating Metadata, try later"
PRODUCT_ALREADY_PRESENT = "PRODUCT_ALREADY_PRESENT"
DONE = "DONE"
GIB = 1024**3
STORAGE_CAPS: dict[str, int | None] = {
    # user type: bytes of workspace storage under which imports and runs are allowed (gaps §17)
    "PROFESSIONAL": None,
    "STANDARD": 100 * GIB,
    "FREE": 20_000_000_000,
    "NONE": 20_000_000_000,
}
CHUNK = 1024 * 1024
_FIELDS_OF_BAND = ("name", "published", "width", "height", "layerId", "geoserverBoundingBox", "geoserverUrl")


def product_key(workspace_id: str, file_name: str) -> str:
    return f"{workspace_id}|{file_name}"


def check_product_name(name: str | None, what: str = "product name") -> str:
    """A product file name: the path guard, and no leading dot (hidden files are this server's own)."""
    checked = safe_name(name, what)
    if checked.startswith("."):
        raise BadRequest(f"invalid {what}: {checked[:60]!r}")
    return checked


class ProductService:
    """The ``products`` and ``layers`` collections, and the files they describe."""

    def __init__(self, products: Collection, layers: Collection, workspaces: WorkspaceService,
                 processes: ProcessService, messages: Messages, subscriptions: SubscriptionService,
                 missions: MissionService, map_server: MapServer, settings: Settings) -> None:
        self.products = products
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

    # -- ingestion -----------------------------------------------------------------------------
    def ingest_file(self, workspace: dict[str, Any], file_name: str, *, style: str | None = None,
                    platform: str | None = None, footprint: str | None = None) -> dict[str, Any]:
        """Read the file and create (or refresh) its record.  The file must be in the workspace folder."""
        path = self.file_path(workspace, file_name)
        if not path.exists():
            raise NotFound(f"{file_name} is not in the workspace folder")
        info = readers.read_product(path)
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
                stem = readers.stem_of(file_name)
                record = self.products.insert({
                    "productId": key, "workspaceId": workspace_id, "fileName": file_name, "name": stem,
                    "productFriendlyName": stem, "style": style or None, "description": None,
                    "platform": platform or readers.infer_platform(file_name), "creationDate": stamp,
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

    # -- metadata ------------------------------------------------------------------------------
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

    def _metadata_path(self, reference: str) -> Path:
        return inside(self.metadata_root, safe_name(reference, "metadata reference"))

    def _remove_metadata_file(self, reference: str | None) -> None:
        if not reference:
            return
        with contextlib.suppress(FileNotFoundError, BadRequest):
            self._metadata_path(reference).unlink()

    def write_metadata(self, workspace: dict[str, Any], file_name: str) -> dict[str, Any]:
        """READMETADATA: compute the tree into a JSON file and record the reference."""
        key = product_key(workspace["workspaceId"], file_name)
        if self.products.get(key) is None:
            raise NotFound(f"{file_name} is not a product of the workspace")
        try:
            tree = readers.metadata_tree(self.file_path(workspace, file_name))
        except BaseException:
            # As the original: a failed read is not retried on every request (the answer is now null).
            self.products.update(key, {"metadataFileCreated": True})
            raise
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
        new = {k: changes[k] for k in ("productFriendlyName", "style", "description") if k in changes}
        for key, value in new.items():
            if value is not None and (not isinstance(value, str) or len(value) > 10_000):
                raise ServerFailure(f"invalid {key}")
        if all((record.get(k) or "") == (new[k] or "") for k in new):
            return
        self.products.update(record["productId"], {**new, "lastUpdate": now_ms()})
        if "style" in new and (record.get("style") or "") != (new["style"] or ""):
            path = self.file_path(workspace, name)
            for band in record.get("bands") or []:
                if band.get("layerId"):
                    try:
                        self.map_server.restyle(self.band_source(path, band), int(band.get("bandIndex") or 1),
                                                band["layerId"], new["style"] or None)
                        self.layers.update(band["layerId"], {"style": new["style"] or None})
                    except Exception:
                        log.exception("restyling layer %s failed", band["layerId"])

    # -- deletion --------------------------------------------------------------------------------
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
            for extra in readers.sidecars(folder, record["fileName"]):
                readers.safe_unlink(extra)
            readers.safe_unlink(path)

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

    # -- sharing between workspaces ------------------------------------------------------------
    def queue_share(self, user: User, origin_id: str | None, destination_id: str | None, file_name: str | None,
                    parent: str | None) -> str:
        """``/filebuffer/share``: the SHARE process id, or ``PRODUCT_ALREADY_PRESENT``."""
        try:
            name = check_product_name(file_name)
        except BadRequest as e:
            raise BadRequest("Invalid product name.") from e
        try:
            origin = self.workspaces.load(origin_id)
        except BadRequest as e:
            raise BadRequest("Invalid origin workspace.") from e
        try:
            destination = self.workspaces.load(destination_id)
        except BadRequest as e:
            raise BadRequest("Invalid destination workspace.") from e
        self.readable(user, origin["workspaceId"])
        self.writable(user, destination["workspaceId"])
        if self.get(origin["workspaceId"], name) is None or not self.file_path(origin, name).exists():
            raise BadRequest("Invalid product name.")
        if self.get(destination["workspaceId"], name) is not None:
            return PRODUCT_ALREADY_PRESENT
        record = self.processes.create(user, destination["workspaceId"], "SHARE", name, parent=parent,
                                       parameter={"originWorkspaceId": origin["workspaceId"],
                                                  "destinationWorkspaceId": destination["workspaceId"],
                                                  "fileName": name})
        return str(record["processObjId"])

    def copy_to(self, origin_id: str, destination_id: str, file_name: str,
                progress: Callable[[int], None] | None = None) -> dict[str, Any]:
        """The SHARE operation: copy the file (and sidecars) and the record into the destination."""
        origin = self.workspaces.load(origin_id)
        destination = self.workspaces.load(destination_id)
        source_record = self.get(origin_id, file_name)
        if source_record is None:
            raise NotFound(f"{file_name} is no longer in the origin workspace")
        source = self.file_path(origin, file_name)
        target = self.file_path(destination, file_name)
        target.parent.mkdir(parents=True, exist_ok=True)
        items = [source, *readers.sidecars(self.workspaces.folder(origin), file_name)]
        for item in items:
            copy_item(item, target.parent / item.name, progress if item == source else None)
        record = self.ingest_file(destination, file_name, style=source_record.get("style"),
                                  platform=source_record.get("platform"))
        keep = {k: source_record.get(k) for k in ("productFriendlyName", "description") if source_record.get(k)}
        if source_record.get("bbox") and not record.get("bbox"):
            keep["bbox"] = source_record["bbox"]
        if keep:
            record = self.products.update(record["productId"], keep) or record
        return record

    # -- imports -------------------------------------------------------------------------------
    def check_storage(self, user: User) -> None:
        """The storage quota of gaps §17 (the contract's "active subscription"); 401 when exceeded."""
        if not self.settings.activate_subscription_checks:
            return
        user_type = self.subscriptions.user_type(user.user_id)
        cap = STORAGE_CAPS.get(user_type, STORAGE_CAPS["NONE"])
        if cap is None:
            return
        used = sum(int(d.get("storageSize") or 0) for d in self.workspaces.workspaces.find(userId=user.user_id))
        if used >= cap:
            shown = "STANDARD" if user_type == "STANDARD" else "FREE"
            raise Unauthorized(f"Exceeding max storage size for {shown} subscription: {human_size(used)}")

    def check_mission(self, user: User, platform: str | None) -> None:
        """Mission access for a platform (``None``: a plain file, nothing to check); 401 when denied."""
        if not platform:
            return
        missions = [m for m in self.missions.all() if str(m.get("indexvalue")) == platform]
        if not missions:
            raise Unauthorized(f"no mission {platform!r} on this server")
        if not any(self.missions.can_access(user, m) for m in missions):
            raise Unauthorized(f"no access to the mission {platform!r}")

    @staticmethod
    def import_file_name(file_url: str, name: str | None) -> str:
        """The file name an import is stored under (see the module rules)."""
        from urllib.parse import unquote, urlsplit

        last = unquote(urlsplit(file_url).path.rstrip("/").rsplit("/", 1)[-1])
        url_name = last if last and re.fullmatch(r"[^\x00-\x1f/\\]{1,255}", last) and ".." not in last else ""
        wanted = (name or "").strip()
        if wanted:
            wanted = check_product_name(wanted)
            url_suffix = Path(url_name).suffix if url_name else ""
            if not Path(wanted).suffix and url_suffix and re.fullmatch(r"\.[A-Za-z0-9]{1,10}", url_suffix):
                return wanted + url_suffix
            return wanted
        if url_name and not url_name.startswith(".") and url_name.strip() == url_name:
            return url_name
        return f"download-{uuid.uuid4().hex[:12]}"

    def queue_import(self, user: User, data: dict[str, Any]) -> str:
        """``/filebuffer/download``: ``DONE`` when the product is already there, else the DOWNLOAD process id."""
        file_url = (data.get("fileUrl") or "").strip()
        workspace = self.writable(user, data.get("workspace"))
        if not file_url:
            raise BadRequest("fileUrl is required")
        scheme = file_url.split(":", 1)[0].lower()
        if scheme not in ("http", "https", "file"):
            raise BadRequest(f"cannot import {scheme}: URLs (http, https and file are supported)")
        if scheme == "file":
            self.local_source(file_url)  # fail now (403/404) rather than in the operation
        file_name = self.import_file_name(file_url, data.get("name"))
        self.check_storage(user)
        platform = (data.get("platform") or "").strip() or readers.infer_platform(data.get("name") or file_name)
        self.check_mission(user, platform)
        existing = self.get(workspace["workspaceId"], file_name)
        if existing is not None:
            self.messages.send("DOWNLOAD", {"name": existing.get("name"), "fileName": existing.get("fileName")},
                               workspace["workspaceId"], result=OK)
            return DONE
        provider = (data.get("provider") or "").strip()
        record = self.processes.create(
            user, workspace["workspaceId"], "DOWNLOAD", file_name, subtype=provider.upper() if provider else "",
            parent=data.get("parent") or None,
            parameter={"fileUrl": file_url, "fileName": file_name, "provider": provider or None,
                       "bbox": data.get("bbox") or None, "platform": platform or None,
                       "volumeName": data.get("volumeName"), "volumePath": data.get("volumePath")})
        return str(record["processObjId"])

    def import_roots(self) -> list[Path]:
        """``<data_dir>/imports``, the built-in search catalogue's folder, and ``import_roots``."""
        catalogue = str(getattr(self.settings, "search_catalogue_dir", "") or "")
        roots = [self.imports_root, Path(catalogue) if catalogue else self.settings.data_dir / "catalogue"]
        configured: Any = self.settings.import_roots
        if isinstance(configured, str):
            configured = [p for p in configured.split(os.pathsep) if p.strip()]
        roots += [Path(p).expanduser() for p in configured or []]
        return roots

    def local_source(self, file_url: str) -> Path:
        """The file a ``file://`` URL names, if it is below an import root (else 403)."""
        from urllib.parse import unquote, urlsplit

        parts = urlsplit(file_url)
        if parts.netloc not in ("", "localhost"):
            raise Forbidden("file:// URLs must name a local file")
        path = Path(unquote(parts.path))
        if not path.is_absolute():
            raise BadRequest("file:// URLs must be absolute")
        resolved = path.resolve()
        for root in self.import_roots():
            root_resolved = root.resolve()
            if resolved == root_resolved or root_resolved in resolved.parents:
                if not resolved.is_file():
                    raise NotFound("the file to import does not exist")
                return resolved
        raise Forbidden("this server does not import files from that folder")

    # -- publishing ----------------------------------------------------------------------------
    @staticmethod
    def band_source(path: Path, band: dict[str, Any]) -> str:
        """The GDAL path of a band: the file, a zip member, or a SNAP band image."""
        source = str(band.get("source") or "")
        if source.startswith("zip:"):
            return f"/vsizip/{path}/{source[4:]}"
        if source.startswith("dim:"):
            return str(path.with_suffix(".data") / safe_name(source[4:], "band file"))
        return str(path)

    @staticmethod
    def find_band(record: dict[str, Any], band_name: str) -> dict[str, Any] | None:
        for band in record.get("bands") or []:
            if band.get("name") == band_name:
                return dict(band)
        return None

    @staticmethod
    def publish_result(record: dict[str, Any], band: dict[str, Any]) -> dict[str, Any]:
        """PublishBandResultViewModel fields of a published band."""
        return {"boundingBox": band.get("boundingBox") or "", "bandName": band.get("name"),
                "layerId": band.get("layerId"), "productName": record.get("fileName"),
                "geoserverBoundingBox": band.get("geoserverBoundingBox") or "",
                "geoserverUrl": band.get("geoserverUrl")}

    def publish_band(self, user: User, workspace_id: str | None, file_name: str | None, band_name: str | None,
                     style: str | None, parent: str | None, base_url: str) -> dict[str, Any]:
        """``/filebuffer/publishband``: PUBLISHBAND with the layer when published, else WAITFORRABBIT."""
        workspace, record = self.load(user, workspace_id, file_name)
        band = self.find_band(record, band_name or "")
        if band is None:
            raise NotFound("the product has no such band")
        workspace_id = workspace["workspaceId"]
        layer_id = band.get("layerId")
        if band.get("published") and layer_id and self.map_server.has_layer(layer_id):
            return {"messageCode": "PUBLISHBAND", "messageResult": OK,
                    "payload": self.publish_result(record, band), "workspaceId": workspace_id}
        for process in self.processes.processes.find(lambda r: r.get("status") in ACTIVE, workspaceId=workspace_id,
                                                     operationType="PUBLISHBAND", productName=record["fileName"]):
            if (process.get("parameter") or {}).get("band") == band["name"]:
                return {"messageCode": "WAITFORRABBIT", "messageResult": OK, "payload": process["processObjId"],
                        "workspaceId": workspace_id}
        process = self.processes.create(user, workspace_id, "PUBLISHBAND", record["fileName"], parent=parent,
                                        parameter={"fileName": record["fileName"], "band": band["name"],
                                                   "style": style or record.get("style") or None,
                                                   "baseUrl": base_url})
        return {"messageCode": "WAITFORRABBIT", "messageResult": OK, "payload": process["processObjId"],
                "workspaceId": workspace_id}

    def publish(self, workspace_id: str, file_name: str, band_name: str, style: str | None,
                base_url: str) -> dict[str, Any]:
        """The PUBLISHBAND operation: draw the layer, record it on the band; the PublishBandResultViewModel."""
        workspace = self.workspaces.load(workspace_id)
        record = self.get(workspace_id, file_name)
        if record is None:
            raise NotFound(f"{file_name} is not a product of the workspace")
        band = self.find_band(record, band_name)
        if band is None:
            raise NotFound(f"{file_name} has no band {band_name}")
        path = self.file_path(workspace, file_name)
        layer_id = band.get("layerId") or new_layer_id()
        url = f"{base_url.rstrip('/')}/wms"  # map clients ask it for tiles (WMS GetMap with layers=<layerId>)
        try:
            layer: PublishedLayer = self.map_server.publish(self.band_source(path, band),
                                                            int(band.get("bandIndex") or 1), layer_id, style, url)
        except MapServerError:
            raise
        published = {"published": True, "layerId": layer.layer_id, "geoserverUrl": layer.url,
                     "geoserverBoundingBox": layer.geoserver_bounding_box, "boundingBox": layer.bounding_box}

        def change(doc: dict[str, Any]) -> dict[str, Any]:
            for b in doc.get("bands") or []:
                if b.get("name") == band_name:
                    b.update(published)
            return doc

        updated = self.products.modify(record["productId"], change)
        if updated is None:  # the product went while drawing
            self.map_server.remove(layer.layer_id)
            raise NotFound(f"{file_name} was removed")
        self.layers.upsert({"layerId": layer.layer_id, "workspaceId": workspace_id, "productId": record["productId"],
                            "fileName": file_name, "band": band_name, "style": style,
                            "boundingBox": layer.bounding_box, "geoserverBoundingBox": layer.geoserver_bounding_box,
                            "geoserverUrl": layer.url, "createdDate": now_ms()})
        return self.publish_result(updated, {**band, **published})

    def _remove_layer(self, layer_id: str) -> None:
        try:
            self.map_server.remove(layer_id)
        except Exception:
            log.exception("removing layer %s failed", layer_id)
        self.layers.delete(layer_id)

    def layer_for(self, user: User, layer_id: str) -> Path:
        """The file of a layer this server serves, for a caller who may read its workspace."""
        layer = self.layers.get(layer_id) if len(layer_id) <= 100 else None
        if layer is None:
            raise NotFound("no such layer")
        try:
            self.readable(user, layer["workspaceId"])
        except BadRequest as e:  # the workspace is gone
            raise NotFound("no such layer") from e
        path = self.map_server.layer_file(layer_id)
        if path is None or not path.is_file():
            raise NotFound("no such layer")
        return path

    # -- the /catalog file calls -----------------------------------------------------------------
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


def copy_item(source: Path, target: Path, progress: Callable[[int], None] | None = None) -> None:
    """Copy a file (atomically, in chunks) or a folder (``.data`` of SNAP products) to ``target``."""
    if source.is_dir():
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(source, target, ignore=lambda folder, names: [
            n for n in names if os.path.islink(os.path.join(folder, n))])  # links are not followed out
        return
    done = 0
    with open(source, "rb") as src, atomic_writer(target) as dst:
        while True:
            chunk = src.read(CHUNK)
            if not chunk:
                break
            dst.write(chunk)
            done += len(chunk)
            if progress is not None:
                progress(done)
