"""The one PNG encoder: 8-bit RGBA, no interlacing, filter type 0 on every row, one deflate stream.

Used for the maps (WMS images, legends, layer previews) and the style previews.  Written here rather
than taken from an imaging library because the server's images need nothing more and the server extra
installs no imaging library; the tests decode every PNG they check with Pillow, independently.
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

SIGNATURE = b"\x89PNG\r\n\x1a\n"
MAX_SIDE = 65535
LEVEL = 1
"""Deflate level: maps are drawn per request, where speed matters more than the last few bytes."""


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def encode_png(width: int, height: int, rgba: Any) -> bytes:
    """A PNG of ``height`` rows of ``width`` RGBA pixels, given as any C-contiguous buffer of
    ``width * height * 4`` bytes, top row first (``bytes``, or a numpy ``(height, width, 4)`` uint8 array)."""
    if not (0 < width <= MAX_SIDE and 0 < height <= MAX_SIDE):
        raise ValueError(f"bad image size {width}x{height}")
    pixels = memoryview(rgba).cast("B")
    stride = width * 4
    if len(pixels) != stride * height:
        raise ValueError(f"{len(pixels)} bytes of pixels for a {width}x{height} RGBA image")
    raw = bytearray((stride + 1) * height)  # each row: its filter byte (0: none), then its pixels
    for row in range(height):
        start = row * (stride + 1) + 1
        raw[start:start + stride] = pixels[row * stride:(row + 1) * stride]
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8 bits, RGBA, deflate, no filter, no interlace
    return (SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(bytes(raw), LEVEL))
            + _chunk(b"IEND", b""))


def encode_pixels(pixels: Any) -> bytes:
    """A PNG of a numpy ``(height, width, 4)`` array of 8-bit RGBA."""
    height, width, channels = pixels.shape
    if channels != 4 or str(pixels.dtype) != "uint8":
        raise ValueError(f"expected (height, width, 4) uint8 pixels, got {pixels.shape} {pixels.dtype}")
    return encode_png(width, height, pixels if pixels.flags.c_contiguous else pixels.copy(order="C"))
