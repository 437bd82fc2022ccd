"""The path guard: every user-supplied name that becomes part of a path goes through here."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ..errors import BadRequest, DomainError

MAX_NAME_LENGTH = 255
_FORBIDDEN = re.compile(r"[/\\\x00-\x1f\x7f]")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@+-]{0,199}$")


def safe_name(name: str | None, what: str = "name") -> str:
    """``name`` if it is a plain file or folder name: no separators, no ``..``, no control characters."""
    if name is None or not name.strip():
        raise BadRequest(f"missing {what}")
    if len(name) > MAX_NAME_LENGTH:
        raise BadRequest(f"{what} is too long")
    if _FORBIDDEN.search(name) or ".." in name or name in (".", "~") or name != name.strip():
        raise BadRequest(f"invalid {what}: {name[:60]!r}")
    return name


def safe_id(value: str | None, what: str = "id") -> str:
    """An identifier used as a folder name (workspace ids, user ids)."""
    if value is None or not _ID.match(value) or ".." in value:
        raise BadRequest(f"invalid {what}")
    return value


def inside(root: Path, *parts: str) -> Path:
    """``root/parts...`` after checking every part and that the result stays under ``root``."""
    path = root.joinpath(*(safe_name(p, "path element") for p in parts))
    resolved_root = root.resolve()
    resolved = path.resolve()
    if resolved != resolved_root and resolved_root not in resolved.parents:
        raise BadRequest("path outside the data root")
    return path


def folder_size(path: Path) -> int:
    """Total bytes of the regular files under ``path`` (0 if it does not exist)."""
    total = 0
    stack = [path]
    while stack:
        current = stack.pop()
        try:
            with os.scandir(current) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(Path(entry.path))
                    elif entry.is_file(follow_symlinks=False):
                        total += entry.stat(follow_symlinks=False).st_size
        except FileNotFoundError:
            continue
    return total


def remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def empty_folder(folder: Path) -> None:
    """Remove everything inside ``folder`` (which stays, if it exists)."""
    if not folder.is_dir() or folder.is_symlink():
        return
    for entry in folder.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


def human_size(size: int) -> str:
    """``0B``, ``512B``, ``12 KB``, ``3.4 GB`` (the text clients show for workspace storage)."""
    if size <= 0:
        return "0B"
    units = ["B", "KB", "MB", "GB", "TB", "PB"]
    value = float(size)
    unit = 0
    while value >= 1024 and unit < len(units) - 1:
        value /= 1024
        unit += 1
    if unit == 0:
        return f"{size}B"
    return f"{value:.1f} {units[unit]}" if value < 10 else f"{round(value)} {units[unit]}"


def stage_bytes(folder: Path, data: bytes, limit: int, what: str, suffix: str) -> Path:
    """``data`` in a new temporary file of ``folder`` (an XML text sent in a request body, before it is
    checked and moved into place); 400 when it is larger than ``limit`` bytes."""
    if len(data) > limit:
        raise BadRequest(f"the {what} is larger than {limit} bytes")
    folder.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=folder, prefix=".xml-", suffix=suffix)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    return Path(name)


@dataclass
class OpenedFile:
    """A stored file opened for download: the stream (the answer closes it), its size, its download name."""

    stream: IO[bytes]
    size: int
    filename: str


def open_for_download(path: Path, filename: str, missing: DomainError) -> OpenedFile:
    """``path`` opened to be streamed as ``filename``; raises ``missing`` when there is no such file."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 - the answer streams and closes it
    except (FileNotFoundError, IsADirectoryError) as e:
        raise missing from e
    return OpenedFile(handle, os.fstat(handle.fileno()).st_size, filename)


def read_with_etag(path: Path, missing: DomainError) -> tuple[bytes, str]:
    """The bytes of ``path`` and a strong entity tag of them; raises ``missing`` when there is no such file."""
    try:
        data = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError) as e:
        raise missing from e
    return data, '"' + hashlib.sha256(data).hexdigest() + '"'
