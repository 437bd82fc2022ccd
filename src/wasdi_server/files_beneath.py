"""Opening a file of a user's folder once, beneath that folder, without following links, and only if it is a
regular file: the one way the server reads (or writes) a path that comes from a workspace or a transfer folder.

Users' apps, notebooks and SFTP clients write into those folders, so a name there may become a link to
another user's file, a FIFO whose ``open()`` blocks until someone writes into it, or a device, at any moment.
Checking the path and then opening it again by name loses a race against a program swapping the two; so the
file is opened once and everything (the check, the size, the read) is done on that one descriptor:

- ``openat2`` with ``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`` from a descriptor of the
  folder, where the kernel has it (Linux 5.6 and later); otherwise each component is opened with ``openat``
  and ``O_NOFOLLOW`` from the previous one (folders with ``O_DIRECTORY``), which refuses the same links;
- always with ``O_NONBLOCK``, so opening a FIFO returns at once instead of waiting for a writer; the flag is
  cleared again once ``fstat`` has shown a regular file (reads of a regular file never block anyway);
- then ``fstat``: a folder, a FIFO, a socket or a device is refused with ``NotRegularFile``.

The folder itself (the workspace's folder under the data directory) is the server's own and is opened as
it is named.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

_SYS_OPENAT2 = 437
"""``openat2``'s number: the same on every Linux architecture (it came after the tables were unified)."""
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
_RETRIES = 32
"""How often an ``openat2`` that a signal or a racing rename interrupted is tried again."""
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY


class NotRegularFile(OSError):
    """The name is there but is not a regular file one may read: a link, a folder, a FIFO, a socket or a
    device (``kind`` says which, for the caller's message)."""

    def __init__(self, name: str, kind: str) -> None:
        super().__init__(errno.EINVAL, f"{name} is {kind}, not a regular file")
        self.name = name
        self.kind = kind


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


class _Openat2:
    """``openat2`` through ``ctypes`` (Python has no wrapper), probed once: ``None`` where the kernel (or a
    seccomp filter) does not offer it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._checked = False
        self._syscall: Any = None

    def _probe(self) -> Any:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            syscall = libc.syscall
        except (OSError, AttributeError):
            return None
        syscall.restype = ctypes.c_long
        syscall.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(_OpenHow),
                            ctypes.c_size_t]
        how = _OpenHow(os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, 0, _RESOLVE_BENEATH)
        fd = syscall(_SYS_OPENAT2, -100, b".", ctypes.byref(how), ctypes.sizeof(how))  # -100: AT_FDCWD
        if fd < 0:
            return None  # ENOSYS (an old kernel) or EPERM (a seccomp filter): the per-component walk it is
        os.close(fd)
        return syscall

    def get(self) -> Any:
        with self._lock:
            if not self._checked:
                self._syscall = self._probe()
                self._checked = True
            return self._syscall


_openat2 = _Openat2()


def has_openat2() -> bool:
    """Whether this kernel resolves paths with ``openat2`` (otherwise components are walked one by one)."""
    return _openat2.get() is not None


def _parts(relative: str | PurePosixPath) -> list[str]:
    parts = [p for p in PurePosixPath(relative).parts if p not in ("", "/")]
    if not parts or str(relative).startswith("/") or any(p in (".", "..") for p in parts) \
            or any("\x00" in p for p in parts):
        raise NotRegularFile(str(relative), "not a plain path below the folder")
    return parts


def _kind(mode: int) -> str:
    for test, kind in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"), (stat.S_ISLNK, "a link")):
        if test(mode):
            return kind
    return "not a regular file"


def _open_walking(folder_fd: int, parts: list[str], flags: int, mode: int, name: str) -> int:
    """``parts`` opened from ``folder_fd`` one component at a time, none of them followed if it is a link."""
    current = folder_fd
    try:
        for part in parts[:-1]:
            try:
                step = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=current)
            except OSError as e:
                if e.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise NotRegularFile(name, "below a link or a file") from None
                raise
            if current != folder_fd:
                os.close(current)
            current = step
        try:
            return os.open(parts[-1], flags, mode, dir_fd=current)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise NotRegularFile(name, "a link") from None
            if e.errno == errno.ENXIO:
                raise NotRegularFile(name, "a socket or a device") from None
            raise
    finally:
        if current != folder_fd:
            os.close(current)


def open_fd_beneath(folder: Path | int, relative: str | PurePosixPath, flags: int = _READ_FLAGS,
                    mode: int = 0o644) -> int:
    """A descriptor of ``folder/relative`` opened with ``flags``, no component of ``relative`` followed if it
    is a link and none leaving ``folder`` (a path or a descriptor of it); ``NotRegularFile`` for a link on the
    way, ``FileNotFoundError`` and the other ``OSError`` as ``open`` raises them.  The type of what was opened is
    not checked here: ``open_regular`` does that."""
    parts = _parts(relative)
    name = "/".join(parts)
    flags |= os.O_NOFOLLOW | os.O_CLOEXEC
    folder_fd = folder if isinstance(folder, int) else os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        syscall = _openat2.get()
        if syscall is None:
            return _open_walking(folder_fd, parts, flags, mode, name)
        how = _OpenHow(flags, mode if flags & (os.O_CREAT | os.O_TMPFILE) == os.O_CREAT else 0,
                       _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS)
        for _ in range(_RETRIES):
            fd = int(syscall(_SYS_OPENAT2, folder_fd, os.fsencode(name), ctypes.byref(how), ctypes.sizeof(how)))
            if fd >= 0:
                return fd
            code = ctypes.get_errno()
            if code in (errno.EINTR, errno.EAGAIN):  # EAGAIN: the kernel asks to retry a lookup a rename raced
                continue
            if code in (errno.ELOOP, errno.EXDEV):
                raise NotRegularFile(name, "a link, or below one")
            if code == errno.ENXIO:
                raise NotRegularFile(name, "a socket or a device")
            raise OSError(code, os.strerror(code), name)
        raise OSError(errno.EAGAIN, "the folder kept changing while the file was opened", name)
    finally:
        if not isinstance(folder, int):
            os.close(folder_fd)


def regular_fd(fd: int, name: str) -> os.stat_result:
    """The ``fstat`` of ``fd`` when it is a regular file (``O_NONBLOCK`` cleared again); otherwise ``fd`` is
    closed and ``NotRegularFile`` raised."""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(name, _kind(info.st_mode))
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        if flags & os.O_NONBLOCK:
            fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)
        return info
    except BaseException:
        os.close(fd)
        raise


def open_regular_fd(folder: Path | int, relative: str | PurePosixPath) -> tuple[int, os.stat_result]:
    """A read-only descriptor of the regular file ``folder/relative`` and its ``fstat`` (see the module)."""
    fd = open_fd_beneath(folder, relative)
    return fd, regular_fd(fd, str(relative))


def open_regular(folder: Path | int, relative: str | PurePosixPath) -> BinaryIO:
    """The regular file ``folder/relative`` opened once for reading (buffered); ``NotRegularFile`` when it is
    anything else or a link lies on the way, ``FileNotFoundError`` when it is not there."""
    fd, _ = open_regular_fd(folder, relative)
    return os.fdopen(fd, "rb")


def open_folder_fd(folder: Path | int, relative: str | PurePosixPath | None = None) -> int:
    """A descriptor of the folder ``folder/relative`` (``folder`` itself when ``relative`` is empty), with the
    same rules as ``open_fd_beneath``; ``NotRegularFile`` when it is not a folder."""
    if relative is None or str(relative) in ("", "."):
        if isinstance(folder, int):
            return os.dup(folder)
        return os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        return open_fd_beneath(folder, relative, os.O_RDONLY | os.O_DIRECTORY | os.O_NONBLOCK)
    except NotADirectoryError:
        raise NotRegularFile(str(relative), "not a folder") from None


def kind_beneath(folder: Path | int, relative: str | PurePosixPath) -> str | None:
    """What ``folder/relative`` is, looked at without following links: ``"file"``, ``"folder"``, another
    ``NotRegularFile`` kind (``"a FIFO"`` …), or ``None`` when it is not there.  For listings and for
    choosing how to serve a name; reading goes through ``open_regular`` whatever this said."""
    parts = _parts(relative)
    try:
        parent = open_folder_fd(folder, "/".join(parts[:-1]) or None)
    except FileNotFoundError:
        return None
    except NotRegularFile as e:
        return e.kind
    try:
        mode = os.stat(parts[-1], dir_fd=parent, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return None
    finally:
        os.close(parent)
    return "file" if stat.S_ISREG(mode) else "folder" if stat.S_ISDIR(mode) else _kind(mode)


def regular_files_below(folder_fd: int, prefix: str = "") -> Iterator[str]:
    """The relative paths of the regular files under the folder ``folder_fd`` (sorted, depth first), links
    and every other kind left out and never followed."""
    with os.scandir(folder_fd) as listing:
        entries = sorted(listing, key=lambda e: e.name)
    for entry in entries:
        mode = entry.stat(follow_symlinks=False).st_mode
        name = f"{prefix}{entry.name}"
        if stat.S_ISREG(mode):
            yield name
        elif stat.S_ISDIR(mode):
            try:
                child = open_fd_beneath(folder_fd, entry.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NONBLOCK)
            except (FileNotFoundError, NotADirectoryError, NotRegularFile):
                continue  # swapped meanwhile: not a folder any more
            try:
                yield from regular_files_below(child, f"{name}/")
            finally:
                os.close(child)
