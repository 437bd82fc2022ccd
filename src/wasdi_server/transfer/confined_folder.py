"""One account's transfer folder as its SFTP client sees it: ``/`` is the folder, and no path leaves it.

A client path is normalised as a path under ``/`` (``..`` cannot climb above it), then walked component
by component from the real folder with ``lstat``: an existing symbolic link anywhere on the way is
refused, so neither a link planted in the folder nor one in a sub-folder leads out of it.  Clients cannot
make links (the SFTP service refuses ``symlink`` and ``link``), and files are opened through
``files_beneath`` (beneath the folder, no link followed, regular files only).

The quota counts the disk the folder takes, shared by every open session of the account (``Quota``): each
write and truncation adds the exact change of its file's blocks to the last measure of the folder, which is
taken again at each open, removal and rename, before any refusal and at least every second, open handles of
removed files included, so an upload stops with a clear error at the limit instead of filling the disk.
"""

from __future__ import annotations

import os
import posixpath
import stat
import threading
import time
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

    What is counted is what is on disk, never a size a handle remembers: the folder is measured (the blocks of
    its files, plus those of files removed or replaced while a handle keeps them open), and every write or
    truncation through the quota adds the exact change it made to its file's blocks (``fstat`` before and
    after).  The folder is measured again when a file is opened, removed or renamed, before any refusal (a
    count left high by a freed file never refuses), and at least every ``remeasure_seconds`` (what other
    programs did to the folder meanwhile).  The check and the change happen under one lock, so handles of
    several sessions cannot each pass the check with the same free room."""

    def __init__(self, limit: int, measure: Callable[[], int], *, remeasure_seconds: float = 1.0) -> None:
        self.limit = limit
        self.measure = measure
        self.remeasure_seconds = remeasure_seconds
        self._open: set[int] = set()
        self._lock = threading.RLock()
        self._used: int | None = None
        self._measured_at = 0.0

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

    # -- measuring -------------------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Measure the folder again now (a file was opened, removed or renamed)."""
        with self._lock:
            self._measure()

    def _measure(self) -> int:
        self._used = self.measure() + self._held_by_handles()
        self._measured_at = time.monotonic()
        return self._used

    def _current(self) -> int:
        if self._used is None or time.monotonic() - self._measured_at >= self.remeasure_seconds:
            return self._measure()
        return self._used

    @property
    def used(self) -> int:
        """Bytes of disk the folder takes, open handles of removed files included."""
        with self._lock:
            return self._current()

    def _require(self, extra: int) -> None:
        if not self.limit or extra <= 0:
            return
        if self._current() + extra <= self.limit:
            return
        used = self._measure()  # never refuse on a count that a freed file left high
        if used + extra > self.limit:
            raise QuotaExceeded(f"the transfer folder's quota of {self.limit} bytes is reached "
                                f"({used} bytes used): delete files or ingest them into a workspace")

    def _count_change(self, fd: int, blocks_before: int) -> None:
        if self._used is not None:
            self._used += (os.fstat(fd).st_blocks - blocks_before) * 512

    # -- the changes that may take disk ----------------------------------------------------------------------
    def write(self, fd: int, data: bytes, offset: int) -> int:
        """``data`` written at ``offset`` of ``fd``, or ``QuotaExceeded`` (nothing written) when the disk it may
        take does not fit."""
        with self._lock:
            self._require(_unallocated(fd, offset, len(data)))
            before = os.fstat(fd).st_blocks
            try:
                return os.pwrite(fd, data, offset)
            finally:
                self._count_change(fd, before)

    def resize(self, fd: int, size: int) -> None:
        """``fd`` truncated or extended to ``size``; an extension counts as if it were written (a client asking
        for a size means to fill it)."""
        with self._lock:
            info = os.fstat(fd)
            if size > info.st_size:  # the whole new size, less what the file takes already, must fit
                self._require(size - info.st_blocks * 512)
            try:
                os.ftruncate(fd, size)
            finally:
                self._count_change(fd, info.st_blocks)

    @property
    def free(self) -> int | None:
        """Bytes still allowed (``None``: no limit)."""
        return None if not self.limit else max(0, self.limit - self.used)
