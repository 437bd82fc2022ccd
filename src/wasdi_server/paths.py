"""The path guard: every user-supplied name that becomes part of a path goes through here."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from .errors import BadRequest, DomainError
from .files_beneath import NotRegularFile, kind_beneath, open_regular_fd

MAX_NAME_BYTES = 255
"""The longest file or folder name Linux file systems take (ext4, XFS, Btrfs, tmpfs): 255 bytes, and a name is
stored as UTF-8, so ``Ω`` counts 2 and an emoji 4: names are checked in bytes, never in characters."""
MAX_PATH_BYTES = 1024
"""The longest path below a root a user's archive may create (an app zip's entries); ``PATH_MAX`` is 4096
for the whole path, data directory included."""
_FORBIDDEN = re.compile(r"[/\\\x00-\x1f\x7f]")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@+-]{0,199}$")


def name_bytes(name: str) -> int:
    """How many bytes ``name`` takes on disk (its UTF-8 encoding)."""
    return len(os.fsencode(name))


def safe_name(name: str | None, what: str = "name", max_bytes: int = MAX_NAME_BYTES) -> str:
    """``name`` if it is a plain file or folder name: no separators, no ``..``, no control characters, valid
    text, at most ``max_bytes`` bytes of UTF-8 (400 saying the limit otherwise)."""
    if name is None or not name.strip():
        raise BadRequest(f"missing {what}")
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        raise BadRequest(f"invalid {what}: it is not valid Unicode text") from None
    if size > max_bytes:
        raise BadRequest(f"{what} is too long: {size} bytes in UTF-8, the limit is {max_bytes} bytes "
                         "(file systems count bytes: a letter such as \u03a9 takes 2)")
    if _FORBIDDEN.search(name) or ".." in name or name in (".", "~") or name != name.strip():
        raise BadRequest(f"invalid {what}: {name[:60]!r}")
    return name


def temporary_name(name: str, suffix: str = ".part") -> str:
    """A hidden, unique name for ``name`` while it is written beside it: ``.<name>.<12 hex><suffix>``,
    ``name`` shortened (at a character boundary) so the whole never passes ``MAX_NAME_BYTES``."""
    tail = f".{uuid.uuid4().hex[:12]}{suffix}"
    room = MAX_NAME_BYTES - 1 - len(tail.encode("utf-8"))
    head = os.fsencode(name)[:room].decode("utf-8", "ignore")
    return f".{head}{tail}"


def hide_server_paths(text: str, *roots: Path) -> str:
    """``text`` as a user may read it (a run log, a process payload): every path under one of ``roots`` (the
    data directory) is shown by its last component only, ``roots`` themselves as ``<data directory>``."""
    for root in roots:
        for form in dict.fromkeys((str(root), str(root.resolve()))):
            if not os.path.isabs(form) or form == "/":
                continue
            below = re.compile(re.escape(form.rstrip("/")) + r"/([^\s'\"]*)")
            text = below.sub(lambda m: m.group(1).rstrip("/").rsplit("/", 1)[-1] or "<data directory>", text)
            text = text.replace(form, "<data directory>")
    return text


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


def folder_size(path: Path, *, on_disk: bool = False) -> int:
    """Total bytes of the regular files under ``path`` (0 if it does not exist), links not followed; with
    ``on_disk``, the disk they take (their blocks: a sparse file's holes cost nothing, a partial block a whole
    one) rather than their sizes."""
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
                        info = entry.stat(follow_symlinks=False)
                        total += info.st_blocks * 512 if on_disk else info.st_size
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
    """``path`` opened once (``files_beneath``: no link followed, a regular file only) to be streamed as
    ``filename``; raises ``missing`` when there is no such file, 400 when it is not a regular file."""
    stream, size = open_file_beneath(path.parent, path.name, missing)
    return OpenedFile(stream, size, filename)


def open_file_beneath(folder: Path, relative: str, missing: DomainError) -> tuple[IO[bytes], int]:
    """The regular file ``folder/relative`` opened once for reading, and its size: ``missing`` when it is not
    there, 400 naming what it is when it is a folder, a link, a FIFO, a socket or a device."""
    try:
        fd, info = open_regular_fd(folder, relative)
    except NotRegularFile as e:
        raise not_a_regular_file(e) from None
    except (FileNotFoundError, NotADirectoryError) as e:
        raise missing from e
    return os.fdopen(fd, "rb"), info.st_size


def not_a_regular_file(error: NotRegularFile) -> BadRequest:
    """The 400 for a name that is not a regular file (the server reads regular files only)."""
    return BadRequest(f"{error.name} is {error.kind}: only regular files are read")


def read_with_etag(path: Path, missing: DomainError) -> tuple[bytes, str]:
    """The bytes of ``path`` (opened as ``open_file_beneath`` does) and a strong entity tag of them; raises
    ``missing`` when there is no such file."""
    stream, _ = open_file_beneath(path.parent, path.name, missing)
    with stream:
        data = stream.read()
    return data, '"' + hashlib.sha256(data).hexdigest() + '"'


def file_or_folder_for_reader(folder: Path, relative: str, missing: DomainError) -> Path:
    """``folder/relative`` for a reader that needs a path (GDAL): checked through ``files_beneath`` (no link
    on the way, a regular file or a folder: never a FIFO, socket or device, whose open would block or read a
    device) just before the reader opens it by name; ``missing`` when it is not there, 400 otherwise.

    The reader opens the name again, so a program swapping the name in between is not stopped here: this
    check keeps a FIFO planted beforehand from blocking a worker, not a race; readers that take an open file
    use ``open_file_beneath`` instead."""
    kind = kind_beneath(folder, relative)
    if kind is None:
        raise missing
    if kind not in ("file", "folder"):
        raise not_a_regular_file(NotRegularFile(relative, kind))
    return folder / relative
