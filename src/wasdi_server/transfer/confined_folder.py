"""One account's transfer folder as its SFTP client sees it: ``/`` is the folder, and no path leaves it.

A client path is normalised as a path under ``/`` (``..`` cannot climb above it), then walked component
by component from the real folder with ``lstat``: an existing symbolic link anywhere on the way is
refused, so neither a link planted in the folder nor one in a sub-folder leads out of it.  Clients cannot
make links (the SFTP service refuses ``symlink`` and ``link``), and files are opened with ``O_NOFOLLOW``.

The quota counts the disk the folder takes, shared by every open session of the account: it is measured
again at each write that may take more disk, each growing truncation and each rename, open handles of
removed files included, so an upload stops with a clear error at the limit instead of filling the disk.
"""

from __future__ import annotations

import os
import posixpath
import stat
import threading
from collections.abc import Callable
from pathlib import Path


class LeavesFolder(Exception):
    """The path would reach outside the folder (through a link), or is not a path at all."""


class QuotaExceeded(Exception):
    """A write would take the folder past its quota."""


class ConfinedFolder:
    """Maps the paths a client sends (bytes, ``/`` = the folder) to local paths inside ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = Path(os.path.realpath(root))

    def virtual(self, client_path: bytes) -> str:
        """The client path normalised under ``/`` (``a/../b`` is ``/b``; nothing climbs above ``/``)."""
        text = os.fsdecode(client_path)
        if "\x00" in text:
            raise LeavesFolder("a path cannot contain a NUL byte")
        return posixpath.normpath(posixpath.join("/", text.replace("\\", "/")))

    def local(self, client_path: bytes, *, allow_final_link: bool = False) -> Path:
        """The local path of ``client_path``; ``LeavesFolder`` when a link lies on the way.

        ``allow_final_link``: the last component may itself be a link (removing or listing a link does not
        follow it).
        """
        parts = [p for p in self.virtual(client_path).split("/") if p]
        current = self.root
        for index, part in enumerate(parts):
            current = current / part
            try:
                mode = os.lstat(current).st_mode
            except FileNotFoundError:
                break  # what follows does not exist yet: nothing there can be a link
            except NotADirectoryError as e:
                raise LeavesFolder(f"{'/'.join(parts[:index])} is not a folder") from e
            if stat.S_ISLNK(mode) and not (allow_final_link and index == len(parts) - 1):
                raise LeavesFolder("links are not followed in a transfer folder")
        return self.root.joinpath(*parts)

    def client_path(self, local: Path) -> bytes:
        """The path a client sees for a local path inside the folder."""
        relative = Path(local).relative_to(self.root).as_posix()
        return os.fsencode("/" if relative == "." else "/" + relative)


def _unallocated(fd: int, offset: int, length: int) -> int:
    """Bytes of disk a write of ``length`` bytes at ``offset`` may newly take: 0 when that range of the file is
    all written already (no hole in it, ``SEEK_HOLE``), else everything from its first hole on, in whole blocks."""
    if length <= 0:
        return 0
    end = offset + length
    try:
        hole = os.lseek(fd, offset, os.SEEK_HOLE)
    except OSError:  # ENXIO: the write starts at or past the end
        hole = offset
    if hole >= end:
        return 0
    block = max(512, os.fstat(fd).st_blksize)
    return -(-(end - hole) // block) * block + block  # the blocks of the range, and one for a partial first block


class Quota:
    """The disk one account's folder takes against its limit (0: none), shared by the account's sessions.

    Nothing is remembered between two checks: every write that may take more disk, every growing truncation
    and every rename measures again what the folder's files take on disk (their blocks), plus the files
    still open through a handle but no longer in the folder (removed or replaced while open: their blocks stay
    taken until the handle closes).  The check and the change happen under one lock, so handles of several
    sessions cannot each pass the check with the same free room."""

    def __init__(self, limit: int, measure: Callable[[], int]) -> None:
        self.limit = limit
        self.measure = measure
        self._open: set[int] = set()
        self._lock = threading.RLock()

    # -- the handles open on the folder -------------------------------------------------------------------
    def opened(self, fd: int) -> None:
        with self._lock:
            self._open.add(fd)

    def closed(self, fd: int) -> None:
        with self._lock:
            self._open.discard(fd)

    def _held_by_handles(self) -> int:
        """Blocks of files open through a handle that no folder entry counts any more (``st_nlink`` 0)."""
        total = 0
        for fd in list(self._open):
            try:
                info = os.fstat(fd)
            except OSError:
                continue
            if info.st_nlink == 0:
                total += info.st_blocks * 512
        return total

    @property
    def used(self) -> int:
        """Bytes of disk the folder takes now, open handles of removed files included."""
        with self._lock:
            return self.measure() + self._held_by_handles()

    def _require(self, extra: int) -> None:
        if not self.limit or extra <= 0:
            return
        used = self.used
        if used + extra > self.limit:
            raise QuotaExceeded(f"the transfer folder's quota of {self.limit} bytes is reached "
                                f"({used} bytes used): delete files or ingest them into a workspace")

    # -- the changes that may take disk ----------------------------------------------------------------------
    def write(self, fd: int, data: bytes, offset: int) -> int:
        """``data`` written at ``offset`` of ``fd``, or ``QuotaExceeded`` (nothing written) when the disk it may
        take does not fit."""
        with self._lock:
            self._require(_unallocated(fd, offset, len(data)))
            return os.pwrite(fd, data, offset)

    def resize(self, fd: int, size: int) -> None:
        """``fd`` truncated or extended to ``size``; an extension counts as if it were written (a client asking
        for a size means to fill it)."""
        with self._lock:
            info = os.fstat(fd)
            if size > info.st_size:  # the whole new size, less what the file takes already, must fit
                self._require(size - info.st_blocks * 512)
            os.ftruncate(fd, size)

    @property
    def free(self) -> int | None:
        """Bytes still allowed (``None``: no limit)."""
        return None if not self.limit else max(0, self.limit - self.used)
