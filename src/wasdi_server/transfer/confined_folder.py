"""One account's transfer folder as its SFTP client sees it: ``/`` is the folder, and no path leaves it.

A client path is normalised as a path under ``/`` (``..`` cannot climb above it), then walked component
by component from the real folder with ``lstat``: an existing symbolic link anywhere on the way is
refused, so neither a link planted in the folder nor one in a sub-folder leads out of it.  Clients cannot
make links (the SFTP service refuses ``symlink`` and ``link``), and files are opened with ``O_NOFOLLOW``.

The quota counts the bytes the folder holds, shared by every open session of the account: it is measured
when a file is opened for writing and grown by each write that extends a file, so an upload stops with a
clear error at the limit instead of filling the disk.
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


class Quota:
    """The bytes one account's folder holds, against its limit (0: none); shared by the account's sessions."""

    def __init__(self, limit: int, measure: Callable[[], int]) -> None:
        self.limit = limit
        self.measure = measure
        self.used = 0
        self._lock = threading.Lock()

    def refresh(self) -> None:
        """Measure the folder again (files may have been ingested, copied in or removed meanwhile)."""
        used = self.measure()
        with self._lock:
            self.used = used

    def grow(self, extra: int) -> None:
        """Count ``extra`` more bytes, or raise ``QuotaExceeded`` (nothing counted) when they do not fit."""
        if extra <= 0:
            return
        with self._lock:
            if self.limit and self.used + extra > self.limit:
                raise QuotaExceeded(f"the transfer folder's quota of {self.limit} bytes is reached "
                                    f"({self.used} bytes used): delete files or ingest them into a workspace")
            self.used += extra

    def shrink(self, freed: int) -> None:
        with self._lock:
            self.used = max(0, self.used - max(0, freed))

    @property
    def free(self) -> int | None:
        """Bytes still allowed (``None``: no limit)."""
        with self._lock:
            return None if not self.limit else max(0, self.limit - self.used)
