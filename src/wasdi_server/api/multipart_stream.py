"""A multipart/form-data body parsed as it arrives, each file part written straight into its own file.

``MultipartSpool`` is fed the body chunk by chunk (by the server, ``serving.py``, while the request is
still arriving) and writes every file part (and any part larger than ``MEMORY_PART_BYTES``) into its own
hidden file of ``folder`` (the data directory's disk, so that ``receive_file`` can move it into place
with a rename instead of copying it); small fields and the framing stay in memory.  Only one chunk is
ever held, so a body of any size costs the same memory.

The files are written by a thread of the spool's own (``_Writer``), in order, a few chunks behind the
parsing: the server's loop, which receives every connection's bytes, goes on receiving while the disk is
busy, so the network and the disk work at the same time instead of in turn.

``SpooledBody`` is what the application then reads as ``wsgi.input``: it replays the exact bytes
received (any multipart reader can parse it as before) and, when the whole body was well formed, lists
its parts (``parts``) for a reader that would rather take a part's file.  A body that strays from the
grammar (RFC 7578, RFC 2046 §5.1.1), or outgrows the limits below, is kept whole, in order, and
``parts`` is ``None``: the ordinary reader then answers it as it would have.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import queue
import re
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote_to_bytes

import falcon

MEMORY_PART_BYTES = 64 * 1024
"""A part without a file name stays in memory up to this size, then goes to a file like a file part."""
MAX_HEADER_BYTES = 8 * 1024
"""One part's header block (as Falcon's multipart reader allows)."""
MAX_PARTS = 64
"""Parts in one body (as Falcon's multipart reader allows)."""
MAX_FRAMING_BYTES = 64 * 1024
"""Preamble, or epilogue, kept in memory; more is kept in a file."""
SPOOL_PREFIX = ".upload-"
WRITES_AHEAD = 16
"""Chunks the parser may be ahead of the disk (each at most a socket read, ``serving.RECV_BYTES``)."""
_FILENAME_STAR = re.compile(r"([\w-]+)'[\w]*'(.+)")


def boundary_of(content_type: str | None) -> bytes | None:
    """The boundary of a ``multipart/form-data`` content type, or ``None``."""
    kind, options = falcon.parse_header(content_type or "")
    boundary = options.get("boundary", "")
    if kind.lower() != "multipart/form-data" or not 0 < len(boundary) <= 70:
        return None
    try:
        return boundary.encode("ascii")
    except UnicodeEncodeError:
        return None


@dataclass
class SpooledPart:
    """One part of a body: its headers, and its content in a file or in memory."""

    headers: dict[str, str]
    """Header names in lower case."""
    path: Path | None = None
    data: bytearray = field(default_factory=bytearray)
    size: int = 0

    def _disposition(self) -> dict[str, str]:
        return falcon.parse_header(self.headers.get("content-disposition", ""))[1]

    @property
    def name(self) -> str | None:
        return self._disposition().get("name")

    @property
    def filename(self) -> str | None:
        """The ``filename`` (``filename*`` of RFC 5987 first, as Falcon's reader does)."""
        params = self._disposition()
        match = _FILENAME_STAR.match(params.get("filename*", ""))
        if match:
            charset, raw = match.groups()
            try:
                return unquote_to_bytes(raw).decode(charset)
            except (ValueError, LookupError):
                return None
        return params.get("filename")

    def move_to(self, target: Path) -> None:
        """Put the content at ``target`` (a new file): renamed there when on the same file system, else copied."""
        if self.path is None:
            with open(target, "xb") as out:
                out.write(self.data)
            return
        try:
            os.rename(self.path, target)
        except OSError as e:
            if e.errno != errno.EXDEV:  # the spool is on another file system than the target
                raise
            with open(self.path, "rb") as source, open(target, "xb") as out:
                while chunk := source.read(1024 * 1024):
                    out.write(chunk)
            os.unlink(self.path)
        self.path = None


# A segment of the body as received: bytes kept in memory, or a part whose content is in a file.
Segment = bytes | SpooledPart


class MultipartSpool:
    """A waitress request-body buffer (``append``, ``__len__``, ``getfile``, ``close``) that parses as it goes."""

    def __init__(self, boundary: bytes, folder: Path) -> None:
        self.folder = folder
        self._delimiter = b"\r\n--" + boundary
        self._first = b"--" + boundary
        self._state = "preamble"
        self._pending = b""
        self._segments: list[Segment] = []
        self._parts: list[SpooledPart] = []
        self._part: SpooledPart | None = None
        self._out: io.FileIO | None = None
        self._writer: _Writer | None = None
        self._raw: SpooledPart | None = None
        self._received = 0

    # -- the buffer interface waitress uses ------------------------------------------------------------
    def __len__(self) -> int:
        return self._received

    def __bool__(self) -> bool:
        return self._received > 0

    def append(self, data: bytes) -> None:
        self._received += len(data)
        if self._state == "raw":
            self._write_raw(memoryview(data))
            return
        buffer = self._pending + data if self._pending else data
        self._pending = b""
        with contextlib.suppress(_Malformed):  # the rest of the body goes to the raw file as it comes
            self._parse(buffer)

    def flush(self) -> None:
        """Wait until every byte appended is written; ``OSError`` if a write failed (a full disk)."""
        if self._writer is not None:
            self._writer.flush()

    def getfile(self) -> SpooledBody:
        self._finish()
        return SpooledBody(self._segments, self._parts if self._state == "end" else None)

    def close(self) -> None:
        """Remove every file not moved away (``SpooledPart.move_to``)."""
        self._close_out()
        if self._writer is not None:
            self._writer.stop(abandon=True)
            self._writer = None
        for segment in self._segments:
            if isinstance(segment, SpooledPart) and segment.path is not None:
                segment.path.unlink(missing_ok=True)
                segment.path = None

    # -- parsing: each step takes the data and a position, and returns the position it reached ---------------
    def _parse(self, data: bytes) -> None:
        steps = {"preamble": self._preamble, "delimiter": self._after_delimiter, "headers": self._headers,
                 "body": self._body, "end": self._epilogue}
        pos = 0
        while pos < len(data):
            pos = steps[self._state](data, pos)

    def _keep(self, data: bytes, pos: int, limit: int) -> int:
        """Not enough to decide yet: keep ``data[pos:]`` for the next chunk (at most ``limit`` bytes)."""
        if len(data) - pos > limit:
            raise self._to_raw(data, pos)
        self._pending = data[pos:]
        return len(data)

    def _preamble(self, data: bytes, pos: int) -> int:
        if not self._segments and pos == 0 and data.startswith(self._first):  # no preamble
            end = len(self._first)
        else:
            at = data.find(self._delimiter, pos)
            if at < 0:
                return self._keep(data, pos, MAX_FRAMING_BYTES)
            end = at + len(self._delimiter)
        self._framing(data, pos, end)
        self._state = "delimiter"
        return end

    def _after_delimiter(self, data: bytes, pos: int) -> int:
        if len(data) - pos < 2:
            return self._keep(data, pos, 2)
        if data.startswith(b"--", pos):  # the close delimiter: the rest is the epilogue
            self._framing(data, pos, pos + 2)
            self._state = "end"
            return pos + 2
        line_end = data.find(b"\r\n", pos, pos + 80)
        if line_end < 0:
            return self._keep(data, pos, 78)
        if data[pos:line_end].strip(b" \t"):  # only transport padding may follow a delimiter
            raise self._to_raw(data, pos)
        self._framing(data, pos, line_end + 2)
        self._state = "headers"
        return line_end + 2

    def _headers(self, data: bytes, pos: int) -> int:
        if data.startswith(b"\r\n", pos):  # no header at all
            end, block_end = pos, pos + 2
        else:
            end = data.find(b"\r\n\r\n", pos, pos + MAX_HEADER_BYTES + 4)
            if end < 0:
                return self._keep(data, pos, MAX_HEADER_BYTES)
            block_end = end + 4
        headers: dict[str, str] = {}
        for line in data[pos:end].split(b"\r\n") if end > pos else []:
            try:
                name, colon, value = line.decode().partition(":")  # UTF-8, as Falcon's reader decodes them
            except UnicodeDecodeError:
                raise self._to_raw(data, pos) from None
            if not colon or not name.strip():
                raise self._to_raw(data, pos)
            headers[name.strip().lower()] = value.strip()
        if len(self._parts) >= MAX_PARTS:
            raise self._to_raw(data, pos)
        self._framing(data, pos, block_end)
        part = SpooledPart(headers)
        self._parts.append(part)
        self._segments.append(part)
        self._part = part
        if part.filename is not None:
            self._open_file(part)
        self._state = "body"
        return block_end

    def _body(self, data: bytes, pos: int) -> int:
        at = data.find(self._delimiter, pos)
        if at < 0:
            # keep what may be the start of the delimiter: from a CR among the last bytes (no CR in a boundary)
            tail = data.rfind(b"\r", max(pos, len(data) - len(self._delimiter) + 1))
            safe = len(data) if tail < 0 else tail
            self._content(data, pos, safe)
            self._pending = data[safe:]
            return len(data)
        self._content(data, pos, at)
        self._close_out()
        self._part = None
        end = at + len(self._delimiter)
        self._framing(data, at, end)
        self._state = "delimiter"
        return end

    def _epilogue(self, data: bytes, pos: int) -> int:
        self._framing(data, pos, len(data))
        return len(data)

    # -- where bytes go --------------------------------------------------------------------------------
    def _framing(self, data: bytes, start: int, end: int) -> None:
        if start >= end:
            return
        last = self._segments[-1] if self._segments else None
        kept = (last + data[start:end]) if isinstance(last, bytes) else data[start:end]
        if isinstance(last, bytes):
            self._segments.pop()
        if len(kept) > MAX_FRAMING_BYTES:  # a huge epilogue: kept in a file from here on
            self._state = "raw"
            self._write_raw(memoryview(kept))
        else:
            self._segments.append(kept)

    def _content(self, data: bytes, start: int, end: int) -> None:
        if start >= end:
            return
        part = self._part
        assert part is not None
        part.size += end - start
        if self._out is not None:
            self._write(memoryview(data)[start:end])
            return
        part.data += memoryview(data)[start:end]
        if len(part.data) > MEMORY_PART_BYTES:
            self._open_file(part)

    def _open_file(self, part: SpooledPart) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=self.folder, prefix=SPOOL_PREFIX)
        part.path = Path(name)
        self._out = io.FileIO(fd, "wb")
        if self._writer is None:
            self._writer = _Writer()
        if part.data:
            self._write(memoryview(bytes(part.data)))
            part.data = bytearray()

    def _write(self, data: memoryview) -> None:
        assert self._out is not None and self._writer is not None
        self._writer.write(self._out, data)

    def _close_out(self) -> None:
        if self._out is not None:
            assert self._writer is not None
            self._writer.close(self._out)
            self._out = None

    def _to_raw(self, data: bytes, pos: int) -> _Malformed:
        """From ``pos`` on, the body is kept as received, in a file; ``parts`` will be ``None``."""
        self._close_out()
        self._part = None
        self._state = "raw"
        self._write_raw(memoryview(data)[pos:])
        return _Malformed()

    def _write_raw(self, data: memoryview) -> None:
        if self._raw is None:
            self._close_out()
            self._raw = SpooledPart({})
            self._segments.append(self._raw)
            self._open_file(self._raw)
        self._write(data)
        self._raw.size += len(data)

    def _finish(self) -> None:
        """The body is complete: what was kept for the next chunk goes where it belongs."""
        pending, self._pending = self._pending, b""
        if self._state == "body" and self._part is not None:
            self._content(pending, 0, len(pending))  # the body ended inside a part
            self._close_out()
            self._part = None
            self._state = "raw"
        elif pending or self._state not in ("end", "raw"):
            self._state = "raw"
            if pending:
                self._write_raw(memoryview(pending))
        self._close_out()
        if self._writer is not None:
            writer, self._writer = self._writer, None
            writer.stop(abandon=False)


def _write_all(out: io.FileIO, data: memoryview) -> None:
    """A raw file's ``write`` may take less than it is given."""
    while data:
        written = out.write(data)
        if not written:
            raise OSError(errno.ENOSPC, "no progress writing an upload")
        data = data[written:]


class _Writer:
    """A thread that writes (and closes) a spool's files in the order it is told, at most ``WRITES_AHEAD``
    chunks behind.  The first failure is kept and raised to the spool's side; what follows it is dropped."""

    def __init__(self) -> None:
        self._tasks: queue.Queue[tuple[io.FileIO, memoryview | None] | threading.Event | None] = \
            queue.Queue(maxsize=WRITES_AHEAD)
        self._error: OSError | None = None
        self._abandoned = False
        self._thread = threading.Thread(target=self._run, name="upload-writer", daemon=True)
        self._thread.start()

    def write(self, out: io.FileIO, data: memoryview) -> None:
        self._raise_error()
        self._tasks.put((out, data))

    def close(self, out: io.FileIO) -> None:
        self._tasks.put((out, None))

    def flush(self) -> None:
        done = threading.Event()
        self._tasks.put(done)
        done.wait()
        self._raise_error()

    def stop(self, *, abandon: bool) -> None:
        """End the thread once every task given is done, and raise the failure if any; when the files are
        abandoned (a request that ends unfinished), the writes still queued are skipped, and nothing is raised."""
        self._abandoned = abandon
        self._tasks.put(None)
        self._thread.join()
        if not abandon:
            self._raise_error()

    def _raise_error(self) -> None:
        if self._error is not None:
            raise self._error

    def _run(self) -> None:
        while (task := self._tasks.get()) is not None:
            if isinstance(task, threading.Event):
                task.set()
                continue
            out, data = task
            try:
                if data is None:
                    out.close()
                elif self._error is None and not self._abandoned:
                    _write_all(out, data)
            except OSError as e:
                self._error = self._error or e


class _Malformed(Exception):
    """The body left the multipart grammar (or a limit): it is kept whole from there on."""


class SpooledBody(io.RawIOBase):
    """``wsgi.input``: the body exactly as received; ``parts`` when it was a well-formed multipart body."""

    def __init__(self, segments: list[Segment], parts: list[SpooledPart] | None) -> None:
        super().__init__()
        self.parts = parts
        self._segments: Iterator[Segment] = iter(segments)
        self._current: io.BufferedIOBase | io.BytesIO | None = None

    def readable(self) -> bool:
        return True

    def part(self, name: str) -> SpooledPart | None:
        """The first part called ``name``."""
        return next((p for p in self.parts or [] if p.name == name), None)

    def _next(self) -> bool:
        if self._current is not None:
            self._current.close()
        segment = next(self._segments, None)
        if segment is None:
            self._current = None
            return False
        if isinstance(segment, bytes):
            self._current = io.BytesIO(segment)
        elif segment.path is None:
            if segment.size and not segment.data:
                raise ValueError("a part of this body was already moved away: the body cannot be read again")
            self._current = io.BytesIO(segment.data)
        else:
            self._current = open(segment.path, "rb")  # noqa: SIM115  (closed by _next and close)
        return True

    def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
        while True:
            if self._current is None and not self._next():
                return 0
            assert self._current is not None
            count = self._current.readinto(buffer)
            if count:
                return count
            if not self._next():
                return 0

    def close(self) -> None:
        if self._current is not None:
            self._current.close()
            self._current = None
        super().close()
