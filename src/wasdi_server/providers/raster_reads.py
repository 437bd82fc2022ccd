"""Reading users' rasters elsewhere: what the map server and the product rules ask of a reader, as a Protocol.

GDAL follows what a file names (a VRT's sources, headers, overviews, ``/vsicurl/``), so a user's raster is
never opened in the server's own process: the rules and providers that read rasters hand a ``ReadJob`` to a
``RasterReads`` the composition root passes in (the boxed readers of ``launcher/box/readers.py``), naming the
folders the reader may see.  A reader answers with JSON-like data and bytes only (never a pickle: a reader
runs GDAL on hostile files, and what it sends back is not trusted).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol


@dataclass(frozen=True)
class ReadJob:
    """One read: ``kind`` names the reader's function (``draw``, ``prepare``, ``value_at``, ``product``,
    ``metadata``), ``args`` its arguments (sent to the reader; plain data and the map server's dataclasses)."""

    kind: str
    args: tuple[Any, ...]


@dataclass(frozen=True)
class ReadAnswer:
    """A reader's answer: ``value`` (JSON data) and ``payload`` (bytes: a PNG, pixels)."""

    value: Any
    payload: bytes = b""


class ReadRefused(Exception):
    """A read that was not done: a file names something outside its folders, the readers are busy, the
    deadline passed, or the read failed (``message`` is for the user)."""

    def __init__(self, message: str, busy: bool = False, refused: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.busy = busy
        """Busy or out of time (try again later, or ask for less), not a fault of the file."""
        self.refused = refused
        """The file names something outside the folders the reader may see (an attack, or a broken file)."""


class RasterReads(Protocol):
    """Runs ``ReadJob``s in readers that see only the given folders."""

    def read(self, job: ReadJob, *, read_only: Sequence[Path], read_write: Sequence[Path] = ()) -> ReadAnswer:
        """The answer of ``job`` run by a reader that sees ``read_only`` (and may write ``read_write``);
        ``ReadRefused`` when it cannot."""

    def read_one_file(self, kind: str, file: Path) -> ReadAnswer:
        """The answer of a ``kind`` job about ``file`` alone (it names no other file), run by a reader that sees
        that file or its folder, whichever is ready sooner; ``ReadRefused`` when it cannot."""

    def warm(self, read_only: Sequence[Path], read_write: Sequence[Path] = ()) -> bool:
        """Start a reader of these folders now, for a read that will follow (True: one is starting)."""

    @property
    def spares_ready(self) -> int:
        """Readers started ahead that ``read_one_file`` would use now."""

    def close(self) -> None:
        """Stop every reader."""
