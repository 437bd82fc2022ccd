"""The one zip streamer: a zip built while it is sent, one chunk in memory at a time (a product and its
``.data`` folder for /catalog downloads, an app's folder for its download and for the nodes that install it)."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from .files_beneath import NotRegularFile, open_regular

ZipSource = Path | Callable[[], BinaryIO]
"""A member's bytes: a file (opened as ``files_beneath.open_regular`` opens it, beneath its folder) or a
function that opens it so."""

CHUNK = 1024 * 1024


class _Sink(io.RawIOBase):
    """A write-only, non-seekable target that hands over what was written since the last ``take``."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self._position = 0

    def writable(self) -> bool:
        return True

    def write(self, data: bytes) -> int:  # type: ignore[override]
        self._parts.append(bytes(data))
        self._position += len(data)
        return len(data)

    def tell(self) -> int:
        return self._position

    def take(self) -> bytes:
        data = b"".join(self._parts)
        self._parts.clear()
        return data


def _opened(source: ZipSource) -> BinaryIO | None:
    try:
        return open_regular(source.parent, source.name) if isinstance(source, Path) else source()
    except (FileNotFoundError, NotADirectoryError, NotRegularFile):
        return None  # removed, or swapped for a link, a FIFO or a folder since it was listed: left out


def zip_chunks(members: Iterable[tuple[ZipSource, str]], compression: int = zipfile.ZIP_STORED) -> Iterator[bytes]:
    """The bytes of a zip of ``members`` (a file, and its name in the zip), produced as they are read; a member
    that is no longer a regular file when its turn comes is left out (the zip is already being sent)."""
    sink = _Sink()
    with zipfile.ZipFile(sink, "w", compression=compression, allowZip64=True) as archive:
        for source, name in members:
            opened = _opened(source)
            if opened is None:
                continue
            with opened as src, archive.open(name, "w", force_zip64=True) as dst:
                while chunk := src.read(CHUNK):
                    dst.write(chunk)
                    if data := sink.take():
                        yield data
            if data := sink.take():
                yield data
    if data := sink.take():
        yield data


class ChunkReader(io.RawIOBase):
    """A readable file over an iterator of byte chunks (what a WSGI framework's ``stream`` wants)."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self._buffer = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        while not self._buffer:
            try:
                self._buffer = next(self._chunks)
            except StopIteration:
                return 0
        size = min(len(buffer), len(self._buffer))
        buffer[:size] = self._buffer[:size]
        self._buffer = self._buffer[size:]
        return size
