"""The colour-bar previews of styles (encoded by the one PNG encoder, ``wasdi_server.png``)."""

from __future__ import annotations

from collections.abc import Sequence

from ...png import encode_png

RGBA = tuple[int, int, int, int]
GREY_RAMP: tuple[RGBA, RGBA] = ((40, 40, 40, 255), (230, 230, 230, 255))
"""The bar of a style drawn with the default grey stretch."""


def _mix(a: RGBA, b: RGBA, t: float) -> RGBA:
    r, g, bl, al = (round(x + (y - x) * t) for x, y in zip(a, b, strict=True))
    return (r, g, bl, al)


def ramp_png(colors: Sequence[RGBA], *, width: int = 128, height: int = 16, smooth: bool = True) -> bytes:
    """A horizontal colour bar: a linear blend of ``colors`` (``smooth``) or one equal block each.

    With no colour at all the bar is the neutral grey ramp, so every style gets a preview.
    """
    stops = list(colors) or list(GREY_RAMP)
    if not colors:
        smooth = True
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
    row = bytes(channel for pixel in pixels for channel in pixel)
    return encode_png(width, height, row * height)
