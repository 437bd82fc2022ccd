"""What a raster names besides itself, checked before GDAL opens it: every file must lie inside the reader's folders.

GDAL follows what a file says: a VRT's ``SourceFilename`` and a raw band's ``ImageFilename``, an external
overview (``<file>.ovr``, which may itself be a VRT), a ``.aux.xml`` beside it, a header (``.hdr``, ``.ers``,
``.lbl``) that names its data file, a ``/vsicurl/`` path, a ``vrt://`` or ``MEM:::`` connection string, a
Python pixel function.  A boxed reader sees only its folders, but the system's files (``/etc/passwd``) are in
every box, and a reference outside the folders is an attack in any case: ``check`` refuses it with a sentence
before anything is opened.

Rules:
- a GDAL path is a plain path, or ``/vsizip/``, ``/vsitar/``, ``/vsigzip/`` over a plain path; every other
  virtual file system (``/vsicurl/``, ``/vsis3/`` ...), URL, driver prefix (``NETCDF:``, ``MEM:::``, ``vrt://``)
  is refused;
- the plain path, resolved (symbolic links followed), lies inside one of the folders;
- an XML file (a VRT, a ``.aux.xml``, an overview that is a VRT) is parsed: every element naming a file
  (``*Filename``, ``SourceDataset``) is checked the same way, relative to the file when it says so; a pixel
  function in Python is refused;
- every file beside it whose name starts with its name (sidecars GDAL looks for: ``.ovr``, ``.aux.xml``,
  ``.hdr``, ``.msk``, world files) is checked the same way (a symbolic link to elsewhere is refused); a short
  text header naming an absolute path or ``..`` outside the folders is refused;
- at most ``MAX_FILES`` files and ``MAX_DEPTH`` levels are followed: a deeper chain is refused.
"""

from __future__ import annotations

import os
import re
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree

MAX_DEPTH = 8
MAX_FILES = 2000
MAX_XML_BYTES = 32 * 1024 * 1024
"""A larger XML file is refused rather than parsed (VRTs of thousands of tiles stay far below)."""
MAX_HEADER_BYTES = 256 * 1024
"""Text sidecars up to this size are scanned for paths; larger ones are not headers."""
ARCHIVES = ("/vsizip/", "/vsitar/", "/vsigzip/")
_DRIVER_PREFIX = re.compile(r"^[A-Za-z][A-Za-z0-9_]*:")
_ABSOLUTE_IN_TEXT = re.compile(r"""(?:^|[\s"'=(,])((?:/vsi[a-z0-9_]+/|/)[^\s"'),;]+|\.\.[/\\][^\s"'),;]*)""")
_FILE_ELEMENTS = ("SourceDataset", "SrcDataset", "DstDataset")
_TEXT_SIDECARS = (".hdr", ".ers", ".lbl", ".rsc", ".aux", ".txt", ".imd", ".rpb", ".prj", ".cub")


class ReferenceRefused(Exception):
    """A file names something outside the reader's folders (the message says what, without server paths)."""


@dataclass
class _Walk:
    roots: tuple[str, ...]
    seen: set[str] = field(default_factory=set)

    def visit(self, key: str) -> bool:
        if key in self.seen:
            return False
        if len(self.seen) >= MAX_FILES:
            raise ReferenceRefused(f"the file names more than {MAX_FILES} other files")
        self.seen.add(key)
        return True


def check(gdal_path: str, roots: Sequence[Path | str]) -> None:
    """Refuse (``ReferenceRefused``) ``gdal_path`` if it, or anything it names, lies outside ``roots``."""
    walk = _Walk(tuple(os.path.realpath(r) for r in roots))
    _check_path(gdal_path, walk, 0, shown=_shown(gdal_path))


def _shown(gdal_path: str) -> str:
    """A name for messages: the file's own name, never the server's folders."""
    return os.path.basename(gdal_path.rstrip("/")) or "the file"


def _inside(real: str, roots: tuple[str, ...]) -> bool:
    return any(real == root or real.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


def _split_archive(path: str) -> tuple[str, str]:
    """``(archive file, member)`` of a path inside an archive (the longest leading part that is a file)."""
    parts = path.split("/")
    for end in range(len(parts), 1, -1):
        head = "/".join(parts[:end])
        if os.path.isfile(head):
            return head, "/".join(parts[end:])
    raise ReferenceRefused(f"{_shown(path)}: no such archive")


def _check_path(gdal_path: str, walk: _Walk, depth: int, shown: str) -> None:
    if depth > MAX_DEPTH:
        raise ReferenceRefused(f"{shown}: files name each other more than {MAX_DEPTH} levels deep")
    if "\x00" in gdal_path:
        raise ReferenceRefused(f"{shown}: a file name with a NUL byte")
    lowered = gdal_path.lower()
    if lowered.startswith("/vsi"):
        wrapper = next((a for a in ARCHIVES if lowered.startswith(a)), None)
        if wrapper is None:
            name = lowered.split("/")[1] if "/" in lowered[1:] else lowered
            raise ReferenceRefused(f"{shown}: names a file through /{name}/, which this server does not read "
                                   "(only files of the workspace, and zip, tar and gzip archives among them)")
        inner = gdal_path[len(wrapper):]
        if inner.lower().startswith("/vsi"):
            _check_path(inner, walk, depth + 1, shown)
            return
        archive, member = _split_archive(inner) if wrapper != "/vsigzip/" else (inner, "")
        _check_local(archive, walk, depth, shown)
        if member and wrapper == "/vsizip/":
            _check_zip_member(archive, member, walk, depth, shown)
        return
    if "://" in gdal_path or _DRIVER_PREFIX.match(gdal_path):
        raise ReferenceRefused(f"{shown}: names {gdal_path.split(':', 1)[0][:20]}:…, which is not a file of the "
                               "workspace")
    _check_local(gdal_path, walk, depth, shown)


def _check_local(path: str, walk: _Walk, depth: int, shown: str) -> None:
    if not os.path.isabs(path):
        raise ReferenceRefused(f"{shown}: a relative file name where an absolute one was expected")
    real = os.path.realpath(path)
    if not _inside(real, walk.roots):
        raise ReferenceRefused(f"{shown}: names a file outside the workspace ({_shown(path)})")
    if not walk.visit(real):
        return
    if os.path.isdir(real):
        return  # a folder product (.SAFE): GDAL reads its manifest, which is checked when named
    if not os.path.isfile(real):
        raise ReferenceRefused(f"{shown}: names {_shown(path)}, which is not a regular file of the workspace")
    _check_content(real, walk, depth, shown)
    _check_sidecars(path, real, walk, depth, shown)


def _check_sidecars(given: str, real: str, walk: _Walk, depth: int, shown: str) -> None:
    """Files GDAL looks for beside ``given`` (under its own name and its resolved one)."""
    for candidate in dict.fromkeys((given, real)):
        folder, name = os.path.split(candidate)
        stem = name.rsplit(".", 1)[0] if "." in name else name
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            lowered = entry.name.lower()
            if entry.name == name or not (lowered.startswith(name.lower()) or lowered.startswith(stem.lower() + ".")):
                continue
            side = os.path.join(folder, entry.name)
            side_real = os.path.realpath(side)
            if not _inside(side_real, walk.roots):
                raise ReferenceRefused(f"{shown}: its sidecar {entry.name} is a link to a file outside the workspace")
            if os.path.isfile(side_real) and walk.visit(side_real):
                _check_content(side_real, walk, depth + 1, shown)


def _check_content(real: str, walk: _Walk, depth: int, shown: str) -> None:
    try:
        with open(real, "rb") as handle:
            head = handle.read(4096)
            size = os.fstat(handle.fileno()).st_size
    except OSError as e:
        raise ReferenceRefused(f"{shown}: {_shown(real)} cannot be read") from e
    text_head = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text_head.startswith(b"<"):
        if size > MAX_XML_BYTES:
            raise ReferenceRefused(f"{shown}: {_shown(real)} is an XML file larger than {MAX_XML_BYTES // 2**20} MiB")
        with open(real, "rb") as handle:
            _check_xml(handle.read(), os.path.dirname(real), walk, depth, shown)
    elif real.lower().endswith(_TEXT_SIDECARS) and size <= MAX_HEADER_BYTES and b"\x00" not in head:
        with open(real, "rb") as handle:
            _check_header(handle.read().decode("latin-1"), os.path.dirname(real), walk, shown)


def _check_xml(data: bytes, folder: str, walk: _Walk, depth: int, shown: str) -> None:
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        raise ReferenceRefused(f"{shown}: an XML file with a document type or entities")
    try:
        root = ElementTree.fromstring(data)
    except ElementTree.ParseError:
        return  # not XML GDAL would read as a dataset either
    for element in root.iter():
        tag = element.tag if isinstance(element.tag, str) else ""
        if tag in ("PixelFunctionCode",) or (tag == "PixelFunctionLanguage" and (element.text or "").strip()):
            raise ReferenceRefused(f"{shown}: a VRT with a pixel function in a programming language")
        if not (tag.endswith("Filename") or tag in _FILE_ELEMENTS):
            continue
        value = (element.text or "").strip()
        if not value:
            continue
        relative = element.get("relativeToVRT") == "1" or element.get("relativetoVRT") == "1"
        if relative and not value.lower().startswith("/vsi"):
            value = os.path.join(folder, value)
        elif not os.path.isabs(value) and not value.lower().startswith("/vsi") and "://" not in value \
                and not _DRIVER_PREFIX.match(value):
            value = os.path.join(folder, value)  # GDAL reads a plain relative name from its working folder
        _check_path(value, walk, depth + 1, shown)


def _check_header(text: str, folder: str, walk: _Walk, shown: str) -> None:
    for match in _ABSOLUTE_IN_TEXT.finditer(text):
        named = match.group(1)
        if named.lower().startswith("/vsi"):
            raise ReferenceRefused(f"{shown}: a header names a file through a virtual file system")
        real = os.path.realpath(os.path.join(folder, named))
        if not _inside(real, walk.roots):
            raise ReferenceRefused(f"{shown}: a header names a file outside the workspace")


def _check_zip_member(archive: str, member: str, walk: _Walk, depth: int, shown: str) -> None:
    """A member that is XML (a VRT inside a zip) names files too: those must be inside the archive's folders."""
    try:
        with zipfile.ZipFile(archive) as opened:
            info = opened.getinfo(member)
            if info.file_size > MAX_XML_BYTES:
                return
            with opened.open(info) as handle:
                head = handle.read(4096)
                if not head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<"):
                    return
                data = head + handle.read(MAX_XML_BYTES)
    except (KeyError, zipfile.BadZipFile, OSError, RuntimeError):
        return  # GDAL will fail to read it as well
    _check_xml(data, os.path.dirname(archive), walk, depth + 1, shown)
