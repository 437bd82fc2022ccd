"""The one way to write a file that must survive a crash: a temporary file beside the target,
fsync, ``os.replace``, then fsync of the folder.

A crash at any instant leaves the old file or the new one, complete, never a mix or an empty file.
The SDK (downloads), the CLI (profiles) and the server (products, styles, images, layers, metadata, the
store's snapshots, the map cache) all use it; it lives in the SDK because that is the package the other two
are built on.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import IO

PathLike = str | os.PathLike[str]
TEMP_STEM_BYTES = 200
"""At most this much of the target's name is in its temporary file's name."""


UNSYNCABLE = frozenset({errno.EINVAL, errno.ENOTSUP, errno.EBADF, errno.EACCES, errno.EISDIR})
"""What opening or syncing a folder fails with where the system cannot do it (Windows, some network file
systems): nothing to make durable there.  Any other error (EIO) is a failure and raises."""


def fsync_dir(folder: PathLike) -> None:
    """Make a rename or a new name in ``folder`` durable (a no-op where folders cannot be synced)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError as e:
        if e.errno in UNSYNCABLE:
            return
        raise
    try:
        os.fsync(fd)
    except OSError as e:
        if e.errno not in UNSYNCABLE:
            raise
    finally:
        os.close(fd)


def fsync_file(path: PathLike) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _create_beside(path: Path, suffix: str, mode: int) -> tuple[int, Path]:
    # Like mkstemp, but with ``mode`` filtered by the umask (mkstemp always makes 0600 files).
    # A name near the file system's limit (255 bytes) must leave room for the dot, the random part and the suffix.
    stem = path.name.encode("utf-8", "surrogateescape")[:TEMP_STEM_BYTES].decode("utf-8", "ignore")
    for _ in range(100):
        temp = path.with_name(f".{stem}.{secrets.token_hex(6)}{suffix}")
        try:
            return os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), mode), temp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {path}")


@contextlib.contextmanager
def atomic_writer(target: PathLike, *, mode: int | None = None, suffix: str = ".part",
                  durable: bool = True) -> Iterator[IO[bytes]]:
    """A binary file that becomes ``target`` when the block ends without an exception.

    ``mode`` sets the permissions exactly (``0o600`` for secrets); by default a new file gets 0666
    less the umask, as ``open`` would give it.  On an exception the temporary file is removed and
    ``target`` is untouched.  Not ``durable``: no fsyncs, for content a crash may lose (a cache), which
    is still never seen half written.  The temporary file is ``.<name>.<random><suffix>``, so whoever
    owns the folder can find and remove those a crash left.
    """
    path = Path(target)
    fd, temp = _create_beside(path, suffix, 0o600 if mode is not None else 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            yield handle
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise
    if durable:
        fsync_dir(path.parent)


def write_atomic(target: PathLike, data: bytes | str, *, mode: int | None = None, suffix: str = ".part",
                 durable: bool = True) -> None:
    """Replace ``target`` with ``data`` (text is written as UTF-8) atomically, and durably unless told not to."""
    with atomic_writer(target, mode=mode, suffix=suffix, durable=durable) as handle:
        handle.write(data.encode("utf-8") if isinstance(data, str) else data)


def replace_durably(source: PathLike, target: PathLike) -> None:
    """Move a complete file (written elsewhere, e.g. an upload's staging file) onto ``target``.

    The bytes are flushed to disk before the rename, and the rename itself afterwards, so after a
    crash ``target`` is the old file or the complete new one.  Same file system only, as ``os.replace``.
    """
    fsync_file(source)
    os.replace(source, target)
    fsync_dir(Path(target).parent)
    if Path(source).parent != Path(target).parent:
        fsync_dir(Path(source).parent)
