"""The ``/catalog`` file calls: a workspace file's existence, place, properties (with its MD5) and bytes.

A file is read through ``files_beneath``: opened once beneath the workspace folder, no link followed, and
only a regular file (a FIFO an app made is refused at once instead of blocking a server thread).  A folder,
or a SNAP product (``.dim`` and its ``.data`` folder), is served as a zip of its regular files.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import IO, Any, BinaryIO

from ....errors import NotFound
from ....files_beneath import NotRegularFile, open_folder_fd, open_regular, open_regular_fd, regular_files_below
from ....paths import OpenedFile, not_a_regular_file
from ...accounts.identity import User
from .. import product_files, readers
from .records import CHUNK, ProductRecords, check_product_name


@dataclass
class ZippedFiles:
    """A download served as a zip built while it is sent: its members (an opener and the name in the zip)."""

    members: list[tuple[Callable[[], BinaryIO], str]]
    filename: str


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
        """The file's properties, its size and MD5 read from the one descriptor it was opened as (a folder's
        size is the sum of its files); 400 when it is neither a regular file nor a folder."""
        path = self.existing_file(user, workspace_id, file_name)
        workspace = self.workspaces.load(workspace_id)
        record = self.get(workspace["workspaceId"], path.name) or {}
        out: dict[str, Any] = {
            "fileName": path.name,
            "friendlyName": record.get("productFriendlyName") or product_files.stem_of(path.name),
            "style": record.get("style") or "",
        }
        try:
            fd, info = open_regular_fd(path.parent, path.name)
        except NotRegularFile as e:
            if e.kind != "a folder":
                raise not_a_regular_file(e) from None
            out.update(size=readers.folder_or_file_size(path), lastUpdateTimestampMs=int(path.stat().st_mtime * 1000))
            return out
        except (FileNotFoundError, NotADirectoryError):
            raise NotFound(f"{path.name} is not in the workspace") from None
        with os.fdopen(fd, "rb") as stream:
            out.update(size=info.st_size, lastUpdateTimestampMs=int(info.st_mtime * 1000))
            if checksum:
                out["checksum"] = md5_of(stream)
        return out

    def download(self, user: User, workspace_id: str | None, file_name: str | None) -> OpenedFile | ZippedFiles:
        """``/catalog/downloadbyname``: the regular file opened once, or a zip of a folder's regular files, or of
        a SNAP product's ``.dim`` and ``.data`` folder; 404 when it is not there, 400 when it is anything else."""
        name = check_product_name(file_name, "file name")
        workspace = self.readable(user, workspace_id)
        folder = self.workspaces.folder(workspace)
        try:
            fd, info = open_regular_fd(folder, name)
        except NotRegularFile as e:
            if e.kind != "a folder":
                raise not_a_regular_file(e) from None
            return ZippedFiles(_members_below(folder, name), f"{name}.zip")
        except (FileNotFoundError, NotADirectoryError):
            raise NotFound(f"{name} is not in the workspace") from None
        stream = os.fdopen(fd, "rb")
        if not name.lower().endswith(".dim"):
            return OpenedFile(stream, info.st_size, name)
        opened: Callable[[], BinaryIO] = lambda: stream  # noqa: E731 - the .dim is already open
        return ZippedFiles([(opened, name), *_members_below(folder, f"{name[:-4]}.data")],
                           f"{product_files.stem_of(name)}.zip")


def _members_below(folder: Path, relative: str) -> list[tuple[Callable[[], BinaryIO], str]]:
    """The regular files under ``folder/relative`` (none when it is not a folder), each opened when its turn
    comes, again beneath ``folder`` and without following links."""
    try:
        below = open_folder_fd(folder, relative)
    except (FileNotFoundError, NotADirectoryError, NotRegularFile):
        return []
    try:
        names = [f"{relative}/{inner}" for inner in regular_files_below(below)]
    finally:
        os.close(below)
    return [(partial(open_regular, folder, member), member) for member in names]


def md5_of(stream: IO[bytes]) -> str:
    """The MD5 (hex) of what is left to read of ``stream``."""
    digest = hashlib.md5(usedforsecurity=False)
    for chunk in iter(lambda: stream.read(CHUNK), b""):
        digest.update(chunk)
    return digest.hexdigest()
