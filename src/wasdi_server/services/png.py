"""A tiny pure-Python PNG writer (``zlib`` + ``struct``) and the colour-ramp previews of styles.

Only what the style previews need: 8-bit RGBA, no interlacing, filter type 0 on every row.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence

RGBA = tuple[int, int, int, int]

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MAX_SIDE = 4096


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def encode_png(width: int, height: int, rows: Sequence[bytes]) -> bytes:
    """A PNG of ``height`` rows, each ``width`` RGBA pixels (4 bytes a pixel)."""
    if not (0 < width <= MAX_SIDE and 0 < height <= MAX_SIDE):
        raise ValueError(f"bad image size {width}x{height}")
    if len(rows) != height or any(len(r) != width * 4 for r in rows):
        raise ValueError("rows do not match the image size")
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8 bits, RGBA, deflate, no filter, no interlace
    raw = b"".join(b"\x00" + bytes(r) for r in rows)
    return PNG_SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(raw, 9)) + _chunk(b"IEND", b"")


def _mix(a: RGBA, b: RGBA, t: float) -> RGBA:
    r, g, bl, al = (round(x + (y - x) * t) for x, y in zip(a, b, strict=True))
    return (r, g, bl, al)


def ramp_png(colors: Sequence[RGBA], *, width: int = 128, height: int = 16, smooth: bool = True) -> bytes:
    """A horizontal colour bar: a linear blend of ``colors`` (``smooth``) or one equal block each.

    With no colour at all the bar is a neutral grey ramp, so every style gets a preview.
    """
    stops = list(colors) or [(40, 40, 40, 255), (230, 230, 230, 255)]
    pixels: list[RGBA] = []
    for x in range(width):
        if len(stops) == 1:
            pixels.append(stops[0])
        elif smooth:
            position = x / max(1, width - 1) * (len(stops) - 1)
            index = min(int(position), len(stops) - 2)
            pixels.append(_mix(stops[index], stops[index + 1], position - index))
        else:
            pixels.append(stops[min(len(stops) - 1, x * len(stops) // width)])
    row = b"".join(struct.pack("BBBB", *p) for p in pixels)
    return encode_png(width, height, [row] * height)


def parse_color(text: str | None, opacity: str | float | None = None) -> RGBA | None:
    """``#RRGGBB`` / ``#RGB`` / ``0xRRGGBB`` (and an optional 0..1 opacity) as RGBA; ``None`` if unreadable."""
    value = (text or "").strip()
    if value.lower().startswith("0x"):
        value = "#" + value[2:]
    if not value.startswith("#"):
        return None
    digits = value[1:]
    if len(digits) == 3:
        digits = "".join(ch * 2 for ch in digits)
    if len(digits) != 6:
        return None
    try:
        r, g, b = (int(digits[i:i + 2], 16) for i in (0, 2, 4))
    except ValueError:
        return None
    alpha = 255
    if opacity is not None and str(opacity).strip():
        try:
            alpha = round(max(0.0, min(1.0, float(opacity))) * 255)
        except ValueError:
            alpha = 255
    return (r, g, b, alpha)
