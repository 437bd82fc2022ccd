"""STOMP 1.0, 1.1 and 1.2 frames, with no I/O: encoding, incremental parsing and heart-beat negotiation.

Used on both ends: the SDK's listeners (sync today, async tomorrow: only the transport differs) and the
server's built-in broker.  A frame travels inside WebSocket messages, but a message may hold several
frames, or part of one (browser clients split frames larger than 16 KiB), so ``FrameParser`` is fed bytes
and hands back whole frames as they complete.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

VERSIONS = ("1.0", "1.1", "1.2")
EOL = b"\n"
NUL = b"\x00"
HEARTBEAT = EOL
"""What a heart-beat is on the wire: one end of line between frames."""
UNESCAPED_COMMANDS = frozenset({"CONNECT", "CONNECTED", "STOMP"})
"""Frames whose headers are never escaped (STOMP 1.1 and 1.2)."""
DEFAULT_MAX_FRAME_BYTES = 1 << 20

_ESCAPES = {"\\": "\\\\", "\n": "\\n", ":": "\\c", "\r": "\\r"}
_UNESCAPES = {"\\": "\\", "n": "\n", "c": ":", "r": "\r"}


class FrameError(ValueError):
    """Bytes that are not a STOMP frame (or a frame larger than allowed)."""


@dataclass(frozen=True, slots=True)
class Frame:
    """One STOMP frame.  ``headers`` keep their order; a repeated header's first value is the one that counts."""

    command: str
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""

    def header(self, name: str, default: str | None = None) -> str | None:
        for key, value in self.headers:
            if key == name:
                return value
        return default

    @classmethod
    def make(cls, command: str, headers: Mapping[str, str | int | None] | None = None, body: bytes = b"") -> Frame:
        """A frame from a mapping of headers (``None`` values are left out)."""
        pairs = tuple((k, str(v)) for k, v in (headers or {}).items() if v is not None)
        return cls(command, pairs, body)


def negotiate_version(accepted: str | None) -> str | None:
    """The highest version both ends speak, from a CONNECT's ``accept-version`` (absent: 1.0); ``None`` if none."""
    offered = {v.strip() for v in (accepted or "1.0").split(",")}
    common = [v for v in VERSIONS if v in offered]
    return common[-1] if common else None


def parse_heartbeat(value: str | None) -> tuple[int, int]:
    """``heart-beat: x,y`` as two non-negative milliseconds (absent or malformed: ``0,0``)."""
    try:
        first, second = (int(part.strip()) for part in (value or "0,0").split(","))
    except ValueError:
        return 0, 0
    return max(first, 0), max(second, 0)


def heartbeat_periods(ours: tuple[int, int], theirs: tuple[int, int]) -> tuple[int, int]:
    """(how often we must send, how often we may expect to receive), in ms; 0 means never.

    ``ours`` and ``theirs`` are each end's ``heart-beat`` header: (can send every, wants to receive every).
    """
    send = 0 if ours[0] == 0 or theirs[1] == 0 else max(ours[0], theirs[1])
    receive = 0 if ours[1] == 0 or theirs[0] == 0 else max(ours[1], theirs[0])
    return send, receive


def _escape(text: str) -> str:
    return "".join(_ESCAPES.get(ch, ch) for ch in text)


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    out: list[str] = []
    chars = iter(text)
    for ch in chars:
        if ch != "\\":
            out.append(ch)
            continue
        escaped = _UNESCAPES.get(next(chars, ""))
        if escaped is None:
            raise FrameError(f"undefined escape sequence in header {text[:60]!r}")
        out.append(escaped)
    return "".join(out)


def encode(frame: Frame, *, version: str = "1.2", content_length: bool = True) -> bytes:
    """The frame's bytes: command, headers, blank line, body, NUL.

    Header values are escaped as 1.1 and 1.2 want (never in CONNECT/CONNECTED, never in 1.0); a
    ``content-length`` is added for a non-empty body unless ``content_length=False``.
    """
    escape = version != "1.0" and frame.command not in UNESCAPED_COMMANDS
    lines = [frame.command]
    names = set()
    for key, value in frame.headers:
        names.add(key)
        lines.append(f"{_escape(key)}:{_escape(value)}" if escape else f"{key}:{value}")
    if frame.body and content_length and "content-length" not in names:
        lines.append(f"content-length:{len(frame.body)}")
    return "\n".join(lines).encode("utf-8") + b"\n\n" + frame.body + NUL


@dataclass
class FrameParser:
    """Turns a stream of bytes into frames; ``None`` in the output stands for a heart-beat.

    ``version`` decides header unescaping: set it once the connection is negotiated.
    """

    version: str = "1.2"
    max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES
    _buffer: bytearray = field(default_factory=bytearray)

    def feed(self, data: bytes | str) -> list[Frame | None]:
        self._buffer += data.encode("utf-8") if isinstance(data, str) else data
        out: list[Frame | None] = []
        while True:
            item = self._next()
            if item is _INCOMPLETE:
                break
            out.append(item)  # type: ignore[arg-type]
        if len(self._buffer) > self.max_frame_bytes:
            raise FrameError(f"a frame larger than {self.max_frame_bytes} bytes")
        return out

    def _next(self) -> Frame | object | None:
        buffer = self._buffer
        # Between frames, an end of line (LF or CRLF) is a heart-beat.
        if buffer[:1] == b"\n":
            del buffer[:1]
            return None
        if buffer[:2] == b"\r\n":
            del buffer[:2]
            return None
        if buffer[:1] == b"\r":
            return _INCOMPLETE if len(buffer) == 1 else self._fail("a lone carriage return between frames")
        head_end = buffer.find(b"\n\n")
        crlf_end = buffer.find(b"\r\n\r\n")
        if head_end < 0 and crlf_end < 0:
            return _INCOMPLETE
        if head_end < 0 or 0 <= crlf_end < head_end:
            head, body_start = bytes(buffer[:crlf_end]), crlf_end + 4
        else:
            head, body_start = bytes(buffer[:head_end]), head_end + 2
        try:
            lines = head.decode("utf-8").replace("\r\n", "\n").split("\n")
        except UnicodeDecodeError as e:
            raise FrameError("frame headers are not UTF-8") from e
        command = lines[0].strip()
        if not command:
            raise FrameError("a frame without a command")
        escaped = self.version != "1.0" and command not in UNESCAPED_COMMANDS
        headers: list[tuple[str, str]] = []
        for line in lines[1:]:
            if not line:
                continue
            key, sep, value = line.partition(":")
            if not sep:
                raise FrameError(f"a header line without a colon: {line[:60]!r}")
            headers.append((_unescape(key), _unescape(value)) if escaped else (key, value))
        length_text = next((v for k, v in headers if k == "content-length"), None)
        if length_text is not None:
            try:
                length = int(length_text)
            except ValueError as e:
                raise FrameError(f"content-length is not a number: {length_text[:20]!r}") from e
            if length < 0 or length > self.max_frame_bytes:
                raise FrameError(f"content-length out of range: {length}")
            if len(buffer) < body_start + length + 1:
                return _INCOMPLETE
            if buffer[body_start + length:body_start + length + 1] != NUL:
                raise FrameError("the body does not end with NUL where content-length says")
            body = bytes(buffer[body_start:body_start + length])
            del buffer[:body_start + length + 1]
        else:
            end = buffer.find(NUL, body_start)
            if end < 0:
                return _INCOMPLETE
            body = bytes(buffer[body_start:end])
            del buffer[:end + 1]
        return Frame(command, tuple(headers), body)

    @staticmethod
    def _fail(reason: str) -> object:
        raise FrameError(reason)


_INCOMPLETE = object()


def parse_all(data: bytes | str, version: str = "1.2") -> list[Frame]:
    """Every frame in ``data`` (heart-beats dropped); ``FrameError`` if a frame is incomplete or malformed."""
    parser = FrameParser(version=version)
    frames = [f for f in parser.feed(data) if f is not None]
    if parser._buffer.strip(b"\r\n"):
        raise FrameError("an incomplete frame")
    return frames


def headers_of(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Headers as a dict where the first occurrence of a name wins (as the protocol says)."""
    out: dict[str, str] = {}
    for key, value in pairs:
        out.setdefault(key, value)
    return out
