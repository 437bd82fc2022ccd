"""An app's files on disk: unpacking an uploaded zip safely, and packing the app folder back into a zip.

Every entry name goes through the path guard (``paths.inside``): no absolute names, no ``..``, no links
(symbolic-link entries are refused, not followed), at most ``MAX_ENTRIES`` entries and the settings' byte
cap on the unpacked size (a zip bomb stops at the cap).  A zip whose entries all sit in one top folder
(the app's folder zipped as a whole) is unpacked from inside that folder.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
import zipfile
import zlib
from pathlib import Path, PurePosixPath
from typing import IO

from ...errors import BadRequest
from ...paths import MAX_NAME_BYTES, MAX_PATH_BYTES, inside, name_bytes, safe_name
from ...zip_streams import ChunkReader, zip_chunks

MAX_ENTRIES = 10_000
CHUNK = 1024 * 1024
PIP_TXT = "pip.txt"


def is_zip(path: Path) -> bool:
    return zipfile.is_zipfile(path)


def _entry_parts(info: zipfile.ZipInfo) -> list[str]:
    name = info.filename.replace("\\", "/")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise BadRequest(f"the zip entry {info.filename[:100]!r} is an absolute path")
    parts = [p for p in PurePosixPath(name).parts if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise BadRequest(f"the zip entry {info.filename[:100]!r} leaves the app folder")
    for part in parts:
        safe_name(part, f"the zip entry {info.filename[:100]!r}: a name in it")
    size = name_bytes("/".join(parts))
    if size > MAX_PATH_BYTES:
        raise BadRequest(f"the zip entry {info.filename[:100]!r}... is too long: {size} bytes, the limit is "
                         f"{MAX_PATH_BYTES} bytes for a path inside the app")
    return parts


def _is_link(info: zipfile.ZipInfo) -> bool:
    return stat.S_ISLNK(info.external_attr >> 16)


def unpack(archive: Path, target: Path, max_bytes: int) -> list[str]:
    """Unpack ``archive`` into ``target`` (created; existing files overwritten); the relative names written."""
    try:
        bundle = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as e:
        raise BadRequest("the file is not a valid zip") from e
    with bundle:
        infos = [i for i in bundle.infolist() if not i.is_dir()]
        if len(infos) > MAX_ENTRIES:
            raise BadRequest(f"the zip has more than {MAX_ENTRIES} entries")
        entries: list[tuple[zipfile.ZipInfo, list[str]]] = []
        for info in infos:
            if _is_link(info):
                raise BadRequest(f"the zip entry {info.filename[:100]!r} is a link: links are not allowed")
            parts = _entry_parts(info)
            if parts and parts[0] != "__MACOSX":
                entries.append((info, parts))
        if not entries:
            raise BadRequest("the zip is empty")
        tops = {parts[0] for _, parts in entries}
        if len(tops) == 1 and all(len(parts) > 1 for _, parts in entries):
            entries = [(info, parts[1:]) for info, parts in entries]
        if sum(info.file_size for info, _ in entries) > max_bytes:
            raise BadRequest(f"the app is larger than {max_bytes} bytes unpacked")
        target.mkdir(parents=True, exist_ok=True)
        written = 0
        names: list[str] = []
        for info, parts in entries:
            destination = inside(target, *parts)
            destination.parent.mkdir(parents=True, exist_ok=True)
            if destination.is_symlink() or destination.is_dir():
                raise BadRequest(f"the zip entry {info.filename[:100]!r} clashes with a folder or link")
            with open(destination, "wb") as out:
                written = _copy_entry(bundle, info, out, written, max_bytes)
            names.append("/".join(parts))
    return names


def _copy_entry(bundle: zipfile.ZipFile, info: zipfile.ZipInfo, out: IO[bytes], written: int, max_bytes: int) -> int:
    """Copy one entry, the total unpacked so far ``written`` kept under ``max_bytes``; the new total.  A damaged
    entry (one whose data is not what its header says: size, checksum, compression) is a 400 naming it."""
    try:
        with bundle.open(info) as source:
            while chunk := source.read(CHUNK):
                written += len(chunk)
                if written > max_bytes:
                    raise BadRequest(f"the app is larger than {max_bytes} bytes unpacked")
                out.write(chunk)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, ValueError) as e:
        raise BadRequest(f"the zip entry {info.filename[:100]!r} is damaged or unreadable ({type(e).__name__})") from e
    return written


STAGING_PREFIX = ".staging-"
OLD_SUFFIX = ".old"
MAX_FOLDER_NAME_BYTES = MAX_NAME_BYTES - len("." + OLD_SUFFIX)
"""The longest name of a folder ``replace_folder`` replaces (its old content waits as ``.<name>.old``)."""


def replace_folder(staged: Path, folder: Path) -> None:
    """Put ``staged`` in place of ``folder`` (the old content removed).  A crash between the two renames
    leaves the old content as ``.<name>.old`` and no ``<name>``: ``finish_replacements`` puts it back."""
    old = folder.with_name(f".{folder.name}{OLD_SUFFIX}")
    shutil.rmtree(old, ignore_errors=True)
    if folder.exists():
        os.replace(folder, old)
    os.replace(staged, folder)
    shutil.rmtree(old, ignore_errors=True)


def staging_folder(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(dir=root, prefix=STAGING_PREFIX))


def finish_replacements(root: Path) -> list[str]:
    """At start, what a crash during ``replace_folder`` or an upload left under ``root``: an old folder
    whose replacement never came back in place (the replaced one is missing), is restored; one whose
    replacement is there, and every staging folder, is removed.  The names of the folders restored."""
    restored: list[str] = []
    if not root.is_dir():
        return restored
    for path in sorted(root.iterdir()):
        if path.is_symlink() or not path.is_dir():
            continue
        if path.name.startswith(STAGING_PREFIX):
            shutil.rmtree(path, ignore_errors=True)
        elif path.name.startswith(".") and path.name.endswith(OLD_SUFFIX) and len(path.name) > 1 + len(OLD_SUFFIX):
            folder = root / path.name[1:-len(OLD_SUFFIX)]
            if folder.exists():
                shutil.rmtree(path, ignore_errors=True)
            else:
                os.replace(path, folder)
                restored.append(folder.name)
    return restored


def digest(path: Path) -> str:
    """A hash of a file's bytes ("" when it does not exist)."""
    if not path.is_file():
        return ""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def files_of(folder: Path) -> list[Path]:
    """The regular files under ``folder``, links skipped, sorted."""
    found: list[Path] = []
    for current, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not (Path(current) / d).is_symlink())
        found += [Path(current) / f for f in sorted(files) if not (Path(current) / f).is_symlink()]
    return found


class ZipStream(ChunkReader):
    """The app folder as a zip, produced while it is read: only one chunk is in memory at a time."""

    def __init__(self, folder: Path) -> None:
        super().__init__(zip_chunks(((path, path.relative_to(folder).as_posix()) for path in files_of(folder)),
                                    zipfile.ZIP_DEFLATED))
