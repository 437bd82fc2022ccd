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
BAND_BYTES = 2 * 1024 * 1024
"""Uncompressed bytes handed to the compressor at a time."""


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
    # Compressed a band of rows at a time: a large image costs its compressed size beside itself, not a second
    # uncompressed copy (a 4096x4096 map is 64 MiB of pixels).
    compressor = zlib.compressobj(LEVEL)
    parts = []
    rows_per_band = max(1, BAND_BYTES // (stride + 1))
    for top in range(0, height, rows_per_band):
        rows = min(rows_per_band, height - top)
        band = bytearray((stride + 1) * rows)  # each row: its filter byte (0: none), then its pixels
        for row in range(rows):
            start = row * (stride + 1) + 1
            band[start:start + stride] = pixels[(top + row) * stride:(top + row + 1) * stride]
        parts.append(compressor.compress(band))
    parts.append(compressor.flush())
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8 bits, RGBA, deflate, no filter, no interlace
    return SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", b"".join(parts)) + _chunk(b"IEND", b"")


def encode_pixels(pixels: Any) -> bytes:
    """A PNG of a numpy ``(height, width, 4)`` array of 8-bit RGBA."""
    height, width, channels = pixels.shape
    if channels != 4 or str(pixels.dtype) != "uint8":
        raise ValueError(f"expected (height, width, 4) uint8 pixels, got {pixels.shape} {pixels.dtype}")
    return encode_png(width, height, pixels if pixels.flags.c_contiguous else pixels.copy(order="C"))
