"""Copies of a product between workspaces (``/filebuffer/share``, a SHARE process) and the file copy they use.

``PRODUCT_ALREADY_PRESENT`` is HTTP 200 with ``boolValue`` true, as the contract says (the original's
``boolValue`` false is history, gaps.md).  Read access is needed on the origin, write access on the
destination.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from wasdi_sdk.atomic_files import atomic_writer

from ....errors import BadRequest, NotFound
from ....files_beneath import NotRegularFile, open_folder_fd, open_regular, regular_files_below
from ....paths import not_a_regular_file
from ...accounts.identity import User
from .. import product_files
from .ingestion import ProductIngestion
from .records import CHUNK, check_product_name

PRODUCT_ALREADY_PRESENT = "PRODUCT_ALREADY_PRESENT"


class WorkspaceCopies(ProductIngestion):
    """SHARE: a product's file, sidecars and record copied into another workspace."""

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
        try:
            extras = product_files.sidecars(self.workspaces.folder(origin), file_name)
            copy_items(source, extras, target.parent, progress)
        except NotRegularFile as e:
            raise not_a_regular_file(e) from None
        record = self.ingest_file(destination, file_name, style=source_record.get("style"),
                                  platform=source_record.get("platform"))
        keep = {k: source_record.get(k) for k in ("productFriendlyName", "description") if source_record.get(k)}
        if source_record.get("bbox") and not record.get("bbox"):
            keep["bbox"] = source_record["bbox"]
        if keep:
            record = self.products.update(record["productId"], keep) or record
        return record


def copy_item(source: Path, target: Path, progress: Callable[[int], None] | None = None) -> None:
    """Copy a regular file (atomically, in chunks) or a folder's regular files (``.data`` of SNAP products) to
    ``target``, each file opened once through ``files_beneath`` (beneath its folder, no link followed, regular
    files only); ``NotRegularFile`` when ``source`` is neither a regular file nor a folder."""
    try:
        stream = open_regular(source.parent, source.name)
    except NotRegularFile as e:
        if e.kind != "a folder":
            raise
        _copy_folder(source, target)
        return
    done = 0
    with stream as src, atomic_writer(target) as dst:
        while True:
            chunk = src.read(CHUNK)
            if not chunk:
                break
            dst.write(chunk)
            done += len(chunk)
            if progress is not None:
                progress(done)


def _copy_folder(source: Path, target: Path) -> None:
    """The regular files under ``source`` copied to ``target`` (replaced whole); links, FIFOs and the like left."""
    folder_fd = open_folder_fd(source.parent, source.name)
    try:
        names = list(regular_files_below(folder_fd))
    finally:
        os.close(folder_fd)
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for name in names:
        try:
            stream = open_regular(source.parent, f"{source.name}/{name}")
        except (FileNotFoundError, NotRegularFile):
            continue  # removed or swapped since it was listed
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        with stream as src, atomic_writer(destination) as dst:
            shutil.copyfileobj(src, dst, CHUNK)


def copy_items(source: Path, sidecars: list[Path], folder: Path, progress: Callable[[int], None] | None) -> None:
    """``source`` and its ``sidecars`` copied into ``folder``; a sidecar that is not a regular file or a folder
    (a link, a FIFO) is left behind, ``source`` itself must be one (``NotRegularFile`` otherwise)."""
    copy_item(source, folder / source.name, progress)
    for item in sidecars:
        try:
            copy_item(item, folder / item.name)
        except (FileNotFoundError, NotRegularFile):
            continue
